/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The user stack walked in BPF from the files' unwind tables (`proc_tabs`, `ufiles`,
 * `ushards`; profile.h), where the frame-pointer walk cannot be trusted: frame by frame, the
 * row for the pc, the CFA from rsp or rbp, the return address and rbp restored. Whole only at
 * a true root (a stack bottom's span, or a row whose return address is undefined); anything
 * else (no table, a rule it does not follow, a word it cannot read, the depth limit) leaves
 * the stack to userspace, with a copy: from the frame where the walk stopped when that
 * frame's registers are known (no table, too deep: struct tab_at), else from the leaf.
 * Past the leaf, a frame of the thread's last walk whose words are where they were gives
 * the rest (struct tab_memo). Included by profile.bpf.c only.
 */
#ifndef PROFILE_TABWALK_BPF_H
#define PROFILE_TABWALK_BPF_H

/* How a walk from the tables ended (TAB_GOING: not yet). */
enum tab_end {
	TAB_GOING = 0,
	TAB_WHOLE,
	TAB_NO_TABLE,
	TAB_NO_RULE,
	TAB_NO_MEMORY,
	TAB_DEPTH,
	TAB_HANDOFF,	/* a frame userspace unwinds from its rsp and rbp (UROW_SP_ONLY) */
};

/* The walk's stack: another per-CPU ustack than the frame-pointer walk's, which a stack
 * sent to userspace carries. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ustack);
} tscratch SEC(".maps");

/* Where a walk stopped: the registers of its last frame (ip: a return address unless the
 * leaf's), rbp only when BP_OK (a frame whose row said its caller's rbp is not known). In:
 * the leaf's registers and which of the CPU's row caches the walk may use. */
struct tab_at {
	struct uregs r;
	__u32 bp_ok;
	__u32 cache;		/* RCACHE_SAMPLE, RCACHE_SWITCH */
	__u32 leaf_rec;		/* out: the leaf went by its frame record, in code no table
				 * describes (see UROW_RECORD): the words at sp are kept, for
				 * userspace's check of a frameless leaf, as after the
				 * frame-pointer walk */
	__u32 pad;
};

/*
 * The rows the walks met lately, per CPU (`rcache`): entry (pc / 16) mod RCACHE_SIZE holds
 * the row and the kind of code of the pcs [lo, lo + len) of process TGID as they were in
 * the versions PR_VER of its `procs` entry (its kinds) and PT_VER of its `proc_tabs` entry
 * (its mappings with tables), which every write of either changes: an entry of other
 * versions is not read. (A file's tables change only once no process maps it: a process
 * that maps the file again gets a `proc_tabs` entry of a new version.) A stack's return
 * addresses are mostly the same from sample to sample, its leaves in the same few
 * stretches: one probe in place of the kinds' search, the mapping's, the file's directory
 * and shard lookups and the row's search. Per process: other processes' changes (with -a,
 * a busy machine's forks and execs) leave its entries be. Two caches per CPU: a sample's
 * program may interrupt a switch's, never one of its kind.
 *
 * A stretch of RCACHE_WIDE_LEN bytes or more (a frameless function's body, one row for
 * kilobytes) is kept in a second entry as well, by (pc >> RCACHE_WIDE_BITS), probed when the
 * first misses: leaves sampled all over such a body were each a search the first time their
 * 16 bytes were hit (xz -9e: 99.1% of rows found, 99.7% with it).
 */
#define RCACHE_BITS	10
#define RCACHE_SIZE	(1u << RCACHE_BITS)
#define RCACHE_WIDE_BITS 9
#define RCACHE_WIDE_LEN	256
enum { RCACHE_SAMPLE = 0, RCACHE_SWITCH = 1 };

/* 32 bytes, one cache line's half: the row without its start, the stretch as a length (at
 * most RCACHE_MAX_LEN), its bp rule, the kind of code and its flags in one byte, its cfa
 * rule and register in another (RCACHE_*). */
#define RCACHE_MAX_LEN	0xffffu
#define RCACHE_KIND_SHIFT 2	/* urow.bp: 2 bits, enum profile_span: 3, urow.flags: 3 */
#define RCACHE_FLAGS_SHIFT 5
#define RCACHE_REG_SHIFT 4	/* urow.cfa: 4 bits, urow.reg: 4 */
struct rcache_ent {
	__u64 lo;
	__u32 tgid;
	__u32 pr_ver;
	__u32 pt_ver;
	__s32 cfa_off;
	__s16 ra_off;
	__s16 bp_off;
	__u16 len;
	__u8 rules;
	__u8 cfa;		/* urow.cfa, urow.reg */
} __attribute__((aligned(32)));

struct rcache {
	struct rcache_ent e[RCACHE_SIZE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct rcache);
} rcache SEC(".maps");

/* A span of code of one kind: [lo, hi). */
struct span_bounds {
	__u64 lo, hi;
};

/* What tab_find is asked (the pc, of which process, its entries' versions, which cache)
 * and finds. */
struct tab_find {
	__u64 pc;
	__u32 tgid;
	__u32 cache;
	__u32 pr_ver, pt_ver;	/* (0, 0: no cache) */
	__u32 kind;		/* enum profile_span */
	__u32 pad;
	struct urow row;
};

/*
 * A thread's last walk from the tables that ended whole on this CPU, frame by frame
 * (`tmemo`): each frame's pc and registers as the walk had them, and where it read the words
 * it went on with (the return address, the caller's rbp). A walk is a function of a frame's
 * pc, rsp and rbp, the tables (the versions of the process's entries) and the words it
 * reads: one that comes to a frame of the memo with the same pc and rsp (and rbp, where a
 * frame further out goes by it) and finds the same words where the memo read them has the
 * memo's frames from there on, without a row looked for (tab_memo_try). A sample's leaf
 * moves, its callers mostly stay: on xz -9e, most walks end so after the leaf's caller.
 * Kept for the threads of tab_page.last, two a thread (the one kept, and the next walk's
 * being written: tab_page.last[].memo says which is kept); walks of at most MEMO_FRAMES
 * frames of rules it replays (none from another register, or through a word at the CFA).
 */
#define MEMO_FRAMES	32
#define MEMO_USES_BP	1u	/* the frame's CFA is from its rbp (its rule, a record) */
#define MEMO_SETS_BP	2u	/* its caller's rbp is another (read, or not known) */
#define MEMO_BP_READ	4u	/* ... read at its CFA + bp_off */
/* memo_q.bp_from: the walk's frame's rbp is the frames' still; none known. */
#define MEMO_BP_WALKS	0xffffffffu
#define MEMO_BP_NONE	0xfffffffeu

/* A frame of a memo: what a walk that goes on from it reads, 16 bytes (a line holds four:
 * the lines of a walk's memo are few, and read at once, tab_memo_warm). */
struct memo_frame {
	__u64 ip;		/* the frame's pc (past the leaf, a return address) */
	__u32 sp;		/* its rsp (its callee's CFA), from the memo's base */
	__s16 ra_off;		/* where it read its return address: its CFA + ra_off */
	__u8 rules;		/* MEMO_* */
	__u8 pad;
};

struct tab_memo {
	__u32 nr;		/* its frames (0: none, or being written) */
	__u32 ok;		/* being written: its frames so far are of rules it replays */
	__u32 tid_1, tgid;
	__u32 pr_ver, pt_ver;
	__u64 base;		/* the leaf's rsp: memo_frame.sp's base */
	struct memo_frame f[MEMO_FRAMES];
	/* What only a frame that goes by rbp needs. */
	__u64 bp[MEMO_FRAMES];	/* the frame's rbp */
	__u64 bpv[MEMO_FRAMES];	/* the caller's rbp it read (MEMO_BP_READ) */
	__s16 bp_off[MEMO_FRAMES];	/* ... at its CFA + bp_off */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * TAB_LAST_THREADS);
	__type(key, __u32);
	__type(value, struct tab_memo);
} tmemo SEC(".maps");

struct tab_walk {
	const struct stack_window *win;	/* the words at wsp, or NULL */
	struct tab_page *page;	/* the words the walk read past the window, or NULL */
	struct ustack *st;
	struct tab_memo *memo;	/* the thread's last walk, or NULL */
	struct tab_memo *rec;	/* this one's, being written, or NULL */
	__u64 wsp;
	__u64 ip, sp, bp;
	__u32 bp_ok;		/* bp holds the frame's rbp */
	__u32 end;		/* enum tab_end */
	struct tab_find f;	/* the process, its gen, the cache; the frame's row */
};

/* The word at A of the stack: from the window WIN read at the sample's sp WSP, else from
 * the words read last (PG), else read with the rest of the stack above it (tab_page_read),
 * else read alone. */
static __always_inline int stack_word(struct tab_page *pg, const struct stack_window *win,
				      __u64 wsp, __u64 a, __u64 *v)
{
	__u64 off = a - wsp, idx;

	if (win && a >= wsp && off < WINDOW_WORDS * 8 && !(off & 7)) {
		/* (A bound the compiler keeps: the verifier checks the index.) */
		idx = off / 8;
		asm volatile("" : "+r"(idx));
		*v = win->w[idx & (WINDOW_WORDS - 1)];
		return 0;
	}
	if (pg && !(a & 7) && ((a >= pg->lo && a < pg->hi) || !tab_page_read(pg, a))) {
		idx = (a - pg->lo) / 8;
		asm volatile("" : "+r"(idx));
		if (idx < sizeof(pg->w) / 8) {
			*v = pg->w[idx];
			return 0;
		}
	}
	return bpf_probe_read_user(v, sizeof(*v), (void *)a) ? -1 : 0;
}

/* The walk's word at ADDR (stack_word). */
static __always_inline int tab_read(struct tab_walk *w, __u64 addr, __u64 *val)
{
	return stack_word(w->page, w->win, w->wsp, addr, val);
}

/*
 * The searches are global functions: the verifier checks each once, with what it is given
 * unknown, instead of following every path of three searches in a row in each frame.
 */

/* The index of the last of the first N (at most UTAB_FILE_SHARDS) shards of D that begins at
 * or before OFF, or -1. */
__noinline int tab_shard_index(const struct ufile_dir *d, __u32 off)
{
	if (!d)
		return -1;
	return (int)BOUNDED_UPTO(d->first, d->nr, UTAB_FILE_SHARDS, UTAB_FILE_STEPS, off) - 1;
}

/* The index of the last of the first N rows of SH that begins at or before OFF, or -1. (N is
 * an argument, not the constant it is: the verifier then knows neither bound of the search,
 * and finds the states of its paths alike, as it cannot when they are numbers.) */
__noinline int tab_row_index(const struct ushard *sh, __u32 off, __u32 n)
{
	__u32 lo = 0, hi = n, mid;

	if (!sh)
		return -1;
	for (int i = 0; i < UTAB_SHARD_STEPS; i++) {
		if (lo >= hi)
			break;
		mid = (lo + hi) / 2;
		if (mid >= UTAB_SHARD_ROWS)
			return -1;
		if (sh->rows[mid].start <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int)lo - 1;
}

/* The kind of code at ADDR in PR (SPAN_NONE without PR), the span's bounds into *B. */
__noinline __u8 span_at(const struct proc_ranges *pr, __u64 addr, struct span_bounds *b)
{
	__u32 lo;

	if (!pr || !b || !(lo = proc_span_at(pr, addr)))
		return SPAN_NONE;
	b->lo = pr->span_start[(lo - 1) & (PROFILE_MAX_SPANS - 1)];
	b->hi = lo < pr->nr_spans && lo < PROFILE_MAX_SPANS ?
		pr->span_start[lo & (PROFILE_MAX_SPANS - 1)] : pr->span_end;
	return pr->span_kind[(lo - 1) & (PROFILE_MAX_SPANS - 1)];
}

/* The index of the mapping of PT that holds PC; else -1 - the number of its mappings that
 * begin at or before PC (-1 without PT). */
__noinline int tab_map_index(const struct proc_tabs *pt, __u64 pc)
{
	__u32 lo, i;

	if (!pt)
		return -1;
	lo = BOUNDED_UPTO(pt->start, pt->nr, PROFILE_MAX_TABS, PROFILE_TAB_STEPS, pc);
	if (!lo)
		return -1;
	i = (lo - 1) & (PROFILE_MAX_TABS - 1);
	if (pc >= pt->end[i] || pc < pt->bias[i] || pc - pt->bias[i] > 0xffffffffULL)
		return -1 - (int)lo;
	return (int)i;
}

/* Row I of SH, or NULL when I is not one. */
static __always_inline const struct urow *tab_row_at(const struct ushard *sh, int i)
{
	__u64 idx = (__u32)i;

	/* (A bound the compiler keeps as written: the verifier checks this register.) */
	asm volatile("" : "+r"(idx));
	if (idx >= UTAB_SHARD_ROWS)
		return NULL;
	return &sh->rows[idx];
}

/* The entry of cache RC that would hold PC of process TGID. */
static __always_inline struct rcache_ent *rcache_slot(struct rcache *rc, __u64 pc, __u32 tgid)
{
	__u32 idx = (__u32)(pc >> 4) ^ (tgid * 0x9e3779b1u);

	return &rc->e[idx & (RCACHE_SIZE - 1)];
}

/* The entry of cache RC that would hold a long stretch (RCACHE_WIDE_LEN or more) about PC:
 * one for each RCACHE_WIDE_BITS of code. */
static __always_inline struct rcache_ent *rcache_wide_slot(struct rcache *rc, __u64 pc,
							    __u32 tgid)
{
	__u32 idx = (__u32)(pc >> RCACHE_WIDE_BITS) * 0x85ebca6bu ^ (tgid * 0x9e3779b1u);

	return &rc->e[(idx >> 8) & (RCACHE_SIZE - 1)];
}

/* Entry E's row for F->pc into F, when E holds one for it: 1, else 0. */
static __always_inline int rcache_take(const struct rcache_ent *e, struct tab_find *f)
{
	if (e->tgid != f->tgid || e->pr_ver != f->pr_ver || e->pt_ver != f->pt_ver ||
	    f->pc - e->lo >= e->len)
		return 0;
	f->kind = (e->rules >> RCACHE_KIND_SHIFT) & 7;
	f->row.cfa_off = e->cfa_off;
	f->row.ra_off = e->ra_off;
	f->row.bp_off = e->bp_off;
	f->row.cfa = e->cfa & ((1 << RCACHE_REG_SHIFT) - 1);
	f->row.reg = e->cfa >> RCACHE_REG_SHIFT;
	f->row.bp = e->rules & 3;
	f->row.flags = e->rules >> RCACHE_FLAGS_SHIFT;
	return 1;
}

/* Entry E made to hold F's row for [LO, HI). */
static __always_inline void rcache_keep(struct rcache_ent *e, const struct tab_find *f,
					__u64 lo, __u64 hi)
{
	e->lo = lo;
	e->len = (__u16)(hi - lo);
	e->tgid = f->tgid;
	e->pr_ver = f->pr_ver;
	e->pt_ver = f->pt_ver;
	e->cfa_off = f->row.cfa_off;
	e->ra_off = f->row.ra_off;
	e->bp_off = f->row.bp_off;
	e->cfa = f->row.cfa | f->row.reg << RCACHE_REG_SHIFT;
	e->rules = f->row.bp | f->kind << RCACHE_KIND_SHIFT | f->row.flags << RCACHE_FLAGS_SHIFT;
}

/*
 * The kind of code at F->pc in process F->tgid and, unless the walk ends there (a stack
 * bottom: SPAN_BOTTOM), its row, into F: from this CPU's cache F->cache when it has them for
 * the versions F->pr_ver and F->pt_ver, else found and kept there for the pcs about it that
 * have both (within the span and the row's stretch). Returns 0, or -1 when there is no row
 * (a stack bottom, no code there, no table for it). A global function: the verifier checks
 * the searches once, not in each path of the walk's step; what the walk has it looks up
 * again (`cur_proc`'s copy of the process's kinds, `proc_tabs`), which only a pc new to the
 * cache costs.
 */
__noinline int tab_find(struct tab_find *f)
{
	const struct proc_ranges *pr = NULL;
	struct span_bounds b = {};
	const struct proc_tabs *pt;
	const struct ufile_dir *d;
	const struct ushard *sh;
	const struct urow *r, *nx;
	struct cpu_proc *cp;
	struct rcache *rc;
	__u32 zero = 0, fid, sid, off, next, tgid, c;
	__u64 bias, end, pc, a;
	int i, m, s;

	if (!f)
		return -1;
	pc = f->pc;
	tgid = f->tgid;
	c = f->cache & 1;
	rc = f->pr_ver || f->pt_ver ? bpf_map_lookup_elem(&rcache, &c) : NULL;
	if (rc && (rcache_take(rcache_slot(rc, pc, tgid), f) ||
		   rcache_take(rcache_wide_slot(rc, pc, tgid), f)))
		return f->kind == SPAN_BOTTOM ? -1 : 0;
	stat_inc(STAT_TAB_ROW_MISSES);
	cp = bpf_map_lookup_elem(&cur_proc, &zero);
	if (cp && cp->tgid_1 == tgid + 1 && cp->has_ranges)
		pr = &cp->pr;
	else if (!cp)
		pr = bpf_map_lookup_elem(&procs, &tgid);
	f->kind = span_at(pr, pc, &b);
	if (f->kind == SPAN_NONE)
		return -1;
	if (f->kind != SPAN_BOTTOM) {
		pt = bpf_map_lookup_elem(&proc_tabs, &tgid);
		m = tab_map_index(pt, pc);
		if (m < 0 && f->kind == SPAN_TRUSTED) {
			/* Code no table describes where the frame-pointer walk trusts records
			 * (JIT code, a file without CFI): the record's row, for the span's
			 * part between the mappings with tables. */
			f->row = UROW_RECORD_ROW(0);
			i = -1 - m;
			if (pt && i > 0 && i <= PROFILE_MAX_TABS &&
			    pt->end[(i - 1) & (PROFILE_MAX_TABS - 1)] > b.lo)
				b.lo = pt->end[(i - 1) & (PROFILE_MAX_TABS - 1)];
			if (pt && i >= 0 && i < PROFILE_MAX_TABS && (__u32)i < pt->nr &&
			    pt->start[i & (PROFILE_MAX_TABS - 1)] < b.hi)
				b.hi = pt->start[i & (PROFILE_MAX_TABS - 1)];
			goto keep;
		}
		if (!pt || m < 0)
			return -1;
		m &= PROFILE_MAX_TABS - 1;
		fid = pt->file[m];
		bias = pt->bias[m];
		end = pt->end[m];
		off = (__u32)(pc - bias);
		d = bpf_map_lookup_elem(&ufiles, &fid);
		s = tab_shard_index(d, off);
		if (!d || s < 0)
			return -1;
		sid = d->shard[s & (UTAB_FILE_SHARDS - 1)];
		sh = bpf_map_lookup_elem(&ushards, &sid);
		if (!sh)
			return -1;
		i = tab_row_index(sh, off, UTAB_SHARD_ROWS);
		r = tab_row_at(sh, i);
		if (!r)
			return -1;
		f->row = *r;
		/* Its stretch: to the next row's start, within the mapping. A shard's last row
		 * goes on to the next shard's first (the file's last shard: to the mapping's
		 * end), as the search finds. Kept where the span holds too; none found: this
		 * pc alone. (Not a mask: UTAB_SHARD_ROWS is no power of two.) */
		nx = tab_row_at(sh, i + 1);
		if (nx)
			next = nx->start;
		else if ((__u32)s + 1 < d->nr)
			next = d->first[(s + 1) & (UTAB_FILE_SHARDS - 1)];
		else
			next = 0xffffffffu;
		if (bias + r->start > b.lo)
			b.lo = bias + r->start;
		if (next <= r->start) {
			b.hi = pc + 1;
			stat_inc(STAT_TAB_ROW_CUT);
		}
		else if (bias + next < b.hi)
			b.hi = bias + next;
		if (end < b.hi)
			b.hi = end;
	}
keep:
	if (b.lo > pc || b.hi <= pc) {
		b.lo = pc;
		b.hi = pc + 1;
	}
	/* (Longer than an entry holds: the part about pc.) */
	if (b.hi - b.lo > RCACHE_MAX_LEN) {
		if (pc - b.lo >= RCACHE_MAX_LEN / 2)
			b.lo = pc - RCACHE_MAX_LEN / 2;
		if (b.hi - b.lo > RCACHE_MAX_LEN)
			b.hi = b.lo + RCACHE_MAX_LEN;
	}
	if (rc && f->row.bp < 4 && f->kind < 8 && f->row.cfa < 16 && f->row.reg < 16 &&
	    f->row.flags < 8) {
		/* A stretch shorter than a wide entry's, in the entry of each of its 16
		 * bytes, not only pc's: leaves sampled anywhere in it find it there. (A
		 * longer one from pc's on, at most RCACHE_WIDE_LEN bytes of it, and in its
		 * wide entry.) */
		a = b.hi - b.lo < RCACHE_WIDE_LEN ? b.lo & ~15ull : pc;
		for (int k = 0; k < RCACHE_WIDE_LEN / 16 + 1; k++) {
			if (a >= b.hi)
				break;
			rcache_keep(rcache_slot(rc, a, tgid), f, b.lo, b.hi);
			a += 16;
		}
		if (b.hi - b.lo >= RCACHE_WIDE_LEN)
			rcache_keep(rcache_wide_slot(rc, pc, tgid), f, b.lo, b.hi);
	}
	return f->kind == SPAN_BOTTOM ? -1 : 0;
}

/* How far above sp a frame record may be (a frame of a MiB is no frame). */
#define RECORD_REACH	(1u << 20)

/*
 * The walk's general registers (tab_page.gr, .valid): the task's user registers, read when a
 * row first needs one (tab_page.lazy; most walks need none: only a CFA from another register
 * than rsp and rbp, OpenSSL's assembly). A sample that hit user mode has the ones the task
 * saved as it entered the kernel for it (the interrupt's, at the top of its kernel stack:
 * task_pt_regs, what the sample's context points to), as has one in the kernel and a
 * switch's. rsp and rbp are the walk's own.
 */
static __always_inline void tab_gprs(void)
{
	struct tab_page *pg;
	__u32 zero = 0;

	pg = bpf_map_lookup_elem(&tpage, &zero);
	if (!pg)
		return;
	pg->valid = 0xffffu & ~(1u << 6 | 1u << 7);
	pg->lazy = 1;
}

/* The current task's user registers, saved as it entered the kernel, into PG->gr: one read
 * of them. */
static __noinline int tab_task_gprs(struct tab_page *pg)
{
	struct pt_regs r;

	if (!pg)
		return -1;
	if (bpf_probe_read_kernel(&r, sizeof(r),
				  (void *)bpf_task_pt_regs(bpf_get_current_task_btf())))
		return -1;
	pg->gr[0] = r.ax;
	pg->gr[1] = r.dx;
	pg->gr[2] = r.cx;
	pg->gr[3] = r.bx;
	pg->gr[4] = r.si;
	pg->gr[5] = r.di;
	pg->gr[6] = r.bp;
	pg->gr[7] = r.sp;
	pg->gr[8] = r.r8;
	pg->gr[9] = r.r9;
	pg->gr[10] = r.r10;
	pg->gr[11] = r.r11;
	pg->gr[12] = r.r12;
	pg->gr[13] = r.r13;
	pg->gr[14] = r.r14;
	pg->gr[15] = r.r15;
	pg->lazy = 0;
	return 0;
}

/*
 * The row cache's entries of the pcs PG's thread SLOT looked up at its last walk, read before
 * the walk: a sample's callers are mostly the last one's, and their entries, each in a line
 * of its own that the target's work has made cold, are then read at once, not one after the
 * other as the walk comes to each (the CPU waits for them together). On xz, with all of
 * the cache read before the walk (not timed), the walk took ~240 ns less; with this, P50
 * ~100 ns less. (Their sum is kept, in `sink`, so that the loads are made.)
 */
static __always_inline void tab_warm(struct tab_page *pg, __u32 slot, __u32 cache, __u32 tgid)
{
	struct rcache *rc;
	__u64 sum = 0, pc;
	__u32 c = cache & 1;

	rc = bpf_map_lookup_elem(&rcache, &c);
	if (!rc)
		return;
	slot &= TAB_LAST_THREADS - 1;
	/* (The leaf's, where another leaf in the same long stretch finds its row.) */
	sum = rcache_wide_slot(rc, pg->last[slot].pc[0], tgid)->lo;
	for (int i = 0; i < TAB_WARM; i++) {
		pc = pg->last[slot].pc[i];
		if (!pc)
			break;
		sum += rcache_slot(rc, pc, tgid)->lo;
	}
	pg->sink = sum;
}

/* tab_memo_try's frames from the memo's: the memo, where the words are, the walk's stack
 * and what it asks (in map memory, which the verifier does not follow: as values here,
 * each made its states apart). */
struct memo_ctx {
	const struct tab_memo *m;
	struct tab_memo *rec;	/* memo_copy's */
	struct tab_page *pg;
	const struct stack_window *win;
	struct ustack *st;
	struct memo_q *q;
};

/* tab_memo_try's check of the memo's frame Q->c + I: the words it went by where they were
 * (else 1, Q->fail), its caller into the walk's stack. */
static __always_inline long memo_frame(__u64 i, struct memo_ctx *x)
{
	const struct tab_memo *m = x->m;
	struct memo_q *q = x->q;
	__u64 a, v, k = q->c + i, j;
	__u32 f;
	__u8 rules;

	q->fail = 1;
	if (k + 1 >= MEMO_FRAMES)
		return 1;
	j = (k + 1) & (MEMO_FRAMES - 1);
	k &= MEMO_FRAMES - 1;
	rules = m->f[k].rules;
	/* The rbp a frame goes by: the walk's frame's, or the word a frame since read for
	 * it, where it was (only then: another, where no frame goes by it, is no matter). */
	if (rules & MEMO_USES_BP) {
		f = q->bp_from;
		if (f == MEMO_BP_WALKS) {
			if (!q->bp_ok || q->bp != m->bp[q->c & (MEMO_FRAMES - 1)])
				return 1;
		} else {
			if (f >= MEMO_FRAMES - 1)
				return 1;
			a = m->base + m->f[(f + 1) & (MEMO_FRAMES - 1)].sp +
			    m->bp_off[f & (MEMO_FRAMES - 1)];
			if (stack_word(x->pg, x->win, q->wsp, a, &v) ||
			    v != m->bpv[f & (MEMO_FRAMES - 1)])
				return 1;
		}
	}
	a = m->base + m->f[j].sp + m->f[k].ra_off;
	if (stack_word(x->pg, x->win, q->wsp, a, &v) || v != m->f[j].ip)
		return 1;
	if (rules & MEMO_SETS_BP)
		q->bp_from = rules & MEMO_BP_READ ? k : MEMO_BP_NONE;
	a = q->n + i;
	asm volatile("" : "+r"(a));
	if (a >= PROFILE_MAX_DEPTH)
		return 1;
	x->st->ips[a] = m->f[j].ip;
	q->fail = 0;
	return 0;
}

/*
 * The walk at the frame Q->ip, Q->sp (Q->bp: its rbp, when Q->bp_ok), ST's last, against the
 * thread's last walk M (struct tab_memo), from its frame Q->cur on (Q: PG->mq): 1 when a
 * frame of M is this one and the words M's walk read from there on are where they were (M's
 * frames from there into ST, the last one's registers into Q, Q->hit); 0 when none is yet
 * (none at this rsp with this pc, or one whose words are not all where they were: the walk
 * goes on by the rows, and asks again at its next frame); -1 when none will be
 * (Q->cur MEMO_FRAMES). A global function: the verifier checks it once.
 */
/* bpf_loop's callback: the memo's frame Q->c + I into the walk's being written, as the walk's
 * frame Q->n - 1 + I (the first: the registers the walk has there). */
static long memo_copy(__u64 i, void *arg)
{
	struct memo_ctx *x = arg;
	const struct tab_memo *m = x->m;
	struct tab_memo *r = x->rec;
	struct memo_q *q = x->q;
	__u64 k = (q->c + i) & (MEMO_FRAMES - 1), d = q->n - 1 + i, sp;

	if (d >= MEMO_FRAMES)
		return 1;
	sp = m->base + m->f[k].sp - r->base;
	if (sp > 0xffffffffull) {
		r->ok = 0;
		return 1;
	}
	r->f[d].ip = m->f[k].ip;
	r->f[d].sp = (__u32)sp;
	r->f[d].ra_off = m->f[k].ra_off;
	r->f[d].rules = m->f[k].rules;
	r->bp[d] = i ? m->bp[k] : q->bp;
	r->bpv[d] = m->bpv[k];
	r->bp_off[d] = m->bp_off[k];
	return 0;
}

__noinline int tab_memo_try(const struct tab_memo *m, struct tab_page *pg,
			    const struct stack_window *win, struct ustack *st, struct tab_memo *rec)
{
	struct memo_ctx x = {};
	struct memo_q *q;
	__u32 c, last, n;

	if (!m || !st || !pg)
		return -1;
	q = &pg->mq;
	c = q->cur;
	last = m->nr;
	if (last > MEMO_FRAMES || m->tid_1 != q->tid_1 || m->tgid != q->tgid ||
	    m->pr_ver != q->pr_ver || m->pt_ver != q->pt_ver)
		goto none;
	/* (Its frames' sp go up: the first at or above this frame's.) */
	for (int i = 0; i < MEMO_FRAMES; i++) {
		if (c >= last)
			goto none;
		if (m->base + m->f[c & (MEMO_FRAMES - 1)].sp >= q->sp)
			break;
		c++;
	}
	/* (Through map memory: the verifier then goes on from one state, not one for each
	 * step of the search.) */
	q->c = c;
	c = *(volatile __u32 *)&q->c;
	if (c >= last)
		goto none;
	if (m->base + m->f[c & (MEMO_FRAMES - 1)].sp != q->sp ||
	    m->f[c & (MEMO_FRAMES - 1)].ip != q->ip) {
		q->cur = m->base + m->f[c & (MEMO_FRAMES - 1)].sp == q->sp ? c + 1 : c;
		return 0;
	}
	n = st->nr;
	if (n < 2 || n + last - 1 - c > PROFILE_MAX_DEPTH)
		goto none;
	/* Each frame's words where it read them; its rbp where a frame goes by it before one
	 * gives the caller another. */
	x.m = m;
	x.pg = pg;
	x.win = win;
	x.st = st;
	x.q = q;
	q->n = n;
	q->bp_from = MEMO_BP_WALKS;
	q->fail = 0;
	/* (A loop of its own, not bpf_loop's call a frame: the frames are checked at ~20 ns
	 * a frame less.) */
	q->left = last - 1 - c;
	for (int i = 0; i < MEMO_FRAMES - 1; i++) {
		if (i >= *(volatile __u32 *)&q->left)
			break;
		if (memo_frame(i, &x))
			break;
	}
	/* (A word not where it was: this frame's caller, or one further out, is another now;
	 * a frame further out may still be M's, its words where they were: on xz -9e, 3% of
	 * the walks, each walked by the rows to its end when this gave up.) */
	if (q->fail) {
		q->cur = c + 1;
		return 0;
	}
	st->nr = n + last - 1 - c;
	q->ip = m->f[(last - 1) & (MEMO_FRAMES - 1)].ip;
	q->sp = m->base + m->f[(last - 1) & (MEMO_FRAMES - 1)].sp;
	q->hit = 1;
	/* Reached past the leaf's caller's caller: this walk, its frames by the rows and the
	 * memo's from here, is the thread's next memo (a stack's callers change slowly; the
	 * nearer the leaf the memo's frames, the fewer rows the next walks look for). Not for
	 * one row past the caller: a leaf's caller that alternates between two (xz -9e: 8% of
	 * the walks) made a copy at each turn, and cost more than the row it saves. */
	if (rec && rec->ok && n > 3 && n - 1 + last - c <= MEMO_FRAMES) {
		x.rec = rec;
		bpf_loop(last - c, memo_copy, &x, 0);
		q->kept = 1;
	}
	return 1;
none:
	q->cur = MEMO_FRAMES;
	return -1;
}

/* The frame the walk is at (pc W->ip, rsp W->sp, ST's frame N - 1) into the walk's memo
 * being written: its row R (NULL: the walk ends whole there) and the rbp it gives its
 * caller, BPV (BP_READ: read at its CFA + bp_off), for tab_memo_try. (The leaf's rules are
 * any: no walk goes on from a memo's leaf.) */
static __always_inline void memo_keep(struct tab_walk *w, __u32 n, const struct urow *r,
				      __u32 bp_read, __u64 bpv)
{
	struct tab_memo *rec = w->rec;
	__u32 k = n - 1;
	__u8 rules = 0;

	if (!rec || !rec->ok)
		return;
	if (k >= MEMO_FRAMES) {
		rec->ok = 0;
		return;
	}
	/* (A mask the compiler keeps: the verifier checks the index.) */
	asm volatile("" : "+r"(k));
	k &= MEMO_FRAMES - 1;
	if (r) {
		if (r->cfa == UROW_RBP || r->cfa == UROW_RECORD)
			rules |= MEMO_USES_BP;
		else if (k && r->cfa != UROW_RSP && r->cfa != UROW_PLT) {
			rec->ok = 0;
			return;
		}
		if (r->bp != UROW_BP_SAME)
			rules |= MEMO_SETS_BP;
		if (bp_read)
			rules |= MEMO_BP_READ;
		rec->f[k].ra_off = r->ra_off;
		rec->bp_off[k] = r->bp_off;
		rec->bpv[k] = bpv;
	}
	if (!k)
		rec->base = w->sp;
	if (w->sp - rec->base > 0xffffffffull) {
		rec->ok = 0;
		return;
	}
	rec->f[k].ip = w->ip;
	rec->f[k].sp = (__u32)(w->sp - rec->base);
	rec->f[k].rules = rules;
	rec->bp[k] = w->bp;
}

/* Whether the walk's frame is one of the thread's last walk, which then has the rest
 * (tab_memo_try: into ST, the walk ended whole). */
static __always_inline int memo_at(struct tab_walk *w, struct ustack *st)
{
	struct tab_page *pg = w->page;

	if (!pg || pg->mq.cur >= MEMO_FRAMES)
		return 0;
	pg->mq.ip = w->ip;
	pg->mq.sp = w->sp;
	pg->mq.bp = w->bp;
	pg->mq.bp_ok = w->bp_ok;
	if (tab_memo_try(w->memo, pg, w->win, st, w->rec) <= 0)
		return 0;
	w->ip = pg->mq.ip;
	w->sp = pg->mq.sp;
	w->end = TAB_WHOLE;
	return 1;
}

/* bpf_loop's callback: one frame (the verifier checks it once, not per frame). */
static long tab_step(__u64 i, void *arg)
{
	struct tab_walk *w = arg;
	const struct urow *r;
	struct ustack *st = w->st;
	__u64 pc, cfa, ra, v;
	__u32 n, bp_ok;
	int lv;

	if (!st) {
		w->end = TAB_NO_TABLE;
		return 1;
	}
	n = st->nr;
	/* (The leaf's caller was asked at the leaf's step.) */
	if (n > 2 && memo_at(w, st))
		return 1;
	/* A return address is one past its call; the leaf's ip is where it is. */
	pc = n == 1 ? w->ip : w->ip - 1;
	w->f.pc = pc;
	if (tab_find(&w->f)) {
		if (w->f.kind == SPAN_BOTTOM)
			memo_keep(w, n, NULL, 0, 0);
		/* (A record that leads out of the process's code was none: userspace
		 * unwinds from the leaf.) */
		w->end = w->f.kind == SPAN_BOTTOM ? TAB_WHOLE :
			 w->f.kind == SPAN_NONE && w->page && (w->page->flags & TAB_F_GUESSED) ?
			 TAB_NO_RULE : TAB_NO_TABLE;
		return 1;
	}
	r = &w->f.row;
	if (w->page)
		w->page->flags &= ~TAB_F_GUESSED;
	switch (r->cfa) {
	case UROW_RSP:
	case UROW_PLT:
	case UROW_DEREF_RSP:
		cfa = w->sp;
		break;
	case UROW_RBP:
	case UROW_DEREF_RBP:
		if (!w->bp_ok) {
			w->end = TAB_NO_RULE;
			return 1;
		}
		cfa = w->bp;
		break;
	case UROW_REG:
		if (!w->page || !(w->page->valid >> (r->reg & 15) & 1) ||
		    (w->page->lazy && tab_task_gprs(w->page))) {
			w->end = TAB_NO_RULE;
			return 1;
		}
		cfa = w->page->gr[r->reg & 15];
		break;
	case UROW_OUTERMOST:
		memo_keep(w, n, NULL, 0, 0);
		w->end = TAB_WHOLE;
		return 1;
	case UROW_SP_ONLY:
		w->end = TAB_HANDOFF;
		return 1;
	case UROW_RECORD:
		/* A leaf here is placed by its code where that says where its return address
		 * is (bpf/leafscan.h: at its record's making or leaving). Else: V8's builtins
		 * (a span without records to the frame-pointer walk), whose leaf may keep
		 * none, by their record from a return address, or from a leaf whose code
		 * says the record is its own (LEAF_FRAMED); JIT code and files without CFI
		 * (SPAN_TRUSTED), the leaf too, as the frame-pointer walk. Else userspace goes
		 * on from this frame. */
		lv = LEAF_RECORD;
		if (n == 1) {
			__s32 loff = 0;

			lv = leaf_scan_at(pc, w->sp, w->bp, &loff);
			if (lv == LEAF_CUT) {
				w->end = w->f.kind == SPAN_TRUSTED ? TAB_NO_TABLE : TAB_HANDOFF;
				return 1;
			}
			if (lv == LEAF_RA || lv == LEAF_RA_BP) {
				w->f.row = (struct urow){
					.cfa = UROW_RSP, .cfa_off = loff + 8, .ra_off = -8,
					.bp = lv == LEAF_RA_BP ? UROW_BP_AT_CFA : UROW_BP_SAME,
					.bp_off = -16,
				};
				cfa = w->sp;
				break;
			}
		}
		if ((n == 1 && w->f.kind != SPAN_TRUSTED && lv != LEAF_FRAMED) || !w->page ||
		    !w->bp_ok || w->bp < w->sp || (w->bp & 7) || w->bp - w->sp > RECORD_REACH) {
			w->end = w->f.kind == SPAN_TRUSTED ? TAB_NO_TABLE : TAB_HANDOFF;
			return 1;
		}
		/* (The row says CFA rbp + 16, the rest below it: UROW_RECORD_ROW.) */
		if (w->f.kind == SPAN_TRUSTED)
			w->page->flags |= TAB_F_GUESSED;
		if (n == 1)
			w->page->flags |= TAB_F_LEAF_REC;
		cfa = w->bp;
		break;
	default:
		w->end = TAB_NO_RULE;
		return 1;
	}
	cfa += (__s64)r->cfa_off;
	if (r->cfa == UROW_PLT && (w->ip & 15) >= (__u64)r->bp_off)
		cfa += 8;
	if (r->cfa == UROW_DEREF_RSP || r->cfa == UROW_DEREF_RBP) {
		if (tab_read(w, cfa, &v)) {
			w->end = TAB_NO_MEMORY;
			return 1;
		}
		cfa = v;
	}
	if (tab_read(w, cfa + (__s64)r->ra_off, &ra)) {
		w->end = TAB_NO_MEMORY;
		return 1;
	}
	/* The caller's frame lies above this one's; a return address of 0 is no root (a
	 * true one says so): userspace marks what these mean. */
	if (cfa <= w->sp || !ra) {
		w->end = TAB_NO_RULE;
		return 1;
	}
	/* (Stopped here, the walk's registers stay this frame's, for a copy from it.) */
	if (n >= PROFILE_MAX_DEPTH) {
		w->end = TAB_DEPTH;
		return 1;
	}
	/* (The callee-saved registers it saved are the caller's from here: not known.) */
	if ((r->flags & UROW_F_CS) && w->page)
		w->page->valid &= ~UROW_CS_REGS;
	if (r->bp == UROW_BP_AT_CFA) {
		bp_ok = !tab_read(w, cfa + (__s64)r->bp_off, &v);
		memo_keep(w, n, r, bp_ok, v);
		w->bp_ok = bp_ok;
		w->bp = v;
	} else {
		memo_keep(w, n, r, 0, 0);
		if (r->bp == UROW_BP_UNDEFINED)
			w->bp_ok = 0;
	}
	st->ips[n] = ra;
	st->nr = n + 1;
	w->sp = cfa;
	w->ip = ra;
	if (n == 2)
		TIME_PART(TPART_TAB_SECOND);
	/* Past the leaf, its frames may be the memo's: its caller's at once. */
	if (n == 1) {
		TIME_PART(TPART_TAB_FIRST);
		if (w->page)
			w->page->mq.cur = 1;
		if (memo_at(w, st))
			return 1;
	}
	return 0;
}

/*
 * Walk the user stack from the sample's registers AT->r into ST (leaf first) with TGID's
 * tables, PR its code's kinds; WIN_OK: the `window` holds the words at AT->r.sp. Returns enum
 * tab_end, with the registers of the last frame of ST (where a walk not whole stopped) in
 * *AT. A global function: the verifier checks it once, not in each program that takes
 * samples. (At most five arguments: the registers go in and come out in AT.)
 */
__noinline int tab_walk(struct tab_at *at, const struct proc_ranges *pr, struct ustack *st,
			__u32 tgid, __u32 win_ok)
{
	const struct proc_tabs *pt;
	struct tab_walk w = {};
	struct cpu_proc *cp;
	struct uregs *r;
	__u32 zero = 0, tid, slot = 0, mk;
	__u64 gen;

	if (!at || !st)
		return TAB_NO_TABLE;
	r = &at->r;
	at->bp_ok = 1;
	at->leaf_rec = 0;
	/* (ST holds the leaf whatever comes: --stack-copy 0 compares its frames.) */
	st->ips[0] = r->ip;
	st->nr = 1;
	for (int i = 0; i < PROFILE_SP_WORDS; i++)
		st->sp_words[i] = 0;
	if (!pr)
		return TAB_NO_TABLE;
	/* Whether the process has tables, and their version: from this CPU's copy of its
	 * entries when it has that (a hash lookup the target's memory traffic made cold at
	 * most samples: a sixth of a walk on xz), else looked up and kept there. (GEN read
	 * before the lookup: a write after it bumps procs_gen past GEN.) */
	gen = procs_gen;
	cp = bpf_map_lookup_elem(&cur_proc, &zero);
	if (cp && (cp->tgid_1 != tgid + 1 || cp->gen != gen))
		cp = NULL;
	if (cp && cp->tabs == CPU_TABS_NONE)
		return TAB_NO_TABLE;
	if (cp && cp->tabs == CPU_TABS_THERE) {
		w.f.pt_ver = cp->tabs_ver;
	} else {
		pt = bpf_map_lookup_elem(&proc_tabs, &tgid);
		if (cp) {
			cp->tabs_ver = pt ? pt->version : 0;
			cp->tabs = pt ? CPU_TABS_THERE : CPU_TABS_NONE;
		}
		if (!pt)
			return TAB_NO_TABLE;
		w.f.pt_ver = pt->version;
	}
	w.st = st;
	w.f.tgid = tgid;
	w.f.cache = at->cache;
	w.f.pr_ver = pr->version;
	w.win = win_ok ? bpf_map_lookup_elem(&window, &zero) : NULL;
	w.page = bpf_map_lookup_elem(&tpage, &zero);
	tid = (__u32)bpf_get_current_pid_tgid();
	/* (Per-CPU arrays' elements, always there: the verifier then follows one kind of
	 * walk, not one for each of them missing.) */
	if (!w.page)
		return TAB_NO_TABLE;
	w.page->flags = 0;
	slot = tab_page_begin(w.page);
	if (w.page->until)
		tab_warm(w.page, slot, at->cache, tgid);
	/* The thread's last walk (tab_memo_try checks it is), and where this one's goes. */
	mk = slot * 2 + (w.page->last[slot].memo & 1);
	w.memo = bpf_map_lookup_elem(&tmemo, &mk);
	mk ^= 1;
	w.rec = bpf_map_lookup_elem(&tmemo, &mk);
	if (!w.memo || !w.rec)
		return TAB_NO_TABLE;
	/* (Its lines read at once, as tab_warm's: a walk from it reads all of them, each
	 * one the target's work has made cold.) */
	w.page->sink += w.memo->nr + w.memo->f[3].ip + w.memo->f[7].ip + w.memo->f[11].ip;
	w.rec->nr = 0;
	w.rec->ok = 1;
	w.page->mq.wsp = r->sp;
	w.page->mq.cur = MEMO_FRAMES;
	w.page->mq.hit = 0;
	w.page->mq.kept = 0;
	w.page->mq.tid_1 = tid + 1;
	w.page->mq.tgid = tgid;
	w.page->mq.pr_ver = w.f.pr_ver;
	w.page->mq.pt_ver = w.f.pt_ver;
	w.wsp = r->sp;
	w.ip = r->ip;
	w.sp = r->sp;
	w.bp = r->bp;
	w.bp_ok = 1;
	TIME_PART(TPART_TAB_SETUP);
	bpf_loop(PROFILE_MAX_DEPTH, tab_step, &w, 0);
	TIME_PART(TPART_TAB_REST);
	/* (A row was looked for at each of its frames, the last one's ending the walk.) */
	stat_add(STAT_TAB_ROWS, st->nr);
	at->r.ip = w.ip;
	at->r.sp = w.sp;
	at->r.bp = w.bp;
	at->bp_ok = w.bp_ok;
	at->leaf_rec = (w.page->flags & TAB_F_LEAF_REC) != 0;
	if (w.page->mq.hit)
		stat_inc(STAT_TAB_MEMO);
	/* (This walk's memo, kept in place of the last one.) */
	if (w.end == TAB_WHOLE && w.rec->ok && st->nr <= MEMO_FRAMES &&
	    (!w.page->mq.hit || w.page->mq.kept)) {
		w.rec->nr = st->nr;
		w.rec->tid_1 = tid + 1;
		w.rec->tgid = tgid;
		w.rec->pr_ver = w.f.pr_ver;
		w.rec->pt_ver = w.f.pt_ver;
		w.page->last[slot].memo ^= 1;
	}
	if (w.end == TAB_WHOLE) {
		w.page->last[slot].tid = tid + 1;
		w.page->last[slot].end = w.sp;
		for (int i = 0; i < TAB_WARM; i++)
			w.page->last[slot].pc[i] = i < st->nr ?
				(i ? st->ips[i] - 1 : st->ips[0]) : 0;
	}
	return w.end == TAB_GOING ? TAB_DEPTH : (int)w.end;
}

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The user stack in BPF: the user registers, the frame-pointer walk checked against the
 * process's spans, the stack's words kept past sp, the hashes that tell a task's samples at
 * the same place apart (same_stacks). Included by profile.bpf.c only.
 */
#ifndef PROFILE_WALK_BPF_H
#define PROFILE_WALK_BPF_H

struct uregs {
	__u64 ip, sp, bp;
};

/* The user-mode registers of the current task: the sampled ones when the sample (CTX, NULL
 * for an off-CPU one) hit user mode, else those the task saved on entering the kernel.
 * Returns 0 when there are none (kernel threads). */
static __always_inline int user_regs(struct bpf_perf_event_data *ctx, struct task_struct *task,
				     struct uregs *r)
{
	struct pt_regs *regs;
	__u64 cs;

	/* ctx loads must be 8 bytes wide, and direct: the verifier rewrites them. */
	if (ctx) {
		cs = *(volatile __u64 *)&ctx->regs.cs;
		if ((cs & 3) == 3) {
			r->ip = ctx->regs.ip;
			r->sp = ctx->regs.sp;
			r->bp = ctx->regs.bp;
			return 1;
		}
	}
	if (!BPF_CORE_READ(task, mm))
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	r->ip = BPF_CORE_READ(regs, ip);
	r->sp = BPF_CORE_READ(regs, sp);
	r->bp = BPF_CORE_READ(regs, bp);
	return r->ip != 0;
}

/* CTX's registers (a sample's, in user mode) into G, in DWARF's numbering. */
static __always_inline void ctx_gprs(struct bpf_perf_event_data *ctx, __u64 *g)
{
	g[0] = ctx->regs.ax;
	g[1] = ctx->regs.dx;
	g[2] = ctx->regs.cx;
	g[3] = ctx->regs.bx;
	g[4] = ctx->regs.si;
	g[5] = ctx->regs.di;
	g[6] = ctx->regs.bp;
	g[7] = ctx->regs.sp;
	g[8] = ctx->regs.r8;
	g[9] = ctx->regs.r9;
	g[10] = ctx->regs.r10;
	g[11] = ctx->regs.r11;
	g[12] = ctx->regs.r12;
	g[13] = ctx->regs.r13;
	g[14] = ctx->regs.r14;
	g[15] = ctx->regs.r15;
}

/*
 * All general user registers into G, in DWARF's numbering: assembly's CFI may define the
 * frame through any of them (OpenSSL's AES-GCM keeps it in rbx or r11), and the unwinder
 * restores the callee-saved ones frame by frame. CTX as for user_regs.
 */
static __always_inline void user_gprs(struct bpf_perf_event_data *ctx, struct task_struct *task,
				      __u64 *g)
{
	struct pt_regs *regs;

	if (ctx && (*(volatile __u64 *)&ctx->regs.cs & 3) == 3) {
		ctx_gprs(ctx, g);
		return;
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	g[0] = BPF_CORE_READ(regs, ax);
	g[1] = BPF_CORE_READ(regs, dx);
	g[2] = BPF_CORE_READ(regs, cx);
	g[3] = BPF_CORE_READ(regs, bx);
	g[4] = BPF_CORE_READ(regs, si);
	g[5] = BPF_CORE_READ(regs, di);
	g[6] = BPF_CORE_READ(regs, bp);
	g[7] = BPF_CORE_READ(regs, sp);
	g[8] = BPF_CORE_READ(regs, r8);
	g[9] = BPF_CORE_READ(regs, r9);
	g[10] = BPF_CORE_READ(regs, r10);
	g[11] = BPF_CORE_READ(regs, r11);
	g[12] = BPF_CORE_READ(regs, r12);
	g[13] = BPF_CORE_READ(regs, r13);
	g[14] = BPF_CORE_READ(regs, r14);
	g[15] = BPF_CORE_READ(regs, r15);
}

/* FNV-1a style mixing over the frames, and a second, independent mix for the check word. */
static __always_inline void hash_frames(struct ustack *st, __u64 *hash, __u32 *check)
{
	__u64 h = 0xcbf29ce484222325ULL;
	__u32 c = 0x9747b28c;

	for (int i = 0; i < PROFILE_MAX_DEPTH; i++) {
		if (i >= st->nr)
			break;
		h = (h ^ st->ips[i]) * 0x100000001b3ULL;
		c = (c ^ (__u32)(st->ips[i] >> 3)) * 0x01000193;
		c ^= c >> 15;
	}
	for (int i = 0; i < PROFILE_SP_WORDS; i++) {
		h = (h ^ st->sp_words[i]) * 0x100000001b3ULL;
		c = (c ^ (__u32)(st->sp_words[i] >> (3 + i))) * 0x01000193;
	}
	*hash = h ? h : 1;
	*check = c;
}

/*
 * The kind of code at ADDR in PR. A global function: the verifier checks it once, not at
 * each of the walk's steps (which it cannot otherwise follow within its limit).
 */
__noinline __u8 span_kind(const struct proc_ranges *pr, __u64 addr)
{
	if (!pr)
		return SPAN_NONE;
	return proc_span_kind(pr, addr);
}

/* bpf_loop's callback: one instruction of the leaf's scan (the verifier checks it once). */
struct leaf_ctx {
	struct leaf_scan *s;
};

static long leaf_scan_cb(__u64 i, void *arg)
{
	struct leaf_ctx *c = arg;

	return !c->s || leaf_scan_step(c->s) != LEAF_GOING;
}

/*
 * Where the leaf at PC, with registers SP and BP, has its return address, from its code read
 * now (bpf/leafscan.h): enum leaf_verdict, and for LEAF_RA* the return address's offset from
 * sp in *OFF. A global function: the verifier checks it once.
 */
__noinline int leaf_scan_at(__u64 pc, __u64 sp, __u64 bp, __s32 *off)
{
	struct leaf_scan *s;
	struct leaf_ctx c;
	__u32 zero = 0, n;

	if (!off)
		return LEAF_RECORD;
	s = bpf_map_lookup_elem(&lscan, &zero);
	if (!s)
		return LEAF_RECORD;
	/* The code to its page's end at most; what could not be read is 0, which stops it. */
	__builtin_memset(s->c, 0, sizeof(s->c));
	n = PROFILE_PAGE_SIZE - (pc & (PROFILE_PAGE_SIZE - 1));
	if (n > LEAF_SCAN_BYTES)
		n = LEAF_SCAN_BYTES;
	if (bpf_probe_read_user(s->c, n & (2 * LEAF_SCAN_BYTES - 1), (void *)pc))
		return LEAF_CUT;
	leaf_scan_init(s, bp == sp);
	c.s = s;
	bpf_loop(LEAF_SCAN_INSNS, leaf_scan_cb, &c, 0);
	*off = s->off;
	return leaf_scan_finish(s);
}

/* How a frame-pointer walk ended. */
enum walk_end {
	WALK_BROKEN = 0,	/* no frame pointer, an unreadable or misplaced frame, the depth
				 * limit, or code the process does not map */
	WALK_WHOLE,		/* at a stack bottom; at a saved rbp of 0 above a frame whose
				 * return address is in code that keeps records */
	WALK_NOREC,		/* at a function that keeps no frame record where it was: the
				 * frames past it would be wrong */
};

/* Where a walk stands at return address RA by the kind of code that called (the call is one
 * byte before it): enum walk_end where it ends there, -1 to go on (code that keeps records). */
static __always_inline int ra_end(const struct proc_ranges *pr, __u64 ra)
{
	__u8 kind = span_kind(pr, ra - 1);

	if (kind == SPAN_BOTTOM)
		return WALK_WHOLE;
	if (kind == SPAN_THIN || kind == SPAN_NOREC)
		return WALK_NOREC;
	if (kind != SPAN_TRUSTED)
		return WALK_BROKEN;
	return -1;
}

/*
 * The frame-pointer walk's first step from a leaf at R->ip in trusted code of a process with
 * JIT code (ST holds the leaf; WIN: the words at sp, or NULL): where its code places its
 * return address (leaf_scan_at), that is the caller, into ST, and the caller's rbp into *FP:
 * -1, the walk goes on from there. -2: nothing said, the walk goes from rbp as for any leaf.
 * Else how the walk ends (enum walk_end). A global function: the verifier checks it once,
 * not in each of the sampling programs' paths.
 */
__noinline int walk_jit_leaf(const struct uregs *r, const struct proc_ranges *pr,
			     const struct stack_window *win, struct ustack *st, __u64 *fp)
{
	__u64 frame[2], off, idx;
	__s32 loff = 0;
	int v, end;

	if (!r || !pr || !st || !fp)
		return -2;
	v = leaf_scan_at(r->ip, r->sp, r->bp, &loff);
	if (v == LEAF_CUT) {
		stat_inc(STAT_LEAF_SCAN_CUT);
		return WALK_BROKEN;
	}
	if (v != LEAF_RA && v != LEAF_RA_BP)
		return -2;
	stat_inc(STAT_LEAF_SCAN_PLACED);
	/* (In [8, 4096], 8-aligned: leaf_scan_finish's; the verifier knows it again.) */
	off = (__u64)(__s64)loff;
	if (off > 4096)
		return WALK_BROKEN;
	idx = off / 8;
	if (win && idx < WINDOW_WORDS) {
		frame[1] = win->w[idx & (WINDOW_WORDS - 1)];
		frame[0] = win->w[(idx - 1) & (WINDOW_WORDS - 1)];
	} else if (v == LEAF_RA_BP) {
		if (bpf_probe_read_user(frame, sizeof(frame), (void *)(r->sp + off - 8)))
			return WALK_BROKEN;
	} else if (bpf_probe_read_user(&frame[1], sizeof(frame[1]), (void *)(r->sp + off))) {
		return WALK_BROKEN;
	}
	/* (The caller's rbp in the register: 0 there says nothing, as in the walk.) */
	if (v == LEAF_RA) {
		frame[0] = r->bp;
		if (!frame[0])
			return WALK_BROKEN;
	}
	if (frame[1] == 0)
		return WALK_BROKEN;
	st->ips[1] = frame[1];
	st->nr = 2;
	end = ra_end(pr, frame[1]);
	if (end >= 0)
		return end;
	if (frame[0] == 0)
		return WALK_WHOLE;
	if (frame[0] <= r->sp + off)
		return WALK_BROKEN;
	*fp = frame[0];
	return -1;
}

/* A frame record: the caller's rbp, the return address. */
struct fp_rec {
	__u64 bp, ra;
};

/*
 * The frame record at FP, past the window read at sp, into *OUT: from the words of the
 * stack read past it in PG (tpage, as the tables' walk reads them: at the walk's first such
 * frame up to where the thread's last whole walk on this CPU ended, else to the page's end),
 * else read alone. A read costs ~100 ns whatever its size: xz's frame-pointer build read 7
 * records a sample one by one. Returns 0, or -1 when the record could not be read. A global
 * function: the verifier checks it once, not in each of the walk's frames.
 */
__noinline int fp_record(struct tab_page *pg, __u64 fp, struct fp_rec *out)
{
	__u64 idx;

	if (!pg || !out)
		return -1;
	if (fp < pg->lo || fp + 16 > pg->hi) {
		/* (Nothing read yet this walk: walk_user's first record past its window.) */
		if (!pg->hi)
			tab_page_begin(pg);
		if (tab_page_read(pg, fp) || fp + 16 > pg->hi)
			return bpf_probe_read_user(out, sizeof(*out), (void *)fp) ? -1 : 0;
	}
	idx = (fp - pg->lo) / 8;
	/* (A bound the compiler keeps: the verifier checks the index.) */
	asm volatile("" : "+r"(idx));
	if (idx >= sizeof(pg->w) / 8 - 1)
		return -1;
	out->bp = pg->w[idx];
	out->ra = pg->w[idx + 1];
	return 0;
}

/* A whole walk ended at END: when its records went past the window (PG: tpage then, else
 * NULL), the next walk of its thread on this CPU reads up to there at once (fp_record,
 * tab_page_read). Its pcs are not the tables' walk's: none for tab_warm. */
static __always_inline int fp_whole(struct tab_page *pg, __u64 end)
{
	__u32 tid, slot;

	if (pg) {
		tid = (__u32)bpf_get_current_pid_tgid();
		slot = tid & (TAB_LAST_THREADS - 1);
		pg->last[slot].tid = tid + 1;
		pg->last[slot].end = end;
		pg->last[slot].pc[0] = 0;
	}
	return WALK_WHOLE;
}

/*
 * Walk the frame-pointer chain from R into ST (leaf first), checking each step against PR,
 * the kinds of the process's code (see enum profile_span): the leaf must not be in code
 * without a frame record (a frameless leaf with its return address at sp is fixed up by
 * userspace), each return address must be in a function that keeps one. PR NULL: nothing is
 * known of the process, the walk is not checked and ends well at a saved rbp of 0.
 */
static __always_inline int walk_user(const struct uregs *r, const struct proc_ranges *pr,
				     struct ustack *st, struct stack_window **winp)
{
	__u64 fp = r->bp, frame[2], off;
	struct stack_window *win;
	struct tab_page *pg;
	struct tab_page *held = NULL;	/* pg once a record past the window was read */
	__u32 zero = 0, idx;
	__u64 checked = pr != NULL;	/* a scalar: the verifier allows no arithmetic on pr */
	__u8 kind = SPAN_TRUSTED;
	int i, start, end;

	asm volatile("" : "+r"(checked));
	st->ips[0] = r->ip;
	st->nr = 1;
	*winp = NULL;
	if (pr) {
		kind = span_kind(pr, r->ip);
		if (kind == SPAN_BOTTOM)
			return WALK_WHOLE;
		if (kind == SPAN_NOREC)
			return WALK_NOREC;
		if (kind == SPAN_NONE)
			return WALK_BROKEN;
	}
	/* One read of the stack from sp serves the words at sp (see keep_sp_words) and the
	 * frames that lie in it, most of them in shallow stacks; frames past it come from one
	 * more read (fp_record). Near the top of the stack the read fails. Not
	 * read for a walk that does not begin (a leaf without frame records: the tables' walk
	 * reads what it needs, up to where it ends, at a read's cost, ~180 ns on xz). */
	win = bpf_map_lookup_elem(&window, &zero);
	if (win && bpf_probe_read_user(win->w, sizeof(win->w), (void *)r->sp))
		win = NULL;
	*winp = win;
	/* (Its words are marked none only when a record is first past the window: most
	 * walks stay in it, and its lines are cold at most samples.) */
	pg = bpf_map_lookup_elem(&tpage, &zero);
	/* A JIT leaf in its prologue or epilogue: its return address is not above the record
	 * at rbp, which is its caller's. */
	start = 1;
	if (pr && pr->jit && kind == SPAN_TRUSTED) {
		end = walk_jit_leaf(r, pr, win, st, &fp);
		if (end >= 0)
			return end;
		if (end == -1)
			start = 2;
	}
	/* rbp == 0 in a register says nothing: code without frame pointers leaves it so. */
	if (fp == 0 || fp < r->sp)
		return WALK_BROKEN;
	for (i = start; i < PROFILE_MAX_DEPTH; i++) {
		if (fp & 7)
			return WALK_BROKEN;
		off = fp - r->sp;
		if (win && fp >= r->sp && off <= (WINDOW_WORDS - 2) * 8) {
			idx = off / 8;
			if (idx > WINDOW_WORDS - 2)
				return WALK_BROKEN;
			frame[0] = win->w[idx];
			frame[1] = win->w[idx + 1];
		} else {
			if (!held && pg) {
				held = pg;
				held->lo = held->hi = 0;
			}
			if (fp_record(held, fp, (struct fp_rec *)frame))
				return WALK_BROKEN;
		}
		/* A return address of 0 is no root: zeroed words read as a frame record.
		 * Known code ends at its bottoms (SPAN_BOTTOM); only an unchecked walk takes a
		 * record of zeros for the end. */
		if (frame[1] == 0)
			return !checked && frame[0] == 0 ? fp_whole(held, fp + 16) : WALK_BROKEN;
		st->ips[i] = frame[1];
		st->nr = i + 1;
		if (pr) {
			end = ra_end(pr, frame[1]);
			if (end == WALK_WHOLE)
				return fp_whole(held, fp + 16);
			if (end >= 0)
				return end;
		}
		if (frame[0] == 0)
			return fp_whole(held, fp + 16);
		if (frame[0] <= fp)
			return WALK_BROKEN;
		fp = frame[0];
	}
	return WALK_BROKEN;
}

/* Store the user stack in ST, whose hash is HASH, into `ustacks`; returns HASH, or 0 when it
 * could not be. */
static __always_inline __u64 store_ustack(struct ustack *st, __u64 hash)
{
	struct ustack *old;
	long err;

	old = bpf_map_lookup_elem(&ustacks, &hash);
	if (old) {
		if (old->check == st->check && old->nr == st->nr)
			return hash;
		stat_inc(STAT_USTACK_COLLIDE);
		return 0;
	}
	err = bpf_map_update_elem(&ustacks, &hash, st, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST: another CPU stored it first */) {
		stat_inc(STAT_USTACK_FULL);
		return 0;
	}
	return hash;
}

/* The words at sp that may be a frameless leaf's return address (see struct ustack), from
 * the window the walk read at sp when it has one. Returns whether one of them is in code that
 * keeps no frame record where it calls (SPAN_THIN, SPAN_NOREC): a leaf that made no record of
 * its own returns there, and the walk from rbp left out that caller and the callers it has
 * no record of (a libc function without frame pointers under the vDSO's clock_gettime): its
 * frames past the leaf are no stack to count whole. */
static __always_inline bool keep_sp_words(const struct proc_ranges *pr, __u64 sp,
					  const struct stack_window *win, struct ustack *st)
{
	__u64 w[PROFILE_SP_WORDS] = { 0 }, lo, hi;
	bool norec = false;
	__u8 kind;
	int n;

	for (int i = 0; i < PROFILE_SP_WORDS; i++)
		st->sp_words[i] = 0;
	if (!pr)
		return false;
	n = pr->go_windows ? PROFILE_SP_WORDS : 2;
	if (win) {
		for (int i = 0; i < PROFILE_SP_WORDS; i++)
			w[i] = win->w[i];
	} else if (bpf_probe_read_user(w, sizeof(w), (void *)sp) &&
		   bpf_probe_read_user(w, 2 * sizeof(w[0]), (void *)sp)) {
		return false;
	}
	/* (Outside the spans' extent, no word is code: no search for it.) */
	lo = pr->nr_spans ? pr->span_start[0] : 0;
	hi = pr->nr_spans ? pr->span_end : 0;
	for (int i = 0; i < PROFILE_SP_WORDS; i++) {
		if (i >= n)
			break;
		if (w[i] < lo || w[i] >= hi)
			continue;
		kind = span_kind(pr, w[i]);
		if (kind != SPAN_NONE)
			st->sp_words[i] = w[i];
		if (i < 2 && (kind == SPAN_THIN || kind == SPAN_NOREC))
			norec = true;
	}
	return norec;
}

struct hash_ctx {
	const struct sample_event *e;
	__u64 h;
	__u64 base;		/* hash_tail_word: the word its first call hashes */
};

/* Whether W may be an address in the process (code, stack, data), as opposed to a small
 * number: only such a word can take an unwind anywhere (a return address, a saved frame
 * pointer, a register that holds the CFA). */
static __always_inline bool may_be_address(__u64 w)
{
	return w >= 0x10000 && w < 0x800000000000ULL;
}

/* W, word or register I, into hash H when it may be an address: the words an unwind can
 * follow, not a loop's counter that changes at every wait in the same place. */
static __always_inline __u64 hash_mix(__u64 h, __u64 w, __u64 i)
{
	if (!may_be_address(w))
		return h;
	return (h ^ w ^ i << 48) * 0x100000001b3ULL;
}

/* bpf_loop's callback: words 8I to 8I + 7 of the stack copy into the hash (the verifier
 * checks it once, not per word). */
static long hash_word(__u64 i, void *arg)
{
	struct hash_ctx *c = arg;
	const __u64 *w;

	if (i >= PROFILE_MAX_STACK_COPY / 64)
		return 1;
	w = (const __u64 *)&c->e->stack[i * 64];
	for (int k = 0; k < 8; k++)
		c->h = hash_mix(c->h, w[k], i * 8 + k + 64);
	return 0;
}

/*
 * Whether E, the stacks of a task leaving the CPU (OP), unwind as those it left with last
 * time, sent then as OP's off_sig.seq: the same ip, sp, and words that may be addresses, in
 * the registers, the red zone and the copy, at the same places (OP->same_as says so). Else
 * they are noted as its last.
 */
/* bpf_loop's callback: word BASE + I, one of the copy's last (short of 8). */
static long hash_tail_word(__u64 i, void *arg)
{
	struct hash_ctx *c = arg;
	__u64 k = c->base + i;

	if (k >= PROFILE_MAX_STACK_COPY / 8)
		return 1;
	c->h = hash_mix(c->h, *(const __u64 *)&c->e->stack[k * 8], k + 64);
	return 0;
}

/* bpf_loop's callback: deep word I (sample_event.deep_val) into the hash. */
static long hash_deep_word(__u64 i, void *arg)
{
	struct hash_ctx *c = arg;

	if (i >= PROFILE_DEEP_WORDS)
		return 1;
	c->h = hash_mix(c->h, c->e->deep_val[i], i + 8192);
	return 0;
}

/* bpf_loop's callback: frame I (sample_event.frames) into the hash. */
static long hash_frame(__u64 i, void *arg)
{
	struct hash_ctx *c = arg;

	if (i >= PROFILE_MAX_DEPTH)
		return 1;
	c->h = (c->h ^ c->e->frames[i] ^ i << 56) * 0x100000001b3ULL;
	return 0;
}

static __always_inline bool same_stacks(const struct sample_event *e, struct off_pending *op)
{
	struct hash_ctx c = { .e = e, .h = 0x84222325cbf29ce4ULL ^ e->ip };
	__u32 par = period & 1;
	struct off_sig *old, sig;

	for (int i = 0; i < PROFILE_NR_REGS; i++)
		c.h = hash_mix(c.h, e->regs[i], i);
	for (int i = 0; i < PROFILE_RED_ZONE / 8; i++)
		c.h = hash_mix(c.h, e->below[i], i + PROFILE_NR_REGS);
	c.h = (c.h ^ e->sp) * 0x100000001b3ULL;
	/* (A thread id reused by another process is not the same task; a sample of another
	 * event at the same place is not the same either.) */
	c.h = (c.h ^ ((__u64)e->pid << 32 | e->tid)) * 0x100000001b3ULL;
	c.h = (c.h ^ e->evflags) * 0x100000001b3ULL;
	c.base = 0;
	bpf_loop(e->stack_len / 64, hash_word, &c, 0);
	c.base = e->stack_len / 64 * 8;
	bpf_loop(e->stack_len / 8 - c.base, hash_tail_word, &c, 0);
	c.h ^= (__u64)e->holes << 32 | e->stack_len;
	bpf_loop(e->nr_deep, hash_deep_word, &c, 0);
	c.h = (c.h ^ e->gen) * 0x100000001b3ULL;
	/* Sent from where the tables' walk stopped: the frames walked up to there too. */
	if (e->why == SEND_TABLE_REST) {
		c.h = (c.h ^ e->why << 8 ^ e->bp_ok) * 0x100000001b3ULL;
		bpf_loop(e->nr_frames, hash_frame, &c, 0);
	}
	old = bpf_map_lookup_elem(&offsig, &op->ktid);
	if (old && old->sig == c.h && old->period == par && e->below_ok) {
		op->same_as = old->seq;
		return true;
	}
	sig = (struct off_sig){ .sig = c.h, .seq = op->seq, .period = par };
	bpf_map_update_elem(&offsig, &op->ktid, &sig, BPF_ANY);
	return false;
}

#endif

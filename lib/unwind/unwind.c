// SPDX-License-Identifier: GPL-3.0-or-later
/* unwind: the unwinder, its fast path by cached CFI rules, and the check against libunwind. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base/htab.h"
#include "base/limits.h"
#include "base/log.h"
#include "proc/procmaps.h"
#include "unwind/unwind_int.h"
#include "dso/x86.h"
/* (Plain C shared with BPF, bpf/: the scan BPF runs on a JIT leaf's code.) */
#include <linux/types.h>
#include "leafscan.h"

const char *const unwind_stop_names[UNWIND_STOP__MAX] = {
	[UNWIND_STOP_END] = "complete",
	[UNWIND_STOP_NO_INFO] = "no unwind info",
	[UNWIND_STOP_BAD_FRAME] = "bad frame",
	[UNWIND_STOP_NO_MEMORY] = "unreadable stack",
	[UNWIND_STOP_DEPTH] = "depth limit",
	[UNWIND_STOP_COPY] = "deeper than the copy",
};

/* --- the unwinder ------------------------------------------------------------------------- */

/*
 * The unwinder's context, reset for sample S: 33 KiB with its page cache, allocated once
 * (a calloc per sample cost more than some unwinds). NULL when out of memory.
 */
struct uctx *uctx__begin(struct unwinder *u, const struct unwind_sample *s)
{
	struct uctx *c = u->ctx;

	if (!c) {
		c = u->ctx = malloc(sizeof(*c));
		if (!c)
			return NULL;
	}
	c->u = u;
	c->s = s;
	c->p = NULL;
	c->no_info = c->mem_fault = c->past_copy = c->live_read = false;
	c->scan_pc = 0;
	c->nr_deep_used = c->nr_deep = 0;
	c->no_want = false;
	c->copy_only = s->copy_only;
	c->no_code = false;
	c->fail_n = 1;
	c->fail_stop = UNWIND_STOP_NO_INFO;
	c->stack_used = 0;
	for (int i = 0; i < PAGE_CACHE; i++)
		c->pages[i].valid = false;
	c->gone = false;
	c->next_page = 0;
	return c;
}

struct unwinder *unwinder__new(struct procmaps *pm, struct dsos *dsos)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->pm = pm;
	u->dsos = dsos;
	u->check = getenv("PROFILE_UNWIND_CHECK") != NULL;
	unwind_remote__init_accessors(&u->acc);
	return u;
}

void unwinder__set_table_source(struct unwinder *u, unwind_table_fn fn, void *ctx)
{
	u->table_fn = fn;
	u->table_ctx = ctx;
}

void unwinder__set_bottoms(struct unwinder *u, const char *const *names, size_t n)
{
	u->bottoms = names;
	u->nr_bottoms = n;
}

void unwinder__forget(struct unwinder *u, pid_t pid)
{
	struct uproc **pp = &u->procs[(unsigned int)pid % PROC_BUCKETS];

	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->pid == pid) {
			struct uproc *p = *pp;

			*pp = p->next;
			uproc__free(p);
			return;
		}
	}
}

static void ufile__free(struct ufile *f)
{
	if (f && !f->tab_borrowed)
		utab__free(f->tab);
	free(f);
}

void unwinder__forget_files(struct unwinder *u, const uint32_t *ids, size_t n)
{
	size_t gone = 0;

	for (size_t k = 0; k < n; k++) {
		struct ufile *f = ids[k] < u->cap_files ? u->files[ids[k]] : NULL;

		if (f) {
			f->forgotten = true;
			gone++;
		}
	}
	if (!gone)
		return;
	/* (Their ids are given to files opened later.) */
	memset(u->ahead, 0, sizeof(u->ahead));
	/* A process that mapped them is forgotten already; any left keeps none of them, and
	 * libunwind's caches of it (fake addresses by file id) start again. */
	for (int b = 0; b < PROC_BUCKETS; b++) {
		for (struct uproc *p = u->procs[b]; p; p = p->next) {
			size_t kept = 0;

			for (size_t i = 0; i < p->nr_loaded; i++)
				if (!p->loaded[i].f->forgotten)
					p->loaded[kept++] = p->loaded[i];
			if (kept != p->nr_loaded)
				unw_flush_cache(p->as, 0, 0);
			p->nr_loaded = kept;
		}
	}
	for (size_t k = 0; k < n; k++) {
		if (ids[k] < u->cap_files && u->files[ids[k]]) {
			ufile__free(u->files[ids[k]]);
			u->files[ids[k]] = NULL;
		}
	}
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	for (int b = 0; b < PROC_BUCKETS; b++) {
		struct uproc *p, *next;

		for (p = u->procs[b]; p; p = next) {
			next = p->next;
			uproc__free(p);
		}
	}
	for (uint32_t i = 0; i < u->cap_files; i++)
		ufile__free(u->files[i]);
	free(u->files);
	free(u->ctx);
	free(u);
}

/* Register REG (DWARF number, not rsp) of a frame whose general registers are GR (VALID:
 * which are known) and rbp BP (BP_OK), into *OUT. Returns whether it is known. */
static bool reg_value(int32_t reg, const uint64_t *gr, uint32_t valid, uint64_t bp, bool bp_ok,
		      uint64_t *out)
{
	if (reg == CFI_REG_RBP) {
		*out = bp;
		return bp_ok;
	}
	if (reg < 0 || reg >= UNWIND_NR_REGS || reg == CFI_REG_RSP || !(valid >> reg & 1))
		return false;
	*out = gr[reg];
	return true;
}

/*
 * A leaf at PC in a small stretch of code no FDE describes, from START (runtime) on, that
 * keeps no frame (_init, _fini, an assembly routine): whether the word at SP is its return
 * address, known by the instruction before it: a direct call (e8 rel32) to an address in
 * [START, PC]. A word that merely looks like a return address is not taken.
 */
/* The 8 bytes of code before return address RET into *CODE, and (*TARGET, true) when they
 * end in a direct call (e8 rel32), its target then. False when they cannot be read. */
static bool code_before(struct uctx *c, uint64_t ret, uint64_t *code, uint64_t *target)
{
	if (ret < 8 || read_code(c, ret - 8, code))
		return false;
	*target = (uint8_t)(*code >> 24) == 0xe8 ?
		  ret + (uint64_t)(int64_t)(int32_t)(uint32_t)(*code >> 32) : 0;
	return true;
}

static bool leaf_returns_at_sp(struct uctx *c, uint64_t pc, uint64_t sp, uint64_t start)
{
	uint64_t ra, code, target;

	return !read_stack(c, sp, &ra) && code_before(c, ra, &code, &target) && target &&
	       target >= start && target <= pc;
}

/* The fast path gives up after N frames, for STOP: 0 (libunwind's turn, where it has one). */
static int fast_fail(struct uctx *c, int n, enum unwind_stop stop)
{
	c->fail_n = n;
	/* A word past the copy, of a thread that ran since: not unreadable, not read. */
	c->fail_stop = stop == UNWIND_STOP_NO_MEMORY && c->past_copy ? UNWIND_STOP_COPY : stop;
	return 0;
}

/* What the fast path knows of a frame. */
struct frame_regs {
	uint64_t ip, sp, bp, gr[UNWIND_NR_REGS];
	bool bp_ok;
	bool exact;		/* ip is where the frame is (the leaf, a signal's), not a return */
	uint32_t valid;		/* bit i: gr[i] is the frame's register i (not rsp, rbp) */
};

static int walk(struct uctx *c, const struct frame_regs *from, uint64_t *ips, int n, int max,
		enum unwind_stop *stop, int scans);

/* Whether the instruction before return address RET is a call that may have gone to code
 * at PC of a stretch without CFI from START: a direct call into [START, PC] (or, unless
 * DIRECT_ONLY, to a PLT stub, which jumps on, or an indirect one). The caller must have CFI
 * at RET - 1, or (ANY_CALLER) be code of a file no FDE covers either (assembly calling its
 * own helper). */
static bool call_into(struct uctx *c, uint64_t ret, uint64_t start, uint64_t pc,
		      bool direct_only, bool any_caller)
{
	struct loaded *l = ret > 8 ? uproc__loaded_for_ip(c, ret - 1) : NULL, *lt;
	unsigned char b[8];
	struct cfi_rule r;
	uint64_t code, target;
	struct x86_insn in;
	int err;

	if (!l || !code_before(c, ret, &code, &target))
		return false;
	err = ufile__rule(l->f, ret - 1 - l->bias, &r);
	if (err && !(any_caller && err == -ENOENT))
		return false;
	memcpy(b, &code, sizeof(b));
	if (target) {
		if (target >= start && target <= pc)
			return true;
		if (direct_only)
			return false;
		lt = uproc__loaded_for_ip(c, target);
		return lt && !ufile__rule(lt->f, target - lt->bias, &r) &&
		       r.cfa_deref == CFI_CFA_PLT;
	}
	/* call *reg, *(reg), *disp(reg), *(rip), with REX and SIB: 2 to 7 bytes. */
	for (size_t len = 2; !direct_only && len <= 7; len++)
		if (x86__decode(b + 8 - len, len, &in) == len && !in.vex &&
		    in.map == X86_MAP_1B && in.op == 0xff && (in.reg & 7) == 2)
			return true;
	return false;
}

/* x86's register numbers (rax rcx rdx rbx rsp rbp rsi rdi r8..) as DWARF's (rax rdx rcx rbx
 * rsi rdi rbp rsp r8..). */
static const uint8_t dwarf_of_x86[16] = { 0, 2, 1, 3, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15 };

/* The code's 16 bytes at ADDR into B. */
static bool code16(struct uctx *c, uint64_t addr, unsigned char b[16])
{
	uint64_t w[2];

	if (read_code(c, addr, &w[0]) || read_code(c, addr + 8, &w[1]))
		return false;
	memcpy(b, w, 16);
	return true;
}

/*
 * Where code no CFI describes keeps its return address at PC (runtime; L: its file): followed
 * from PC to its ret (conditional branches not taken, direct jumps taken, calls returned
 * from), adding up what each instruction does to rsp (pushes, pops, adds, subs, lea), and
 * taking rsp from a register still as it was at PC (mov r, rsp; leave from rbp): the slot is
 * then that register's value at PC (X86_RSP: rsp's) plus *OFF, into *BASE. False when an
 * instruction moves rsp otherwise, control goes where it cannot be followed, or no ret comes
 * within UNWIND_AHEAD_MAX instructions. *RBP_KEPT: rbp at the ret is as it was at PC. What
 * the code says depends on PC alone: kept in the unwinder's cache by file and address (L NULL:
 * anonymous code, kept by process and address while its first 8 bytes stay the same, followed
 * for UNWIND_AHEAD_ANON_MAX instructions).
 */
static bool ret_rule_ahead(struct uctx *c, const struct loaded *l, uint64_t pc, uint8_t *base,
			   int64_t *off, bool *rbp_kept)
{
	uint32_t file = l ? l->f->id : 0x80000000u | ((uint32_t)c->s->pid & 0x7fffffffu);
	uint64_t key = l ? pc - l->bias : pc, code = 0;
	struct ahead_ent *a = &c->u->ahead[hash_u64(file, key) % UNWIND_AHEAD_CACHE];
	uint32_t same = 0xffffu & ~(1u << X86_RSP);	/* registers still as at PC */
	int64_t delta = 0;
	uint8_t from = X86_RSP;
	uint64_t at = pc;

	/* Anonymous code may be rewritten in place: the entry holds while its first bytes do. */
	if (!l && read_code(c, pc, &code))
		return false;
	if (a->state && a->file == file && a->pc == key && (l || a->code == code)) {
		*base = a->base;
		*off = a->off;
		*rbp_kept = a->rbp_kept;
		return a->state == AHEAD_OK;
	}
	*a = (struct ahead_ent){ .file = file, .pc = key, .code = code, .state = AHEAD_NONE };
	for (int k = 0; k < (l ? UNWIND_AHEAD_MAX : UNWIND_AHEAD_ANON_MAX); k++) {
		unsigned char b[16];
		struct x86_insn in;
		int64_t d;
		size_t len;

		if (!code16(c, at, b) || !(len = x86__decode(b, sizeof(b), &in)))
			return false;
		if (!in.vex && in.map == X86_MAP_1B) {
			uint8_t op = in.op, ext = in.reg & 7;

			if (op == 0xc3 || op == 0xc2) {			/* ret */
				*a = (struct ahead_ent){ .file = file, .pc = key, .code = code,
							 .state = AHEAD_OK, .base = from,
							 .off = (int32_t)delta,
							 .rbp_kept = same >> X86_RBP & 1 };
				*base = from;
				*off = delta;
				*rbp_kept = a->rbp_kept;
				return delta == (int32_t)delta;
			}
			if (op == 0xeb || op == 0xe9) {				/* jmp */
				at += len + (uint64_t)in.imm;
				continue;
			}
			if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3)) {
				at += len;					/* jcc */
				continue;
			}
			if (op == 0xe8 || (op == 0xff && ext == 2)) {		/* call */
				same &= 1u << 3 | 1u << X86_RBP | 0xf000u;
				at += len;
				continue;
			}
			if (op == 0xff && (ext == 3 || ext == 4 || ext == 5))
				return false;					/* jmp *, far */
			if (op == 0xc9) {					/* leave */
				if (!(same >> X86_RBP & 1))
					return false;
				from = X86_RBP;
				delta = 8;
				same &= ~(1u << X86_RBP);
				at += len;
				continue;
			}
			if ((op == 0x89 || op == 0x8b) && (in.rex & 8) && in.mod == 3 &&
			    (op == 0x89 ? in.rm : in.reg) == X86_RSP) {
				uint8_t src = op == 0x89 ? in.reg : in.rm;	/* mov r, rsp */

				if (!(same >> src & 1))
					return false;
				from = src;
				delta = 0;
				at += len;
				continue;
			}
		} else if (in.map == X86_MAP_0F && !in.vex && in.op >= 0x80 && in.op <= 0x8f) {
			at += len;						/* jcc */
			continue;
		}
		if (x86__sp_delta(&in, &d))
			delta += d;
		else if (x86__writes_gpr(&in, X86_RSP))
			return false;
		for (int r = 0; r < 16; r++)
			if ((same >> r & 1) && x86__writes_gpr(&in, r))
				same &= ~(1u << r);
		at += len;
	}
	return false;
}

/*
 * Where a leaf at PC in code no CFI describes (registers SP, BP) has its return address, by
 * its code from PC (bpf/leafscan.h, the scan BPF's walks run at the sample): 1 and its rule
 * in *R where the code says (at its frame record's making or leaving); -1 where the code
 * says rbp is not the leaf's record and not where its return address is (no guess from rbp
 * then); 0 where it says nothing or the record at rbp is the leaf's.
 */
static int leaf_placed(struct uctx *c, uint64_t pc, uint64_t sp, uint64_t bp, bool bp_ok,
		       struct cfi_rule *r)
{
	struct leaf_scan s;

	memset(&s, 0, sizeof(s));
	for (int i = 0; i < LEAF_SCAN_BYTES / 8; i++) {
		uint64_t w;

		if (read_code(c, pc + 8 * (uint64_t)i, &w))
			break;
		memcpy(&s.c[8 * i], &w, sizeof(w));
	}
	leaf_scan_init(&s, bp_ok && bp == sp);
	for (int k = 0; k < LEAF_SCAN_INSNS && s.verdict == LEAF_GOING; k++)
		leaf_scan_step(&s);
	if (leaf_scan_finish(&s) == LEAF_CUT)
		return -1;
	if (s.verdict != LEAF_RA && s.verdict != LEAF_RA_BP)
		return 0;
	*r = (struct cfi_rule){ .cfa_reg = CFI_REG_RSP, .cfa_off = s.off + 8, .ra = CFI_AT_CFA,
				.ra_off = -8,
				.bp = s.verdict == LEAF_RA_BP ? CFI_AT_CFA : CFI_SAME,
				.bp_off = -16 };
	return 1;
}

/* Where frame F (in code no CFI describes, in file L) keeps its return address, by its code
 * (ret_rule_ahead) and its registers: into *SLOT, or false. */
static bool ret_slot_ahead(struct uctx *c, const struct loaded *l, const struct frame_regs *f,
			   uint64_t *slot)
{
	uint8_t base;
	int64_t off;
	bool kept;

	if (!ret_rule_ahead(c, l, f->ip, &base, &off, &kept))
		return false;
	if (base == X86_RSP)
		*slot = f->sp + (uint64_t)off;
	else if (base == X86_RBP && f->bp_ok)
		*slot = f->bp + (uint64_t)off;
	else if (base != X86_RBP && (f->valid >> dwarf_of_x86[base] & 1))
		*slot = f->gr[dwarf_of_x86[base]] + (uint64_t)off;
	else
		return false;
	return true;
}

/* The caller of frame F, its return address at A: whether the stack unwinds from there by CFI
 * to the thread's first frame (or, with TO_COPY, to the copy's end). Returns the frames of
 * IPS (N before) so found and sets *STOP, or 0. */
static int caller_at(struct uctx *c, const struct frame_regs *f, uint64_t a, uint64_t w,
		     uint64_t *ips, int n, int max, enum unwind_stop *stop, bool to_copy,
		     int scans)
{
	/* The caller's registers are what the code without CFI left: unknown, but for rbp,
	 * which it may have kept (a candidate that needed a wrong one goes nowhere). */
	struct frame_regs t = { .ip = w, .sp = a + 8, .bp = f->bp, .bp_ok = f->bp_ok };
	enum unwind_stop st;
	int m;

	ips[n] = w;
	m = walk(c, &t, ips, n + 1, max, &st, scans);
	if (m > 0 && st == UNWIND_STOP_END) {
		*stop = st;
		return m;
	}
	if (to_copy && !m && c->fail_stop == UNWIND_STOP_COPY && c->fail_n > n + 1) {
		*stop = UNWIND_STOP_COPY;
		return c->fail_n;
	}
	return 0;
}

/*
 * The frame at F (PC) is in code no CFI describes, in a stretch from START: its caller. Where
 * its code says where its return address is (ret_slot_ahead), that word, checked: a call
 * before it that may have gone here (call_into), the stack unwound from it by CFI to the
 * thread's first frame, or to the copy's end (cut there, marked). Else as crash reporters
 * find it: the words of the copy from its sp up, each a candidate only when the instruction
 * before it is a direct call into the stretch (a return address left from an earlier
 * indirect call cannot be told from the leaf's own), taken only when the stack unwinds from
 * it by CFI to the first frame. IPS has N frames. Returns the frames of the stack so found
 * (c->scan_pc set), 0, or -1 when the code says its return address lies past the copy.
 */
static int scan_caller(struct uctx *c, const struct loaded *l, const struct frame_regs *f,
		       uint64_t pc, uint64_t start, uint64_t *ips, int n, int max,
		       enum unwind_stop *stop, int scans)
{
	const struct unwind_sample *s = c->s;
	uint64_t end = s->sp + s->stack_len, a, w;
	int tries = 0, m;

	if (f->sp < s->sp || n + 1 >= max)
		return 0;
	if (ret_slot_ahead(c, l, f, &a)) {
		if (a < f->sp)
			return 0;
		/* Past the copy (OpenBLAS's kernels keep 28 KiB): from the sample's deep
		 * words, else cut there, for that (asked for the next samples). */
		if (read_stack(c, a, &w))
			return c->past_copy ? -1 : 0;
		/* (Its caller may be assembly too, found the same way, SCANS deep.) */
		m = call_into(c, w, start, pc, false, true) ?
		    caller_at(c, f, a, w, ips, n, max, stop, true, scans - 1) : 0;
		if (m)
			c->scan_pc = pc;
		return m;
	}
	if (end > f->sp + UNWIND_SCAN_SPAN)
		end = f->sp + UNWIND_SCAN_SPAN;
	for (a = f->sp; a + 8 <= end; a += 8) {
		memcpy(&w, (const char *)s->stack + (a - s->sp), sizeof(w));
		if (w < 0x1000 || !call_into(c, w, start, pc, true, false))
			continue;
		if (++tries > UNWIND_SCAN_TRIES)
			break;
		m = caller_at(c, f, a, w, ips, n, max, stop, false, 0);
		if (m) {
			c->scan_pc = pc;
			return m;
		}
	}
	return 0;
}

/*
 * The fast path: cached CFI rules (ufile__rule), two or three stack reads per frame. Returns
 * the number of frames in IPS and sets *STOP; 0 when some frame needs libunwind (no rule for
 * its address, a register we do not have, a word we cannot read), which then does the whole
 * stack so that what is reported does not depend on which path ran.
 */
/* S's known frames and then its ip into IPS (room for MAX, at least 2): how many. */
static int prefix_frames(const struct unwind_sample *s, uint64_t *ips, int max)
{
	int n = s->nr_prefix < (uint32_t)max ? (int)s->nr_prefix : max - 1;

	memcpy(ips, s->prefix, (size_t)n * sizeof(*ips));
	ips[n] = s->ip;
	return n + 1;
}

static int unwind_fast(struct uctx *c, uint64_t *ips, int max, enum unwind_stop *stop)
{
	const struct unwind_sample *s = c->s;
	struct frame_regs f = { .ip = s->ip, .sp = s->sp, .bp = s->bp, .bp_ok = true,
				.exact = true };

	/* From a frame past the leaf (its frames up to there known): a return address, rbp
	 * when known, no other register. */
	if (s->nr_prefix) {
		int first = prefix_frames(s, ips, max);

		f.exact = false;
		f.bp_ok = s->bp_ok;
		return walk(c, &f, ips, first, max, stop, UNWIND_SCAN_DEPTH);
	}
	/* The sample's registers, as long as no frame says otherwise: a CFI without a rule for
	 * a register leaves it as it is (as libunwind takes it too). */
	if (s->regs) {
		memcpy(f.gr, s->regs, sizeof(f.gr));
		f.valid = ((1u << UNWIND_NR_REGS) - 1) & ~(1u << CFI_REG_RSP | 1u << CFI_REG_RBP);
	}
	return walk(c, &f, ips, 1, max, stop, UNWIND_SCAN_DEPTH);
}

/* The fast path from frame FROM, the N-th of IPS (SCANS: how many frames more may have their
 * caller found by scan_caller). */
static int walk(struct uctx *c, const struct frame_regs *from, uint64_t *ips, int n, int max,
		enum unwind_stop *stop, int scans)
{
	const struct unwind_sample *s = c->s;
	uint64_t ip = from->ip, sp = from->sp, bp = from->bp, gr[UNWIND_NR_REGS];
	bool bp_ok = from->bp_ok, exact = from->exact, bp_lost = false, no_guess;
	uint32_t valid = from->valid;
	uint64_t bp_slot = 0;	/* where rbp was saved, past the copy and not read */

	memcpy(gr, from->gr, sizeof(gr));
	for (;;) {
		/* A caller's return address may be past its function's end (a call to a
		 * noreturn function): its rule is the call's, one byte before. The leaf's ip,
		 * and the instruction a signal interrupted, are where they are. */
		uint64_t pc = exact ? ip : ip - 1, cfa, ra;
		const struct cfi_rule *r;
		struct cfi_rule tmp;
		struct loaded *l;
		uint64_t gap;
		bool v8_record;
		int err;

		if (n >= max) {
			*stop = UNWIND_STOP_DEPTH;
			return n;
		}
		l = uproc__loaded_for_ip(c, pc);
		/* A file whose table is still being made: cut here (no guess from rbp), for
		 * the caller to unwind again once it came. */
		if (!l && c->u->met_later)
			return fast_fail(c, n, UNWIND_STOP_NO_INFO);
		err = l ? ufile__rule(l->f, pc - l->bias, &tmp) : -ENOENT;
		r = err ? NULL : &tmp;
		if (!r && l && uctx__at_entry(c, pc)) {
			/* The dynamic linker's _start has no CFI: the process's first frame
			 * (the leaf, at a process's first instructions). */
			*stop = UNWIND_STOP_END;
			return n;
		}
		/* A leaf in code no CFI describes (V8's builtins, JIT code, assembly) that its
		 * code places (at its frame record's making or leaving: bpf/leafscan.h, as
		 * BPF's walks place it): its return address where that says. Else what
		 * follows: a scan, then the record at rbp, unless its code said rbp is no
		 * record of its (written from what the scan cannot follow: assembly that
		 * uses rbp for something else). */
		no_guess = false;
		if (!r && exact && err == -ENOENT) {
			int placed = leaf_placed(c, pc, sp, bp, bp_ok, &tmp);

			no_guess = placed < 0;
			if (placed > 0)
				r = &tmp;
		}
		/* V8's builtins (UTAB_RECORD): from a return address, the frame record at rbp
		 * (the guess below, not a scan), which V8's own stack walker goes by, as the
		 * walk in BPF does. (A leaf there may not have made it: a scan.) */
		v8_record = !r && err == -ENOENT && l && !exact && bp_ok && bp >= sp &&
			    !(bp & 7) && bp - sp <= UNWIND_RECORD_REACH && l->f->tab &&
			    utab__keeps_records(l->f->tab, pc - l->bias);
		if (!r && !v8_record && err == -ENOENT && l && scans > 0 &&
		    (n > 1 || !exact ||
		    !ufile__small_gap(l->f, pc - l->bias, &gap) ||
		    !leaf_returns_at_sp(c, pc, sp, gap + l->bias))) {
			/* Code of a file no CFI describes (assembly): its caller by a scan,
			 * checked; else as before. */
			uint64_t end;
			int m;

			if (!utab__gap(l->f->tab, pc - l->bias, &gap, &end)) {
				struct frame_regs here = { .ip = ip, .sp = sp, .bp = bp,
							   .bp_ok = bp_ok, .valid = valid };

				memcpy(here.gr, gr, sizeof(gr));
				m = scan_caller(c, l, &here, pc, gap + l->bias, ips, n, max, stop,
						scans);
				if (m < 0)
					return fast_fail(c, n, UNWIND_STOP_COPY);
				if (m)
					return m;
			}
		}
		if (!r && err == -ENOENT && l && ufile__small_gap(l->f, pc - l->bias, &gap)) {
			/* No guess from rbp there (see below); a leaf called into the stretch
			 * returns by the word at sp. */
			if (n != 1 || !exact || !leaf_returns_at_sp(c, pc, sp, gap + l->bias))
				return fast_fail(c, n, UNWIND_STOP_BAD_FRAME);
			tmp = (struct cfi_rule){ .cfa_reg = CFI_REG_RSP, .cfa_off = 8,
						 .ra = CFI_AT_CFA, .ra_off = -8 };
			r = &tmp;
		}
		if (!r && !l && err == -ENOENT && procmaps__find(c->u->pm, s->pid, pc)) {
			/* Anonymous code with no frame record to go by (CPython 3.12's and
			 * 3.13's perf trampolines: sub rsp, call, add rsp, ret): its return
			 * address where its code says, as for assembly in files. */
			const struct map *m = procmaps__find(c->u->pm, s->pid, pc);
			uint8_t base;
			int64_t off;
			uint64_t w;
			bool kept;

			/* Taken only when the word there returns into a file, after a call that
			 * may have come here (CPython's evaluator calls it through a pointer);
			 * JIT code called from JIT code stays cut. Where rbp may hold a frame
			 * record (at sp or above), only when the code leaves rbp as it is up to
			 * its ret: then rbp is its caller's, and the record at rbp no frame of
			 * its own (the evaluator's rbp is a pointer: in a thread, whose stack is
			 * mapped below the libraries' data, it lies above sp); code that
			 * restores rbp before it returns goes by its record, below. */
			if (ret_rule_ahead(c, NULL, ip, &base, &off, &kept) && base == X86_RSP &&
			    off >= 0 && (kept || !bp_ok || bp < sp) &&
			    !read_stack(c, sp + (uint64_t)off, &w) &&
			    call_into(c, w, m->start, ip, false, false)) {
				tmp = (struct cfi_rule){ .cfa_reg = CFI_REG_RSP, .cfa_off = off + 8,
							 .ra = CFI_AT_CFA, .ra_off = -8,
							 .bp = kept ? CFI_SAME : CFI_UNDEFINED };
				r = &tmp;
			}
		}
		if (!r && (err != -ENOENT || !bp_ok || bp < sp ||
			   (!l && !procmaps__find(c->u->pm, s->pid, pc))))
			return fast_fail(c, n, l ? UNWIND_STOP_BAD_FRAME : UNWIND_STOP_NO_INFO);
		if (!r && no_guess)
			return fast_fail(c, n, UNWIND_STOP_BAD_FRAME);
		if (!r) {
			/* Code no CFI describes (a JIT's; V8's builtins, in node's text
			 * without FDEs): the frame record at rbp, as libunwind guesses too,
			 * only when it lies at sp or above (a leaf that made its record and
			 * has no locals: rbp == sp); not in a small stretch of a file
			 * between FDEs (_init, _fini, a hand-written function), whose
			 * leaf keeps no record: the record at rbp is its caller's, whose
			 * frame the guess would leave out of a stack shown whole. */
			tmp = (struct cfi_rule){ .cfa_reg = CFI_REG_RBP, .cfa_off = 16,
						 .ra = CFI_AT_CFA, .ra_off = -8,
						 .bp = CFI_AT_CFA, .bp_off = -16 };
			r = &tmp;
		}
		if (r->cfa_reg == CFI_REG_RBP && !bp_ok && bp_slot) {
			/* The saved rbp it needs lay past the copy: asked for now. */
			uint64_t v;

			read_stack(c, bp_slot, &v);
			return fast_fail(c, n, UNWIND_STOP_NO_MEMORY);
		}
		if (r->cfa_reg == CFI_REG_RSP)
			cfa = sp;
		else if (r->cfa_reg == CFI_REG_RBP && bp_ok)
			cfa = bp;
		else if (valid >> r->cfa_reg & 1)
			cfa = gr[r->cfa_reg];
		else
			return fast_fail(c, n, UNWIND_STOP_BAD_FRAME);
		cfa += (int64_t)r->cfa_off;
		if (r->cfa_deref == CFI_CFA_PLT && (ip & 15) >= r->plt_cut)
			cfa += 8;
		if (r->cfa_deref == CFI_CFA_DEREF && read_stack(c, cfa, &cfa))
			return fast_fail(c, n, UNWIND_STOP_NO_MEMORY);
		if (r->ra == CFI_UNDEFINED) {
			*stop = UNWIND_STOP_END;	/* the outermost frame (_start, clone) */
			return n;
		}
		if (r->ra == CFI_IN_REG) {
			/* Kept in a register (__vfork's rdi): this frame's value of it. */
			if (!reg_value(r->ra_off, gr, valid, bp, bp_ok, &ra))
				return fast_fail(c, n, UNWIND_STOP_BAD_FRAME);
		} else if (read_stack(c, (r->ra == CFI_AT_SP ? sp : cfa) + (int64_t)r->ra_off,
				      &ra)) {
			return fast_fail(c, n, UNWIND_STOP_NO_MEMORY);
		}
		bp_lost = false;
		if (r->bp == CFI_IN_REG) {
			uint64_t v;

			if (!reg_value(r->bp_off, gr, valid, bp, bp_ok, &v))
				return fast_fail(c, n, UNWIND_STOP_BAD_FRAME);
			bp = v;
			bp_slot = 0;
		} else if (r->bp == CFI_AT_CFA || r->bp == CFI_AT_SP) {
			/* A saved rbp past the copy: asked for only when a frame needs it (its
			 * CFA from rbp, below); without it, rbp is not known. */
			uint64_t at = (r->bp == CFI_AT_SP ? sp : cfa) + (int64_t)r->bp_off;

			c->no_want = true;
			bp_lost = read_stack(c, at, &bp) != 0;
			c->no_want = false;
			/* (Unread in the copy: a hole, the stack is cut there. Below sp, an
			 * epilogue's slot the CFI still names after pop rbp, as GCC leaves it:
			 * not known without the red zone, as past the copy.) */
			if (bp_lost && at >= s->sp && at < s->sp + s->stack_len)
				return fast_fail(c, n, UNWIND_STOP_NO_MEMORY);
			bp_slot = bp_lost ? at : 0;
		} else if (r->bp == CFI_UNDEFINED) {
			bp_slot = 0;
		}
		if (r->bp == CFI_UNDEFINED || bp_lost)
			bp_ok = false;
		else if (r->bp != CFI_SAME)
			bp_ok = true;
		/* A signal frame restores every register; only the ones its rule says are
		 * known. */
		if (r->signal)
			valid = 0;
		/* (A callee-saved register past the copy is not asked for: the unwind goes on
		 * without it, and the deep words are for return addresses.) */
		c->no_want = true;
		for (int i = 0; i < CFI_NR_CS; i++) {
			uint8_t reg = cfi_cs_regs[i];

			if (r->cs[i] == CFI_UNDEFINED) {
				valid &= ~(1u << reg);
			} else if (r->cs[i] != CFI_SAME) {
				if (read_stack(c, (r->cs[i] == CFI_AT_SP ? sp : cfa) + (int64_t)r->cs_off[i],
					       &gr[reg]))
					valid &= ~(1u << reg);
				else
					valid |= 1u << reg;
			}
		}
		c->no_want = false;
		sp = cfa;
		ip = ra;
		exact = r->signal;
		/* A return address of 0 is no root: a true one says so (CFI leaving it
		 * undefined, the entry point, the start functions: the stage's bottoms). In
		 * code without CFI, or CFI that does not follow its code, it is a zeroed word
		 * read as a frame: a bad frame, cut and marked. */
		if (!ip) {
			*stop = UNWIND_STOP_BAD_FRAME;
			return n;
		}
		if (!uctx__return_mapped(c, exact ? ip + 1 : ip)) {
			*stop = UNWIND_STOP_BAD_FRAME;
			return n;
		}
		ips[n++] = ip;
	}
}

int unwinder__leaf_return(struct unwinder *u, const struct unwind_sample *s, uint64_t *ret)
{
	struct uctx *c = uctx__begin(u, s);
	enum unwind_stop stop;
	uint64_t ips[2];

	if (!c)
		return -ENOMEM;
	/* One step of the fast path from the leaf, reading nothing but the words given. */
	c->copy_only = c->no_code = true;
	c->p = unwinder__proc(u, s->pid);
	ips[0] = s->ip;
	if (!c->p || unwind_fast(c, ips, 2, &stop) != 2)
		return -ENOENT;
	*ret = ips[1];
	return 0;
}

int unwinder__leaf_frameless(struct unwinder *u, pid_t pid, uint64_t ip)
{
	struct unwind_sample s = { .pid = pid, .ip = ip };
	struct uctx *c = uctx__begin(u, &s);
	struct cfi_rule r;
	struct loaded *l;

	if (!c)
		return -ENOMEM;
	c->copy_only = c->no_code = true;
	c->p = unwinder__proc(u, pid);
	l = c->p ? uproc__loaded_for_ip(c, ip) : NULL;
	if (!l || ufile__rule(l->f, ip - l->bias, &r))
		return -ENOENT;
	/* Go's CFI defines every frame from rsp, frame records kept or not. */
	if (l->f->tab && l->f->tab->is_go)
		return 0;
	return r.cfa_reg == CFI_REG_RSP && !r.signal && r.ra == CFI_AT_CFA;
}

/* PROFILE_UNWIND_CHECK: libunwind's answer for the stack the fast path unwound into IPS. */
static void check_fast(struct unwinder *u, const struct unwind_sample *s, const uint64_t *ips,
		       int n, enum unwind_stop stop, int max)
{
	static uint64_t theirs[1024];
	struct uctx *c = uctx__begin(u, s);
	enum unwind_stop their_stop;
	int m;

	/* An earlier program of a pid (kept apart under a pid of its own): libunwind reads
	 * what it needs of the code from the process, which runs another program now. */
	if (!c || max > 1024 || s->pid >= PROCMAPS_ARCHIVED_PID)
		return;
	c->p = unwinder__proc(u, s->pid);
	theirs[0] = s->ip;
	m = c->p ? unwind_libunwind(c, theirs, max, &their_stop) : 0;
	/* libunwind found no unwind info where the fast path went on (Go's runtime assembly,
	 * through its frame record): the same frames as far as libunwind can tell. */
	if (their_stop == UNWIND_STOP_NO_INFO && m > 0 && m < n &&
	    !memcmp(ips, theirs, m * sizeof(*ips)))
		return;
	if (m == n && !memcmp(ips, theirs, n * sizeof(*ips)) &&
	    (their_stop == stop ||
	     /* The same frames, the last a stack bottom by name (Go's mstart, reached from
	      * assembly without FDEs through its frame record) that libunwind has no unwind
	      * info for: the same stack. */
	     (stop == UNWIND_STOP_END && their_stop == UNWIND_STOP_NO_INFO) ||
	     /* The same frames, both cut there (marked truncated alike), for reasons
	      * told apart differently (Go's assembly: our frame-record step reads a word that
	      * is no return address, libunwind finds no unwind info): the same stack. */
	     (stop != UNWIND_STOP_END && their_stop != UNWIND_STOP_END)))
		return;
	if (u->counts.mismatches++ < 10) {
		pr_warn("unwind check: pid %d ip %#llx: fast path %d frames (%s), libunwind %d (%s)",
			s->pid, (unsigned long long)s->ip, n, unwind_stop_names[stop], m,
			unwind_stop_names[their_stop]);
		for (int i = 0; i < n || i < m; i++)
			pr_warn("  %2d %#18llx %#18llx", i, i < n ? (unsigned long long)ips[i] : 0ULL,
				i < m ? (unsigned long long)theirs[i] : 0ULL);
	}
}

int unwinder__unwind(struct unwinder *u, const struct unwind_sample *s, uint64_t *ips, int max,
		     enum unwind_stop *stop)
{
	struct uproc *p;
	struct uctx *c;
	int n;

	/* (From a frame past the leaf: the frames up to it first, whatever comes.) */
	int known = s->nr_prefix && max >= 2 ? prefix_frames(s, ips, max) : 1;

	ips[0] = known > 1 ? ips[0] : s->ip;
	*stop = UNWIND_STOP_NO_MEMORY;
	u->met_later = false;
	c = uctx__begin(u, s);
	if (!c)
		return known;
	c->fail_n = known;
	c->p = unwinder__proc(u, s->pid);
	if (!c->p)
		return known;
	n = unwind_fast(c, ips, max, stop);
	if (n) {
		size_t used = c->stack_used;

		u->counts.fast++;
		if (u->check && !s->nr_prefix) {
			check_fast(u, s, ips, n, *stop, max);
			u->ctx->stack_used = used;
		}
		return n;
	}
	/* (libunwind begins at a leaf, with its registers: not from a frame past it.) */
	if ((u->table_fn && !u->check) || u->met_later || s->nr_prefix) {
		/* No libunwind where the files are not read: the stack is cut there (or where a
		 * table is still coming, for the caller to unwind it again then). */
		*stop = c->fail_stop;
		return c->fail_n;
	}
	u->counts.slow++;
	p = c->p;
	c = uctx__begin(u, s);		/* what the fast path read does not count */
	c->p = p;
	return unwind_libunwind(c, ips, max, stop);
}

bool unwinder__met_later(const struct unwinder *u, uint32_t *id)
{
	if (u->met_later && id)
		*id = u->later_id;
	return u->met_later;
}

const struct unwind_counts *unwinder__counts(const struct unwinder *u)
{
	return &u->counts;
}

int unwinder__deep_words(const struct unwinder *u, uint64_t *addrs)
{
	if (!u->ctx)
		return 0;
	memcpy(addrs, u->ctx->deep, (size_t)u->ctx->nr_deep * sizeof(*addrs));
	return u->ctx->nr_deep;
}

uint64_t unwinder__scanned(const struct unwinder *u)
{
	return u->ctx ? u->ctx->scan_pc : 0;
}

bool unwinder__read_live(const struct unwinder *u)
{
	return u->ctx && u->ctx->live_read;
}

size_t unwinder__stack_used(const struct unwinder *u)
{
	return u->ctx ? u->ctx->stack_used : 0;
}


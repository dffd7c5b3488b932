// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * frames_follow: the frame at each instruction of code without CFI (V8's builtins, assembly),
 * from the code.
 *
 * node's embedded builtins have no CFI. V8's own stack walker goes by the frame record at rbp,
 * which a builtin keeps wherever it calls; but a leaf builtin may keep none (TurboFan elides
 * frames, a bytecode handler never makes one) or be in its prologue or epilogue, and then the
 * record at rbp is its caller's: a walk from it leaves the caller out. Without more, such a
 * leaf's stack went to userspace with a copy of the stack, to be scanned (60% of the samples
 * of a program sorting strings).
 *
 * Each builtin is entered at its start with its return address at rsp (a call, or a tail call
 * by jmp), and its code is followed from there along every path (x86.h decodes; conditional
 * branches both ways, direct jumps within the builtin, calls returned from), tracking:
 *
 *	CFA = rsp + K	rbp the caller's, or the caller's rbp saved at CFA - 16, or neither
 *	CFA = rbp + 16	after push rbp; mov rsp, rbp: the builtin's frame record
 *
 * push and pop, add and sub of an immediate, lea d(rsp), rsp move K; mov rbp, rsp, leave and
 * pop rbp leave the record. Where two paths meet with different frames, or an instruction
 * does what this does not follow (rsp or rbp written otherwise, the return address popped:
 * V8's returns that drop a variable number of arguments), the frame is not known from there
 * on. A builtin whose code, followed so, leaves by ret or by a jump out of it (a tail call)
 * with anything but its return address at rsp and its caller's rbp in rbp, or jumps into the
 * middle of an instruction, is not known anywhere: the following went wrong somewhere. What
 * is not known keeps today's way (the record from a return address, a leaf to userspace).
 *
 * The same following serves the functions of any file that no FDE covers (assembly:
 * OpenBLAS's kernels, NASM's and hand-written functions with symbols), entered by a call too,
 * with two more of their ways: the caller's rbp saved anywhere in the frame (mov %rbp,
 * d(%rsp), restored from there), and the CFA kept in a register while rsp is aligned or moved
 * far (mov %rsp, %rbx; sub $0x7080, %rsp; and $-4096, %rsp; ... mov %rbx, %rsp: CFA = rbx +
 * K in between, a rule a walk follows from a leaf, whose registers the sample has). Where
 * paths meet, what both say of the caller's rbp is kept (in its slot on both), a register
 * that keeps the CFA only if both have it.
 *
 * Pure: code in, one state per byte out (the unit tests give it code taken from node and
 * OpenBLAS).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "unwind/frames.h"
#include "dso/x86.h"

/* Bytes of a builtin followed at most. */
#define FOLLOW_MAX_LEN	(1u << 20)

static bool same_state(const struct follow_frame *a, const struct follow_frame *b)
{
	return a->kind == b->kind && a->k == b->k && a->bp == b->bp && a->d == b->d &&
	       a->ra == b->ra && a->reg == b->reg && a->bpo == b->bpo;
}

/* CFA = rsp + K, the return address at CFA - 8, the caller's rbp as BP says (at CFA + BPO). */
static struct follow_frame at_rsp(int32_t k, uint8_t bp, int32_t bpo)
{
	return (struct follow_frame){ .kind = FOLLOW_RSP, .bp = bp, .reg = X86_NO_REG, .k = k,
				      .ra = -8, .bpo = bpo };
}

/* The frame record made: CFA = rbp + 16, rsp = rbp. */
static struct follow_frame at_record(void)
{
	return (struct follow_frame){ .kind = FOLLOW_RBP, .bp = FOLLOW_BP_SAVED,
				      .reg = X86_NO_REG, .k = 16, .ra = -8, .bpo = -16 };
}

/* rbp written with what is not the caller's: where the caller's is now. */
static void rbp_lost(struct follow_frame *s)
{
	if (s->bp == FOLLOW_BP_SAME)
		s->bp = FOLLOW_BP_LOST;
	else if (s->bp == FOLLOW_BP_PUSHED)
		s->bp = FOLLOW_BP_SAVED;
}

/* Whether leaving the builtin (ret, a jump out of it) with frame S is leaving it whole: the
 * return address at rsp (with arguments for the code jumped to above it: V8's tail calls of
 * the runtime), the caller's rbp in rbp. */
static bool leaves_whole(const struct follow_frame *s)
{
	return s->kind == FOLLOW_RSP && s->ra == -s->k && s->bp == FOLLOW_BP_SAME;
}

/* Whether IN may write the stack word at rsp + OFF (through an operand based on rsp alone;
 * what other registers point at is not known). */
static bool writes_at_sp(const struct x86_insn *in, int32_t off)
{
	/* (An index: anywhere. A general register's store: up to 8 bytes from its address;
	 * a vector store, up to 64.) */
	int32_t width = !in->vex && in->map == X86_MAP_1B ? 8 : 64;

	if (!in->modrm || in->mod == 3 || in->base != X86_RSP || x86__reads_only(in))
		return false;

	return in->index != X86_NO_REG || (in->disp <= off + 7 && in->disp + width > off);
}

/*
 * What frames *M and B (of two paths that meet) have in common, into *M: where the caller's
 * rbp is as both say it (in rbp on both: there; in its slot on both: there), a register that
 * keeps the CFA on both, rsp from rbp as both say. Returns false with M->kind FOLLOW_UNKNOWN
 * when the CFA or the return address differ.
 */
static bool meet(struct follow_frame *m, const struct follow_frame *b)
{
	bool in_reg_a = m->bp == FOLLOW_BP_SAME || m->bp == FOLLOW_BP_PUSHED;
	bool in_reg_b = b->bp == FOLLOW_BP_SAME || b->bp == FOLLOW_BP_PUSHED;
	bool slot_a = m->bp == FOLLOW_BP_PUSHED || m->bp == FOLLOW_BP_SAVED;
	bool slot_b = b->bp == FOLLOW_BP_PUSHED || b->bp == FOLLOW_BP_SAVED;

	if (m->kind != b->kind || m->k != b->k || m->ra != b->ra ||
	    (m->kind == FOLLOW_REG && (m->reg != b->reg || m->d != b->d))) {
		m->kind = FOLLOW_UNKNOWN;
		return false;
	}
	if (m->kind == FOLLOW_RBP && m->d != b->d)
		m->d = FOLLOW_D_UNKNOWN;
	if (m->kind == FOLLOW_RSP && (m->reg != b->reg || m->d != b->d))
		m->reg = X86_NO_REG;
	if (m->bp != b->bp || (slot_a && slot_b && m->bpo != b->bpo)) {
		if (in_reg_a && in_reg_b)
			m->bp = FOLLOW_BP_SAME;
		else if (slot_a && slot_b && m->bpo == b->bpo)
			m->bp = FOLLOW_BP_SAVED;
		else
			m->bp = FOLLOW_BP_LOST;
	}
	/* (The record's frame keeps its slot whatever: the merged RBP frames agree.) */
	if (m->kind == FOLLOW_RBP && m->bp != FOLLOW_BP_SAVED) {
		m->kind = FOLLOW_UNKNOWN;
		return false;
	}
	return true;
}

/*
 * The frame after IN (at a known frame *S): into *S. Returns false where it is not known
 * any more.
 */
static bool follow_step(struct follow_frame *s, const struct x86_insn *in)
{
	bool call = x86__is_call(in);
	int64_t delta;
	int32_t d;
	int r;

	if (s->kind == FOLLOW_RBP) {
		/* The record at rbp is the frame's; rsp is rbp + d when d_known. */
		if (x86__mov_from(in, X86_RBP) == X86_RSP) {
			*s = at_rsp(16, FOLLOW_BP_SAVED, -16);
			return true;
		}
		if (!in->vex && in->map == X86_MAP_1B && in->op == 0xc9) {	/* leave */
			*s = at_rsp(8, FOLLOW_BP_SAME, 0);
			return true;
		}
		if (x86__is_rbp_push_pop(in, 0x5d)) {
			if (s->d != 0)
				return false;
			*s = at_rsp(8, FOLLOW_BP_SAME, 0);
			return true;
		}
		if (x86__writes_gpr(in, X86_RBP))
			return false;
		if (x86__mem_form(in, 0x8d, X86_RSP, X86_RBP, &d)) {
			s->d = d;
			return true;
		}
		if (call)
			return true;
		if (x86__sp_delta(in, &delta)) {
			if (s->d != FOLLOW_D_UNKNOWN)
				s->d += (int32_t)delta;
			if (s->d > 0 || s->d < -(1 << 20))
				s->d = FOLLOW_D_UNKNOWN;
			return true;
		}
		if (x86__writes_gpr(in, X86_RSP))
			s->d = FOLLOW_D_UNKNOWN;
		return true;
	}
	if (s->kind == FOLLOW_REG) {
		/* CFA = reg + d, rsp somewhere below: until rsp is taken back from reg. */
		if (x86__mov_from(in, s->reg) == X86_RSP) {
			s->kind = FOLLOW_RSP;
			s->k = s->d;
			return s->k >= 8 && s->k <= FOLLOW_MAX_K && !(s->k & 7) &&
			       s->k + s->ra >= 0 && (s->bp == FOLLOW_BP_SAME ||
						     s->bp == FOLLOW_BP_LOST || s->k + s->bpo >= 0);
		}
		if (x86__writes_gpr(in, s->reg))
			return false;
		if (x86__writes_gpr(in, X86_RBP))
			rbp_lost(s);
		return true;
	}
	/* CFA = rsp + k, the return address at CFA + ra. */
	if (!in->vex && in->map == X86_MAP_1B && in->op == 0xff && (in->reg & 7) == 6 &&
	    in->mod != 3 && in->base == X86_RSP && in->index == X86_NO_REG &&
	    in->disp == s->k + s->ra) {
		/* push d(%rsp) of the return address: its copy at rsp now, which the code
		 * goes on with (V8 puts arguments in the slot, then jumps to the runtime). */
		s->k += 8;
		s->ra = -s->k;
		return s->k <= FOLLOW_MAX_K;
	}
	if (!call && writes_at_sp(in, s->k + s->ra))
		return false;
	if (!call && s->bp == FOLLOW_BP_SAVED && writes_at_sp(in, s->k + s->bpo) &&
	    !x86__mem_form(in, 0x89, X86_RBP, X86_RSP, &d))
		s->bp = FOLLOW_BP_LOST;
	if (x86__mem_form(in, 0x89, X86_RBP, X86_RSP, &d)) {
		/* mov %rbp, d(%rsp): the caller's rbp saved there (assembly's prologue). */
		if (s->bp == FOLLOW_BP_SAME) {
			s->bp = FOLLOW_BP_PUSHED;
			s->bpo = d - s->k;
		} else if (s->bp == FOLLOW_BP_SAVED && d - s->k == s->bpo) {
			s->bp = FOLLOW_BP_LOST;	/* another value over the caller's */
		}
		return true;
	}
	if (x86__mem_form(in, 0x8b, X86_RBP, X86_RSP, &d)) {
		/* mov d(%rsp), %rbp: the caller's back from its slot, or another value. */
		if ((s->bp == FOLLOW_BP_PUSHED || s->bp == FOLLOW_BP_SAVED) && d - s->k == s->bpo)
			s->bp = FOLLOW_BP_SAME;
		else
			rbp_lost(s);
		return true;
	}
	if (x86__is_rbp_push_pop(in, 0x55)) {
		if (s->bp == FOLLOW_BP_SAME) {
			s->bp = FOLLOW_BP_PUSHED;
			s->bpo = -(s->k + 8);
		}
		s->k += 8;
		return s->k <= FOLLOW_MAX_K;
	}
	if (x86__mov_from(in, X86_RSP) == X86_RBP) {
		/* The record made: rbp = CFA - 16, the caller's rbp there. */
		if (s->k != 16 || s->ra != -8 || s->bpo != -16 ||
		    (s->bp != FOLLOW_BP_PUSHED && s->bp != FOLLOW_BP_SAVED))
			return false;
		*s = at_record();
		return true;
	}
	if (x86__is_rbp_push_pop(in, 0x5d)) {
		/* The caller's rbp popped back from its slot at rsp, or another value. */
		if ((s->bp == FOLLOW_BP_PUSHED || s->bp == FOLLOW_BP_SAVED) && s->k + s->bpo == 0)
			s->bp = FOLLOW_BP_SAME;
		else
			rbp_lost(s);
	} else if (x86__writes_gpr(in, X86_RBP)) {
		rbp_lost(s);
	}
	if (s->reg != X86_NO_REG && !call && x86__writes_gpr(in, s->reg))
		s->reg = X86_NO_REG;
	if (call)
		return true;
	/* mov %rsp, %reg: the CFA kept there while rsp is aligned or moved away. */
	r = x86__mov_from(in, X86_RSP);
	if (r >= 0 && r != X86_RSP && r != X86_RBP) {
		s->reg = (uint8_t)r;
		s->d = s->k;
		return true;
	}
	if (x86__sp_delta(in, &delta)) {
		int64_t k = s->k - delta;

		/* The return address popped: not followed. rsp further than that: from the
		 * register that keeps the CFA, if one does. */
		if (k > FOLLOW_MAX_K && s->reg != X86_NO_REG) {
			s->kind = FOLLOW_REG;
			return true;
		}
		if (k < 8 || k > FOLLOW_MAX_K || (k & 7) || k + s->ra < 0)
			return false;
		/* The caller's rbp's slot popped: in rbp still, or lost. */
		if ((s->bp == FOLLOW_BP_PUSHED || s->bp == FOLLOW_BP_SAVED) && k + s->bpo < 0)
			s->bp = s->bp == FOLLOW_BP_PUSHED ? FOLLOW_BP_SAME : FOLLOW_BP_LOST;
		s->k = (int32_t)k;
		return true;
	}
	if (!x86__writes_gpr(in, X86_RSP))
		return true;
	/* rsp taken back from the register that keeps the CFA (after pushes for a call). */
	if (s->reg != X86_NO_REG && x86__mov_from(in, s->reg) == X86_RSP) {
		s->k = s->d;
		return s->k + s->ra >= 0 &&
		       (s->bp == FOLLOW_BP_SAME || s->bp == FOLLOW_BP_LOST || s->k + s->bpo >= 0);
	}
	/* rsp set otherwise (aligned: and $-N, %rsp): the CFA from the register that keeps
	 * it, if one does. */
	if (s->reg == X86_NO_REG)
		return false;
	s->kind = FOLLOW_REG;
	return true;
}

int frames__follow(const unsigned char *code, size_t len, struct follow_frame *at)
{
	uint32_t *work, nr = 0, cap;
	uint8_t *start;
	int ok = 1;
	bool nomem = false;

	if (!len || len > FOLLOW_MAX_LEN)
		return 0;
	memset(at, 0, len * sizeof(*at));
	/* (Grown as needed, up to eight entries a byte: most code pushes one a branch.) */
	cap = 64 + (uint32_t)len / 8;
	work = malloc(cap * sizeof(*work));
	start = calloc(len, 1);		/* 1: an instruction begins here, 2: is inside one */
	if (!work || !start) {
		free(work);
		free(start);
		return -ENOMEM;
	}
	at[0] = at_rsp(8, FOLLOW_BP_SAME, 0);
	work[nr++] = 0;
	while (nr && ok) {
		uint32_t off = work[--nr];
		struct follow_frame s = at[off], next;
		bool known = s.kind != FOLLOW_UNKNOWN, jump;
		struct x86_insn in;
		uint64_t to[2];
		int nto = 0;
		size_t n = x86__decode(code + off, len - off, &in);

		/* Code it cannot decode (or that runs off the builtin's end): a leaf here is
		 * still as known, what follows is not reached. */
		if (!n)
			continue;
		for (size_t i = 0; i < n; i++) {
			uint8_t want = i ? 2 : 1;

			if (start[off + i] && start[off + i] != want)
				ok = 0;		/* a jump into an instruction */
			start[off + i] = want;
		}
		if (!ok)
			break;
		next = s;
		jump = !in.vex &&
		       ((in.map == X86_MAP_1B && (in.op == 0xe9 || in.op == 0xeb ||
						   (in.op >= 0x70 && in.op <= 0x7f))) ||
			(in.map == X86_MAP_0F && in.op >= 0x80 && in.op <= 0x8f));
		if (!in.vex && in.map == X86_MAP_1B && in.op == 0xcc) {
			/* int3: the end of a path (after a call that does not return). */
		} else if (!in.vex && in.map == X86_MAP_1B && (in.op == 0xc3 || in.op == 0xc2)) {
			if (known && !leaves_whole(&s))
				ok = 0;
		} else if (jump) {
			/* Within the builtin, followed; out of it, a tail call. */
			int64_t t = (int64_t)off + (int64_t)n + in.imm;

			if (t >= 0 && (uint64_t)t < len)
				to[nto++] = (uint64_t)t;
			else if (known && !leaves_whole(&s))
				ok = 0;
			if (in.op != 0xe9 && in.op != 0xeb)
				to[nto++] = off + n;
		} else if (!in.vex && in.map == X86_MAP_1B && in.op == 0xff &&
			   ((in.reg & 7) == 4 || (in.reg & 7) == 5)) {
			/* An indirect jump: a tail call (a bytecode handler's dispatch). */
			if (known && !leaves_whole(&s))
				ok = 0;
		} else if (!x86__ends_block(&in)) {
			if (known && !follow_step(&next, &in))
				next.kind = FOLLOW_UNKNOWN;
			to[nto++] = off + n;
		}
		for (int i = 0; i < nto && ok; i++) {
			struct follow_frame *t;

			if (to[i] >= len)
				continue;
			t = &at[to[i]];
			if (t->kind == FOLLOW_NONE) {
				*t = next;
			} else if (same_state(t, &next) || t->kind == FOLLOW_UNKNOWN) {
				continue;
			} else {
				struct follow_frame m = *t;

				if (!meet(&m, &next) || same_state(&m, t)) {
					if (m.kind != FOLLOW_UNKNOWN)
						continue;
				}
				*t = m;
			}
			/* (A state only goes down: known, then what the paths have in common,
			 * then unknown; a few times at most.) */
			if (nr >= cap) {
				uint32_t *w = cap < len * 8 ?
					      realloc(work, 2 * cap * sizeof(*work)) : NULL;

				if (!w) {
					nomem = cap < len * 8;
					ok = 0;
					break;
				}
				work = w;
				cap *= 2;
			}
			work[nr++] = (uint32_t)to[i];
		}
	}
	if (ok) {
		/* A byte that begins no instruction followed has no frame of its own. */
		for (size_t i = 0; i < len; i++)
			if (start[i] != 1)
				at[i].kind = FOLLOW_NONE;
	}
	free(work);
	free(start);
	return nomem ? -ENOMEM : ok;
}

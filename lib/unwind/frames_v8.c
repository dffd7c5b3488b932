// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * frames_v8: the frame at each instruction of one of V8's builtins, from its code.
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
 * Pure: code in, one state per byte out (the unit tests give it code taken from node).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "unwind/frames.h"
#include "dso/x86.h"

/* Bytes of a builtin followed at most. */
#define V8_MAX_LEN	(1u << 20)

static bool same_state(const struct v8_frame *a, const struct v8_frame *b)
{
	return a->kind == b->kind && a->k == b->k && a->bp == b->bp && a->d == b->d &&
	       a->ra == b->ra;
}

/* mov %rsp, %rbp (either encoding). */
static bool is_mov(const struct x86_insn *in, int to, int from)
{
	return !in->vex && in->map == X86_MAP_1B && (in->rex & 8) && in->mod == 3 &&
	       in->pfx != 0x66 &&
	       ((in->op == 0x89 && in->reg == from && in->rm == to) ||
		(in->op == 0x8b && in->reg == to && in->rm == from));
}

/* push or pop of rbp (OP 0x55, 0x5d) without REX.B or an operand-size prefix. */
static bool is_rbp_op(const struct x86_insn *in, uint8_t op)
{
	return !in->vex && in->map == X86_MAP_1B && in->op == op && !(in->rex & 1) &&
	       in->pfx != 0x66;
}

/* lea d(%rbp), %rsp: *D gets d. */
static bool lea_rsp_rbp(const struct x86_insn *in, int32_t *d)
{
	if (in->vex || in->map != X86_MAP_1B || in->op != 0x8d || !(in->rex & 8) ||
	    in->reg != X86_RSP || in->base != X86_RBP || in->index != X86_NO_REG)
		return false;
	*d = in->disp;
	return true;
}

/* Whether leaving the builtin (ret, a jump out of it) with frame S is leaving it whole: the
 * return address at rsp (with arguments for the code jumped to above it: V8's tail calls of
 * the runtime), the caller's rbp in rbp. */
static bool leaves_whole(const struct v8_frame *s)
{
	return s->kind == V8_RSP && s->ra == -s->k && s->bp == V8_BP_SAME;
}

/* Whether IN may write the stack word at rsp + OFF (through an operand based on rsp alone;
 * what other registers point at is not known). */
static bool writes_at_sp(const struct x86_insn *in, int32_t off)
{
	if (!in->modrm || in->mod == 3 || in->base != X86_RSP || x86__reads_only(in))
		return false;
	/* (An index: anywhere. A vector store: up to 64 bytes from its address.) */
	return in->index != X86_NO_REG || (in->disp <= off + 7 && in->disp + 64 > off);
}

/*
 * The frame after IN (at a known frame *S): into *S. Returns false where it is not known
 * any more.
 */
static bool v8_step(struct v8_frame *s, const struct x86_insn *in)
{
	int64_t delta;
	int32_t d;

	if (s->kind == V8_RBP) {
		/* The record at rbp is the frame's; rsp is rbp + d when d_known. */
		if (is_mov(in, X86_RSP, X86_RBP)) {
			*s = (struct v8_frame){ V8_RSP, V8_BP_SAVED, 16, 0, -8 };
			return true;
		}
		if (!in->vex && in->map == X86_MAP_1B && in->op == 0xc9) {	/* leave */
			*s = (struct v8_frame){ V8_RSP, V8_BP_SAME, 8, 0, -8 };
			return true;
		}
		if (is_rbp_op(in, 0x5d)) {
			if (s->d != 0)
				return false;
			*s = (struct v8_frame){ V8_RSP, V8_BP_SAME, 8, 0, -8 };
			return true;
		}
		if (x86__writes_gpr(in, X86_RBP))
			return false;
		if (lea_rsp_rbp(in, &d)) {
			s->d = d;
			return true;
		}
		if (x86__is_call(in))
			return true;
		if (x86__sp_delta(in, &delta)) {
			if (s->d != V8_D_UNKNOWN)
				s->d += (int32_t)delta;
			if (s->d > 0 || s->d < -(1 << 20))
				s->d = V8_D_UNKNOWN;
			return true;
		}
		if (x86__writes_gpr(in, X86_RSP))
			s->d = V8_D_UNKNOWN;
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
		return s->k <= V8_MAX_K;
	}
	if (!x86__is_call(in) && writes_at_sp(in, s->k + s->ra))
		return false;
	if (is_rbp_op(in, 0x55)) {
		if (s->k == 8 && s->bp == V8_BP_SAME)
			s->bp = V8_BP_PUSHED;
		s->k += 8;
		return s->k <= V8_MAX_K;
	}
	if (is_mov(in, X86_RBP, X86_RSP)) {
		/* The record made: rbp = CFA - 16, the caller's rbp there. */
		if (s->k != 16 || s->ra != -8 || (s->bp != V8_BP_PUSHED && s->bp != V8_BP_SAVED))
			return false;
		*s = (struct v8_frame){ V8_RBP, V8_BP_SAVED, 16, 0, -8 };
		return true;
	}
	if (is_rbp_op(in, 0x5d)) {
		/* The caller's rbp popped back where the record's slot is at rsp. */
		if (s->k != 16 || s->ra != -8 || (s->bp != V8_BP_PUSHED && s->bp != V8_BP_SAVED))
			return false;
		*s = (struct v8_frame){ V8_RSP, V8_BP_SAME, 8, 0, -8 };
		return true;
	}
	if (x86__writes_gpr(in, X86_RBP)) {
		/* rbp used for something else: the caller's is only in its slot, if there. */
		if (s->bp == V8_BP_SAME)
			s->bp = V8_BP_LOST;
		else if (s->bp == V8_BP_PUSHED)
			s->bp = V8_BP_SAVED;
	}
	if (x86__is_call(in))
		return true;
	if (x86__sp_delta(in, &delta)) {
		int64_t k = s->k - delta;

		/* The return address popped (or the slot of the caller's rbp): not followed. */
		if (k < 8 || k > V8_MAX_K || (k & 7) || k + s->ra < 0 ||
		    ((s->bp == V8_BP_PUSHED || s->bp == V8_BP_SAVED) && k < 16))
			return false;
		s->k = (int32_t)k;
		return true;
	}
	return !x86__writes_gpr(in, X86_RSP);
}

int frames__v8_builtin(const unsigned char *code, size_t len, struct v8_frame *at)
{
	uint32_t *work, nr = 0, cap;
	uint8_t *start;
	int ok = 1;

	if (!len || len > V8_MAX_LEN)
		return 0;
	memset(at, 0, len * sizeof(*at));
	cap = (uint32_t)len * 4;
	work = malloc(cap * sizeof(*work));
	start = calloc(len, 1);		/* 1: an instruction begins here, 2: is inside one */
	if (!work || !start) {
		free(work);
		free(start);
		return -ENOMEM;
	}
	at[0] = (struct v8_frame){ V8_RSP, V8_BP_SAME, 8, 0, -8 };
	work[nr++] = 0;
	while (nr && ok) {
		uint32_t off = work[--nr];
		struct v8_frame s = at[off], next;
		bool known = s.kind != V8_UNKNOWN, jump;
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
		jump = !in.vex && ((in.map == X86_MAP_1B &&
				    (in.op == 0xe9 || in.op == 0xeb || (in.op >= 0x70 && in.op <= 0x7f))) ||
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
			if (known && !v8_step(&next, &in))
				next.kind = V8_UNKNOWN;
			to[nto++] = off + n;
		}
		for (int i = 0; i < nto && ok; i++) {
			struct v8_frame *t;

			if (to[i] >= len)
				continue;
			t = &at[to[i]];
			if (t->kind == V8_NONE) {
				*t = next;
			} else if (same_state(t, &next) || t->kind == V8_UNKNOWN) {
				continue;
			} else if (t->kind == V8_RBP && next.kind == V8_RBP && t->bp == next.bp &&
				   t->k == next.k && t->ra == next.ra) {
				if (t->d == V8_D_UNKNOWN)
					continue;
				t->d = V8_D_UNKNOWN;	/* frames alike, rsp not */
			} else {
				t->kind = V8_UNKNOWN;
			}
			/* (A state changes at most three times: none, known, d unknown,
			 * unknown.) */
			if (nr >= cap)
				ok = 0;
			else
				work[nr++] = (uint32_t)to[i];
		}
	}
	if (ok) {
		/* A byte that begins no instruction followed has no frame of its own. */
		for (size_t i = 0; i < len; i++)
			if (start[i] != 1)
				at[i].kind = V8_NONE;
	}
	free(work);
	free(start);
	return ok;
}

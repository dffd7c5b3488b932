// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * frames_go: where Go's code keeps frame records, by Go's convention rather than its CFI.
 *
 * Go's .debug_frame says only CFA = rsp + K: never where rbp is. But Go's compiler keeps frame
 * pointers: a function with a frame of F bytes (K = F + 8) saves the caller's rbp at CFA - 16
 * and points rbp there, so in its body rbp is its frame record, as a frame-pointer walk wants.
 * Around that, the instructions say what rbp is (cmd/internal/obj/x86/obj6.go):
 *
 *	sub $F, %rsp; mov %rbp, F-8(%rsp); lea F-8(%rsp), %rbp	prologue (Go 1.19)
 *	mov F-8(%rsp), %rbp; add $F, %rsp; ret			epilogue
 *	push %rbp; mov %rsp, %rbp; sub $F-8, %rsp ...		the other order of later Go
 *	mov %rbp, -16(%rsp); lea -16(%rsp), %rbp; call duffzero+N; mov 0(%rbp), %rbp
 *	the stack check: cmp 16(%r14), %rsp; jbe L ... L: call runtime.morestack_noctxt; jmp entry
 *
 * So each function is followed instruction by instruction (x86.h), with the CFA offset its
 * rows give: what rbp holds (the caller's, or this function's record) and whether the caller's
 * rbp is saved at CFA - 16. A function that keeps the convention everywhere is trusted. One
 * that writes rbp otherwise (assembly using it as a general register), calls while it has no
 * record (code that switches stacks; the stack check's calls of runtime.morestack* aside, whose
 * return addresses no walk meets: those functions are "no record" by name, see files.c), or
 * cannot be followed (an instruction this decoder does not know, rows that cut one) is not:
 * its samples go to DWARF, as all of a Go program's did before.
 *
 * Inside a trusted function, a leaf sampled after the prologue's sub and before its lea, or
 * after the epilogue's mov and before its add, has rbp still (or again) its caller's record
 * and its return address deeper than the two words BPF keeps at sp: a walk from rbp skips its
 * caller. A leaf at a duffzero call or the mov after it (rbp is a record made for the call)
 * gets one return address too many. These are the windows (enum frame_lost): too many and
 * too small to be spans of their own in BPF (64 per process), they are trusted there and
 * given to userspace, which puts such a walk right where it can (gowalk.c), else keeps only
 * its leaf, truncated. The push/mov prologue of later Go leaves no window that loses the
 * caller.
 */
#include <errno.h>
#include <stdlib.h>
#include "unwind/frames.h"
#include "dso/x86.h"

/* Rows of one FDE kept; a Go function with more is not trusted. */
#define GO_MAX_ROWS	4096

/* What rbp is at one instruction, as far as the instructions followed say. */
struct go_state {
	int64_t k;		/* CFA = rsp + k */
	bool saved;		/* the caller's rbp is at CFA - 16 */
	bool rec;		/* rbp = CFA - 16: this function's frame record */
	bool made;		/* a record was made earlier in the function */
	bool jumped;		/* the instruction before does not go on to this one */
	bool kept;		/* the record's address is also at CFA + slot (assembly that
				 * saves all registers around a call and restores them) */
	int64_t slot;
};

/* Bytes an instruction may touch from its memory operand's address (a 512-bit vector). */
#define MAX_ACCESS	64

/* Append [START, END) of KIND (enum frame_lost) to the windows W (in order), merged with the
 * one before it. */
static int window_add(struct frame_spans *w, uint64_t start, uint64_t end, uint8_t kind)
{
	struct frame_span *last = w->nr ? &w->v[w->nr - 1] : NULL;

	if (last && last->end == start && last->kind == kind) {
		last->end = end;
		return 0;
	}
	if (frames__reserve(w, 1))
		return -ENOMEM;
	w->v[w->nr++] = (struct frame_span){ start, end, kind };
	return 0;
}

/* Whether IN reads or writes [rsp + D] (no index), with operand REG, REX.W, opcode OP. */
static bool rsp_mem(const struct x86_insn *in, uint8_t op, int reg, int64_t d)
{
	int32_t disp;

	return x86__mem_form(in, op, reg, X86_RSP, &disp) && disp == d;
}

/*
 * The call of duffzero or duffcopy at CODE (N bytes) in a function whose rbp is its record:
 * mov %rbp, -16(%rsp); lea -16(%rsp), %rbp; call; mov 0(%rbp), %rbp. Returns the length of
 * the four and sets *CALL to where the call starts (an offset), or returns 0.
 */
static size_t duff_call(const unsigned char *code, size_t n, size_t *call)
{
	static const unsigned char head[] = { 0x48, 0x89, 0x6c, 0x24, 0xf0,
					      0x48, 0x8d, 0x6c, 0x24, 0xf0, 0xe8 };
	static const unsigned char tail[] = { 0x48, 0x8b, 0x6d, 0x00 };

	if (n < sizeof(head) + 4 + sizeof(tail))
		return 0;
	for (size_t i = 0; i < sizeof(head); i++)
		if (code[i] != head[i])
			return 0;
	for (size_t i = 0; i < sizeof(tail); i++)
		if (code[sizeof(head) + 4 + i] != tail[i])
			return 0;
	*call = 10;
	return sizeof(head) + 4 + sizeof(tail);
}

/* Whether a direct call IN at ADDR goes to one of the stack check's targets. */
static bool calls_check(const struct x86_insn *in, uint64_t addr, const uint64_t *checks,
			size_t nr)
{
	uint64_t to = addr + in->len + (uint64_t)in->imm;

	if (in->op != 0xe8)
		return false;
	for (size_t i = 0; i < nr; i++)
		if (checks[i] == to)
			return true;
	return false;
}

/*
 * The effect of IN (at K = s->k, rbp as S says) on S. Returns false where the function leaves
 * Go's convention.
 */
static bool go_step(struct go_state *s, const struct x86_insn *in, uint64_t addr,
		    const uint64_t *checks, size_t nr_checks)
{
	int64_t delta = 0;
	bool moves = x86__sp_delta(in, &delta);
	bool slot_write = s->rec && rsp_mem(in, 0x89, X86_RBP, in->disp) && in->disp != s->k - 16;

	/* Anything else that writes at the slot may change what it holds. */
	if (s->kept && !slot_write && !x86__reads_only(in) &&
	    in->modrm && in->mod != 3 && in->base == X86_RSP &&
	    (in->index != X86_NO_REG ||
	     (in->disp - s->k < s->slot + 8 && in->disp - s->k + MAX_ACCESS > s->slot)))
		s->kept = false;
	if (x86__writes_gpr(in, X86_RBP)) {
		if (rsp_mem(in, 0x8d, X86_RBP, s->k - 16) && s->saved) {
			s->rec = s->made = true;		/* lea F-8(%rsp), %rbp */
		} else if (x86__mov_from(in, X86_RSP) == X86_RBP && s->k == 16 && s->saved) {
			s->rec = s->made = true;		/* mov %rsp, %rbp */
		} else if (rsp_mem(in, 0x8b, X86_RBP, s->k - 16) && s->saved && s->rec) {
			s->rec = false;				/* mov F-8(%rsp), %rbp */
		} else if (x86__is_rbp_push_pop(in, 0x5d) && s->k == 16 && s->saved && s->rec) {
			s->rec = false;				/* pop %rbp */
		} else if (!(s->rec && s->kept && rsp_mem(in, 0x8b, X86_RBP, s->slot + s->k))) {
			return false;		/* but the record's address put back: no change */
		}
	} else if (rsp_mem(in, 0x89, X86_RBP, s->k - 16) && !s->rec) {
		s->saved = true;				/* mov %rbp, F-8(%rsp) */
	} else if (x86__is_rbp_push_pop(in, 0x55) && s->k == 8 && !s->rec) {
		s->saved = true;				/* push %rbp */
	} else if (slot_write) {
		s->kept = true;					/* mov %rbp, d(%rsp) */
		s->slot = in->disp - s->k;
	}
	/* rsp moved otherwise (to another stack, or aligned) where the frame is at most two
	 * words: the leaf's fix-up would read the return address at sp or sp + 8 as the rows
	 * say, and find another word. */
	if (!moves && s->k <= 16 && x86__writes_gpr(in, X86_RSP))
		return false;
	if (x86__is_call(in) && !s->rec &&
	    !(s->k == 8 && calls_check(in, addr, checks, nr_checks)))
		return false;
	if (x86__ends_block(in) && s->rec && s->k == 8)
		return false;					/* leaves with rbp ours */
	if (!in->vex && in->map == X86_MAP_1B && (in->op == 0xc3 || in->op == 0xc2) && s->k != 8)
		return false;					/* returns from a frame */
	if (!s->rec)
		s->kept = false;
	if (moves) {
		s->k -= delta;
		if (s->k < 8 || (s->rec && s->k < 16))
			return false;
		if (s->k < 16)
			s->saved = false;
	}
	s->jumped = x86__ends_block(in);
	return true;
}

/* The row of ROWS (NR) holding ADDR, from *R on; -1 when none does. */
static int row_at(const struct frame_row *rows, int nr, int *r, uint64_t addr)
{
	while (*r < nr && rows[*r].end <= addr)
		(*r)++;
	if (*r == nr || rows[*r].start > addr)
		return -1;
	return *r;
}

/* Whether the rows from I on say the same up to END (Go ends its tables with a row of the
 * same rule at the last byte, inside the last instruction). */
static bool rows_same(const struct frame_row *rows, int nr, int i, uint64_t end)
{
	for (int j = i; rows[j].end < end; j++)
		if (j + 1 == nr || rows[j + 1].start != rows[j].end ||
		    rows[j + 1].kind != rows[i].kind || rows[j + 1].sp_off != rows[i].sp_off)
			return false;
	return true;
}

int frames__go_function(const unsigned char *code, uint64_t start, uint64_t len,
			const struct frame_row *rows, int nr, const uint64_t *checks,
			size_t nr_checks, struct frame_spans *lost)
{
	struct go_state s = { .k = 8 };
	uint64_t off = 0;
	int r = 0, i;

	lost->nr = 0;
	while (off < len) {
		uint64_t addr = start + off;
		struct x86_insn in;
		size_t n, call, duff;
		int64_t k;

		i = row_at(rows, nr, &r, addr);
		if (i < 0 || (rows[i].kind != CFI_FRAME_SP8 && rows[i].kind != CFI_FRAME_SP16 &&
			      rows[i].kind != CFI_FRAME_SPN))
			return 0;
		k = rows[i].sp_off;
		/* Where the rows say another depth, or after a jump, the code is reached from
		 * elsewhere in the function: rbp is the record there once one was made. */
		if (k != s.k || s.jumped) {
			if (k > 8 && !s.made)
				return 0;
			s = (struct go_state){ .k = k, .saved = k > 8, .rec = k > 8,
					       .made = s.made };
			/* (what the slot holds is not known there) */
		}
		n = x86__decode(code + off, len - off, &in);
		if (!n || !rows_same(rows, nr, i, addr + n))
			return 0;
		duff = s.rec ? duff_call(code + off, len - off, &call) : 0;
		if (duff && rows_same(rows, nr, i, addr + duff)) {
			/* rbp is a record made for the call from its call to its mov. */
			if (window_add(lost, addr + call, addr + duff, FRAME_LOST_EXTRA))
				return -ENOMEM;
			off += duff;
			continue;
		}
		/* A leaf here: a frame of more than two words, rbp not its record. */
		if (k > 16 && !s.rec && window_add(lost, addr, addr + n, FRAME_LOST_CALLER))
			return -ENOMEM;
		if (!go_step(&s, &in, addr, checks, nr_checks))
			return 0;
		off += n;
	}
	return 1;
}

struct go_rows {
	struct frame_row r[GO_MAX_ROWS];
	int nr;
	bool full;
};

static void on_go_row(void *arg, uint64_t start, uint64_t end, enum cfi_frame kind,
		      int32_t sp_off)
{
	struct go_rows *rows = arg;

	if (rows->nr == GO_MAX_ROWS) {
		rows->full = true;
		return;
	}
	rows->r[rows->nr++] = (struct frame_row){ start, end, sp_off, kind };
}

/* Append to LOST the windows W (in order, after those LOST holds). */
static int windows_append(struct frame_spans *lost, const struct frame_spans *w)
{
	for (size_t i = 0; i < w->nr; i++)
		if (window_add(lost, w->v[i].start, w->v[i].end, w->v[i].kind))
			return -ENOMEM;
	return 0;
}

/* The spans of the function of ROWS: trusted when GOOD, its outermost rows bottoms. */
static int go_spans(struct frame_spans *out, const struct go_rows *rows, uint64_t end, bool good)
{
	int err = 0;

	for (int i = 0; i < rows->nr && !err; i++)
		err = frames__append(out, rows->r[i].start, rows->r[i].end,
				     rows->r[i].kind == CFI_FRAME_OUTERMOST ? FRAME_BOTTOM :
				     good ? FRAME_TRUSTED : FRAME_NOREC);
	if (!err && rows->nr && rows->r[rows->nr - 1].end < end)
		err = frames__append(out, rows->r[rows->nr - 1].end, end, FRAME_NOREC);
	return err;
}

int frames__build_go(const struct cfi_mem *m, const struct fde_table *t,
		     const struct cfi_mem *code, const uint64_t *checks, size_t nr_checks,
		     struct frame_spans *out, struct frame_spans *lost)
{
	struct go_rows *rows = malloc(sizeof(*rows));
	struct frame_spans w = { 0 };
	int err = 0;

	*out = *lost = (struct frame_spans){ 0 };
	if (!rows)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->count && !err; i++) {
		uint64_t start, fde, fstart, fend, next, nfde;
		const unsigned char *bytes;
		int good = 0;

		if (fde_table__entry(t, i, &start, &fde))
			break;
		rows->nr = 0;
		rows->full = false;
		if (cfi__rows(m, fde, on_go_row, rows, &fstart, &fend)) {
			if (fde_table__entry(t, i + 1, &next, &nfde))
				next = start + 1;
			err = frames__append(out, start, next, FRAME_NOREC);
			continue;
		}
		bytes = cfi_mem__ptr(code, fstart, fend - fstart);
		if (bytes && !rows->full)
			good = frames__go_function(bytes, fstart, fend - fstart, rows->r, rows->nr,
						   checks, nr_checks, &w);
		if (good < 0) {
			err = good;
			break;
		}
		for (int r = 0; r < rows->nr; r++)
			if (rows->r[r].kind != CFI_FRAME_SP8) {
				out->nr_calling++;
				out->nr_record += good;
				break;
			}
		err = go_spans(out, rows, fend, good);
		if (!err && good)
			err = windows_append(lost, &w);
	}
	free(rows);
	frames__free(&w);
	if (err) {
		frames__free(out);
		frames__free(lost);
	}
	return err;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * gowalk: frame-pointer walks put right where their leaf is in one of Go's windows
 * (frames_go.c): instructions of a function with a frame where rbp is not its record.
 *
 * BPF has 64 spans per process, and a Go program has a few windows in each of its thousands of
 * functions: they are trusted there, and the walks from them mended here, when their stacks
 * are drained. In a prologue (after sub, before lea) or an epilogue (after the mov that
 * restores rbp, before add), rbp is the caller's record, so the walk gives the leaf X, then
 * where the caller C1 returns to in C2, and skips C1. The return address into C1 was at sp +
 * frame size, which BPF did not keep; but when C2 called C1 directly, the call before that
 * return address names C1, and when one call in C1 only may go to X (the one direct call of
 * X, or the one indirect call of a function without any), that call is where C1 returns to.
 * Anything less certain leaves the leaf alone, truncated: 4-5% of the samples of call-heavy
 * Go 1.19 code (JSON, regexp, gzip) are in such windows, and about half of them are put
 * right.
 */
#include <errno.h>
#include <string.h>
#include "dso/dso.h"
#include "proc/procmaps.h"
#include "unwind/unwind_int.h"
#include "unwind/x86.h"

/* The file of process PID at runtime address ADDR, its spans made, and the bias. */
static struct ufile *ufile_at(struct unwinder *u, pid_t pid, uint64_t addr, uint64_t *bias)
{
	const struct map *m = procmaps__find(u->pm, pid, addr);
	struct ufile *f = m && map__is_dso(m) ? unwinder__file(u, pid, m) : NULL;

	if (!f || !f->spans_done || !f->image || dso__bias(f->dso, m, addr, bias))
		return NULL;
	return f;
}

/* [*START, *END) of F's Go function (its .debug_frame FDE) holding link-time ADDR. Returns 0
 * or -ENOENT. */
static int go_function(struct ufile *f, uint64_t addr, uint64_t *start, uint64_t *end)
{
	const struct dso_fdes *src = ufile__fdes(f, DSO_CFI_DEBUG);
	uint64_t fde, first;

	if (!src || fde_table__find(&src->table, addr, &first, &fde) ||
	    cfi__fde_range(&src->mem, fde, start, end) || addr < *start || addr >= *end)
		return -ENOENT;
	return 0;
}

/* The function a direct call ending at link-time RET of F goes to (link-time), or 0. */
static uint64_t called_before(struct ufile *f, uint64_t ret)
{
	const unsigned char *p = ret >= 5 ? cfi_mem__ptr(&f->mem, ret - 5, 5) : NULL;
	int32_t rel;

	if (!p || p[0] != 0xe8)
		return 0;
	memcpy(&rel, p + 1, 4);
	return ret + (uint64_t)(int64_t)rel;
}

/* Where the one call in F's function [START, END) that may go to link-time TARGET returns
 * to: a direct call of TARGET, or an indirect call (through a function value or an
 * interface); 0 when there is none, more than one, or code that cannot be followed. */
static uint64_t only_call(struct ufile *f, uint64_t start, uint64_t end, uint64_t target)
{
	const unsigned char *code = cfi_mem__ptr(&f->mem, start, end - start);
	uint64_t found = 0, off = 0;

	if (!code)
		return 0;
	while (off < end - start) {
		struct x86_insn in;
		size_t n = x86__decode(code + off, end - start - off, &in);

		if (!n)
			return 0;
		off += n;
		if (!x86__is_call(&in) ||
		    (in.op == 0xe8 && start + off + (uint64_t)in.imm != target))
			continue;
		if (found)
			return 0;
		found = start + off;
	}
	return found;
}

/* The return address into C1 for leaf X at link-time IP of F, skipped by a walk whose next
 * return address is RET2 (runtime); 0 when it cannot be told. */
static uint64_t lost_caller(struct unwinder *u, pid_t pid, struct ufile *f, uint64_t bias,
			    uint64_t ip, uint64_t ret2)
{
	uint64_t x, xend, c1, start, c1end, b2, at;
	struct ufile *f2 = ufile_at(u, pid, ret2 - 1, &b2);

	/* Go's direct calls stay in their file. */
	if (f2 != f || b2 != bias || go_function(f, ip, &x, &xend))
		return 0;
	c1 = called_before(f, ret2 - bias);
	if (!c1 || go_function(f, c1, &start, &c1end) || start != c1)
		return 0;
	at = only_call(f, c1, c1end, x);
	return at ? at + bias : 0;
}

int unwinder__fp_window(struct unwinder *u, pid_t pid, uint64_t *ips, int nr)
{
	uint64_t bias, ret;
	struct ufile *f;

	if (nr < 1 || !(f = ufile_at(u, pid, ips[0], &bias)) || !f->lost.nr)
		return nr;
	switch (frames__kind(&f->lost, ips[0] - bias)) {
	case FRAME_LOST_CALLER:
		ret = nr >= 2 ? lost_caller(u, pid, f, bias, ips[0] - bias, ips[1]) : 0;
		if (!ret)
			return -ENOENT;
		memmove(&ips[2], &ips[1], (nr - 1) * sizeof(*ips));
		ips[1] = ret;
		return nr + 1;
	case FRAME_LOST_EXTRA:
		if (nr < 3)
			return -ENOENT;
		memmove(&ips[1], &ips[2], (nr - 2) * sizeof(*ips));
		return nr - 1;
	default:
		return nr;
	}
}

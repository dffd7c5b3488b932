// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * utab: a file's unwind table, built from its dso (in the sandboxed worker, utab_build.c),
 * encoded, and decoded on the privileged side as untrusted input (utab_codec.c); here the
 * table's memory and its lookups.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/bsearch.h"
#include "base/htab.h"
#include "base/limits.h"
#include "base/log.h"
#include "dso/dso.h"
#include "proc/procmaps.h"
#include "unwind/utab.h"
#include "dso/x86.h"
#include "unwind/utab_int.h"

const char *const utab_stack_bottoms[UTAB_NR_STACK_BOTTOMS] = {
	"__libc_start_call_main", "start_thread",
	/* ".abi0" is the symbol of Go's assembly functions since Go 1.17. */
	"runtime.goexit.abi0", "runtime.mstart.abi0", "runtime.rt0_go.abi0",
	"runtime.goexit", "runtime.mstart", "runtime.rt0_go",
	/* musl's main thread (its libc.so has no symbols: only static programs name it). */
	"libc_start_main_stage2",
	/* A makecontext coroutine's first frame (glibc). */
	"__start_context",
};

/* --- the table ------------------------------------------------------------------------------ */

static size_t utab_bytes(const struct utab *t)
{
	return sizeof(*t) + (t->build_id ? strlen(t->build_id) + 1 : 0) +
	       t->nr_segs * sizeof(*t->segs) + t->nr_rules * sizeof(*t->rules) +
	       t->nr_rows * sizeof(*t->rows) + t->spans.nr * sizeof(*t->spans.v) +
	       t->lost.nr * sizeof(*t->lost.v) + t->nr_funcs * sizeof(*t->funcs) +
	       t->nr_calls * sizeof(*t->calls);
}

bool utab__charge(struct utab *t)
{
	t->bytes = utab_bytes(t);
	if (limits__reserve(t->bytes))
		return true;
	t->bytes = 0;
	return false;
}

void utab__free(struct utab *t)
{
	if (!t)
		return;
	limits__release(t->bytes);
	free(t->build_id);
	free(t->segs);
	free(t->rules);
	free(t->rows);
	frames__free(&t->spans);
	frames__free(&t->lost);
	free(t->funcs);
	free(t->calls);
	free(t);
}

/* --- lookups -------------------------------------------------------------------------------- */

uint32_t utab__row_index(const struct utab *t, uint32_t off)
{
	size_t n = BSEARCH_PREFIX(t->nr_rows, mid, t->rows[mid].start <= off);

	return n ? (uint32_t)n - 1 : 0;
}

int utab__rule(const struct utab *t, uint64_t vaddr, struct cfi_rule *r)
{
	uint32_t lo, off;

	if (!t->nr_rows || vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return -ENOENT;
	off = (uint32_t)(vaddr - t->base);
	lo = utab__row_index(t, off);
	if (t->rows[lo].start > off || t->rows[lo].rule == UTAB_NONE ||
	    t->rows[lo].rule == UTAB_RECORD)
		return -ENOENT;
	if (t->rows[lo].rule == UTAB_UNSUP)
		return -ENOTSUP;
	*r = t->rules[t->rows[lo].rule];
	return 0;
}

bool utab__keeps_records(const struct utab *t, uint64_t vaddr)
{
	uint32_t lo, off;

	if (!t->nr_rows || vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return false;
	off = (uint32_t)(vaddr - t->base);
	lo = utab__row_index(t, off);
	return t->rows[lo].start <= off && t->rows[lo].rule == UTAB_RECORD;
}

int utab__gap(const struct utab *t, uint64_t vaddr, uint64_t *start, uint64_t *end)
{
	uint64_t lo = 0, hi = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < t->nr_segs; i++)
		if (vaddr >= t->segs[i].vaddr && vaddr - t->segs[i].vaddr < t->segs[i].memsz)
			break;
	if (i == t->nr_segs)
		return -ENOENT;
	*start = t->segs[i].vaddr;
	*end = t->segs[i].vaddr + t->segs[i].memsz;
	if (t->nr_rows && vaddr >= t->base && vaddr - t->base <= UINT32_MAX) {
		uint32_t off = (uint32_t)(vaddr - t->base), a = utab__row_index(t, off);

		if (t->rows[a].start <= off) {
			if (t->rows[a].rule != UTAB_NONE && t->rows[a].rule != UTAB_RECORD)
				return -EEXIST;
			lo = t->base + t->rows[a].start;
			if (a + 1 < t->nr_rows)
				hi = t->base + t->rows[a + 1].start;
		} else {
			hi = t->base + t->rows[0].start;
		}
	} else if (t->nr_rows && vaddr < t->base) {
		hi = t->base + t->rows[0].start;
	}
	if (lo > *start)
		*start = lo;
	if (hi < *end)
		*end = hi;
	return 0;
}

/* The index of the Go function holding VADDR, or -1. */
static int64_t func_index(const struct utab *t, uint64_t vaddr)
{
	uint32_t off;
	size_t n;

	if (!t->nr_funcs || vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return -1;
	off = (uint32_t)(vaddr - t->base);
	n = BSEARCH_PREFIX(t->nr_funcs, mid, t->funcs[mid].start <= off);
	if (!n || off >= t->funcs[n - 1].end)
		return -1;
	return (int64_t)n - 1;
}

int utab__go_function(const struct utab *t, uint64_t vaddr, uint64_t *start, uint64_t *end)
{
	int64_t i = func_index(t, vaddr);

	if (i < 0)
		return -ENOENT;
	*start = t->base + t->funcs[i].start;
	*end = t->base + t->funcs[i].end;
	return 0;
}

/* The index of the first call whose ret >= OFF. */
static uint32_t first_call(const struct utab *t, uint32_t off)
{
	return (uint32_t)BSEARCH_PREFIX(t->nr_calls, mid, t->calls[mid].ret < off);
}

uint64_t utab__called_before(const struct utab *t, uint64_t ret)
{
	uint32_t i;

	if (ret < t->base || ret - t->base > UINT32_MAX)
		return 0;
	i = first_call(t, (uint32_t)(ret - t->base));
	if (i == t->nr_calls || t->calls[i].ret != ret - t->base ||
	    t->calls[i].target == UTAB_INDIRECT)
		return 0;
	return t->base + t->calls[i].target;
}

uint64_t utab__only_call(const struct utab *t, uint64_t start, uint64_t end, uint64_t target)
{
	int64_t fi = func_index(t, start);
	uint64_t found = 0;

	if (start < t->base || end < start || end - t->base > UINT32_MAX)
		return 0;
	/* Code that does not decode to its end: no call there can be vouched for. */
	if (fi < 0 || !t->funcs[fi].ok)
		return 0;
	/* A call returns after its own bytes: into (start, end]. */
	for (uint32_t i = first_call(t, (uint32_t)(start - t->base) + 1);
	     i < t->nr_calls && t->calls[i].ret <= end - t->base; i++) {
		const struct utab_call *c = &t->calls[i];

		if (c->target != UTAB_INDIRECT && t->base + c->target != target)
			continue;
		if (found)
			return 0;
		found = t->base + c->ret;
	}
	return found;
}

int utab__bias(const struct utab *t, const struct map *m, uint64_t addr, uint64_t *bias)
{
	uint64_t vaddr;

	if (dso_segs__off_to_vaddr(t->segs, t->nr_segs, map__file_offset(m, addr), &vaddr))
		return -ENOENT;
	*bias = addr - vaddr;
	return 0;
}

int utab__vaddr_to_runtime(const struct utab *t, const struct map *m, uint64_t vaddr,
			   uint64_t *addr)
{
	uint64_t off, first = map__file_offset(m, m->start);

	if (dso_segs__vaddr_to_off(t->segs, t->nr_segs, vaddr, 1, t->file_size, &off) ||
	    off < first || off - first >= m->end - m->start)
		return -ENOENT;
	*addr = m->start + (off - first);
	return 0;
}

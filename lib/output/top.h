/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * top: the hottest functions of a set of folded stacks, as perf report and pprof -top give
 * them: each function's self count (stacks it is the leaf of) and total count (stacks it is
 * in, once per stack however often it recurses), and a call tree from the roots down.
 *
 * A frame's kind comes from profile's suffixes: "_[k]" kernel, "_[i]" inlined, "_[j]" JIT,
 * else a user function; a " (FILE:LINE)" before the suffix (--lines) is dropped, so that a
 * function's lines add up. With TOP_ROOT_IS_PROCESS the frames before the functions are
 * taken for what profile's folded output (and stackcollapse-perf.pl's, and pprof's read by
 * pprof_read) puts there: a cgroup path ("/..."), the process, a thread ("NAME/TID");
 * "[truncated]" and "[off-cpu]" are markers, never functions.
 */
#ifndef OUTPUT_TOP_H
#define OUTPUT_TOP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct folded;
struct top;

enum top_kind { TOP_USER = 0, TOP_KERNEL, TOP_INLINE, TOP_JIT };

struct top_row {
	const char *name;	/* owned by the table */
	enum top_kind kind;
	uint64_t self, total;
};

#define TOP_ROOT_IS_PROCESS	1	/* the first frame is the process (see above) */

/* A new, empty table; NULL on ENOMEM. Free with top__free (NULL is fine). */
struct top *top__new(unsigned int flags);
void top__free(struct top *t);

/* COUNT samples of the folded stack STACK (LEN bytes, ';'-joined, root first). Returns 0 or
 * -ENOMEM. */
int top__add(struct top *t, const char *stack, size_t len, uint64_t count);
/* Every stack of F. Returns 0 or -ENOMEM. */
int top__add_folded(struct top *t, const struct folded *f);

/* Samples added in all, and those with no function at all (only a process, or empty). */
uint64_t top__total(const struct top *t);
uint64_t top__no_function(const struct top *t);

enum top_sort { TOP_BY_SELF, TOP_BY_TOTAL };

/* The functions sorted by BY (then by the other count, then by name), into a malloc'd
 * array *ROWS the caller frees (NULL when none). Returns how many, or -ENOMEM. */
long top__rows(const struct top *t, enum top_sort by, struct top_row **rows);

/* The tag of a kind as perf report writes it: "[.]", "[k]", "[i]" inlined, "[j]" JIT. */
const char *top__kind_tag(enum top_kind kind);

/* The N first rows by BY as a table on OUT: self and total shares of top__total, the kind's
 * tag, the name (control characters as '?'), NAME_MAX characters of it at most (0: all).
 * Returns 0 or -errno. */
int top__write(const struct top *t, FILE *out, enum top_sort by, size_t n, size_t name_max);

/* The call tree on OUT, from the roots (functions, not processes) down: each node's total
 * share of top__total, indented two spaces a level; nodes under MIN_SHARE percent of the
 * total are left out, with their siblings' sum on one "(N more)" line. Returns 0 or -errno. */
int top__write_tree(const struct top *t, FILE *out, double min_share, size_t name_max);

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * folded: stacks in the folded format flamegraph.pl, inferno and speedscope read:
 * one line per distinct stack, "frame;frame;...;frame COUNT", root first.
 */
#ifndef FOLDED_H
#define FOLDED_H

#include <stdint.h>
#include <stdio.h>

struct folded;
struct profile;

/* A new, empty set of stacks; NULL on ENOMEM. Free with folded__free (NULL is fine). */
struct folded *folded__new(void);
void folded__free(struct folded *f);

/*
 * Append frame NAME to the stack being built in BUF (LEN bytes used, CAP allocated; *BUF may
 * be NULL at first and is grown with realloc, the caller frees it), with SUFFIX (e.g. "_[k]",
 * or NULL) after it. Characters that would break the format are replaced: ';' by ':',
 * newlines and other control characters by '?'. Returns 0 or -ENOMEM.
 */
int folded__push_frame(char **buf, size_t *len, size_t *cap, const char *name,
		       const char *suffix);

/* Add COUNT samples to STACK (a ';'-joined frame list; copied). Returns 0 or -ENOMEM. */
int folded__add(struct folded *f, const char *stack, uint64_t count);

/*
 * Add every sample of the profile model P to F as a folded stack, its weight the count
 * (weights in nanoseconds, off-CPU or wall-clock time: microseconds, rounded; a sample of
 * less than half a microsecond is left out):
 * "[CGROUP;]COMM;[THREAD/TID;][[truncated];]USER...;KERNEL...[;[off-cpu]]" with the frames
 * root first, CGROUP the path of a sample's cgroup label, [off-cpu] the leaf of off-CPU
 * samples in a profile of weight_type "wall", each
 * location's frames outermost function first, inlined frames suffixed _[i], JIT frames
 * _[j], kernel frames _[k]; COMM "[unknown]" when P has none (likewise THREAD), the thread
 * frame only for samples with a tid. Samples that fold alike merge. With FOLDED_LINES in
 * FLAGS, a frame with a source line is "NAME (FILE:LINE)" before its suffix, FILE the base
 * name of the source file (as perf's srcline). Returns 0 or -ENOMEM.
 */
#define FOLDED_LINES	1
int folded__add_profile(struct folded *f, const struct profile *p, unsigned int flags);

/* Number of distinct stacks and sum of all counts. */
size_t folded__nr_stacks(const struct folded *f);
uint64_t folded__total(const struct folded *f);

/*
 * Call FN(STACK, COUNT, CTX) for every stack, in no particular order; STACK is owned by F.
 * Stops at the first non-zero return of FN and returns it; 0 when all were visited.
 */
int folded__for_each(const struct folded *f, int (*fn)(const char *stack, uint64_t count,
						       void *ctx), void *ctx);

/* Write every stack as "STACK COUNT\n", sorted by stack (bytewise). Returns 0 or -errno. */
int folded__write(const struct folded *f, FILE *out);

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * pprof_read: a pprof profile (profile.proto, gzip-compressed or not: ours, Go's, any tool's)
 * read into folded stacks, so that `profile flamegraph app.pb.gz` draws it like a folded file.
 * The input is anyone's file: every length, count and id is checked against what is there.
 */
#ifndef OUTPUT_PPROF_READ_H
#define OUTPUT_PPROF_READ_H

#include <stdbool.h>
#include <stddef.h>

struct folded;

/* A decompressed profile larger than this is refused (-E2BIG). */
#define PPROF_READ_MAX	(1u << 30)

/* Whether the LEN bytes at DATA start like a gzip stream (pprof files are). */
bool pprof__is_gzip(const unsigned char *data, size_t len);

/* What a profile read says of itself. */
struct pprof_info {
	bool process;		/* it has the "process" label (its stacks begin with the
				 * process, as folded ones of profile's do) */
	char type[64];		/* its first sample type, "TYPE/UNIT" ("samples/count",
				 * "off_cpu/nanoseconds"), "" when it has none */
};

/*
 * Add the samples of the profile in the LEN bytes at DATA (gzip'd or raw profile.proto) to F
 * as folded stacks, root first: the "process" label's value first when a sample has one,
 * then for each location (outermost first) its lines from the caller they were inlined into
 * down to the innermost, those inlined suffixed "_[i]", a location of a mapping named
 * "[kernel.kallsyms]" suffixed "_[k]"; a location without lines is "[unknown]". The count is
 * the sample's first value. *INFO (when not NULL) gets what the profile says of itself.
 * Returns 0, or a negative errno with one sentence in ERR (ERRSZ bytes): -EINVAL for what
 * is not a profile, -E2BIG past PPROF_READ_MAX, -ENOMEM.
 */
int pprof__read(const unsigned char *data, size_t len, struct folded *f, char *err,
		size_t errsz, struct pprof_info *info);

#endif

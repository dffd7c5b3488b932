/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * pprof: the profile model written as pprof's profile.proto (github.com/google/pprof,
 * proto/profile.proto), gzip-compressed, as `go tool pprof`, Grafana Pyroscope, Parca and
 * most profiling backends read it. Written from the model, never from folded text: mappings
 * keep their address ranges, file offsets and build ids (so a backend can symbolize them
 * again), locations their addresses, and a location's inline chain is its lines (innermost
 * first, as pprof wants).
 *
 * The encoder is ours (a few varints and length-delimited fields): profile.proto is small and
 * stable, and a generated protobuf library would be a dependency for one message type.
 */
#ifndef OUTPUT_PPROF_H
#define OUTPUT_PPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct profile;

/* When the profile was taken (profile.proto's time_nanos and duration_nanos); 0: unknown. */
struct pprof_opts {
	int64_t time_nanos;		/* start, nanoseconds since the Unix epoch */
	int64_t duration_nanos;
};

/*
 * Encode P as an uncompressed profile.proto message into *BUF (malloc'd, the caller frees
 * it), *LEN its length. Sample types: the model's weight type/unit, and when it has a period
 * (samples taken every period of its period type, e.g. cpu nanoseconds) the weight times the
 * period as a second value; the period type and period. Labels: "pid" and "tid" (numbers),
 * "process" and "thread" (names), "truncated" ("true") for stacks missing their outermost
 * frames, which also end in a "[truncated]" location as in folded output. Kernel locations
 * are in a mapping "[kernel.kallsyms]". Returns 0, -ENOMEM or -E2BIG (over 2 GiB).
 */
int pprof__encode(const struct profile *p, const struct pprof_opts *o, unsigned char **buf,
		  size_t *len);

/* pprof__encode, gzip-compressed, written to OUT. Returns 0 or a negative errno (-EIO for a
 * write error). */
int pprof__write(const struct profile *p, const struct pprof_opts *o, FILE *out);

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * profile: the model of a profile, a pure data structure between collecting and writing.
 *
 *	sample    weight + labels (pid, tid, process and thread names, truncated, off-CPU,
 *	          cgroup)
 *	          -> a stack
 *	stack     location ids, LEAF FIRST (stack[0] the innermost frame: kernel locations
 *	          before user ones when a sample has both)
 *	location  kind, mapping, runtime address, file offset -> frames
 *	frame     a name and a kind; a location's frames start with its outermost function,
 *	          then the functions inlined into it down to the innermost
 *	mapping   file path, build id, [start, end), pgoff
 *	string    every name and path, interned
 *
 * Everything is interned by value: adding what is there already returns its id, and samples
 * of the same (stack, labels) merge their weights. Ids are dense, from 0 in the order of
 * first addition, so writers iterate with 0 <= id < profile__nr_*(). The profile__add_*
 * functions and profile__intern return the id (>= 0) or a negative errno: -ENOMEM, -E2BIG
 * past 2^30 entries of a kind, -EINVAL for an id or kind not in the profile. Nothing here
 * reads BPF maps, /proc or files (pprof's profile.proto is the model of what a profile
 * holds); only base/ is used.
 */
#ifndef PROFILE_PROFILE_H
#define PROFILE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROFILE_NONE UINT32_MAX	/* no id: no mapping, no string */

enum profile_loc_kind {
	PROFILE_LOC_USER,
	PROFILE_LOC_KERNEL,
	PROFILE_LOC_JIT,	/* code without a file: a perf map named it */
};

enum profile_frame_kind {
	PROFILE_FRAME_USER,
	PROFILE_FRAME_KERNEL,
	PROFILE_FRAME_INLINE,	/* inlined into the frame before it in its location */
	PROFILE_FRAME_JIT,
	PROFILE_FRAME_PYTHON,	/* a Python function (its code object's names, file, line) */
	PROFILE_FRAME_RUBY,	/* a Ruby method or block (its iseq's label, path, line) */
};

struct profile_mapping {
	uint64_t start, end;	/* [start, end) in the process */
	uint64_t pgoff;		/* file offset of start */
	uint32_t path;		/* string id */
	uint32_t build_id;	/* string id (hex), PROFILE_NONE when unknown */
};

struct profile_frame {
	uint32_t name;		/* string id */
	enum profile_frame_kind kind;
	uint32_t line;		/* source line of the frame's address in it (the call, for a
				 * frame with one inlined after it), 0: not known */
	uint32_t file;		/* string id of that line's source file; meaningful only with
				 * a line */
};

struct profile_location {
	enum profile_loc_kind kind;
	uint32_t mapping;	/* mapping id, PROFILE_NONE when none (kernel, JIT, unknown) */
	uint64_t address;	/* runtime address (a return address for callers) */
	uint64_t offset;	/* file offset of address in the mapping's file; 0 without one */
	uint32_t nr_frames;	/* 0 when nothing could be named */
	const struct profile_frame *frames;
};

struct profile_labels {
	uint32_t pid;
	uint32_t tid;		/* 0: the sample stands for the whole process */
	uint32_t comm;		/* string id of the process name; PROFILE_NONE: unknown */
	uint32_t thread_comm;	/* string id of the thread name; PROFILE_NONE: unknown */
	bool truncated;		/* the user part of the stack misses its outermost frames */
	bool off_cpu;		/* the weight is time off the CPU (weight_type "wall": the
				 * profile has on-CPU samples too, shown apart) */
	uint32_t cgroup;	/* string id + 1 of the process's cgroup path (--group-by
				 * cgroup); 0: none (a zeroed label has none) */
	uint32_t event;		/* string id + 1 of the sample's event's name, when the profile
				 * has several (-e a,b); 0: none */
};

struct profile_sample {
	uint32_t stack;		/* stack id */
	uint64_t weight;
	struct profile_labels labels;
};

/* What the weights are and how they were taken; strings are owned by the profile. */
struct profile_meta {
	const char *weight_type;	/* "samples" unless set; "off_cpu" (time off the CPU),
					 * "wall" (on-CPU samples as time, and time off it) */
	const char *weight_unit;	/* "count" unless set; "nanoseconds" */
	const char *period_type;	/* "cpu", or NULL when not set */
	const char *period_unit;	/* "nanoseconds", or NULL */
	uint64_t period;		/* between two samples, in period_unit; 0: unknown */
	unsigned int frequency;		/* samples a second per CPU; 0: not sampled by time */
};

struct profile;

/* A new, empty profile; NULL on ENOMEM. Free with profile__free (NULL is fine). */
struct profile *profile__new(void);
void profile__free(struct profile *p);

/*
 * Set what the weights are and how they were taken (the strings of M are copied; a NULL
 * weight_type or weight_unit keeps the current one). Returns 0 or -ENOMEM.
 */
int profile__set_meta(struct profile *p, const struct profile_meta *m);

/* What profile__set_meta set. Owned by P. */
const struct profile_meta *profile__meta(const struct profile *p);

/* The id of the LEN bytes at S as a string (S need not end there; a copy is kept). */
int profile__intern(struct profile *p, const char *s, size_t len);

/* The string of ID (< profile__nr_strings), NUL-terminated. Owned by P, valid until
 * profile__free. */
const char *profile__string(const struct profile *p, uint32_t id);
size_t profile__nr_strings(const struct profile *p);

/* The id of mapping M (copied; its string ids come from profile__intern). */
int profile__add_mapping(struct profile *p, const struct profile_mapping *m);

/* Mapping ID (< profile__nr_mappings). Owned by P, valid until the next add_mapping. */
const struct profile_mapping *profile__mapping(const struct profile *p, uint32_t id);
size_t profile__nr_mappings(const struct profile *p);

/* The id of location LOC (copied, frames included; a location is the same when all of its
 * fields and frames are). */
int profile__add_location(struct profile *p, const struct profile_location *loc);

/* Location ID (< profile__nr_locations) into *LOC; LOC->frames points into P, valid until the
 * next profile__add_location. */
void profile__location(const struct profile *p, uint32_t id, struct profile_location *loc);
size_t profile__nr_locations(const struct profile *p);

/* The id of the stack of the N location ids at LOCS, leaf first (copied; N may be 0, LOCS
 * then NULL). */
int profile__add_stack(struct profile *p, const uint32_t *locs, uint32_t n);

/* Stack ID (< profile__nr_stacks): its location ids, leaf first, and their number in *N.
 * Owned by P, valid until the next profile__add_stack. */
const uint32_t *profile__stack(const struct profile *p, uint32_t id, uint32_t *n);
size_t profile__nr_stacks(const struct profile *p);

/* Add WEIGHT to the sample of (STACK, *LABELS): a new sample, or the one with the same stack
 * and labels. Returns the sample's id. */
int profile__add_sample(struct profile *p, uint32_t stack, uint64_t weight,
			const struct profile_labels *labels);

/* Sample ID (< profile__nr_samples). Owned by P, valid until the next profile__add_sample. */
const struct profile_sample *profile__sample(const struct profile *p, uint32_t id);
size_t profile__nr_samples(const struct profile *p);

/* The sum of all weights. */
uint64_t profile__total(const struct profile *p);

/*
 * A timeline (for speedscope's time-ordered view): the samples as they were taken, each with
 * its time and thread, in the order added. Their weights are also in their samples' (a
 * profile with a timeline has the same totals as one without).
 */
struct profile_timed {
	uint64_t time;		/* ns, any origin (the same for all of the profile's) */
	uint64_t weight;	/* as the sample's weight counts it */
	uint32_t sample;	/* sample id */
	uint32_t tid;
	uint32_t thread_comm;	/* string id of the thread's name then; PROFILE_NONE: unknown */
};

/* Add T (its sample must be one of P's). Returns 0, -EINVAL or -ENOMEM. */
int profile__add_timed(struct profile *p, const struct profile_timed *t);

/* The timeline, *N entries (NULL when none). Owned by P, valid until the next add_timed. */
const struct profile_timed *profile__timed(const struct profile *p, size_t *n);

#endif

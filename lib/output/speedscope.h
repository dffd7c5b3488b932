/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * speedscope: a profile model with a timeline (profile__timed) in speedscope's file format
 * (its published schema, file-format-schema.json): one sampled profile per thread, named
 * "process (pid) / thread (tid)", its samples in time order, the frames shared; the time a
 * thread was not sampled is an empty stack of that weight, so that every thread's timeline
 * starts at the profile's first sample and lines up with the others.
 */
#ifndef OUTPUT_SPEEDSCOPE_H
#define OUTPUT_SPEEDSCOPE_H

#include <stdio.h>

struct profile;

struct speedscope_opts {
	const char *name;	/* the file's name for the profile group, or NULL */
};

/* Write P (its timeline) to OUT. Returns 0 or negative errno (-ENOMEM, a write error). */
int speedscope__write(const struct profile *p, const struct speedscope_opts *o, FILE *out);

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * events: what -e names (perf's event names): software and hardware events, and tracepoints
 * (CATEGORY:NAME), with what a sample of each counts. Pure: the perf_event_attr type and
 * config; a tracepoint's id is read by the session from tracefs.
 */
#ifndef COLLECT_EVENTS_H
#define COLLECT_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum event_kind {
	EVENT_CLOCK,		/* cpu-clock, task-clock: samples of time (-F) */
	EVENT_SOFTWARE,		/* counted by the kernel: page faults, context switches ... */
	EVENT_HARDWARE,		/* the CPU's PMU: cycles, instructions ... */
	EVENT_TRACEPOINT,	/* CATEGORY:NAME */
};

struct event_spec {
	enum event_kind kind;
	const char *name;	/* as perf names it ("page-faults"; the tracepoint's as given) */
	uint32_t type;		/* PERF_TYPE_* */
	uint64_t config;	/* PERF_COUNT_*; 0 for a tracepoint until its id is read */
	char category[64], event[64];	/* a tracepoint's */
	char tp_name[130];	/* a tracepoint's name, CATEGORY:NAME (name points here) */
};

/* The event named SPEC (an alias as perf takes it: "faults", "cs", "cycles"...) into *E.
 * Returns 0, or -EINVAL with one sentence in ERR (ERRSZ bytes). */
int events__parse(const char *spec, struct event_spec *e, char *err, size_t errsz);

/*
 * The events of LIST, comma-separated (as perf's -e a,b), into EVS (room for MAX), each once.
 * Returns how many, or -EINVAL with one sentence in ERR (ERRSZ bytes): an unknown event, an
 * empty one, one named twice, more than MAX.
 */
int events__parse_list(const char *list, struct event_spec *evs, size_t max, char *err,
		       size_t errsz);

/* The names of the software and hardware events -e takes, one per call: I from 0 until it
 * returns NULL; *KIND set. */
const char *events__name(size_t i, enum event_kind *kind);

#endif

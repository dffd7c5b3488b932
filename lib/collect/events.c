// SPDX-License-Identifier: GPL-3.0-or-later
/* events: see events.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/perf_event.h>
#include "collect/events.h"

static const struct {
	const char *name, *alias;
	enum event_kind kind;
	uint32_t type;
	uint64_t config;
} known[] = {
	{ "cpu-clock", NULL, EVENT_CLOCK, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", NULL, EVENT_CLOCK, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", "faults", EVENT_SOFTWARE, PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", NULL, EVENT_SOFTWARE, PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", NULL, EVENT_SOFTWARE, PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "context-switches", "cs", EVENT_SOFTWARE, PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", "migrations", EVENT_SOFTWARE, PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "alignment-faults", NULL, EVENT_SOFTWARE, PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", NULL, EVENT_SOFTWARE, PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_EMULATION_FAULTS },
	{ "cycles", "cpu-cycles", EVENT_HARDWARE, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", NULL, EVENT_HARDWARE, PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", NULL, EVENT_HARDWARE, PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", NULL, EVENT_HARDWARE, PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", "branch-instructions", EVENT_HARDWARE, PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", NULL, EVENT_HARDWARE, PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", NULL, EVENT_HARDWARE, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", NULL, EVENT_HARDWARE, PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", NULL, EVENT_HARDWARE, PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", NULL, EVENT_HARDWARE, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "LLC-load-misses", NULL, EVENT_HARDWARE, PERF_TYPE_HW_CACHE,
	  PERF_COUNT_HW_CACHE_LL | PERF_COUNT_HW_CACHE_OP_READ << 8 |
	  PERF_COUNT_HW_CACHE_RESULT_MISS << 16 },
	{ "L1-dcache-load-misses", NULL, EVENT_HARDWARE, PERF_TYPE_HW_CACHE,
	  PERF_COUNT_HW_CACHE_L1D | PERF_COUNT_HW_CACHE_OP_READ << 8 |
	  PERF_COUNT_HW_CACHE_RESULT_MISS << 16 },
};

#define NR_KNOWN (sizeof(known) / sizeof(known[0]))

/* Whether the LEN bytes at S are a tracefs name: letters, digits, '_' (1-63 of them). */
static bool tp_name(const char *s, size_t len)
{
	if (!len || len > 63)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

int events__parse(const char *spec, struct event_spec *e, char *err, size_t errsz)
{
	const char *colon = strchr(spec, ':');

	memset(e, 0, sizeof(*e));
	for (size_t i = 0; i < NR_KNOWN; i++) {
		if (strcmp(spec, known[i].name) && (!known[i].alias || strcmp(spec, known[i].alias)))
			continue;
		e->kind = known[i].kind;
		e->name = known[i].name;
		e->type = known[i].type;
		e->config = known[i].config;
		return 0;
	}
	if (colon && tp_name(spec, (size_t)(colon - spec)) &&
	    tp_name(colon + 1, strlen(colon + 1))) {
		e->kind = EVENT_TRACEPOINT;
		snprintf(e->tp_name, sizeof(e->tp_name), "%s", spec);
		e->name = e->tp_name;
		e->type = PERF_TYPE_TRACEPOINT;
		memcpy(e->category, spec, (size_t)(colon - spec));
		snprintf(e->event, sizeof(e->event), "%s", colon + 1);
		return 0;
	}
	snprintf(err, errsz, "unknown event '%s': expected one that 'profile -e list' lists, or "
		 "a tracepoint CATEGORY:NAME", spec);
	return -EINVAL;
}

int events__parse_list(const char *list, struct event_spec *evs, size_t max, char *err,
		       size_t errsz)
{
	size_t n = 0;

	for (const char *p = list;; p++) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char one[160];

		if (!len || len >= sizeof(one)) {
			snprintf(err, errsz, "%s event in '%s'", len ? "an overlong" : "an empty",
				 list);
			return -EINVAL;
		}
		if (n == max) {
			snprintf(err, errsz, "at most %zu events at once (-e), not '%s'", max, list);
			return -EINVAL;
		}
		memcpy(one, p, len);
		one[len] = 0;
		if (events__parse(one, &evs[n], err, errsz))
			return -EINVAL;
		for (size_t i = 0; i < n; i++)
			if (!strcmp(evs[i].name, evs[n].name)) {
				snprintf(err, errsz, "event '%s' named twice (-e)", evs[n].name);
				return -EINVAL;
			}
		/* (A tracepoint's name moved with the copy.) */
		n++;
		if (!end)
			break;
		p = end;
	}
	return (int)n;
}

const char *events__name(size_t i, enum event_kind *kind)
{
	if (i >= NR_KNOWN)
		return NULL;
	*kind = known[i].kind;
	return known[i].name;
}

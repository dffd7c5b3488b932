// SPDX-License-Identifier: GPL-3.0-or-later
/* events: perf's names and aliases to perf_event_attr types and configs; tracepoints by
 * CATEGORY:NAME; anything else refused in one sentence. */
#include <errno.h>
#include <string.h>
#include <linux/perf_event.h>
#include <CUnit/CUnit.h>
#include "collect/events.h"
#include "suites.h"

static void test_names_and_aliases(void)
{
	struct event_spec e;
	char err[256];

	CU_ASSERT_EQUAL(events__parse("cpu-clock", &e, err, sizeof(err)), 0);
	CU_ASSERT(e.kind == EVENT_CLOCK && e.type == PERF_TYPE_SOFTWARE &&
		  e.config == PERF_COUNT_SW_CPU_CLOCK);
	CU_ASSERT_EQUAL(events__parse("faults", &e, err, sizeof(err)), 0);
	CU_ASSERT(e.kind == EVENT_SOFTWARE && e.config == PERF_COUNT_SW_PAGE_FAULTS &&
		  !strcmp(e.name, "page-faults"));
	CU_ASSERT_EQUAL(events__parse("cs", &e, err, sizeof(err)), 0);
	CU_ASSERT(e.config == PERF_COUNT_SW_CONTEXT_SWITCHES);
	CU_ASSERT_EQUAL(events__parse("cycles", &e, err, sizeof(err)), 0);
	CU_ASSERT(e.kind == EVENT_HARDWARE && e.type == PERF_TYPE_HARDWARE &&
		  e.config == PERF_COUNT_HW_CPU_CYCLES);
	CU_ASSERT_EQUAL(events__parse("LLC-load-misses", &e, err, sizeof(err)), 0);
	CU_ASSERT(e.type == PERF_TYPE_HW_CACHE &&
		  e.config == (PERF_COUNT_HW_CACHE_LL | PERF_COUNT_HW_CACHE_OP_READ << 8 |
			       PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
}

static void test_tracepoints(void)
{
	struct event_spec e;
	char err[256];

	CU_ASSERT_EQUAL(events__parse("syscalls:sys_enter_write", &e, err, sizeof(err)), 0);
	CU_ASSERT(e.kind == EVENT_TRACEPOINT && e.type == PERF_TYPE_TRACEPOINT);
	CU_ASSERT_STRING_EQUAL(e.category, "syscalls");
	CU_ASSERT_STRING_EQUAL(e.event, "sys_enter_write");
	/* Not names tracefs has: a path, an empty part, another colon. */
	CU_ASSERT_EQUAL(events__parse("../x:y", &e, err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(events__parse("sched:", &e, err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(events__parse(":x", &e, err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(events__parse("a:b:c", &e, err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(events__parse("cycle", &e, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown event 'cycle'"));
}

static void test_several(void)
{
	struct event_spec evs[3];
	char err[256];

	CU_ASSERT_EQUAL(events__parse_list("page-faults,cs,syscalls:sys_enter_write", evs, 3,
					   err, sizeof(err)), 3);
	CU_ASSERT(evs[0].config == PERF_COUNT_SW_PAGE_FAULTS &&
		  evs[1].config == PERF_COUNT_SW_CONTEXT_SWITCHES &&
		  evs[2].kind == EVENT_TRACEPOINT && !strcmp(evs[2].name, "syscalls:sys_enter_write") &&
		  !strcmp(evs[2].category, "syscalls") && !strcmp(evs[2].event, "sys_enter_write"));
	CU_ASSERT_EQUAL(events__parse_list("cpu-clock", evs, 3, err, sizeof(err)), 1);
	/* An alias of one already named is that one twice. */
	CU_ASSERT_EQUAL(events__parse_list("faults,page-faults", evs, 3, err, sizeof(err)),
			-EINVAL);
	CU_ASSERT(strstr(err, "twice") != NULL);
	CU_ASSERT_EQUAL(events__parse_list("cs,", evs, 3, err, sizeof(err)), -EINVAL);
	CU_ASSERT(strstr(err, "empty") != NULL);
	CU_ASSERT_EQUAL(events__parse_list(",cs", evs, 3, err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(events__parse_list("cs,faults,cpu-clock,task-clock", evs, 3, err,
					   sizeof(err)), -EINVAL);
	CU_ASSERT(strstr(err, "at most 3") != NULL);
	CU_ASSERT_EQUAL(events__parse_list("cs,nonsense", evs, 3, err, sizeof(err)), -EINVAL);
	CU_ASSERT(strstr(err, "unknown event 'nonsense'") != NULL);
}

static void test_list(void)
{
	enum event_kind kind;
	size_t n = 0, hw = 0;
	const char *name;

	for (size_t i = 0; (name = events__name(i, &kind)); i++) {
		struct event_spec e;
		char err[128];

		n++;
		hw += kind == EVENT_HARDWARE;
		CU_ASSERT_EQUAL(events__parse(name, &e, err, sizeof(err)), 0);
	}
	CU_ASSERT(n >= 15 && hw >= 8);
}

int register_events_suite(void)
{
	CU_pSuite s = CU_add_suite("events", NULL, NULL);

	if (!s || !CU_add_test(s, "names and aliases", test_names_and_aliases) ||
	    !CU_add_test(s, "tracepoints", test_tracepoints) ||
	    !CU_add_test(s, "several, comma-separated", test_several) ||
	    !CU_add_test(s, "the list parses back", test_list))
		return -1;
	return 0;
}

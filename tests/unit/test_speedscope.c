// SPDX-License-Identifier: GPL-3.0-or-later
/* speedscope: a profile model's timeline written as speedscope's file: a profile per thread,
 * samples in time order with their weights, unsampled time as empty stacks, frames shared,
 * names escaped. Checked on the text (the integration and browser tests read it with
 * speedscope's own schema and viewer). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "output/speedscope.h"
#include "profile/profile.h"
#include "suites.h"

static uint32_t str(struct profile *p, const char *s)
{
	int id = profile__intern(p, s, strlen(s));

	CU_ASSERT_FATAL(id >= 0);
	return (uint32_t)id;
}

/* A sample of one location of one user frame NAME, labelled (PID, COMM), off the CPU or not. */
static uint32_t sample(struct profile *p, const char *name, uint32_t pid, const char *comm,
		       bool off, uint64_t weight)
{
	struct profile_frame fr = { .name = str(p, name), .kind = PROFILE_FRAME_USER };
	struct profile_location l = { .kind = PROFILE_LOC_USER, .mapping = PROFILE_NONE,
				      .address = 0x1000 + strlen(name), .nr_frames = 1,
				      .frames = &fr };
	struct profile_labels lab = { .pid = pid, .comm = str(p, comm),
				      .thread_comm = PROFILE_NONE, .off_cpu = off };
	int loc = profile__add_location(p, &l), st, s;
	uint32_t locs[1];

	CU_ASSERT_FATAL(loc >= 0);
	locs[0] = (uint32_t)loc;
	st = profile__add_stack(p, locs, 1);
	CU_ASSERT_FATAL(st >= 0);
	s = profile__add_sample(p, (uint32_t)st, weight, &lab);
	CU_ASSERT_FATAL(s >= 0);
	return (uint32_t)s;
}

static void timed(struct profile *p, uint32_t s, uint32_t tid, const char *thread,
		  uint64_t time, uint64_t weight)
{
	struct profile_timed t = { .time = time, .weight = weight, .sample = s, .tid = tid,
				   .thread_comm = str(p, thread) };

	CU_ASSERT_EQUAL_FATAL(profile__add_timed(p, &t), 0);
}

/* Timed samples of P: sample, tid, thread name, time, weight. */
struct timed_case {
	uint32_t sample, tid;
	const char *thread;
	uint64_t time, weight;
};

static void timed_all(struct profile *p, const struct timed_case *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		timed(p, v[i].sample, v[i].tid, v[i].thread, v[i].time, v[i].weight);
}

static char *written(const struct profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct speedscope_opts o = { .name = "t" };

	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_EQUAL(speedscope__write(p, &o, out), 0);
	fclose(out);
	return buf;
}

static void test_threads_in_time_order(void)
{
	struct profile *p = profile__new();
	struct profile_meta m = { .weight_type = "samples", .weight_unit = "count",
				  .period_type = "cpu", .period_unit = "nanoseconds",
				  .period = 1000000, .frequency = 1000 };
	uint32_t a, b, w;
	char *s;

	CU_ASSERT_EQUAL_FATAL(profile__set_meta(p, &m), 0);
	a = sample(p, "fa", 7, "app", false, 3);
	b = sample(p, "fb", 7, "app", false, 1);
	w = sample(p, "fw", 7, "app", false, 2);
	/* Thread 8: fb at 100 ms, fa at 101 and 102 (added out of order), then 10 ms with none
	 * before fa again at 113; thread 9 works throughout. */
	timed_all(p, (const struct timed_case[]){
		{ a, 8, "one", 102000000, 1 }, { b, 8, "one", 100000000, 1 },
		{ a, 8, "one", 101000000, 1 }, { a, 8, "one", 113000000, 1 },
		{ w, 9, "two\"q", 100000000, 1 }, { w, 9, "two\"q", 101000000, 1 },
	}, 6);
	s = written(p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "\"$schema\":\"https://www.speedscope.app/"
					 "file-format-schema.json\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "\"shared\":{\"frames\":[{\"name\":\"fb\"},"
					 "{\"name\":\"fa\"},{\"name\":\"fw\"}]}"));
	/* Thread 8: fb, fa, fa, 10 ms of nothing, fa; 1 ms each; to the end of the last. */
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "{\"type\":\"sampled\",\"name\":\"app (7) / one (8)\","
					 "\"unit\":\"nanoseconds\",\"startValue\":0,"
					 "\"endValue\":14000000,\"samples\":[[0],[1],[1],[],[1]],"
					 "\"weights\":[1000000,1000000,1000000,10000000,1000000]}"));
	/* Thread 9: its two, then nothing to the profile's end; its name escaped. */
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "\"name\":\"app (7) / two\\\"q (9)\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "\"samples\":[[2],[2],[]],\"weights\":[1000000,1000000,"
					 "12000000]}"));
	/* The thread with the most samples shown first. */
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "\"activeProfileIndex\":0"));
	free(s);
	profile__free(p);
}

static void test_wall_waits_marked(void)
{
	struct profile *p = profile__new();
	struct profile_meta m = { .weight_type = "wall", .weight_unit = "nanoseconds",
				  .frequency = 1000 };
	uint32_t on, off;
	char *s;

	CU_ASSERT_EQUAL_FATAL(profile__set_meta(p, &m), 0);
	on = sample(p, "run", 5, "w", false, 1000000);
	off = sample(p, "sleep", 5, "w", true, 300000000);
	timed_all(p, (const struct timed_case[]){
		{ on, 5, "w", 0, 1000000 }, { off, 5, "w", 1000000, 300000000 },
		{ on, 5, "w", 301000000, 1000000 },
	}, 3);
	s = written(p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "\"frames\":[{\"name\":\"run\"},{\"name\":\"sleep\"},"
					 "{\"name\":\"[off-cpu]\"}]"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "\"samples\":[[0],[1,2],[0]],\"weights\":[1000000,"
					 "300000000,1000000]"));
	free(s);
	profile__free(p);
}

static void test_no_timeline(void)
{
	struct profile *p = profile__new();
	char *s;

	sample(p, "x", 1, "a", false, 1);
	s = written(p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "\"profiles\":[],\"shared\":{\"frames\":[]}"));
	free(s);
	profile__free(p);
	/* A timed sample of no sample of the profile is refused. */
	p = profile__new();
	CU_ASSERT_EQUAL(profile__add_timed(p, &(struct profile_timed){ .sample = 0,
						    .thread_comm = PROFILE_NONE }), -EINVAL);
	profile__free(p);
}

int register_speedscope_suite(void)
{
	CU_pSuite s = CU_add_suite("speedscope", NULL, NULL);

	if (!s || !CU_add_test(s, "threads, time order, gaps, escaping", test_threads_in_time_order) ||
	    !CU_add_test(s, "wall clock: waits as samples ending in [off-cpu]",
			 test_wall_waits_marked) ||
	    !CU_add_test(s, "no timeline: no profiles", test_no_timeline))
		return -1;
	return 0;
}

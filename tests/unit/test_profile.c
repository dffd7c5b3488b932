// SPDX-License-Identifier: GPL-3.0-or-later
/* profile: the model's interning (strings, mappings, locations, stacks), merging of samples,
 * iteration in order of first addition, ids checked. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "profile/profile.h"
#include "suites.h"

static int str(struct profile *p, const char *s)
{
	return profile__intern(p, s, strlen(s));
}

/* A user location of one frame NAME at ADDR, without a mapping. */
static int loc1(struct profile *p, const char *name, uint64_t addr)
{
	struct profile_frame f = { .name = str(p, name), .kind = PROFILE_FRAME_USER };
	struct profile_location l = {
		.kind = PROFILE_LOC_USER, .mapping = PROFILE_NONE, .address = addr,
		.nr_frames = 1, .frames = &f,
	};

	return profile__add_location(p, &l);
}

static void test_strings(void)
{
	struct profile *p = profile__new();
	int a, b, c;

	CU_ASSERT_FATAL(p != NULL);
	a = str(p, "main");
	b = str(p, "work");
	c = profile__intern(p, "mainly", 4);		/* LEN bytes only: "main" */
	CU_ASSERT_EQUAL(a, 0);
	CU_ASSERT_EQUAL(b, 1);
	CU_ASSERT_EQUAL(c, a);
	CU_ASSERT_EQUAL(str(p, "work"), b);
	CU_ASSERT_EQUAL(str(p, ""), 2);
	CU_ASSERT_EQUAL(profile__nr_strings(p), 3);
	CU_ASSERT_STRING_EQUAL(profile__string(p, a), "main");
	CU_ASSERT_STRING_EQUAL(profile__string(p, 2), "");
	profile__free(p);
	profile__free(NULL);
}

static void test_many_strings_grow(void)
{
	struct profile *p = profile__new();
	char name[32];
	int wrong = 0;

	CU_ASSERT_FATAL(p != NULL);
	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "fn%d", i);
		wrong += str(p, name) != i;
	}
	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "fn%d", i);
		wrong += str(p, name) != i || strcmp(profile__string(p, i), name);
	}
	CU_ASSERT_EQUAL(wrong, 0);
	CU_ASSERT_EQUAL(profile__nr_strings(p), 20000);
	profile__free(p);
}

static void test_mappings_and_locations(void)
{
	struct profile *p = profile__new();
	struct profile_mapping m = { 0x1000, 0x5000, 0x0, 0, PROFILE_NONE };
	struct profile_frame frames[2];
	struct profile_location l, got;
	int map, id, id2;

	CU_ASSERT_FATAL(p != NULL);
	m.path = str(p, "/usr/bin/app");
	map = profile__add_mapping(p, &m);
	CU_ASSERT_EQUAL(map, 0);
	CU_ASSERT_EQUAL(profile__add_mapping(p, &m), map);
	m.pgoff = 0x1000;
	CU_ASSERT_EQUAL(profile__add_mapping(p, &m), 1);	/* another pgoff, another mapping */
	m.path = 99;
	CU_ASSERT_EQUAL(profile__add_mapping(p, &m), -EINVAL);
	CU_ASSERT_EQUAL(profile__nr_mappings(p), 2);
	CU_ASSERT_STRING_EQUAL(profile__string(p, profile__mapping(p, map)->path), "/usr/bin/app");

	frames[0] = (struct profile_frame){ .name = str(p, "work"), .kind = PROFILE_FRAME_USER };
	frames[1] = (struct profile_frame){ .name = str(p, "helper"), .kind = PROFILE_FRAME_INLINE };
	l = (struct profile_location){ PROFILE_LOC_USER, map, 0x1234, 0x234, 2, frames };
	id = profile__add_location(p, &l);
	CU_ASSERT_EQUAL(id, 0);
	CU_ASSERT_EQUAL(profile__add_location(p, &l), id);
	frames[1].kind = PROFILE_FRAME_USER;			/* frames are part of a location */
	id2 = profile__add_location(p, &l);
	CU_ASSERT_EQUAL(id2, 1);
	l.nr_frames = 1;
	CU_ASSERT_EQUAL(profile__add_location(p, &l), 2);
	l.mapping = 7;
	CU_ASSERT_EQUAL(profile__add_location(p, &l), -EINVAL);
	CU_ASSERT_EQUAL(profile__nr_locations(p), 3);

	frames[0].name = str(p, "changed");			/* the location kept a copy */
	profile__location(p, id, &got);
	CU_ASSERT_EQUAL(got.kind, PROFILE_LOC_USER);
	CU_ASSERT_EQUAL(got.mapping, (uint32_t)map);
	CU_ASSERT_EQUAL(got.address, 0x1234);
	CU_ASSERT_EQUAL(got.offset, 0x234);
	CU_ASSERT_EQUAL_FATAL(got.nr_frames, 2);
	CU_ASSERT_STRING_EQUAL(profile__string(p, got.frames[0].name), "work");
	CU_ASSERT_STRING_EQUAL(profile__string(p, got.frames[1].name), "helper");
	CU_ASSERT_EQUAL(got.frames[1].kind, PROFILE_FRAME_INLINE);
	profile__free(p);
}

static void test_stacks(void)
{
	struct profile *p = profile__new();
	uint32_t ab[2], ba[2], n;
	const uint32_t *got;
	int s1, s2, empty;

	CU_ASSERT_FATAL(p != NULL);
	ab[0] = ba[1] = loc1(p, "a", 0x10);
	ab[1] = ba[0] = loc1(p, "b", 0x20);
	s1 = profile__add_stack(p, ab, 2);
	s2 = profile__add_stack(p, ba, 2);
	CU_ASSERT_EQUAL(s1, 0);
	CU_ASSERT_EQUAL(s2, 1);				/* order matters */
	CU_ASSERT_EQUAL(profile__add_stack(p, ab, 2), s1);
	CU_ASSERT_EQUAL(profile__add_stack(p, ab, 1), 2);	/* a prefix is another stack */
	empty = profile__add_stack(p, NULL, 0);
	CU_ASSERT_EQUAL(empty, 3);
	CU_ASSERT_EQUAL(profile__add_stack(p, NULL, 0), empty);
	ab[1] = 5;
	CU_ASSERT_EQUAL(profile__add_stack(p, ab, 2), -EINVAL);
	CU_ASSERT_EQUAL(profile__nr_stacks(p), 4);
	got = profile__stack(p, s2, &n);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_EQUAL(got[0], ba[0]);
	CU_ASSERT_EQUAL(got[1], ba[1]);
	profile__stack(p, empty, &n);
	CU_ASSERT_EQUAL(n, 0);
	profile__free(p);
}

static void test_samples_merge(void)
{
	struct profile *p = profile__new();
	struct profile_labels l = { .pid = 10, .thread_comm = PROFILE_NONE };
	struct profile_labels t, tr, other;
	uint32_t loc;
	int st, a;

	CU_ASSERT_FATAL(p != NULL);
	loc = loc1(p, "main", 0x10);
	st = profile__add_stack(p, &loc, 1);
	l.comm = str(p, "app");
	t = tr = other = l;
	t.tid = 11;
	t.thread_comm = str(p, "worker");
	tr.truncated = true;
	other.pid = 12;

	a = profile__add_sample(p, st, 3, &l);
	CU_ASSERT_EQUAL(a, 0);
	CU_ASSERT_EQUAL(profile__add_sample(p, st, 4, &l), a);	/* same stack and labels */
	CU_ASSERT_EQUAL(profile__add_sample(p, st, 1, &t), 1);
	CU_ASSERT_EQUAL(profile__add_sample(p, st, 1, &tr), 2);
	CU_ASSERT_EQUAL(profile__add_sample(p, st, 2, &other), 3);
	CU_ASSERT_EQUAL(profile__add_sample(p, st, 5, &t), 1);
	CU_ASSERT_EQUAL(profile__add_sample(p, 9, 1, &l), -EINVAL);
	CU_ASSERT_EQUAL_FATAL(profile__nr_samples(p), 4);
	CU_ASSERT_EQUAL(profile__sample(p, 0)->weight, 7);
	CU_ASSERT_EQUAL(profile__sample(p, 1)->weight, 6);
	CU_ASSERT_EQUAL(profile__sample(p, 1)->labels.tid, 11);
	CU_ASSERT_TRUE(profile__sample(p, 2)->labels.truncated);
	CU_ASSERT_EQUAL(profile__sample(p, 3)->labels.pid, 12);
	CU_ASSERT_EQUAL(profile__sample(p, 3)->stack, (uint32_t)st);
	CU_ASSERT_EQUAL(profile__total(p), 16);
	profile__free(p);
}

static void test_meta(void)
{
	struct profile *p = profile__new();
	char type[] = "cpu";
	struct profile_meta m = { .period_type = type, .period_unit = "nanoseconds",
				  .period = 10101010, .frequency = 99 };

	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT_STRING_EQUAL(profile__meta(p)->weight_type, "samples");
	CU_ASSERT_STRING_EQUAL(profile__meta(p)->weight_unit, "count");
	CU_ASSERT_PTR_NULL(profile__meta(p)->period_type);
	CU_ASSERT_EQUAL(profile__set_meta(p, &m), 0);
	type[0] = 'X';						/* copied */
	CU_ASSERT_STRING_EQUAL(profile__meta(p)->weight_type, "samples");
	CU_ASSERT_STRING_EQUAL(profile__meta(p)->period_type, "cpu");
	CU_ASSERT_STRING_EQUAL(profile__meta(p)->period_unit, "nanoseconds");
	CU_ASSERT_EQUAL(profile__meta(p)->period, 10101010);
	CU_ASSERT_EQUAL(profile__meta(p)->frequency, 99);
	m.weight_type = "off-cpu";
	m.weight_unit = "nanoseconds";
	CU_ASSERT_EQUAL(profile__set_meta(p, &m), 0);
	CU_ASSERT_STRING_EQUAL(profile__meta(p)->weight_type, "off-cpu");
	CU_ASSERT_STRING_EQUAL(profile__meta(p)->weight_unit, "nanoseconds");
	profile__free(p);
}

int register_profile_suite(void)
{
	CU_pSuite s = CU_add_suite("profile", NULL, NULL);

	if (!s ||
	    !CU_add_test(s, "strings interned", test_strings) ||
	    !CU_add_test(s, "20000 strings: growth keeps ids", test_many_strings_grow) ||
	    !CU_add_test(s, "mappings and locations interned", test_mappings_and_locations) ||
	    !CU_add_test(s, "stacks interned, order kept", test_stacks) ||
	    !CU_add_test(s, "samples merge by stack and labels", test_samples_merge) ||
	    !CU_add_test(s, "weight and period", test_meta))
		return -1;
	return 0;
}

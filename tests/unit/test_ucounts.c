// SPDX-License-Identifier: GPL-3.0-or-later
/* ucounts: identical (key, frames) merge, every field of the stack_key part of the key
 * (the walk's end, how the stack was made), growth past the first 1024 slots, iteration
 * over every entry once. */
#include <stdlib.h>
#include <string.h>
#include "base/limits.h"
#include "collect/ucounts.h"
#include "suites.h"

/* The entry of (KEY, IPS[0..NR)), found by iterating; NULL when none. */
static const struct ucount *lookup(const struct ucounts *uc, const struct stack_key *key,
				   const uint64_t *ips, uint32_t nr)
{
	const struct ucount *e;
	size_t pos = 0;

	while ((e = ucounts__next(uc, &pos)))
		if (stack_key__same(&e->key, key) && e->nr == nr && !memcmp(e->ips, ips, nr * sizeof(*ips)))
			return e;
	return NULL;
}

static size_t nr_entries(const struct ucounts *uc)
{
	size_t pos = 0, n = 0;

	while (ucounts__next(uc, &pos))
		n++;
	return n;
}

static void test_merge(void)
{
	struct ucounts *uc = ucounts__new();
	struct stack_key k = { .pid = 10, .kstack_id = -1 };
	struct stack_key k2 = k, v[10];
	uint64_t ips[] = { 0x401000, 0x402000, 0x403000 }, other[] = { 0x401000, 0x402001 };
	const struct ucount *e;
	int nv = 0;

	CU_ASSERT_FATAL(uc != NULL);
	CU_ASSERT_EQUAL(nr_entries(uc), 0);
	/* Keys that differ in one field each. */
	for (int i = 0; i < 10; i++)
		v[i] = k;
	v[nv++].walk_end = 0x402000;	/* where a frame-pointer walk stopped */
	v[nv++].tid = 11;
	v[nv++].truncated = true;
	v[nv++].kstack_id = 3;
	v[nv++].stop = UNWIND_STOP_BAD_FRAME;
	v[nv++].sent = STACK_SENT_NOREC;
	v[nv++].event = 1;
	v[nv++].off_cpu = true;
	v[nv++].gen = 1000;
	v[nv++].no_stack = true;
	CU_ASSERT_EQUAL(ucounts__add(uc, &k, ips, 3, 1), 0);
	CU_ASSERT_EQUAL(ucounts__add(uc, &k, ips, 3, 1), 0);
	CU_ASSERT_EQUAL(ucounts__add(uc, &k2, ips, 3, 1), 0);	/* the same key, copied */
	CU_ASSERT_EQUAL(ucounts__add(uc, &k, ips, 2, 1), 0);	/* fewer frames */
	CU_ASSERT_EQUAL(ucounts__add(uc, &k, other, 2, 1), 0);
	for (int i = 0; i < nv; i++)
		CU_ASSERT_EQUAL(ucounts__add(uc, &v[i], ips, 3, 1), 0);
	CU_ASSERT_EQUAL(ucounts__add(uc, &k, other, 0, 1), 0);	/* no user frames */
	CU_ASSERT_EQUAL(ucounts__add(uc, &k, other, 0, 1), 0);
	CU_ASSERT_EQUAL(nr_entries(uc), 4 + (size_t)nv);

	e = lookup(uc, &k, ips, 3);
	CU_ASSERT_FATAL(e != NULL);
	CU_ASSERT_EQUAL(e->count, 3);
	CU_ASSERT_EQUAL(e->key.walk_end, 0);
	CU_ASSERT_EQUAL(e->ips[2], 0x403000);
	CU_ASSERT_EQUAL(lookup(uc, &k, ips, 2)->count, 1);
	CU_ASSERT_EQUAL(lookup(uc, &k, other, 2)->count, 1);
	for (int i = 0; i < nv; i++) {
		CU_ASSERT_FALSE(stack_key__same(&v[i], &k));
		CU_ASSERT_NOT_EQUAL(stack_key__hash(1, &v[i]), stack_key__hash(1, &k));
		CU_ASSERT_EQUAL(lookup(uc, &v[i], ips, 3)->count, 1);
	}
	CU_ASSERT_EQUAL(lookup(uc, &k, other, 0)->count, 2);
	ucounts__free(uc);
	ucounts__free(NULL);
}

#define MANY 5000

static void test_growth_and_iteration(void)
{
	struct ucounts *uc = ucounts__new();
	unsigned char *seen = calloc(MANY, 1);
	struct stack_key k = { .pid = 1, .kstack_id = -1 };
	const struct ucount *e;
	size_t pos = 0, n = 0;
	int bad = 0;

	CU_ASSERT_FATAL(uc != NULL && seen != NULL);
	/* Stack i, i + 1 times: 5000 entries, past the first table of 1024 slots. */
	for (uint64_t i = 0; i < MANY; i++) {
		uint64_t ips[2] = { 0x400000 + i, 0x500000 };

		for (uint64_t j = 0; j <= i % 4; j++)
			bad += ucounts__add(uc, &k, ips, 2, 1) != 0;
	}
	CU_ASSERT_EQUAL(bad, 0);
	while ((e = ucounts__next(uc, &pos))) {
		uint64_t i = e->ips[0] - 0x400000;

		n++;
		if (e->nr != 2 || i >= MANY || seen[i]++ || e->count != i % 4 + 1)
			bad++;
	}
	CU_ASSERT_EQUAL(n, MANY);
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_PTR_NULL(ucounts__next(uc, &pos));		/* stays at the end */
	free(seen);
	ucounts__free(uc);
}

/* New stacks past the memory budget are dropped and counted; known ones still count. */
static void test_budget(void)
{
	struct ucounts *uc = ucounts__new();
	struct stack_key k = { .pid = 10, .kstack_id = -1 };
	uint64_t ips[64] = { 0 };
	size_t kept;

	CU_ASSERT_PTR_NOT_NULL_FATAL(uc);
	limits__reset();
	limits__set_budget(64 << 10);
	for (uint64_t i = 0; i < 1000; i++) {
		ips[0] = 0x401000 + i;
		CU_ASSERT_EQUAL(ucounts__add(uc, &k, ips, 64, 1), 0);
	}
	kept = nr_entries(uc);
	CU_ASSERT(kept > 10 && kept < 1000);
	CU_ASSERT_EQUAL(limits__count(LIMIT_MEMORY_STACKS), 1000 - kept);
	CU_ASSERT(limits__used() <= (64 << 10));
	ips[0] = 0x401000;
	CU_ASSERT_EQUAL(ucounts__add(uc, &k, ips, 64, 1), 0);
	CU_ASSERT_EQUAL(lookup(uc, &k, ips, 64)->count, 2);
	ucounts__free(uc);
	CU_ASSERT_EQUAL(limits__used(), 0);
	limits__reset();
}

int register_ucounts_suite(void)
{
	CU_pSuite s = CU_add_suite("ucounts", NULL, NULL);

	if (!s ||
	    !CU_add_test(s, "identical key and frames merge", test_merge) ||
	    !CU_add_test(s, "5000 stacks: growth, each iterated once", test_growth_and_iteration) ||
	    !CU_add_test(s, "new stacks past the memory budget dropped", test_budget))
		return -1;
	return 0;
}

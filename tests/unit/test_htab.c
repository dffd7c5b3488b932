// SPDX-License-Identifier: GPL-3.0-or-later
/* htab: ids found by hash, candidates with equal low bits, growth, an empty table. */
#include <stdbool.h>
#include <stdlib.h>
#include "base/htab.h"
#include "suites.h"

#define N 100000

/* Keys whose hashes share their low 32 bits in pairs (worst case for the stored bits). */
static uint64_t key_hash(uint32_t k)
{
	return ((uint64_t)k << 32) | (k / 2);
}

static uint32_t find(const struct htab *t, const uint32_t *keys, uint32_t key)
{
	uint64_t h = key_hash(key);
	uint32_t pos, id;

	for (id = htab__first(t, h, &pos); id != HTAB_NONE; id = htab__next(t, h, &pos))
		if (keys[id] == key)
			return id;
	return HTAB_NONE;
}

static void test_insert_find(void)
{
	uint32_t *keys = calloc(N, sizeof(*keys));
	struct htab t = { 0 };
	uint32_t missing = 0, wrong = 0;

	CU_ASSERT_FATAL(keys != NULL);
	CU_ASSERT_EQUAL(find(&t, keys, 1), HTAB_NONE);		/* empty, never grown */
	for (uint32_t i = 0; i < N; i++) {
		keys[i] = i * 7 + 3;
		CU_ASSERT_EQUAL_FATAL(htab__insert(&t, key_hash(keys[i]), i), 0);
	}
	CU_ASSERT_EQUAL(htab__count(&t), N);
	CU_ASSERT(t.mask + 1 >= 2 * N);				/* at most half full */
	for (uint32_t i = 0; i < N; i++) {
		uint32_t id = find(&t, keys, i * 7 + 3);

		missing += id == HTAB_NONE;
		wrong += id != HTAB_NONE && id != i;
	}
	CU_ASSERT_EQUAL(missing, 0);
	CU_ASSERT_EQUAL(wrong, 0);
	CU_ASSERT_EQUAL(find(&t, keys, 5), HTAB_NONE);		/* 5 is no i * 7 + 3 */
	htab__free(&t);
	CU_ASSERT_EQUAL(htab__count(&t), 0);
	CU_ASSERT_EQUAL(find(&t, keys, 3), HTAB_NONE);
	free(keys);
}

/* Removing ids in clustered runs (a small table, colliding homes, runs that wrap around
 * its end) leaves every other one found, and the removed ones not. */
static void test_remove(void)
{
	enum { M = 5000 };
	uint32_t *keys = calloc(M, sizeof(*keys));
	struct htab t = { 0 };
	uint32_t missing = 0, wrong = 0, found_removed = 0;

	CU_ASSERT_FATAL(keys != NULL);
	htab__remove(&t, 1, 0);					/* empty: nothing */
	for (uint32_t i = 0; i < M; i++) {
		keys[i] = i * 7 + 3;
		CU_ASSERT_EQUAL_FATAL(htab__insert(&t, key_hash(keys[i]), i), 0);
	}
	for (uint32_t round = 0; round < 3; round++) {
		for (uint32_t i = round; i < M; i += 3)
			htab__remove(&t, key_hash(keys[i]), i);
		uint32_t left = 0;

		for (uint32_t i = 0; i < M; i++)
			left += i % 3 > round;
		CU_ASSERT_EQUAL(htab__count(&t), left);
		for (uint32_t i = 0; i < M; i++) {
			uint32_t id = find(&t, keys, keys[i]);
			bool gone = i % 3 <= round;

			if (gone)
				found_removed += id != HTAB_NONE;
			else {
				missing += id == HTAB_NONE;
				wrong += id != HTAB_NONE && id != i;
			}
		}
	}
	CU_ASSERT_EQUAL(missing, 0);
	CU_ASSERT_EQUAL(wrong, 0);
	CU_ASSERT_EQUAL(found_removed, 0);
	CU_ASSERT_EQUAL(htab__count(&t), 0);
	htab__remove(&t, key_hash(keys[0]), 0);			/* not there: nothing */
	CU_ASSERT_EQUAL(htab__count(&t), 0);
	/* Emptied, it takes them again. */
	for (uint32_t i = 0; i < M; i++)
		CU_ASSERT_EQUAL_FATAL(htab__insert(&t, key_hash(keys[i]), i), 0);
	CU_ASSERT_EQUAL(find(&t, keys, keys[M - 1]), M - 1);
	htab__free(&t);
	free(keys);
}

static void test_init_sized(void)
{
	struct htab t;
	uint32_t keys[1] = { 42 }, mask;

	CU_ASSERT_EQUAL_FATAL(htab__init(&t, 1000), 0);
	mask = t.mask;
	CU_ASSERT(mask + 1 >= 2000);
	CU_ASSERT_EQUAL(htab__insert(&t, key_hash(42), 0), 0);
	CU_ASSERT_EQUAL(find(&t, keys, 42), 0);
	CU_ASSERT_EQUAL(t.mask, mask);				/* no growth needed */
	htab__free(&t);
}

static void test_hashes(void)
{
	CU_ASSERT_EQUAL(hash_bytes(HASH_SEED, "", 0), HASH_SEED);
	/* FNV-1a 64 of "a", the published test vector */
	CU_ASSERT_EQUAL(hash_bytes(HASH_SEED, "a", 1), 0xaf63dc4c8601ec8cULL);
	CU_ASSERT_NOT_EQUAL(hash_u64(0, 1), hash_u64(0, 2));
	CU_ASSERT_NOT_EQUAL(hash_u64(hash_u64(0, 1), 2), hash_u64(hash_u64(0, 2), 1));
}

int register_htab_suite(void)
{
	CU_pSuite s = CU_add_suite("htab", NULL, NULL);

	if (!s || !CU_add_test(s, "100k ids with colliding low bits", test_insert_find) ||
	    !CU_add_test(s, "sized at init, no growth", test_init_sized) ||
	    !CU_add_test(s, "ids removed from clustered runs", test_remove) ||
	    !CU_add_test(s, "hash functions", test_hashes))
		return -1;
	return 0;
}

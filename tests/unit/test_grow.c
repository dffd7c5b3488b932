// SPDX-License-Identifier: GPL-3.0-or-later
/* base/grow: array_grow doubles until the index fits, zeroes what it adds, keeps what was
 * there, and never makes a capacity its counter cannot hold. */
#include <stdint.h>
#include <stdlib.h>
#include "base/grow.h"
#include "suites.h"

static void test_grows_and_zeroes(void)
{
	uint64_t *v = NULL;
	size_t cap = 0;
	int bad = 0;

	CU_ASSERT_EQUAL(array_grow(&v, &cap, sizeof(*v), 0), 0);
	CU_ASSERT_EQUAL(cap, 16);
	for (size_t i = 0; i < 1000; i++) {
		if (array_grow(&v, &cap, sizeof(*v), i)) {
			bad++;
			break;
		}
		bad += v[i] != 0;	/* new elements are zero */
		v[i] = i + 1;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(cap, 1024);
	/* Far ahead at once: doubled until it fits; what was there is kept. */
	CU_ASSERT_EQUAL(array_grow(&v, &cap, sizeof(*v), 5000), 0);
	CU_ASSERT_EQUAL(cap, 8192);
	CU_ASSERT(v[0] == 1 && v[999] == 1000 && v[1000] == 0 && v[8191] == 0);
	/* An index it holds already: nothing changes. */
	CU_ASSERT_EQUAL(array_grow(&v, &cap, sizeof(*v), 8191), 0);
	CU_ASSERT_EQUAL(cap, 8192);
	free(v);
}

static void test_counter_limits(void)
{
	char *v = NULL;
	uint8_t cap8 = 0;
	uint32_t cap32 = 0;

	/* A uint8_t capacity holds 128 at most: 255 would be the next doubling's 256. */
	CU_ASSERT_EQUAL(array_grow(&v, &cap8, 1, 127), 0);
	CU_ASSERT_EQUAL(cap8, 128);
	CU_ASSERT_EQUAL(array_grow(&v, &cap8, 1, 200), -ENOMEM);
	CU_ASSERT_EQUAL(cap8, 128);
	CU_ASSERT_EQUAL(v[127], 0);
	free(v);
	v = NULL;
	/* Past what a uint32_t counts, or past memory (elements of SIZE_MAX / 4 bytes). */
	CU_ASSERT_EQUAL(array_grow(&v, &cap32, 1, (size_t)UINT32_MAX + 1), -ENOMEM);
	CU_ASSERT_EQUAL(cap32, 0);
	CU_ASSERT_EQUAL(array_grow(&v, &cap32, SIZE_MAX / 4, 20), -ENOMEM);
	CU_ASSERT_PTR_NULL(v);
}

int register_grow_suite(void)
{
	CU_pSuite s = CU_add_suite("grow", NULL, NULL);

	if (!s || !CU_add_test(s, "grows and zeroes", test_grows_and_zeroes) ||
	    !CU_add_test(s, "the counter's limits", test_counter_limits))
		return CU_get_error();
	return 0;
}

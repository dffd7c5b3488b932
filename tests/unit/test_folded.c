// SPDX-License-Identifier: GPL-3.0-or-later
/* folded: building frames, merging identical stacks, sorted output. */
#include <stdlib.h>
#include <string.h>
#include "output/folded.h"
#include "suites.h"

static char *write_to_string(const struct folded *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (!out)
		return NULL;
	if (folded__write(f, out)) {
		fclose(out);
		free(buf);
		return NULL;
	}
	fclose(out);
	return buf;
}

static void test_push_frame(void)
{
	static const struct {
		const char *name, *suffix, *want;
	} cases[] = {
		{ "main", NULL, "main" },
		{ "vfs_read", "_[k]", "vfs_read_[k]" },
		{ "a;b", NULL, "a:b" },			/* ';' would split the frame */
		{ "x\ny\tz", NULL, "x?y?z" },		/* control characters */
		{ "std::vector<int> f(int, char)", NULL, "std::vector<int> f(int, char)" },
		{ "", NULL, "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *buf = NULL;
		size_t len = 0, cap = 0;

		CU_ASSERT_EQUAL(folded__push_frame(&buf, &len, &cap, cases[i].name, cases[i].suffix), 0);
		CU_ASSERT_STRING_EQUAL(buf, cases[i].want);
		CU_ASSERT_EQUAL(len, strlen(cases[i].want));
		free(buf);
	}
}

static void test_push_joins_and_grows(void)
{
	char *buf = NULL, name[300];
	size_t len = 0, cap = 0;

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	CU_ASSERT_EQUAL(folded__push_frame(&buf, &len, &cap, "proc", NULL), 0);
	CU_ASSERT_EQUAL(folded__push_frame(&buf, &len, &cap, name, NULL), 0);
	CU_ASSERT_EQUAL(folded__push_frame(&buf, &len, &cap, "k", "_[k]"), 0);
	CU_ASSERT_EQUAL(len, 4 + 1 + 299 + 1 + 5);
	CU_ASSERT_NSTRING_EQUAL(buf, "proc;nnn", 8);
	CU_ASSERT_STRING_EQUAL(buf + len - 6, ";k_[k]");
	free(buf);
}

static void test_merge_sort_write(void)
{
	struct folded *f = folded__new();
	char *text;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(folded__add(f, "p;main;b", 3), 0);
	CU_ASSERT_EQUAL(folded__add(f, "p;main;a", 1), 0);
	CU_ASSERT_EQUAL(folded__add(f, "p;main;b", 2), 0);
	CU_ASSERT_EQUAL(folded__add(f, "a;x", 7), 0);
	CU_ASSERT_EQUAL(folded__nr_stacks(f), 3);
	CU_ASSERT_EQUAL(folded__total(f), 13);
	text = write_to_string(f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_STRING_EQUAL(text, "a;x 7\np;main;a 1\np;main;b 5\n");
	free(text);
	folded__free(f);
	folded__free(NULL);
}

static void test_many_stacks_grow(void)
{
	struct folded *f = folded__new();
	char stack[64];
	char *text;
	size_t lines = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 5000; i++) {
			snprintf(stack, sizeof(stack), "p;f%05d", i);
			CU_ASSERT_EQUAL_FATAL(folded__add(f, stack, 1), 0);
		}
	CU_ASSERT_EQUAL(folded__nr_stacks(f), 5000);
	CU_ASSERT_EQUAL(folded__total(f), 10000);
	text = write_to_string(f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	for (char *p = text; *p; p++)
		lines += *p == '\n';
	CU_ASSERT_EQUAL(lines, 5000);
	CU_ASSERT_NSTRING_EQUAL(text, "p;f00000 2\np;f00001 2\n", 22);
	free(text);
	folded__free(f);
}

int register_folded_suite(void)
{
	CU_pSuite s = CU_add_suite("folded", NULL, NULL);

	if (!s || !CU_add_test(s, "frame names and suffixes", test_push_frame) ||
	    !CU_add_test(s, "frames join with ';' and the buffer grows", test_push_joins_and_grows) ||
	    !CU_add_test(s, "identical stacks merge, output sorted", test_merge_sort_write) ||
	    !CU_add_test(s, "many stacks", test_many_stacks_grow))
		return -1;
	return 0;
}

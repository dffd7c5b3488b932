// SPDX-License-Identifier: GPL-3.0-or-later
/* output/top: self and total counts (recursion once per stack), kinds from the suffixes, the
 * process, thread and cgroup frames and the markers left out, the order of the rows, the
 * tree and its pruning. */
#include <stdlib.h>
#include <string.h>
#include "output/top.h"
#include "suites.h"

static const struct top_row *find(const struct top_row *rows, long n, const char *name,
				  enum top_kind kind)
{
	for (long i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name) && rows[i].kind == kind)
			return &rows[i];
	return NULL;
}

static int add(struct top *t, const char *stack, uint64_t count)
{
	return top__add(t, stack, strlen(stack), count);
}

static void test_self_and_total(void)
{
	struct top *t = top__new(TOP_ROOT_IS_PROCESS);
	struct top_row *rows;
	const struct top_row *r;
	long n;

	CU_ASSERT_FATAL(t != NULL);
	CU_ASSERT_EQUAL(add(t, "xz;main;compress;lzma_encode", 60), 0);
	CU_ASSERT_EQUAL(add(t, "xz;main;compress;crc32", 30), 0);
	/* Recursion: fib counts once in total per stack, and self at the leaf. */
	CU_ASSERT_EQUAL(add(t, "xz;main;fib;fib;fib", 5), 0);
	/* Kinds, a line, markers, a thread and a cgroup. */
	CU_ASSERT_EQUAL(add(t, "xz;xz/4242;[truncated];main;memcpy (string.c:12)_[i];"
			       "do_syscall_64_[k]", 3), 0);
	CU_ASSERT_EQUAL(add(t, "/system.slice/a.service;xz;main;jitted_[j];[off-cpu]", 2), 0);
	CU_ASSERT_EQUAL(add(t, "xz", 7), 0);	/* only a process */
	CU_ASSERT_EQUAL(top__total(t), 107);
	CU_ASSERT_EQUAL(top__no_function(t), 7);
	n = top__rows(t, TOP_BY_SELF, &rows);
	CU_ASSERT_EQUAL_FATAL(n, 8);
	CU_ASSERT_STRING_EQUAL(rows[0].name, "lzma_encode");
	CU_ASSERT_EQUAL(rows[0].self, 60);
	CU_ASSERT_STRING_EQUAL(rows[1].name, "crc32");
	r = find(rows, n, "main", TOP_USER);
	CU_ASSERT(r && r->self == 0 && r->total == 100);
	r = find(rows, n, "fib", TOP_USER);
	CU_ASSERT(r && r->self == 5 && r->total == 5);
	r = find(rows, n, "memcpy", TOP_INLINE);
	CU_ASSERT(r && r->self == 0 && r->total == 3);
	r = find(rows, n, "do_syscall_64", TOP_KERNEL);
	CU_ASSERT(r && r->self == 3);
	r = find(rows, n, "jitted", TOP_JIT);
	CU_ASSERT(r && r->self == 2);
	/* Neither the process, the thread, the cgroup nor a marker is a function. */
	CU_ASSERT_PTR_NULL(find(rows, n, "xz", TOP_USER));
	CU_ASSERT_PTR_NULL(find(rows, n, "xz/4242", TOP_USER));
	CU_ASSERT_PTR_NULL(find(rows, n, "[truncated]", TOP_USER));
	CU_ASSERT_PTR_NULL(find(rows, n, "[off-cpu]", TOP_USER));
	CU_ASSERT_PTR_NULL(find(rows, n, "/system.slice/a.service", TOP_USER));
	free(rows);
	n = top__rows(t, TOP_BY_TOTAL, &rows);
	CU_ASSERT_EQUAL_FATAL(n, 8);
	CU_ASSERT_STRING_EQUAL(rows[0].name, "main");
	CU_ASSERT_STRING_EQUAL(rows[1].name, "compress");
	free(rows);
	top__free(t);
	top__free(NULL);
}

/* Without TOP_ROOT_IS_PROCESS the root is a function (Go's pprof files have no process). */
static void test_root_is_a_function(void)
{
	struct top *t = top__new(0);
	struct top_row *rows;
	long n;

	CU_ASSERT_FATAL(t != NULL);
	CU_ASSERT_EQUAL(add(t, "runtime.main;main.work", 4), 0);
	CU_ASSERT_EQUAL(add(t, "runtime.main", 1), 0);
	n = top__rows(t, TOP_BY_TOTAL, &rows);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT(!strcmp(rows[0].name, "runtime.main") && rows[0].total == 5 &&
		  rows[0].self == 1);
	free(rows);
	top__free(t);
}

/* The table and the tree as written: shares of the total, tags, pruning with a sum. */
static void test_written(void)
{
	struct top *t = top__new(TOP_ROOT_IS_PROCESS);
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	CU_ASSERT_FATAL(t != NULL);
	add(t, "p;main;hot", 90);
	add(t, "p;main;cold1", 4);
	add(t, "p;main;cold2", 3);
	add(t, "p;other\x01name_[k]", 3);
	out = open_memstream(&buf, &len);
	CU_ASSERT_FATAL(out != NULL);
	CU_ASSERT_EQUAL(top__write(t, out, TOP_BY_SELF, 2, 0), 0);
	fclose(out);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, " 90.0%  90.0%  [.] hot\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "  4.0%   4.0%  [.] cold1\n"));
	CU_ASSERT_PTR_NULL(strstr(buf, "cold2"));	/* two rows only */
	free(buf);
	buf = NULL;
	out = open_memstream(&buf, &len);
	CU_ASSERT_FATAL(out != NULL);
	CU_ASSERT_EQUAL(top__write_tree(t, out, 5.0, 0), 0);
	fclose(out);
	CU_ASSERT_STRING_EQUAL(buf, " 97.0% [.] main\n"
				    " 90.0%   [.] hot\n"
				    "  7.0%   (2 more)\n"
				    "  3.0% (1 more)\n");
	free(buf);
	buf = NULL;
	out = open_memstream(&buf, &len);
	CU_ASSERT_EQUAL(top__write_tree(t, out, 0, 0), 0);
	fclose(out);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "  3.0% [k] other?name\n"));
	free(buf);
	top__free(t);
}

int register_top_suite(void)
{
	CU_pSuite s = CU_add_suite("top", NULL, NULL);

	if (!s || !CU_add_test(s, "self and total", test_self_and_total) ||
	    !CU_add_test(s, "the root a function", test_root_is_a_function) ||
	    !CU_add_test(s, "the table and the tree", test_written))
		return CU_get_error();
	return 0;
}

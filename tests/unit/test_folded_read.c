// SPDX-License-Identifier: GPL-3.0-or-later
/* folded_read: the folded-stack parser, line by line and through the reader. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "output/folded_read.h"
#include "suites.h"

static void test_parse_line(void)
{
	static const struct {
		const char *line;
		int ret;
		const char *stack;
		double count, count2;
		bool diff;
	} cases[] = {
		{ "a;b;c 12", 1, "a;b;c", 12, 12, false },
		{ "a;b;c\t12", 1, "a;b;c", 12, 12, false },		/* tab */
		{ "a;b;c \t  12  ", 1, "a;b;c", 12, 12, false },	/* runs, trailing */
		{ "a;b;c 12\r", 1, "a;b;c", 12, 12, false },		/* CRLF */
		{ "a;b 0.5", 1, "a;b", 0.5, 0.5, false },		/* fractional */
		{ "a;b 3.", 1, "a;b", 3, 3, false },
		{ "a;b 3 7", 1, "a;b", 3, 7, true },			/* differential */
		{ "a;b\t1.5\t0", 1, "a;b", 1.5, 0, true },
		{ "a b;c d 4", 1, "a b;c d", 4, 4, false },		/* blanks in names */
		{ "f(int, char) 2", 1, "f(int, char)", 2, 2, false },
		{ "v1.5;x 9", 1, "v1.5;x", 9, 9, false },
		{ "a;v 1.5 9", 1, "a;v", 1.5, 9, true },		/* flamegraph.pl reads it so */
		{ " 5", 1, "", 5, 5, false },			/* empty stack: the root */
		{ "", 0, NULL, 0, 0, false },
		{ "   \t ", 0, NULL, 0, 0, false },
		{ "# comment 12", 0, NULL, 0, 0, false },
		{ "  # indented comment", 0, NULL, 0, 0, false },
		{ "\r", 0, NULL, 0, 0, false },
		{ "a;b;c", -EINVAL, NULL, 0, 0, false },		/* no count */
		{ "12", -EINVAL, NULL, 0, 0, false },			/* no stack */
		{ "a;b12", -EINVAL, NULL, 0, 0, false },		/* no blank */
		{ "a;b -3", -EINVAL, NULL, 0, 0, false },		/* sign */
		{ "a;b .5", -EINVAL, NULL, 0, 0, false },
		{ "a;b 1.2.3", -EINVAL, NULL, 0, 0, false },
		{ "a;b 1e5", -EINVAL, NULL, 0, 0, false },
		{ "a;b x", -EINVAL, NULL, 0, 0, false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct folded_rec rec = { 0 };
		int ret = folded__parse_line(cases[i].line, strlen(cases[i].line), &rec);

		CU_ASSERT_EQUAL(ret, cases[i].ret);
		if (ret != cases[i].ret) {
			fprintf(stderr, "\ncase %zu (%s): got %d\n", i, cases[i].line, ret);
			continue;
		}
		if (ret != 1)
			continue;
		CU_ASSERT_EQUAL(rec.len, strlen(cases[i].stack));
		CU_ASSERT(rec.len == strlen(cases[i].stack) &&
			  !memcmp(rec.stack, cases[i].stack, rec.len));
		CU_ASSERT_DOUBLE_EQUAL(rec.count, cases[i].count, 1e-12);
		CU_ASSERT_DOUBLE_EQUAL(rec.count2, cases[i].count2, 1e-12);
		CU_ASSERT_EQUAL(rec.diff, cases[i].diff);
	}
}

/* Read all of TEXT; returns the number of stacks, or the error. */
static int read_all(const char *text, size_t len, char *err, size_t errsz, double *sum,
		    size_t *last_line)
{
	FILE *in = fmemopen((void *)text, len, "r");
	struct folded_reader *r;
	struct folded_rec rec;
	int n = 0, ret;

	if (!in)
		return -errno;
	r = folded_reader__new(in, "test.folded");
	if (!r) {
		fclose(in);
		return -ENOMEM;
	}
	*sum = 0;
	while ((ret = folded_reader__next(r, &rec)) > 0) {
		n++;
		*sum += rec.count2;
		*last_line = rec.lineno;
	}
	snprintf(err, errsz, "%s", folded_reader__error(r));
	folded_reader__free(r);
	fclose(in);
	return ret < 0 ? ret : n;
}

static void test_reader(void)
{
	static const char ok[] = "# profile\n\na;b 3\n  \na;c 4\r\nd 1";	/* no final newline */
	static const char bad[] = "a;b 3\n# fine\na;b;c\nx 1\n";
	static const char nul[] = "a;b 3\na\0b 4\n";
	char err[512];
	double sum;
	size_t last = 0;

	CU_ASSERT_EQUAL(read_all(ok, sizeof(ok) - 1, err, sizeof(err), &sum, &last), 3);
	CU_ASSERT_DOUBLE_EQUAL(sum, 8, 1e-12);
	CU_ASSERT_EQUAL(last, 6);
	CU_ASSERT_STRING_EQUAL(err, "");

	CU_ASSERT_EQUAL(read_all(bad, sizeof(bad) - 1, err, sizeof(err), &sum, &last), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "test.folded:3:"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "a;b;c"));

	CU_ASSERT_EQUAL(read_all(nul, sizeof(nul) - 1, err, sizeof(err), &sum, &last), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "test.folded:2:"));

	CU_ASSERT_EQUAL(read_all("", 0, err, sizeof(err), &sum, &last), 0);
}

/* A 20,000-character frame name, across the reader's chunks, in a long file. */
static void test_long_names(void)
{
	size_t n = 20000, lines = 2000, len = 0;
	char *text = malloc(lines * 32 + n + 64), err[512];
	double sum;
	size_t last = 0;

	if (!text) {
		CU_FAIL("malloc");
		return;
	}
	for (size_t i = 0; i < lines; i++)
		len += sprintf(text + len, "main;work_%zu 1\n", i);
	len += sprintf(text + len, "main;");
	memset(text + len, 'x', n);
	len += n;
	len += sprintf(text + len, " 5\n");
	CU_ASSERT_EQUAL(read_all(text, len, err, sizeof(err), &sum, &last), (int)lines + 1);
	CU_ASSERT_DOUBLE_EQUAL(sum, lines + 5.0, 1e-9);
	CU_ASSERT_EQUAL(last, lines + 1);
	free(text);
}

static void test_open_missing(void)
{
	errno = 0;
	CU_ASSERT_PTR_NULL(folded_reader__open("/nonexistent/x.folded"));
	CU_ASSERT_EQUAL(errno, ENOENT);
	folded_reader__free(NULL);
}

int register_folded_read_suite(void)
{
	CU_pSuite s = CU_add_suite("folded_read", NULL, NULL);

	if (!s)
		return -1;
	if (!CU_add_test(s, "parse_line", test_parse_line) ||
	    !CU_add_test(s, "reader", test_reader) ||
	    !CU_add_test(s, "long_names", test_long_names) ||
	    !CU_add_test(s, "open_missing", test_open_missing))
		return -1;
	return 0;
}

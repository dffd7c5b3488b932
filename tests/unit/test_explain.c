// SPDX-License-Identifier: GPL-3.0-or-later
/* explain: files interned, counts added per (file, reason), lines largest first, one
 * sentence each with paths escaped, the report cut after its first lines, unnamed frame
 * names told from named ones, the reason a stack was cut read from its key's flags. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "collect/explain.h"
#include "profile.h"
#include "unwind/unwind.h"
#include "suites.h"

static void test_files_and_adds(void)
{
	struct explain *ex = explain__new();
	struct explain_line *lines;
	int a, b, n;

	CU_ASSERT_FATAL(ex != NULL);
	CU_ASSERT_EQUAL(explain__lines(ex, &lines), 0);
	CU_ASSERT_PTR_NULL(lines);
	a = explain__file(ex, "/usr/lib/libfoo.so.1");
	b = explain__file(ex, "/usr/bin/app");
	CU_ASSERT_EQUAL(a, 0);
	CU_ASSERT_EQUAL(b, 1);
	CU_ASSERT_EQUAL(explain__file(ex, "/usr/lib/libfoo.so.1"), a);
	CU_ASSERT_EQUAL(explain__add(ex, 2, EXPLAIN_CUT_FP, 1, 0), -EINVAL);
	CU_ASSERT_EQUAL(explain__add(ex, -1, EXPLAIN_CUT_FP, 1, 0), -EINVAL);
	CU_ASSERT_EQUAL(explain__add(ex, a, EXPLAIN__MAX, 1, 0), -EINVAL);

	CU_ASSERT_EQUAL(explain__add(ex, a, EXPLAIN_CUT_NO_INFO, 10, 0), 0);
	CU_ASSERT_EQUAL(explain__add(ex, a, EXPLAIN_CUT_NO_INFO, 5, 0), 0);
	CU_ASSERT_EQUAL(explain__add(ex, b, EXPLAIN_NOREC, 30, 29), 0);
	CU_ASSERT_EQUAL(explain__add(ex, b, EXPLAIN_NOREC, 10, 10), 0);
	CU_ASSERT_EQUAL(explain__add(ex, b, EXPLAIN_UNNAMED_NO_SYMS, 15, 15), 0);
	CU_ASSERT_EQUAL(explain__add(ex, a, EXPLAIN_UNNAMED_NO_SYMS, 15, 0), 0);
	n = explain__lines(ex, &lines);
	CU_ASSERT_EQUAL_FATAL(n, 4);
	/* Most samples first; equal counts by reason (cut before unnamed), then by file. */
	CU_ASSERT_STRING_EQUAL(lines[0].file, "/usr/bin/app");
	CU_ASSERT_EQUAL(lines[0].reason, EXPLAIN_NOREC);
	CU_ASSERT_EQUAL(lines[0].count, 40);
	CU_ASSERT_EQUAL(lines[0].whole, 39);
	CU_ASSERT_EQUAL(lines[1].reason, EXPLAIN_CUT_NO_INFO);
	CU_ASSERT_EQUAL(lines[1].count, 15);
	CU_ASSERT_EQUAL(lines[2].reason, EXPLAIN_UNNAMED_NO_SYMS);
	CU_ASSERT_STRING_EQUAL(lines[2].file, "/usr/bin/app");
	CU_ASSERT_STRING_EQUAL(lines[3].file, "/usr/lib/libfoo.so.1");
	free(lines);
	explain__free(ex);
	explain__free(NULL);
}

static void test_many_files(void)
{
	struct explain *ex = explain__new();
	struct explain_line *lines;
	char path[32];
	int n;

	CU_ASSERT_FATAL(ex != NULL);
	for (int i = 0; i < 300; i++) {
		snprintf(path, sizeof(path), "/lib/l%d.so", i);
		CU_ASSERT_EQUAL_FATAL(explain__file(ex, path), i);
		CU_ASSERT_EQUAL(explain__add(ex, i, EXPLAIN_CUT_BAD_FRAME, (uint64_t)i + 1, 0), 0);
	}
	CU_ASSERT_EQUAL(explain__file(ex, "/lib/l123.so"), 123);
	n = explain__lines(ex, &lines);
	CU_ASSERT_EQUAL_FATAL(n, 300);
	for (int i = 1; i < n; i++)
		CU_ASSERT(lines[i - 1].count > lines[i].count);
	CU_ASSERT_STRING_EQUAL(lines[0].file, "/lib/l299.so");
	free(lines);
	explain__free(ex);
}

static void test_format(void)
{
	struct explain_line cut = { "/usr/lib/libfoo.so.1", EXPLAIN_CUT_NO_INFO, 41, 0 };
	struct explain_line norec = { "/usr/bin/app", EXPLAIN_NOREC, 302, 301 };
	struct explain_line nosyms = { "/usr/bin/a\nb", EXPLAIN_UNNAMED_NO_SYMS, 20, 20 };
	struct explain_line jit = { EXPLAIN_ANON_CODE, EXPLAIN_UNNAMED_JIT, 1000, 1000 };
	char buf[512];

	explain__format(&cut, 1000, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "  4.1%  cut in /usr/lib/libfoo.so.1: no unwind info covers "
			       "the code there (the file was built or stripped without "
			       ".eh_frame, or it is assembly without CFI)");
	explain__format(&norec, 1000, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, " 30.2%  frame pointers not trusted in /usr/bin/app (a "
			       "function there keeps no frame record): DWARF unwound 99.7% of "
			       "these whole");
	explain__format(&nosyms, 1000, buf, sizeof(buf));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "unnamed in /usr/bin/a\\x0ab: no symbols"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "install its debug symbols"));
	CU_ASSERT_PTR_NULL(strchr(buf, '\n'));
	explain__format(&jit, 1000, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "100.0%  unnamed in [anonymous code]: JIT code without a "
			       "perf map (node --perf-basic-prof; a JVM: jcmd PID "
			       "Compiler.perfmap, which profile asks, or perf-map-agent)");
	/* Code that is no file: no unwind info said otherwise. */
	jit.reason = EXPLAIN_CUT_NO_INFO;
	explain__format(&jit, 1000, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "100.0%  cut in [anonymous code]: JIT code has no unwind info "
			       "to go on with, only frame records (node keeps them; a JVM with "
			       "-XX:+PreserveFramePointer, which profile gives the JVMs it "
			       "starts)");
	jit.file = EXPLAIN_NO_MAPPING;
	explain__format(&jit, 1000, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "100.0%  cut in [no mapping]: addresses in no mapping the "
			       "process was seen to have");
	/* Python frames read in a loop's file, and not read. */
	jit = (struct explain_line){ "/usr/bin/python3.11", EXPLAIN_PY_READ, 990, 980 };
	explain__format(&jit, 1000, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, " 99.0%  Python in /usr/bin/python3.11: Python frames read at "
			       "the sample (the interpreter's loop frames replaced by the "
			       "functions they ran); every one named in 99.0% of these");
	jit.reason = EXPLAIN_PY_MISSING;
	explain__format(&jit, 1000, buf, sizeof(buf));
	CU_ASSERT_EQUAL(strncmp(buf, " 99.0%  Python not read in /usr/bin/python3.11: the "
				"interpreter's loop frames with no Python frames read", 98), 0);
	/* No samples: no division by zero. */
	explain__format(&cut, 0, buf, sizeof(buf));
	CU_ASSERT_EQUAL(strncmp(buf, "  0.0%", 6), 0);
	/* Too short a buffer: cut, NUL-terminated, the length needed returned. */
	CU_ASSERT(explain__format(&cut, 1000, buf, 10) > 10);
	CU_ASSERT_EQUAL(strlen(buf), 9);
}

static void test_escape(void)
{
	char buf[64];

	explain__escape("/usr/lib/x.so", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "/usr/lib/x.so");
	explain__escape("/tmp/a\tb\x1b[31m\x7f\\c", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "/tmp/a\\x09b\\x1b[31m\\x7f\\\\c");
	/* UTF-8 stays as it is. */
	explain__escape("/tmp/\xc3\xa9", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "/tmp/\xc3\xa9");
	/* Cut whole: never half an escape. */
	explain__escape("ab\n", buf, 5);
	CU_ASSERT_STRING_EQUAL(buf, "ab");
	explain__escape("abcdef", buf, 4);
	CU_ASSERT_STRING_EQUAL(buf, "abc");
}

/* The report written to a memory stream. */
static char *report(const struct explain *ex, uint64_t samples, size_t max)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT_EQUAL(explain__write(ex, f, samples, false, max), 0);
	fclose(f);
	return text;
}

static int count_lines(const char *text)
{
	int n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

static void test_write(void)
{
	struct explain *ex = explain__new();
	char path[32], *text;

	CU_ASSERT_FATAL(ex != NULL);
	text = report(ex, 50, 15);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "no stack was cut, untrusted or left unnamed"));
	CU_ASSERT_EQUAL(count_lines(text), 1);
	free(text);
	for (int i = 0; i < 20; i++) {
		snprintf(path, sizeof(path), "/lib/l%02d.so", i);
		explain__add(ex, explain__file(ex, path), EXPLAIN_CUT_DEPTH, 20 - i, 0);
	}
	text = report(ex, 1000, 15);
	CU_ASSERT_EQUAL(count_lines(text), 1 + 15 + 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "of 1000 samples:\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "  2.0%  cut in /lib/l00.so: the stack was deeper"));
	CU_ASSERT_PTR_NULL(strstr(text, "/lib/l15.so"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "and 5 more, each 0.5% of the samples or less\n"));
	free(text);
	text = report(ex, 1000, 20);
	CU_ASSERT_EQUAL(count_lines(text), 1 + 20);
	CU_ASSERT_PTR_NULL(strstr(text, "more"));
	free(text);
	text = report(ex, 1000, 3);
	CU_ASSERT_EQUAL(count_lines(text), 1 + 3 + 1);
	free(text);
	explain__free(ex);
}

static void test_cut_reason(void)
{
	CU_ASSERT_EQUAL(explain__cut_reason(false, UNWIND_STOP_END), EXPLAIN_CUT_FP);
	CU_ASSERT_EQUAL(explain__cut_reason(false, UNWIND_STOP_NO_INFO), EXPLAIN_CUT_NO_INFO);
	CU_ASSERT_EQUAL(explain__cut_reason(false, UNWIND_STOP_BAD_FRAME), EXPLAIN_CUT_BAD_FRAME);
	CU_ASSERT_EQUAL(explain__cut_reason(false, UNWIND_STOP_NO_MEMORY), EXPLAIN_CUT_NO_STACK);
	CU_ASSERT_EQUAL(explain__cut_reason(false, UNWIND_STOP_DEPTH), EXPLAIN_CUT_DEPTH);
	CU_ASSERT_EQUAL(explain__cut_reason(false, UNWIND_STOP_COPY), EXPLAIN_CUT_COPY);
	/* Nothing at sp says more than how the unwind then stopped. */
	CU_ASSERT_EQUAL(explain__cut_reason(true, UNWIND_STOP_BAD_FRAME), EXPLAIN_CUT_NO_STACK);
	CU_ASSERT_EQUAL(explain__cut_reason(true, UNWIND_STOP_END), EXPLAIN_CUT_NO_STACK);
}

int register_explain_suite(void)
{
	CU_pSuite s = CU_add_suite("explain", NULL, NULL);

	if (!s)
		return -1;
	if (!CU_add_test(s, "files and adds", test_files_and_adds) ||
	    !CU_add_test(s, "many files", test_many_files) ||
	    !CU_add_test(s, "format", test_format) ||
	    !CU_add_test(s, "escape", test_escape) ||
	    !CU_add_test(s, "write", test_write) ||
	    !CU_add_test(s, "cut reason", test_cut_reason))
		return -1;
	return 0;
}

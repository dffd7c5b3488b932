// SPDX-License-Identifier: GPL-3.0-or-later
/* log: what reaches the terminal is escaped: C0 and C1 controls, DEL, bytes that are not
 * UTF-8; printable ASCII and valid UTF-8 as they are; cut whole. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/log.h"
#include "suites.h"

static void test_escape_buf(void)
{
	char buf[128];

	CU_ASSERT_EQUAL(log_escape_buf("/usr/lib/x.so", buf, sizeof(buf)), 13);
	CU_ASSERT_STRING_EQUAL(buf, "/usr/lib/x.so");
	log_escape_buf("a\nb\rc\x1b[2J\x7f\\", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "a\\x0ab\\x0dc\\x1b[2J\\x7f\\\\");
	/* C1 as UTF-8 (U+009B, CSI) and alone; é, € and an emoji as they are. */
	log_escape_buf("x\xc2\x9by\x9bz", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "x\\xc2\\x9by\\x9bz");
	log_escape_buf("\xc3\xa9\xe2\x82\xac\xf0\x9f\x94\xa5\xc2\xa0", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x94\xa5\xc2\xa0");
	/* Not UTF-8: a sequence cut short, overlong, a surrogate, beyond U+10FFFF. */
	log_escape_buf("\xe2\x82", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "\\xe2\\x82");
	log_escape_buf("\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "\\xc0\\xaf\\xed\\xa0\\x80\\xf4\\x90\\x80\\x80");
	/* Cut whole: never half an escape or half a character. */
	CU_ASSERT_EQUAL(log_escape_buf("ab\n", buf, 6), 2);
	CU_ASSERT_STRING_EQUAL(buf, "ab");
	log_escape_buf("a\xc3\xa9", buf, 3);
	CU_ASSERT_STRING_EQUAL(buf, "a");
	CU_ASSERT_EQUAL(log_escape_buf("abc", buf, 0), 0);
}

static void test_escape_stream(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CU_ASSERT_FATAL(f != NULL);
	/* LEN bytes, NULs included, nothing past them. */
	log_escape(f, "a\0b\x1b\xe2", 4);
	fclose(f);
	CU_ASSERT_STRING_EQUAL(text, "a\\x00b\\x1b");
	free(text);
}

int register_log_suite(void)
{
	CU_pSuite s = CU_add_suite("log", NULL, NULL);

	if (!s || !CU_add_test(s, "escape into a buffer", test_escape_buf) ||
	    !CU_add_test(s, "escape to a stream", test_escape_stream))
		return -1;
	return 0;
}

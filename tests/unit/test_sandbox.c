// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * sandbox/proto: the messages between the profiler and its symbolizer worker, encoded and
 * decoded back; and what each side refuses: the other direction's messages, a byte too few
 * or too many, descriptors that do not belong, strings without their NUL or with one inside,
 * string indexes past the table, frames of no name.
 */
#include <errno.h>
#include <string.h>
#include "sandbox/proto.h"
#include "symbolize/symfile.h"
#include "suites.h"

static struct sb_buf b;

static int decode(bool to_worker, unsigned int nfds, struct sb_msg *m)
{
	CU_ASSERT_EQUAL_FATAL(sb_buf__end(&b), 0);
	return sb_msg__decode(b.p, b.len, nfds, to_worker, m);
}

static void test_lookup(void)
{
	struct sb_msg m;

	sb_buf__start(&b, SB_LOOKUP, 0, 7);
	sb_buf__u32(&b, 42);
	sb_buf__u32(&b, 2);
	sb_buf__u64(&b, 0x1234 << 1 | 1);
	sb_buf__u64(&b, 0xffffffff00ull << 1);
	CU_ASSERT_EQUAL(decode(true, 0, &m), 0);
	CU_ASSERT_EQUAL(m.type, SB_LOOKUP);
	CU_ASSERT_EQUAL(m.id, 7);
	CU_ASSERT_EQUAL(m.seq, 42);
	CU_ASSERT_EQUAL(m.n, 2);
	CU_ASSERT_EQUAL(sb_msg__addr(&m, 0), 0x1234 << 1 | 1);
	CU_ASSERT_EQUAL(sb_msg__addr(&m, 1), 0xffffffff00ull << 1);
	/* A client's message is no answer, and descriptors do not go with it. */
	CU_ASSERT_EQUAL(decode(false, 0, &m), -EBADMSG);
	CU_ASSERT_EQUAL(decode(true, 1, &m), -EBADMSG);
	/* A byte too few, a byte too many. */
	CU_ASSERT_EQUAL(sb_msg__decode(b.p, b.len - 1, 0, true, &m), -EBADMSG);
	sb_buf__u8(&b, 0);
	CU_ASSERT_EQUAL(decode(true, 0, &m), -EBADMSG);
	/* More addresses than said. */
	sb_buf__start(&b, SB_LOOKUP, 0, 7);
	sb_buf__u32(&b, 1);
	sb_buf__u32(&b, 3);
	sb_buf__u64(&b, 1);
	CU_ASSERT_EQUAL(decode(true, 0, &m), -EBADMSG);
	/* More than a batch may hold. */
	sb_buf__start(&b, SB_LOOKUP, 0, 7);
	sb_buf__u32(&b, 1);
	sb_buf__u32(&b, SB_BATCH_MAX + 1);
	CU_ASSERT_EQUAL(decode(true, 0, &m), -EBADMSG);
}

/* The bounds a worker met: counts in enum limit's order; no more than SB_LIMITS_MAX, no id
 * or arg, and only to the client. */
/* The debuginfod fetcher's answers: status and build id, anything else refused. */
static void test_fetch_answers(void)
{
	unsigned char buf[4 + SB_BUILD_ID_MAX + 8];
	char id[SB_BUILD_ID_MAX + 1];
	int32_t st = -2;

	memcpy(buf, &st, 4);
	memcpy(buf + 4, "e17735e0", 8);
	CU_ASSERT_EQUAL(sb_fetch_answer__decode(buf, 12, &st, id), 0);
	CU_ASSERT(st == -2 && !strcmp(id, "e17735e0"));
	st = 0;
	memcpy(buf, &st, 4);
	CU_ASSERT_EQUAL(sb_fetch_answer__decode(buf, 12, &st, id), 0);
	CU_ASSERT_EQUAL(st, 0);
	/* Cut, too long, not hex, a NUL inside, a positive status. */
	CU_ASSERT_EQUAL(sb_fetch_answer__decode(buf, 6, &st, id), -EBADMSG);
	memset(buf + 4, 'a', SB_BUILD_ID_MAX + 1);
	CU_ASSERT_EQUAL(sb_fetch_answer__decode(buf, 4 + SB_BUILD_ID_MAX + 1, &st, id), -EBADMSG);
	CU_ASSERT_EQUAL(sb_fetch_answer__decode(buf, 4 + SB_BUILD_ID_MAX, &st, id), 0);
	memcpy(buf + 4, "../etc/x", 8);
	CU_ASSERT_EQUAL(sb_fetch_answer__decode(buf, 12, &st, id), -EBADMSG);
	memcpy(buf + 4, "abc\0def0", 8);
	CU_ASSERT_EQUAL(sb_fetch_answer__decode(buf, 12, &st, id), -EBADMSG);
	memcpy(buf + 4, "abcdef01", 8);
	st = 5;
	memcpy(buf, &st, 4);
	CU_ASSERT_EQUAL(sb_fetch_answer__decode(buf, 12, &st, id), -EBADMSG);
}

static void test_limits(void)
{
	struct sb_msg m;

	sb_buf__start(&b, SB_LIMITS, 0, 0);
	sb_buf__u32(&b, 3);
	sb_buf__u64(&b, 0);
	sb_buf__u64(&b, 5);
	sb_buf__u64(&b, UINT64_MAX);
	CU_ASSERT_EQUAL(decode(false, 0, &m), 0);
	CU_ASSERT_EQUAL(m.type, SB_LIMITS);
	CU_ASSERT_EQUAL(m.n, 3);
	CU_ASSERT_EQUAL(m.counts[1], 5);
	CU_ASSERT_EQUAL(m.counts[2], UINT64_MAX);
	CU_ASSERT_EQUAL(decode(true, 0, &m), -EBADMSG);
	CU_ASSERT_EQUAL(sb_msg__decode(b.p, b.len - 1, 0, false, &m), -EBADMSG);
	sb_buf__start(&b, SB_LIMITS, 0, 1);
	sb_buf__u32(&b, 0);
	CU_ASSERT_EQUAL(decode(false, 0, &m), -EBADMSG);
	sb_buf__start(&b, SB_LIMITS, 0, 0);
	sb_buf__u32(&b, SB_LIMITS_MAX + 1);
	for (int i = 0; i <= SB_LIMITS_MAX; i++)
		sb_buf__u64(&b, 1);
	CU_ASSERT_EQUAL(decode(false, 0, &m), -EBADMSG);
}

static void test_file_and_debug(void)
{
	struct sb_msg m;

	sb_buf__start(&b, SB_FILE, 3, 1);
	sb_buf__str(&b, "/usr/bin/xz", 11);
	CU_ASSERT_EQUAL(decode(true, 1, &m), 0);
	CU_ASSERT_STRING_EQUAL(m.path, "/usr/bin/xz");
	CU_ASSERT_EQUAL(m.arg, 3);
	CU_ASSERT_EQUAL(decode(true, 0, &m), -EBADMSG);	/* its descriptor is missing */
	/* A NUL inside the string; its own NUL missing. */
	sb_buf__start(&b, SB_FILE, 0, 1);
	sb_buf__str(&b, "/usr\0/bin", 9);
	CU_ASSERT_EQUAL(decode(true, 1, &m), -EBADMSG);
	sb_buf__start(&b, SB_FILE, 0, 1);
	sb_buf__u32(&b, 3);
	sb_buf__bytes(&b, "abcd", 4);
	CU_ASSERT_EQUAL(decode(true, 1, &m), -EBADMSG);

	sb_buf__start(&b, SB_DEBUG, 2, 5);
	sb_buf__u8(&b, 1);
	sb_buf__str(&b, "/usr/lib/debug/.build-id/ab/cdef.debug", 38);
	sb_buf__u8(&b, 0);
	sb_buf__str(&b, "/usr/bin/.debug/xz.debug", 24);
	CU_ASSERT_EQUAL(decode(true, 2, &m), 0);
	CU_ASSERT_EQUAL(m.n, 2);
	CU_ASSERT(m.cand[0].by_id && !m.cand[1].by_id);
	CU_ASSERT_STRING_EQUAL(m.cand[1].path, "/usr/bin/.debug/xz.debug");
	CU_ASSERT_EQUAL(decode(true, 1, &m), -EBADMSG);

	sb_buf__start(&b, SB_WANT_DEBUG, 1, 5);
	sb_buf__u32(&b, 0xdeadbeef);
	sb_buf__str(&b, "abcdef", 6);
	sb_buf__str(&b, "xz.debug", 8);
	CU_ASSERT_EQUAL(decode(false, 0, &m), 0);
	CU_ASSERT_EQUAL(m.crc, 0xdeadbeef);
	CU_ASSERT_STRING_EQUAL(m.build_id, "abcdef");
	CU_ASSERT_STRING_EQUAL(m.link, "xz.debug");
	CU_ASSERT_EQUAL(decode(true, 0, &m), -EBADMSG);	/* the worker's, not the client's */
	b.p[1] = SB_WANT_ALT;		/* dwz's common file */
	CU_ASSERT_EQUAL(decode(false, 0, &m), 0);
	b.p[1] = SB_WANT_ALT + 1;
	CU_ASSERT_EQUAL(decode(false, 0, &m), -EBADMSG);
}

/* An SB_NAMES with the strings STRS (NSTR) and one entry of the NR indexes IDS. */
static void names(const char *const *strs, uint32_t nstr, const struct sb_frame *fr, uint8_t nr)
{
	sb_buf__start(&b, SB_NAMES, 1, 9);
	sb_buf__u32(&b, 4);		/* seq */
	sb_buf__u32(&b, 0);		/* first */
	sb_buf__u32(&b, 1);		/* n */
	sb_buf__u32(&b, 100);		/* nr_syms */
	sb_buf__u32(&b, SB_NAMES_DEBUG);
	sb_buf__u32(&b, nstr);
	for (uint32_t i = 0; i < nstr; i++)
		sb_buf__str(&b, strs[i], strlen(strs[i]));
	sb_buf__frames(&b, fr, nr);
}

/* An answer's frames come typed: name and file as string indexes, line, kind; a name that
 * looks like a kind's spelling is only a name. */
static void test_names(void)
{
	static const char *const strs[] = { "main", "hash_inner_[j]", "/src/a.c" };
	const char *got[3];
	struct sb_frame fr[SB_FRAMES_MAX + 1] = {	/* one more than a frame may have */
		{ 0, SB_NO_STR, 0, SYM_FUNC }, { 1, 2, 12, SYM_INLINE },
	};
	struct sb_frame out[SB_FRAMES_MAX];
	size_t pos = 0;
	struct sb_msg m;

	names(strs, 3, fr, 2);
	CU_ASSERT_EQUAL_FATAL(decode(false, 0, &m), 0);
	CU_ASSERT(m.arg == 1 && m.seq == 4 && m.n == 1 && m.nr_syms == 100 && m.nstr == 3);
	sb_names__strings(&m, got);
	CU_ASSERT_STRING_EQUAL(got[1], "hash_inner_[j]");
	memset(out, 0xff, sizeof(out));
	CU_ASSERT_EQUAL(sb_names__next(&m, &pos, out), 2);
	CU_ASSERT(out[0].name == 0 && out[0].file == SB_NO_STR && out[0].line == 0 &&
		  out[0].kind == SYM_FUNC);
	CU_ASSERT(out[1].name == 1 && out[1].file == 2 && out[1].line == 12 &&
		  out[1].kind == SYM_INLINE);
	/* A name or a file past the table, a kind past the last; no frame at all; too many. */
	fr[1].name = 3;
	names(strs, 3, fr, 2);
	CU_ASSERT_EQUAL(decode(false, 0, &m), -EBADMSG);
	fr[1].name = 1;
	fr[1].file = 3;
	names(strs, 3, fr, 2);
	CU_ASSERT_EQUAL(decode(false, 0, &m), -EBADMSG);
	fr[1].file = SB_NO_STR;
	fr[1].kind = SYM_KIND__MAX;
	names(strs, 3, fr, 2);
	CU_ASSERT_EQUAL(decode(false, 0, &m), -EBADMSG);
	names(strs, 3, fr, 0);
	CU_ASSERT_EQUAL(decode(false, 0, &m), -EBADMSG);
	memset(fr, 0, sizeof(fr));
	names(strs, 3, fr, SB_FRAMES_MAX + 1);
	CU_ASSERT_EQUAL(decode(false, 0, &m), -EBADMSG);
	/* An unknown type; a header that is not zero where it must be. */
	sb_buf__start(&b, 200, 0, 1);
	CU_ASSERT_EQUAL(decode(false, 0, &m), -EBADMSG);
	CU_ASSERT_EQUAL(decode(true, 0, &m), -EBADMSG);
	sb_buf__start(&b, SB_PREPARE, 0, 1);
	b.p[2] = 1;
	CU_ASSERT_EQUAL(decode(true, 0, &m), -EBADMSG);
}

/* A part of a table: bytes [OFF, OFF + N) of TOTAL. */
static void utab_part(bool last, uint32_t total, uint32_t off, uint32_t n)
{
	static const unsigned char bytes[64];

	sb_buf__start(&b, SB_UTAB, last, 5);
	sb_buf__u32(&b, total);
	sb_buf__u32(&b, off);
	sb_buf__bytes(&b, bytes, n);
}

static void test_tables(void)
{
	struct sb_msg m;

	sb_buf__start(&b, SB_TABLE, 0, 5);
	CU_ASSERT_EQUAL(decode(true, 0, &m), 0);
	CU_ASSERT(m.type == SB_TABLE && m.id == 5);
	CU_ASSERT_EQUAL(decode(false, 0, &m), -EBADMSG);	/* not the worker's to send */
	sb_buf__start(&b, SB_TABLE, 1, 5);
	CU_ASSERT_EQUAL(decode(true, 0, &m), -EBADMSG);
	/* SB_FORGET: a file (arg 0) or a perf map (arg 1), the client's to send */
	for (uint8_t arg = 0; arg < 3; arg++) {
		sb_buf__start(&b, SB_FORGET, arg, 7);
		CU_ASSERT_EQUAL(decode(true, 0, &m), arg < 2 ? 0 : -EBADMSG);
		CU_ASSERT(arg == 2 || (m.type == SB_FORGET && m.id == 7 && m.arg == arg));
		CU_ASSERT_EQUAL(decode(false, 0, &m), -EBADMSG);
	}
	/* SB_PYCODE: a code object's bytes and its units, the client's to send */
	{
		static const unsigned char code[8] = "codeobj", name[3] = "abc";
		const uint32_t units[3] = { 1, 7, 0xffff };

		for (int variant = 0; variant < 4; variant++) {
			sb_buf__start(&b, SB_PYCODE, 11, variant == 1 ? 3 : 0);
			sb_buf__u32(&b, 42);
			for (int i = 0; i < SB_PY_BLOBS; i++) {
				const unsigned char *p = i == SB_PY_CODE ? code : i == SB_PY_NAME ? name : NULL;
				uint32_t len = i == SB_PY_CODE ? 8 : i == SB_PY_NAME ? 3 : 0;

				/* variant 2: a length past the message; 3: past SB_PY_BLOB_MAX */
				sb_buf__u32(&b, variant == 2 && i == SB_PY_TABLE ? 100 :
					    variant == 3 && i == SB_PY_FILE ? SB_PY_BLOB_MAX + 1 : len);
				sb_buf__bytes(&b, p, len);
			}
			sb_buf__u32(&b, 3);
			sb_buf__bytes(&b, units, sizeof(units));
			CU_ASSERT_EQUAL(decode(true, 0, &m), variant ? -EBADMSG : 0);
			if (!variant) {
				CU_ASSERT(m.type == SB_PYCODE && m.arg == 11 && m.seq == 42 && m.n == 3);
				CU_ASSERT(m.blob_len[SB_PY_CODE] == 8 && !memcmp(m.blob[SB_PY_CODE], code, 8));
				CU_ASSERT(m.blob_len[SB_PY_NAME] == 3 && !memcmp(m.blob[SB_PY_NAME], name, 3));
				CU_ASSERT(m.blob_len[SB_PY_TABLE] == 0);
				CU_ASSERT(sb_msg__unit(&m, 1) == 7 && sb_msg__unit(&m, 2) == 0xffff);
				CU_ASSERT_EQUAL(decode(false, 0, &m), -EBADMSG);	/* not the worker's */
			}
		}
	}
	utab_part(false, 100, 0, 64);
	CU_ASSERT_EQUAL_FATAL(decode(false, 0, &m), 0);
	CU_ASSERT(m.total == 100 && m.offset == 0 && m.data_len == 64 && !m.arg);
	utab_part(true, 100, 64, 36);
	CU_ASSERT_EQUAL(decode(false, 0, &m), 0);
	utab_part(true, 0, 0, 0);				/* no table */
	CU_ASSERT_EQUAL(decode(false, 0, &m), 0);
	CU_ASSERT_EQUAL(decode(true, 0, &m), -EBADMSG);
	utab_part(true, 100, 64, 30);				/* the last, short */
	CU_ASSERT_EQUAL(decode(false, 0, &m), -EBADMSG);
	utab_part(false, 100, 64, 40);				/* past the total */
	CU_ASSERT_EQUAL(decode(false, 0, &m), -EBADMSG);
	utab_part(false, 10, 64, 0);				/* an offset past it */
	CU_ASSERT_EQUAL(decode(false, 0, &m), -EBADMSG);
	utab_part(false, SB_UTAB_MAX + 1, 0, 8);		/* too big */
	CU_ASSERT_EQUAL(decode(false, 0, &m), -EBADMSG);
	utab_part(true, 8, 0, 8);
	b.p[1] = 2;						/* arg: 0 or 1 */
	CU_ASSERT_EQUAL(decode(false, 0, &m), -EBADMSG);
}

static int suite_cleanup(void)
{
	sb_buf__free(&b);
	return 0;
}

int register_sandbox_suite(void)
{
	CU_pSuite s = CU_add_suite("sandbox", NULL, suite_cleanup);

	if (!s || !CU_add_test(s, "lookups: encoded, decoded, refused", test_lookup) ||
	    !CU_add_test(s, "files and debug files", test_file_and_debug) ||
	    !CU_add_test(s, "the bounds a worker met", test_limits) ||
	    !CU_add_test(s, "the debuginfod fetcher's answers", test_fetch_answers) ||
	    !CU_add_test(s, "names: string tables and entries", test_names) ||
	    !CU_add_test(s, "unwind tables: asked, sent in parts, refused", test_tables))
		return -1;
	return 0;
}

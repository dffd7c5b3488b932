// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * utab: a file's unwind table says at every address what running its CFI there says
 * (cfi__lookup on .eh_frame, then .debug_frame), for Debian's libc and for fixtures with only
 * .eh_frame records (gcc -static) and with .debug_frame; it survives its encoding byte for
 * byte, and a decoder refuses encodings cut, lengthened or changed where a count, an order, an
 * index or a field would be wrong.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dso/dso.h"
#include "suites.h"
#include "unwind/utab.h"

/* cfi__lookup's answer for VADDR as the unwinder had it before tables: .eh_frame's FDEs,
 * then .debug_frame's where .eh_frame has none; -EINVAL (malformed) is "not followed". */
static int direct_rule(struct dso *d, uint64_t vaddr, struct cfi_rule *r)
{
	int err = -ENOENT;

	for (int i = 0; i < DSO_CFI__MAX && err == -ENOENT; i++) {
		struct dso_fdes f;

		if (!dso__fdes(d, i, &f))
			err = cfi__lookup(&f.mem, &f.table, vaddr, r);
	}
	return err == -EINVAL ? -ENOTSUP : err;
}

/* Compare T with the CFI of D at both ends and the middle of every FDE, and one byte
 * around them. Returns how many addresses were compared. */
static unsigned int compare_all(struct dso *d, const struct utab *t)
{
	unsigned int n = 0, bad = 0;

	for (int src = 0; src < DSO_CFI__MAX; src++) {
		struct dso_fdes f;

		if (dso__fdes(d, src, &f))
			continue;
		for (uint32_t i = 0; i < f.table.count; i++) {
			uint64_t first, fde, start, end;

			if (fde_table__entry(&f.table, i, &first, &fde) ||
			    cfi__fde_range(&f.mem, fde, &start, &end) || end <= start)
				continue;
			uint64_t at[] = { start - 1, start, start + 1, start + (end - start) / 2,
					  end - 1, end };

			for (size_t k = 0; k < sizeof(at) / sizeof(*at); k++) {
				struct cfi_rule a, b;
				int ea = direct_rule(d, at[k], &a), eb = utab__rule(t, at[k], &b);

				n++;
				if (ea != eb || (!ea && memcmp(&a, &b, sizeof(a)))) {
					if (bad++ < 5)
						fprintf(stderr, "%s: %#llx: cfi %d, table %d\n",
							dso__path(d), (unsigned long long)at[k], ea, eb);
				}
			}
		}
	}
	CU_ASSERT_EQUAL(bad, 0);
	return n;
}

/* Encode T, decode it again, and encode that: the same bytes, and the same answers. */
static void round_trip(struct dso *d, const struct utab *t)
{
	unsigned char *a, *b;
	size_t na, nb;
	struct utab *u;

	CU_ASSERT_EQUAL_FATAL(utab__encode(t, &a, &na), 0);
	CU_ASSERT_EQUAL_FATAL(utab__decode(a, na, &u), 0);
	CU_ASSERT_EQUAL_FATAL(utab__encode(u, &b, &nb), 0);
	CU_ASSERT_EQUAL(na, nb);
	CU_ASSERT(na == nb && !memcmp(a, b, na));
	CU_ASSERT_EQUAL(u->nr_rows, t->nr_rows);
	CU_ASSERT_EQUAL(u->spans.nr, t->spans.nr);
	compare_all(d, u);
	utab__free(u);
	free(a);
	free(b);
}

static void check_file(const char *path, unsigned int min_compared)
{
	struct dso *d = dso__open(path, NULL);
	struct utab *t;

	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	t = utab__build(d, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT(t->has_cfi);
	CU_ASSERT(compare_all(d, t) >= min_compared);
	round_trip(d, t);
	utab__free(t);
	dso__free(d);
}

static void test_libc(void)
{
	check_file("/lib/x86_64-linux-gnu/libc.so.6", 6 * 2000);
}

static void fixture(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", fixtures_dir, name);
}

static void test_static_and_debug_frame(void)
{
	char path[4096];

	fixture(path, sizeof(path), "static");
	check_file(path, 6 * 100);
	fixture(path, sizeof(path), "debugframe");
	check_file(path, 6 * 5);
}

/* The libc table encoded, for the decoder's refusals. */
static unsigned char *enc;
static size_t enc_len;

static int decodes(const unsigned char *buf, size_t len)
{
	struct utab *u;
	int err = utab__decode(buf, len, &u);

	utab__free(u);
	return err;
}

/* Offsets of the header's counts and of the arrays (utab.c's layout). */
#define OFF_PY_RUNTIME	48
#define OFF_NR_SEGS	64
#define OFF_NR_RULES	68
#define OFF_NR_ROWS	72

static void test_decoder_refuses(void)
{
	struct dso *d = dso__open("/lib/x86_64-linux-gnu/libc.so.6", NULL);
	struct utab *t = d ? utab__build(d, NULL, 0) : NULL;
	unsigned char *bad;
	uint32_t nr_segs, nr_rules, nr_rows, v;
	uint64_t v64;
	size_t rules_at, rows_at;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL_FATAL(utab__encode(t, &enc, &enc_len), 0);
	bad = malloc(enc_len + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(bad);
	CU_ASSERT_EQUAL(decodes(enc, enc_len), 0);
	CU_ASSERT_EQUAL(decodes(enc, enc_len - 1), -EBADMSG);		/* cut */
	memcpy(bad, enc, enc_len);
	bad[enc_len] = 0;
	CU_ASSERT_EQUAL(decodes(bad, enc_len + 1), -EBADMSG);		/* lengthened */
	CU_ASSERT_EQUAL(decodes(enc, 10), -EBADMSG);
	memcpy(&nr_segs, enc + OFF_NR_SEGS, 4);
	memcpy(&nr_rules, enc + OFF_NR_RULES, 4);
	memcpy(&nr_rows, enc + OFF_NR_ROWS, 4);
	CU_ASSERT_EQUAL(nr_rules, t->nr_rules);
	CU_ASSERT_EQUAL(nr_rows, t->nr_rows);
	rules_at = 104 + nr_segs * 32;
	rows_at = rules_at + nr_rules * sizeof(struct cfi_rule);
	/* A count past the bytes. */
	v = nr_rows + 1;
	memcpy(bad + OFF_NR_ROWS, &v, 4);
	CU_ASSERT_EQUAL(decodes(bad, enc_len), -EBADMSG);
	memcpy(bad, enc, enc_len);
	/* A rule with a register no rule may name. */
	bad[rules_at] = CFI_REG_RA;
	CU_ASSERT_EQUAL(decodes(bad, enc_len), -EBADMSG);
	memcpy(bad, enc, enc_len);
	/* A row naming a rule past the table. */
	v = nr_rules;
	memcpy(bad + rows_at + 4, &v, 4);
	CU_ASSERT_EQUAL(decodes(bad, enc_len), -EBADMSG);
	memcpy(bad, enc, enc_len);
	/* Rows out of order. */
	memcpy(bad + rows_at + 8, enc + rows_at, 4);
	CU_ASSERT_EQUAL(decodes(bad, enc_len), -EBADMSG);
	memcpy(bad, enc, enc_len);
	/* A _PyRuntime outside the file's segments. */
	v64 = t->max_vaddr;
	memcpy(bad + OFF_PY_RUNTIME, &v64, 8);
	CU_ASSERT_EQUAL(decodes(bad, enc_len), -EBADMSG);
	memcpy(bad, enc, enc_len);
	/* The magic. */
	bad[0] ^= 1;
	CU_ASSERT_EQUAL(decodes(bad, enc_len), -EBADMSG);
	memcpy(bad, enc, enc_len);
	CU_ASSERT_EQUAL(decodes(bad, enc_len), 0);
	free(bad);
	free(enc);
	utab__free(t);
	dso__free(d);
}

/* The stretches no FDE describes: between FDEs, and from a segment's start or to its end
 * where no FDE is on that side (_init before .plt, _fini after .text). */
static void test_gaps(void)
{
	struct cfi_rule rule = { 0 };
	struct dso_seg segs[2] = {
		{ .vaddr = 0x1000, .memsz = 0x3000 },	/* code: 0x1000-0x4000 */
		{ .vaddr = 0x5000, .memsz = 0x1000 },
	};
	/* FDEs over 0x1040-0x1200 and 0x1210-0x3f00, base 0x1040. */
	struct utab_row rows[] = {
		{ 0x0, 0 }, { 0x1c0, UTAB_NONE }, { 0x1d0, 0 }, { 0x2ec0, UTAB_NONE },
	};
	struct utab t = { .base = 0x1040, .segs = segs, .nr_segs = 2, .rules = &rule,
			  .nr_rules = 1, .rows = rows, .nr_rows = 4, .has_cfi = true };
	uint64_t a, b;

	CU_ASSERT_EQUAL(utab__gap(&t, 0x1100, &a, &b), -EEXIST);
	CU_ASSERT_EQUAL(utab__gap(&t, 0x1205, &a, &b), 0);	/* between the two */
	CU_ASSERT(a == 0x1200 && b == 0x1210);
	CU_ASSERT_EQUAL(utab__gap(&t, 0x1010, &a, &b), 0);	/* before the first: _init */
	CU_ASSERT(a == 0x1000 && b == 0x1040);
	CU_ASSERT_EQUAL(utab__gap(&t, 0x3f10, &a, &b), 0);	/* after the last: _fini */
	CU_ASSERT(a == 0x3f00 && b == 0x4000);
	CU_ASSERT_EQUAL(utab__gap(&t, 0x5010, &a, &b), 0);	/* a segment without FDEs */
	CU_ASSERT(a == 0x5000 && b == 0x6000);
	CU_ASSERT_EQUAL(utab__gap(&t, 0x4800, &a, &b), -ENOENT);	/* in no segment */
	CU_ASSERT(!utab__keeps_records(&t, 0x1205));
}

/* A stretch of V8's builtins (UTAB_RECORD): to userspace's unwinder a stretch without an FDE
 * like another (no rule, its gap's bounds), kept as such through the codec. */
static void test_records(void)
{
	struct cfi_rule rule = { .cfa_reg = CFI_REG_RSP, .cfa_off = 8, .ra = CFI_AT_CFA,
				 .ra_off = -8 };
	struct dso_seg segs[1] = { { .vaddr = 0x1000, .memsz = 0x3000 } };
	struct utab_row rows[] = {
		{ 0x0, 0 }, { 0x1c0, UTAB_RECORD }, { 0x1d0, 0 }, { 0x2ec0, UTAB_NONE },
	};
	struct utab t = { .base = 0x1040, .min_vaddr = 0x1040, .max_vaddr = 0x4000,
			  .segs = segs, .nr_segs = 1, .rules = &rule, .nr_rules = 1,
			  .rows = rows, .nr_rows = 4, .has_cfi = true };
	struct utab *back = NULL;
	struct cfi_rule r;
	unsigned char *buf;
	uint64_t a, b;
	size_t len;

	CU_ASSERT(utab__keeps_records(&t, 0x1200) && utab__keeps_records(&t, 0x120f));
	CU_ASSERT(!utab__keeps_records(&t, 0x1100) && !utab__keeps_records(&t, 0x1210) &&
		  !utab__keeps_records(&t, 0x3f10) && !utab__keeps_records(&t, 0x1000));
	CU_ASSERT_EQUAL(utab__rule(&t, 0x1205, &r), -ENOENT);
	CU_ASSERT_EQUAL(utab__rule(&t, 0x1100, &r), 0);
	CU_ASSERT_EQUAL(utab__gap(&t, 0x1205, &a, &b), 0);
	CU_ASSERT(a == 0x1200 && b == 0x1210);
	CU_ASSERT_EQUAL_FATAL(utab__encode(&t, &buf, &len), 0);
	CU_ASSERT_EQUAL(utab__decode(buf, len, &back), 0);
	CU_ASSERT(back && back->nr_rows == 4 && back->rows[1].rule == UTAB_RECORD &&
		  utab__keeps_records(back, 0x1205));
	if (back)
		utab__free(back);
	back = NULL;
	/* Any other index past the rules is refused. */
	rows[1].rule = UTAB_RECORD - 1;
	free(buf);
	CU_ASSERT_EQUAL_FATAL(utab__encode(&t, &buf, &len), 0);
	CU_ASSERT_NOT_EQUAL(utab__decode(buf, len, &back), 0);
	free(buf);
}

int register_utab_suite(void)
{
	CU_pSuite s = CU_add_suite("utab", NULL, NULL);

	if (!s || !CU_add_test(s, "libc: every FDE's rules, kept and encoded", test_libc) ||
	    !CU_add_test(s, "gcc -static, .debug_frame", test_static_and_debug_frame) ||
	    !CU_add_test(s, "the decoder refuses what is wrong", test_decoder_refuses) ||
	    !CU_add_test(s, "stretches no FDE describes", test_gaps) ||
	    !CU_add_test(s, "V8's builtins: records at their calls", test_records))
		return -1;
	return 0;
}

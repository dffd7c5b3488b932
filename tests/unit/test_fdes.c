// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * fdes: FDE tables built from .eh_frame records, and .debug_frame converted to .eh_frame's
 * format, on sections written here by hand. Each case writes records (CIEs of several forms,
 * FDEs in any order, records that must be left out or end the walk) and lists the table it
 * expects, as (function start, which FDE).
 */
#include <errno.h>
#include <string.h>
#include "dso/cfirec.h"
#include "dso/fdes.h"
#include "suites.h"

#define VADDR	0x10000		/* link-time address of the .eh_frame section */
#define BASE	0x1000		/* the file's lowest address: tables are relative to it */
#define RECS	0x80000		/* where converted .debug_frame records are placed */
#define MAX_FDES 16

static unsigned char sec[4096];
static size_t len;

static void put(const void *p, size_t n)
{
	memcpy(sec + len, p, n);
	len += n;
}

static void put8(uint8_t v)
{
	put(&v, 1);
}

static void put32(uint32_t v)
{
	put(&v, 4);
}

static void put64(uint64_t v)
{
	put(&v, 8);
}

/* The record that started at START gets its length. */
static void close_record(size_t start)
{
	uint32_t n = (uint32_t)(len - start - 4);

	memcpy(sec + start, &n, 4);
}

/* --- .eh_frame ---------------------------------------------------------------------------- */

/* A CIE with augmentation AUG and the N bytes of augmentation data DATA ('z' forms). */
static size_t eh_cie(const char *aug, const char *data, size_t n, uint8_t version)
{
	size_t start = len;

	put32(0);
	put32(0);			/* CIE id */
	put8(version);
	put(aug, strlen(aug) + 1);
	put8(1);			/* code alignment */
	put8(0x78);			/* data alignment -8 */
	put8(16);			/* return address column */
	if (aug[0] == 'z') {
		put8((uint8_t)n);
		put(data, n);
	}
	put("\x0c\x07\x08\x90\x01", 5);	/* def_cfa rsp+8; rip at cfa-8 */
	close_record(start);
	return start;
}

/* An FDE of the CIE at CIE for [PC, PC + RANGE), its addresses in encoding ENC (0x1b pcrel
 * sdata4, 0x03 udata4, 0x00 absptr); Z: its CIE has augmentation data. */
static size_t eh_fde(size_t cie, uint8_t enc, bool z, uint64_t pc, uint64_t range)
{
	size_t start = len;

	put32(0);
	put32((uint32_t)(len - cie));	/* back from this field to the CIE */
	if (enc == 0x1b) {
		put32((uint32_t)(pc - (VADDR + len)));
		put32((uint32_t)range);
	} else if (enc == 0x03) {
		put32((uint32_t)pc);
		put32((uint32_t)range);
	} else {
		put64(pc);
		put64(range);
	}
	if (z)
		put8(0);
	put("\x41\x0e\x10", 3);		/* advance 1; def_cfa_offset 16 */
	close_record(start);
	return start;
}

/* The table IX must be: COUNT entries, STARTS[i] with the FDE at section offset FDES[i]
 * placed at FDE_BASE. */
static void expect_table(const struct fde_index *ix, uint32_t count, const uint64_t *starts,
			 const size_t *fdes, uint64_t fde_base)
{
	struct fde_table t = fde_index__table(ix);

	CU_ASSERT_EQUAL_FATAL(ix->count, count);
	CU_ASSERT_EQUAL(ix->base, BASE);
	for (uint32_t i = 0; i < count; i++) {
		uint64_t start, fde;

		CU_ASSERT_EQUAL(fde_table__find(&t, starts[i], &start, &fde), 0);
		CU_ASSERT_EQUAL(start, starts[i]);
		CU_ASSERT_EQUAL(fde, fde_base + fdes[i]);
	}
}

static void test_eh_frame_index(void)
{
	static const uint64_t want[] = { 0x2000, 0x3000, 0x4000, 0x5000, 0x6000 };
	size_t zr, plain, zplr, zrs, fdes[5];
	struct fde_index ix;

	len = 0;
	zr = eh_cie("zR", "\x1b", 1, 1);
	plain = eh_cie("", "", 0, 3);
	/* personality (indirect pcrel sdata4 and its pointer), LSDA and FDE encodings */
	zplr = eh_cie("zPLR", "\x9b\0\0\0\0\x1b\x03", 7, 1);
	zrs = eh_cie("zRS", "\x1b", 1, 1);
	fdes[1] = eh_fde(zr, 0x1b, true, 0x3000, 0x10);
	fdes[0] = eh_fde(plain, 0x00, false, 0x2000, 0x20);
	fdes[2] = eh_fde(zplr, 0x03, true, 0x4000, 0x30);
	fdes[3] = eh_fde(zrs, 0x1b, true, 0x5000, 1);		/* signal frames too */
	eh_fde(zr, 0x1b, true, 0x2000, 0x8);			/* a second FDE at 0x2000 */
	eh_fde(zr, 0x1b, true, 0x6800, 0);			/* no code */
	eh_fde(zr, 0x1b, true, 0x100, 0x10);			/* below the file */
	eh_fde(zr, 0x1b, true, BASE + 0x80000000ull, 0x10);	/* beyond 32 bits */
	fdes[4] = eh_fde(zr, 0x1b, true, 0x6000, 0x10);
	put32(0);						/* the terminator */
	eh_fde(zr, 0x1b, true, 0x7000, 0x10);			/* past it */

	CU_ASSERT_EQUAL_FATAL(fde_index__eh_frame(sec, len, VADDR, BASE, &ix), 0);
	expect_table(&ix, 5, want, fdes, VADDR);
	CU_ASSERT_EQUAL(ix.skipped, 4);
	CU_ASSERT_PTR_NULL(ix.recs);
	fde_index__free(&ix);
}

static void test_eh_frame_malformed(void)
{
	static const uint64_t want[] = { 0x2000 };
	size_t zr, eh, v4, fdes[1], bad, other;
	struct fde_index ix;
	uint32_t v;

	len = 0;
	zr = eh_cie("zR", "\x1b", 1, 1);
	eh = eh_cie("eh", "", 0, 1);				/* pre-'z': encoding unknown */
	/* (and below, an augmentation string longer than any known one) */
	v4 = eh_cie("zR", "\x1b", 1, 4);			/* no version 4 in .eh_frame */
	eh_fde(eh, 0x00, false, 0x3000, 0x10);
	eh_fde(eh_cie("zLLLLLLLLLLLLLLLL", "\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b"
		      "\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b", 16, 1), 0x00, true, 0x3080, 0x10);
	eh_fde(v4, 0x1b, true, 0x3100, 0x10);
	bad = eh_fde(zr, 0x1b, true, 0x3200, 0x10);		/* its CIE: before the section */
	v = (uint32_t)(bad + 4 + 8);
	memcpy(sec + bad + 4, &v, 4);
	other = eh_fde(zr, 0x1b, true, 0x3300, 0x10);		/* its CIE: an FDE */
	v = (uint32_t)(other + 4 - bad);
	memcpy(sec + other + 4, &v, 4);
	fdes[0] = eh_fde(zr, 0x1b, true, 0x2000, 0x10);
	bad = eh_fde(zr, 0x1b, true, 0x3400, 0x10);		/* longer than what is left */
	v = 0x1000;
	memcpy(sec + bad, &v, 4);
	eh_fde(zr, 0x1b, true, 0x3500, 0x10);

	CU_ASSERT_EQUAL_FATAL(fde_index__eh_frame(sec, len, VADDR, BASE, &ix), 0);
	expect_table(&ix, 1, want, fdes, VADDR);
	CU_ASSERT_EQUAL(ix.skipped, 5);
	fde_index__free(&ix);

	/* Nothing to index: CIEs alone, an empty or a cut section. */
	len = 0;
	eh_cie("zR", "\x1b", 1, 1);
	CU_ASSERT_EQUAL(fde_index__eh_frame(sec, len, VADDR, BASE, &ix), -ENOENT);
	CU_ASSERT_EQUAL(fde_index__eh_frame(sec, 0, VADDR, BASE, &ix), -ENOENT);
	CU_ASSERT_EQUAL(fde_index__eh_frame(sec, 7, VADDR, BASE, &ix), -ENOENT);
}

/* --- .debug_frame ------------------------------------------------------------------------- */

/* A .debug_frame CIE as Go writes it (version 3, no augmentation, data alignment -4), or of
 * VERSION with AUG and, for version 4, ADDR_SIZE. */
static size_t dbg_cie(uint8_t version, const char *aug, uint8_t addr_size)
{
	size_t start = len;

	put32(0);
	put32(0xffffffff);		/* CIE id */
	put8(version);
	put(aug, strlen(aug) + 1);
	if (version == 4) {
		put8(addr_size);
		put8(0);		/* segment selector size */
	}
	put8(1);			/* code alignment */
	put8(0x7c);			/* data alignment -4 */
	put8(16);			/* return address column (a byte or a ULEB128) */
	put("\x0c\x07\x08\x05\x10\x02", 6);	/* def_cfa rsp+8; rip at cfa-8 */
	close_record(start);
	return start;
}

static const char dbg_insns[] = "\x13\x7e\x62\x13\xf6\x7e";	/* cfa+8; advance 34; cfa+552 */

static size_t dbg_fde(size_t cie, uint64_t pc, uint64_t range)
{
	size_t start = len;

	put32(0);
	put32((uint32_t)cie);		/* the CIE's offset in the section */
	put64(pc);
	put64(range);
	put(dbg_insns, sizeof(dbg_insns) - 1);
	close_record(start);
	return start;
}

static void test_debug_frame_converted(void)
{
	static const uint64_t want[] = { 0x2000, 0x3000, 0x4000, 0x5000 };
	static const uint8_t versions[] = { 3, 3, 1, 3 };	/* as converted */
	size_t v3, v1, v4, za, v4_32, later, at;
	struct dso_seg seg;
	struct cfi_mem m;
	struct fde_index ix;
	struct fde_table t;
	uint64_t fde;

	len = 0;
	v3 = dbg_cie(3, "", 0);
	v1 = dbg_cie(1, "", 0);
	v4 = dbg_cie(4, "", 8);
	za = dbg_cie(3, "z", 0);				/* an augmentation */
	v4_32 = dbg_cie(4, "", 4);				/* 4-byte addresses */
	dbg_fde(v3, 0x3000, 0x100);
	dbg_fde(v1, 0x4000, 0x100);
	dbg_fde(v4, 0x5000, 0x100);
	dbg_fde(za, 0x6000, 0x100);
	dbg_fde(v4_32, 0x6100, 0x100);
	dbg_fde(v3, 0, 0x100);					/* a discarded function */
	dbg_fde(0x7777, 0x6200, 0x100);				/* no CIE there */
	put32(0);						/* padding */
	put32(0xffffffff);					/* a 64-bit record */
	put64(4);
	put32(0);
	at = len;						/* its CIE comes later */
	dbg_fde(0, 0x2000, 0x100);
	later = dbg_cie(3, "", 0);
	memcpy(sec + at + 4, &(uint32_t){ (uint32_t)later }, 4);

	CU_ASSERT_EQUAL_FATAL(fde_index__debug_frame(sec, len, RECS, BASE, &ix), 0);
	CU_ASSERT_EQUAL(ix.skipped, 4);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ix.recs);
	CU_ASSERT(ix.recs_len <= len);
	CU_ASSERT_EQUAL_FATAL(ix.count, 4);
	/* Every entry's FDE reads as .eh_frame: its CIE, its code, its instructions. */
	seg = (struct dso_seg){ .vaddr = RECS, .filesz = ix.recs_len, .memsz = ix.recs_len };
	m = (struct cfi_mem){ ix.recs, ix.recs_len, &seg, 1 };
	t = fde_index__table(&ix);
	for (int i = 0; i < 4; i++) {
		uint64_t start, range;
		struct cie cie;
		struct cfi_rd r;

		CU_ASSERT_EQUAL_FATAL(fde_table__find(&t, want[i] + 5, &start, &fde), 0);
		CU_ASSERT_EQUAL(start, want[i]);
		CU_ASSERT_EQUAL_FATAL(cfi_fde__parse(&m, fde, &cie, &start, &range, &r), 0);
		CU_ASSERT_EQUAL(start, want[i]);
		CU_ASSERT_EQUAL(range, 0x100);
		CU_ASSERT_EQUAL(cie.version, versions[i]);
		CU_ASSERT_EQUAL(cie.ra, 16);
		CU_ASSERT_EQUAL(cie.code_align, 1);
		CU_ASSERT_EQUAL(cie.data_align, -4);
		CU_ASSERT_EQUAL(cie.fde_enc, 0);
		CU_ASSERT(!cie.has_z);
		CU_ASSERT_EQUAL(cie.insns.end - cie.insns.p, 6);
		CU_ASSERT(!memcmp(cie.insns.p, "\x0c\x07\x08\x05\x10\x02", 6));
		CU_ASSERT_EQUAL(r.end - r.p, sizeof(dbg_insns) - 1);
		CU_ASSERT(!memcmp(r.p, dbg_insns, sizeof(dbg_insns) - 1));
	}
	fde_index__free(&ix);
}

static void test_debug_frame_bounds(void)
{
	struct fde_index ix;
	size_t cie, fde;
	uint32_t v;

	/* Cut anywhere, the records before the cut still convert; nothing reads past it. */
	len = 0;
	cie = dbg_cie(3, "", 0);
	dbg_fde(cie, 0x2000, 0x10);
	fde = dbg_fde(cie, 0x3000, 0x10);
	for (size_t cut = 0; cut <= len; cut++) {
		int err = fde_index__debug_frame(sec, cut, RECS, BASE, &ix);
		uint32_t want = cut >= len ? 2 : cut >= fde ? 1 : 0;

		CU_ASSERT_EQUAL(err, want ? 0 : -ENOENT);
		if (!err) {
			CU_ASSERT_EQUAL(ix.count, want);
			fde_index__free(&ix);
		}
	}
	/* A length past the end stops the walk; an FDE too short for its addresses is
	 * left out. */
	v = 0x7fffffff;
	memcpy(sec + fde, &v, 4);
	CU_ASSERT_EQUAL_FATAL(fde_index__debug_frame(sec, len, RECS, BASE, &ix), 0);
	CU_ASSERT_EQUAL(ix.count, 1);
	fde_index__free(&ix);
	v = 12;
	memcpy(sec + fde, &v, 4);
	CU_ASSERT_EQUAL_FATAL(fde_index__debug_frame(sec, fde + 16, RECS, BASE, &ix), 0);
	CU_ASSERT_EQUAL(ix.count, 1);
	CU_ASSERT_EQUAL(ix.skipped, 1);
	fde_index__free(&ix);
}

int register_fdes_suite(void)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} tests[] = {
		{ ".eh_frame indexed: encodings, order, left out", test_eh_frame_index },
		{ ".eh_frame indexed: malformed records", test_eh_frame_malformed },
		{ ".debug_frame converted: CIE forms, references", test_debug_frame_converted },
		{ ".debug_frame converted: bounds", test_debug_frame_bounds },
	};
	CU_pSuite s = CU_add_suite("fdes", NULL, NULL);

	if (!s)
		return -1;
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!CU_add_test(s, tests[i].name, tests[i].fn))
			return -1;
	return 0;
}

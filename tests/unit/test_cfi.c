// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * cfi: rules read from .eh_frame bytes written here by hand, as GCC lays them out: an
 * .eh_frame_hdr search table, CIEs ("zR", "zRS") and FDEs whose programs step through a
 * prologue, remember/restore state, a realigning function's CFA expression, an expression
 * no rule can hold, and the outermost frame.
 */
#include <errno.h>
#include <string.h>
#include "dso/fdes.h"
#include "unwind/cfi.h"
#include "unwind/frames.h"
#include "suites.h"

#define BASE	0x1000		/* link-time address of buf[0] */

static unsigned char buf[1024];
static size_t len;
static struct dso_seg seg;
static struct cfi_mem mem;
static struct fde_table tab;
static uint64_t fde_a, fde_b, fde_plt, fde_sig, fde_start, cie_plain;
static uint64_t fde_sigctx, fde_r10;	/* not in the table: read by address */

static void put(const void *p, size_t n)
{
	memcpy(buf + len, p, n);
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

static void put_bytes(const char *s, size_t n)
{
	put(s, n);
}

static uint64_t here(void)
{
	return BASE + len;
}

/* Pad the record that started at START to a multiple of 4 and write its length. */
static void close_record(size_t start)
{
	uint32_t n;

	while ((len - start) % 4)
		put8(0);		/* DW_CFA_nop */
	n = (uint32_t)(len - start - 4);
	memcpy(buf + start, &n, 4);
}

static uint64_t cie(const char *aug)
{
	size_t start = len;

	put32(0);			/* length, written by close_record */
	put32(0);			/* CIE id */
	put8(1);			/* version */
	put_bytes(aug, strlen(aug) + 1);
	put8(1);			/* code alignment */
	put8(0x78);			/* data alignment -8 */
	put8(16);			/* return address register */
	put8(1);			/* augmentation data length */
	put8(0x1b);			/* FDE pointers: pcrel sdata4 */
	put_bytes("\x0c\x07\x08", 3);	/* def_cfa rsp+8 */
	put_bytes("\x90\x01", 2);	/* offset r16 at cfa-8 */
	close_record(start);
	return BASE + start;
}

static uint64_t fde(uint64_t cie_vaddr, uint64_t pc, uint32_t range, const char *insns,
		    size_t n)
{
	size_t start = len;

	put32(0);
	put32((uint32_t)(here() - cie_vaddr));
	put32((uint32_t)(pc - here()));
	put32(range);
	put8(0);			/* augmentation data length */
	put_bytes(insns, n);
	close_record(start);
	return BASE + start;
}

static int setup(void)
{
	static const char a[] =
		"\x41"			/* advance 1 */
		"\x0e\x10"		/* def_cfa_offset 16 */
		"\x86\x02"		/* offset rbp at cfa-16 */
		"\x43"			/* advance 3 */
		"\x0d\x06"		/* def_cfa_register rbp */
		"\x02\x30"		/* advance_loc1 0x30 */
		"\x0c\x07\x08"		/* def_cfa rsp+8 */
		"\xc6";			/* restore rbp */
	static const char b[] =
		"\x41\x0e\x10"		/* advance 1; def_cfa_offset 16 */
		"\x83\x02"		/* offset rbx: not tracked */
		"\x44\x0a"		/* advance 4; remember_state */
		"\x0e\x08"		/* def_cfa_offset 8 */
		"\x41\x0b"		/* advance 1; restore_state */
		"\x44\x0f\x03\x76\x78\x06";	/* advance 4; cfa = *(rbp - 8) */
	static const char plt[] =	/* cfa = rsp + 8 + ((rip & 15) >= 11) * 8, as in .plt */
		"\x0f\x0b\x77\x08\x80\x00\x3f\x1a\x3b\x2a\x33\x24\x22";
	static const char start[] = "\x41\x07\x10";	/* advance 1; undefined rip */
	uint64_t cie_sig, hdr = BASE;
	static const uint64_t pcs[] = { 0x2000, 0x3000, 0x4000, 0x5000, 0x6000 };
	uint64_t *fdes[] = { &fde_a, &fde_b, &fde_plt, &fde_sig, &fde_start };
	size_t table;

	/* .eh_frame_hdr: version, eh_frame_ptr, count and table encodings, count, table */
	put8(1);
	put8(0x1b);
	put8(0x03);
	put8(0x3b);
	put32(0);
	put32(5);
	table = len;
	len += 5 * 8;
	cie_plain = cie("zR");
	cie_sig = cie("zRS");
	fde_a = fde(cie_plain, 0x2000, 0x40, a, sizeof(a) - 1);
	fde_b = fde(cie_plain, 0x3000, 0x20, b, sizeof(b) - 1);
	fde_plt = fde(cie_plain, 0x4000, 0x20, plt, sizeof(plt) - 1);
	fde_sig = fde(cie_sig, 0x5000, 0x20, "", 0);
	fde_start = fde(cie_plain, 0x6000, 0x20, start, sizeof(start) - 1);
	{
		/* glibc's __restore_rt: everything from the ucontext at rsp. */
		static const char sig[] =
			"\x0f\x04\x77\xa0\x01\x06"	/* cfa = *(rsp + 160) */
			"\x10\x06\x03\x77\xf8\x00"	/* rbp at rsp + 120 */
			"\x10\x03\x03\x77\x80\x01"	/* rbx at rsp + 128 */
			"\x10\x10\x03\x77\xa8\x01";	/* rip at rsp + 168 */
		/* A realigning main's entry: cfa = r10 + 0, then *(rbp - 8). */
		static const char r10[] = "\x0c\x0a\x00\x44\x0f\x03\x76\x78\x06";

		fde_sigctx = fde(cie_sig, 0x7800, 0x10, sig, sizeof(sig) - 1);
		fde_r10 = fde(cie_plain, 0x7900, 0x10, r10, sizeof(r10) - 1);
	}
	for (int i = 0; i < 5; i++) {
		int32_t e[2] = { (int32_t)(pcs[i] - hdr), (int32_t)(*fdes[i] - hdr) };

		memcpy(buf + table + i * 8, e, 8);
	}
	seg = (struct dso_seg){ .vaddr = BASE, .offset = 0, .filesz = len };
	mem = (struct cfi_mem){ buf, len, &seg, 1 };
	tab = (struct fde_table){ buf + table, 5, hdr };
	return 0;
}

static void expect(uint64_t pc, uint8_t cfa_reg, int32_t cfa_off, uint8_t bp, int32_t bp_off)
{
	struct cfi_rule r;

	CU_ASSERT_EQUAL_FATAL(cfi__lookup(&mem, &tab, pc, &r), 0);
	CU_ASSERT_EQUAL(r.cfa_reg, cfa_reg);
	CU_ASSERT_EQUAL(r.cfa_off, cfa_off);
	CU_ASSERT_EQUAL(r.cfa_deref, 0);
	CU_ASSERT_EQUAL(r.ra, CFI_AT_CFA);
	CU_ASSERT_EQUAL(r.ra_off, -8);
	CU_ASSERT_EQUAL(r.bp, bp);
	if (bp == CFI_AT_CFA)
		CU_ASSERT_EQUAL(r.bp_off, bp_off);
}

static void test_prologue_body_epilogue(void)
{
	expect(0x2000, CFI_REG_RSP, 8, CFI_SAME, 0);		/* entry */
	expect(0x2001, CFI_REG_RSP, 16, CFI_AT_CFA, -16);	/* after push rbp */
	expect(0x2003, CFI_REG_RSP, 16, CFI_AT_CFA, -16);
	expect(0x2004, CFI_REG_RBP, 16, CFI_AT_CFA, -16);	/* after mov rsp, rbp */
	expect(0x2033, CFI_REG_RBP, 16, CFI_AT_CFA, -16);
	expect(0x2034, CFI_REG_RSP, 8, CFI_SAME, 0);		/* after pop rbp */
	expect(0x203f, CFI_REG_RSP, 8, CFI_SAME, 0);
}

static void test_remember_restore(void)
{
	struct cfi_rule r;

	expect(0x3001, CFI_REG_RSP, 16, CFI_SAME, 0);	/* rbx saved: not tracked */
	expect(0x3005, CFI_REG_RSP, 8, CFI_SAME, 0);	/* remembered, then changed */
	expect(0x3006, CFI_REG_RSP, 16, CFI_SAME, 0);	/* restored */
	CU_ASSERT_EQUAL_FATAL(cfi__lookup(&mem, &tab, 0x300a, &r), 0);
	CU_ASSERT_EQUAL(r.cfa_reg, CFI_REG_RBP);	/* realigned: cfa = *(rbp - 8) */
	CU_ASSERT_EQUAL(r.cfa_deref, 1);
	CU_ASSERT_EQUAL(r.cfa_off, -8);
}

static void test_what_a_rule_cannot_hold(void)
{
	struct cfi_rule r;

	/* The .plt's expression: rsp + 8, 8 more from byte 11 of each 16. */
	CU_ASSERT_EQUAL_FATAL(cfi__lookup(&mem, &tab, 0x4008, &r), 0);
	CU_ASSERT(r.cfa_reg == CFI_REG_RSP && r.cfa_off == 8 && r.cfa_deref == CFI_CFA_PLT &&
		  r.plt_cut == 11 && r.ra == CFI_AT_CFA && r.ra_off == -8 && !r.signal);
	/* Its expression with one byte changed is no rule. */
	buf[fde_plt - BASE + 17 + 7] = 0x1b;			/* DW_OP_and -> DW_OP_div */
	CU_ASSERT_EQUAL(cfi__lookup(&mem, &tab, 0x4008, &r), -ENOTSUP);
	buf[fde_plt - BASE + 17 + 7] = 0x1a;
	CU_ASSERT_EQUAL(cfi__lookup(&mem, &tab, 0x4008, &r), 0);
	/* A signal frame whose registers are not in a ucontext. */
	CU_ASSERT_EQUAL(cfi__lookup(&mem, &tab, 0x5000, &r), -ENOTSUP);
	/* One whose are: the CFA, rbp and the return address from rsp + K. */
	CU_ASSERT_EQUAL_FATAL(cfi__rule_at(&mem, fde_sigctx, 0x7801, &r), 0);
	CU_ASSERT(r.cfa_reg == CFI_REG_RSP && r.cfa_off == 160 && r.cfa_deref == CFI_CFA_DEREF);
	CU_ASSERT(r.ra == CFI_AT_SP && r.ra_off == 168 && r.bp == CFI_AT_SP && r.bp_off == 120);
	CU_ASSERT_EQUAL(r.signal, 1);
	/* A CFA from r10 (a leaf's register), then *(rbp - 8). */
	CU_ASSERT_EQUAL_FATAL(cfi__rule_at(&mem, fde_r10, 0x7900, &r), 0);
	CU_ASSERT(r.cfa_reg == 10 && r.cfa_off == 0 && r.cfa_deref == CFI_CFA_REG);
	CU_ASSERT_EQUAL_FATAL(cfi__rule_at(&mem, fde_r10, 0x7904, &r), 0);
	CU_ASSERT(r.cfa_reg == CFI_REG_RBP && r.cfa_off == -8 && r.cfa_deref == CFI_CFA_DEREF);
	CU_ASSERT_EQUAL(cfi__lookup(&mem, &tab, 0x6001, &r), 0);
	CU_ASSERT_EQUAL(r.ra, CFI_UNDEFINED);					/* outermost */
	CU_ASSERT_EQUAL(cfi__lookup(&mem, &tab, 0x6000, &r), 0);
	CU_ASSERT_EQUAL(r.ra, CFI_AT_CFA);
}

static void test_addresses_outside(void)
{
	struct cfi_rule r;
	uint64_t f;

	CU_ASSERT_EQUAL(fde_table__find(&tab, 0x1fff, NULL, &f), -ENOENT);
	CU_ASSERT_EQUAL(fde_table__find(&tab, 0x2040, NULL, &f), 0);
	CU_ASSERT_EQUAL(f, fde_a);
	CU_ASSERT_EQUAL(cfi__lookup(&mem, &tab, 0x2040, &r), -ENOENT);	/* past A's end */
	CU_ASSERT_EQUAL(fde_table__find(&tab, 0x7000, NULL, &f), 0);
	CU_ASSERT_EQUAL(f, fde_start);
}

static void test_malformed(void)
{
	unsigned char save[4];
	struct cfi_rule r;
	size_t off = fde_a - BASE;
	uint32_t big = 0x10000, cie_ptr;

	/* An FDE whose length runs past the segment. */
	memcpy(save, buf + off, 4);
	memcpy(buf + off, &big, 4);
	CU_ASSERT_EQUAL(cfi__rule_at(&mem, fde_a, 0x2000, &r), -EINVAL);
	memcpy(buf + off, save, 4);
	/* An FDE whose CIE pointer leads to another FDE. */
	memcpy(save, buf + off + 4, 4);
	cie_ptr = (uint32_t)(fde_a + 4 - fde_b);
	memcpy(buf + off + 4, &cie_ptr, 4);
	CU_ASSERT_EQUAL(cfi__rule_at(&mem, fde_a, 0x2000, &r), -EINVAL);
	memcpy(buf + off + 4, save, 4);
	/* The CIE itself is no FDE. */
	CU_ASSERT_EQUAL(cfi__rule_at(&mem, cie_plain, 0x2000, &r), -EINVAL);
	/* And unchanged, it reads again. */
	CU_ASSERT_EQUAL(cfi__rule_at(&mem, fde_a, 0x2000, &r), 0);
}

static void test_mem_bounds(void)
{
	CU_ASSERT_PTR_EQUAL(cfi_mem__ptr(&mem, BASE, 4), buf);
	CU_ASSERT_PTR_EQUAL(cfi_mem__ptr(&mem, BASE + len - 4, 4), buf + len - 4);
	CU_ASSERT_PTR_NULL(cfi_mem__ptr(&mem, BASE + len - 3, 4));
	CU_ASSERT_PTR_NULL(cfi_mem__ptr(&mem, BASE - 1, 4));
	CU_ASSERT_PTR_NULL(cfi_mem__ptr(&mem, UINT64_MAX - 1, 4));
}

struct row_log {
	struct { uint64_t start, end; enum cfi_frame kind; } r[16];
	int nr;
};

/* The rows cfi__rows gave, with K of their CFA = rsp + K. */
struct row_got {
	struct row_log l;
	int32_t sp_off[16];
};

static void log_row(void *arg, uint64_t start, uint64_t end, enum cfi_frame kind,
		    int32_t sp_off)
{
	struct row_got *g = arg;
	struct row_log *l = &g->l;

	if (l->nr < 16) {
		l->r[l->nr].start = start;
		l->r[l->nr].end = end;
		l->r[l->nr].kind = kind;
		g->sp_off[l->nr] = sp_off;
	}
	l->nr++;
}

static void expect_rows(uint64_t fde, const struct row_log *want)
{
	struct row_got got = { 0 };
	uint64_t start, end;

	CU_ASSERT_EQUAL_FATAL(cfi__rows(&mem, fde, log_row, &got, &start, &end), 0);
	CU_ASSERT_EQUAL_FATAL(got.l.nr, want->nr);
	for (int i = 0; i < want->nr; i++) {
		CU_ASSERT_EQUAL(got.l.r[i].start, want->r[i].start);
		CU_ASSERT_EQUAL(got.l.r[i].end, want->r[i].end);
		CU_ASSERT_EQUAL(got.l.r[i].kind, want->r[i].kind);
		CU_ASSERT_EQUAL(got.sp_off[i], want->r[i].kind == CFI_FRAME_SP8 ? 8 :
					       want->r[i].kind == CFI_FRAME_SP16 ? 16 : 0);
	}
}

/* The whole table of each FDE, as readelf --debug-dump=frames-interp lays it out, judged
 * for the frame-pointer walk. */
static void test_rows(void)
{
	struct row_log a = { { { 0x2000, 0x2001, CFI_FRAME_SP8 }, { 0x2001, 0x2004, CFI_FRAME_SP16 },
			       { 0x2004, 0x2034, CFI_FRAME_RECORD }, { 0x2034, 0x2040, CFI_FRAME_SP8 } },
			     4 };
	struct row_log b = { { { 0x3000, 0x3001, CFI_FRAME_SP8 }, { 0x3001, 0x3005, CFI_FRAME_SP16 },
			       { 0x3005, 0x3006, CFI_FRAME_SP8 }, { 0x3006, 0x300a, CFI_FRAME_SP16 },
			       { 0x300a, 0x3020, CFI_FRAME_OTHER } }, 5 };
	struct row_log plt = { { { 0x4000, 0x4020, CFI_FRAME_OTHER } }, 1 };
	struct row_log sig = { { { 0x5000, 0x5020, CFI_FRAME_OTHER } }, 1 };
	struct row_log start = { { { 0x6000, 0x6001, CFI_FRAME_SP8 },
				   { 0x6001, 0x6020, CFI_FRAME_OUTERMOST } }, 2 };

	expect_rows(fde_a, &a);
	expect_rows(fde_b, &b);
	expect_rows(fde_plt, &plt);
	expect_rows(fde_sig, &sig);
	expect_rows(fde_start, &start);
}

/* The same tables as spans of a file: code bytes are not in this fixture, so a prologue's
 * CFA = rsp + 16 row cannot be shown free of calls (FRAME_THIN). */
static void test_frame_spans(void)
{
	static const struct frame_span want[] = {
		{ 0x2000, 0x2001, FRAME_TRUSTED }, { 0x2001, 0x2004, FRAME_THIN },
		{ 0x2004, 0x2040, FRAME_TRUSTED }, { 0x2040, 0x3000, FRAME_NOREC },
		{ 0x3000, 0x3001, FRAME_TRUSTED }, { 0x3001, 0x3005, FRAME_THIN },
		{ 0x3005, 0x3006, FRAME_TRUSTED }, { 0x3006, 0x300a, FRAME_THIN },
		{ 0x300a, 0x6000, FRAME_NOREC }, { 0x6000, 0x6001, FRAME_TRUSTED },
		{ 0x6001, 0x6020, FRAME_BOTTOM },
	};
	struct frame_spans s;

	CU_ASSERT_EQUAL_FATAL(frames__build(&mem, &tab, &s), 0);
	CU_ASSERT_EQUAL_FATAL(s.nr, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < s.nr; i++) {
		CU_ASSERT_EQUAL(s.v[i].start, want[i].start);
		CU_ASSERT_EQUAL(s.v[i].end, want[i].end);
		CU_ASSERT_EQUAL(s.v[i].kind, want[i].kind);
	}
	/* a, b, the PLT and the signal frame may call (not _start); only a keeps a record. */
	CU_ASSERT_EQUAL(s.nr_calling, 4);
	CU_ASSERT_EQUAL(s.nr_record, 1);
	CU_ASSERT_FALSE(frames__fp_built(&s));
	CU_ASSERT_EQUAL(frames__kind(&s, 0x2010), FRAME_TRUSTED);
	CU_ASSERT_EQUAL(frames__kind(&s, 0x4010), FRAME_NOREC);
	CU_ASSERT_EQUAL(frames__kind(&s, 0x6010), FRAME_BOTTOM);
	CU_ASSERT_EQUAL(frames__kind(&s, 0x1fff), FRAME_NONE);
	CU_ASSERT_EQUAL(frames__kind(&s, 0x6020), FRAME_NONE);
	frames__free(&s);
}

/* Go's .debug_frame (crypto/sha256.block's FDE as Go 1.19 writes it), converted by dso/:
 * the rules of the assembly that uses rbp as a general register come from the CFA offset
 * alone. */
static void test_go_debug_frame(void)
{
	static const unsigned char dbg[] = {
		/* CIE: length, id, version 3, "", code 1, data -4, rip; def_cfa rsp+8,
		 * offset_extended rip at cfa-8, nop */
		0x10, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 3, 0, 1, 0x7c, 16,
		0x0c, 0x07, 0x08, 0x05, 0x10, 0x02, 0x00,
		/* FDE: length, CIE at 0, start, range; cfa+8, advance 34, cfa+552 */
		0x1a, 0, 0, 0, 0, 0, 0, 0,
		0xe0, 0x64, 0x46, 0, 0, 0, 0, 0, 0x92, 0x38, 0, 0, 0, 0, 0, 0,
		0x13, 0x7e, 0x62, 0x13, 0xf6, 0x7e,
	};
	struct fde_index ix;
	struct dso_seg s;
	struct cfi_mem m;
	struct fde_table t;
	struct cfi_rule r;

	CU_ASSERT_EQUAL_FATAL(fde_index__debug_frame(dbg, sizeof(dbg), 0x600000, 0x400000, &ix), 0);
	s = (struct dso_seg){ .vaddr = ix.recs_vaddr, .filesz = ix.recs_len, .memsz = ix.recs_len };
	m = (struct cfi_mem){ ix.recs, ix.recs_len, &s, 1 };
	t = fde_index__table(&ix);
	CU_ASSERT_EQUAL(cfi__lookup(&m, &t, 0x4664e0, &r), 0);
	CU_ASSERT(r.cfa_reg == CFI_REG_RSP && r.cfa_off == 8 && !r.cfa_deref);
	CU_ASSERT(r.ra == CFI_AT_CFA && r.ra_off == -8 && r.bp == CFI_SAME);
	CU_ASSERT_EQUAL(cfi__lookup(&m, &t, 0x466502, &r), 0);
	CU_ASSERT(r.cfa_reg == CFI_REG_RSP && r.cfa_off == 552);
	CU_ASSERT(r.ra == CFI_AT_CFA && r.ra_off == -8 && r.bp == CFI_SAME);
	CU_ASSERT_EQUAL(cfi__lookup(&m, &t, 0x4664e0 + 0x3892, &r), -ENOENT);
	CU_ASSERT_EQUAL(cfi__lookup(&m, &t, 0x4664df, &r), -ENOENT);
	/* Row by row: CFA = rsp + K, rbp never said, K given for Go's convention. */
	{
		struct row_got got = { 0 };
		uint64_t fde, start, end;

		CU_ASSERT_EQUAL_FATAL(fde_table__find(&t, 0x4664e0, NULL, &fde), 0);
		CU_ASSERT_EQUAL_FATAL(cfi__rows(&m, fde, log_row, &got, &start, &end), 0);
		CU_ASSERT_EQUAL_FATAL(got.l.nr, 2);
		CU_ASSERT(got.l.r[0].kind == CFI_FRAME_SP8 && got.sp_off[0] == 8);
		CU_ASSERT(got.l.r[1].start == 0x466502 && got.l.r[1].end == 0x4664e0 + 0x3892);
		CU_ASSERT(got.l.r[1].kind == CFI_FRAME_SPN && got.sp_off[1] == 552);
		CU_ASSERT_EQUAL(cfi__fde_range(&m, fde, &start, &end), 0);
		CU_ASSERT(start == 0x4664e0 && end == 0x4664e0 + 0x3892);
	}
	fde_index__free(&ix);
}

int register_cfi_suite(void)
{
	CU_pSuite s = CU_add_suite("cfi", setup, NULL);

	if (!s || !CU_add_test(s, "prologue, body and epilogue", test_prologue_body_epilogue) ||
	    !CU_add_test(s, "remember/restore state, CFA expression", test_remember_restore) ||
	    !CU_add_test(s, "what a rule cannot hold", test_what_a_rule_cannot_hold) ||
	    !CU_add_test(s, "addresses outside every FDE", test_addresses_outside) ||
	    !CU_add_test(s, "malformed records", test_malformed) ||
	    !CU_add_test(s, "segment bounds", test_mem_bounds) ||
	    !CU_add_test(s, "whole tables, row by row", test_rows) ||
	    !CU_add_test(s, "frame spans of a file", test_frame_spans) ||
	    !CU_add_test(s, "Go's .debug_frame, converted", test_go_debug_frame))
		return -1;
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Go's frame records (frames_go.c): functions written here byte by byte as Go's compiler and
 * assembler lay them out (Go 1.19's sub/mov/lea prologue, the push/mov one of later Go, the
 * stack check's call of runtime.morestack_noctxt, duffzero's calls, assembly that saves rbp
 * around a call), with the CFA rows Go's .debug_frame gives them; each judged, with the
 * windows where a frame-pointer walk from a leaf goes wrong. Then a whole .debug_frame.
 */
#include <string.h>
#include "dso/fdes.h"
#include "unwind/frames.h"
#include "suites.h"

#define START		0x1000
#define MORESTACK	0x3000		/* runtime.morestack_noctxt */
#define CALLEE		0x2000

struct fn {
	unsigned char code[256];
	size_t len;
	struct frame_row rows[16];
	int nr;
	int64_t k;			/* CFA = rsp + k of the row being written */
	uint64_t row_start;
};

static uint64_t at(const struct fn *f)
{
	return START + f->len;
}

/* Bytes of the current row. */
static void emit(struct fn *f, const char *bytes, size_t n)
{
	memcpy(f->code + f->len, bytes, n);
	f->len += n;
}

/* A call of TARGET (rel32 from the next instruction). */
static void call(struct fn *f, uint64_t target)
{
	int32_t rel = (int32_t)(target - (at(f) + 5));

	emit(f, "\xe8", 1);
	emit(f, (const char *)&rel, 4);
}

/* The row so far ends here; the next one has CFA = rsp + K. */
static void row(struct fn *f, int64_t k)
{
	if (at(f) > f->row_start) {
		f->rows[f->nr++] = (struct frame_row){
			f->row_start, at(f), (int32_t)f->k,
			f->k == 8 ? CFI_FRAME_SP8 : f->k == 16 ? CFI_FRAME_SP16 : CFI_FRAME_SPN,
		};
		f->row_start = at(f);
	}
	f->k = k;
}

static void begin(struct fn *f)
{
	memset(f, 0, sizeof(*f));
	f->k = 8;
	f->row_start = START;
}

static void end(struct fn *f)
{
	row(f, 8);
}

/* Go 1.19: cmp 16(r14), rsp; jbe tail; sub $F, rsp | mov rbp, F-8(rsp); lea F-8(rsp), rbp. */
static void prologue(struct fn *f, int frame, bool disp32)
{
	emit(f, "\x49\x3b\x66\x10", 4);
	emit(f, "\x76\x00", 2);			/* (the tail: not followed) */
	if (disp32) {
		int32_t d = frame - 8;

		emit(f, "\x48\x81\xec", 3);
		emit(f, (const char *)&frame, 4);
		row(f, frame + 8);
		emit(f, "\x48\x89\xac\x24", 4);
		emit(f, (const char *)&d, 4);
		emit(f, "\x48\x8d\xac\x24", 4);
		emit(f, (const char *)&d, 4);
	} else {
		char sub[] = { 0x48, 0x83, 0xec, (char)frame };
		char mov[] = { 0x48, 0x89, 0x6c, 0x24, (char)(frame - 8) };
		char lea[] = { 0x48, 0x8d, 0x6c, 0x24, (char)(frame - 8) };

		emit(f, sub, 4);
		row(f, frame + 8);
		emit(f, mov, 5);
		emit(f, lea, 5);
	}
}

/* mov F-8(rsp), rbp; add $F, rsp | ret */
static void epilogue(struct fn *f, int frame, bool disp32)
{
	if (disp32) {
		int32_t d = frame - 8;

		emit(f, "\x48\x8b\xac\x24", 4);
		emit(f, (const char *)&d, 4);
		emit(f, "\x48\x81\xc4", 3);
		emit(f, (const char *)&frame, 4);
	} else {
		char mov[] = { 0x48, 0x8b, 0x6c, 0x24, (char)(frame - 8) };
		char add[] = { 0x48, 0x83, 0xc4, (char)frame };

		emit(f, mov, 5);
		emit(f, add, 4);
	}
	row(f, 8);
	emit(f, "\xc3", 1);
}

/* The stack check's tail: spill, call morestack_noctxt, reload, jmp to the entry. */
static void tail(struct fn *f)
{
	int32_t rel;

	emit(f, "\x48\x89\x44\x24\x08", 5);
	call(f, MORESTACK);
	emit(f, "\x48\x8b\x44\x24\x08", 5);
	rel = (int32_t)(START - (at(f) + 5));
	emit(f, "\xe9", 1);
	emit(f, (const char *)&rel, 4);
}

static const uint64_t checks[] = { MORESTACK };

static int judge(const struct fn *f, struct frame_spans *lost)
{
	return frames__go_function(f->code, START, f->len, f->rows, f->nr, checks, 1, lost);
}

static void expect_windows(const struct frame_spans *lost, const struct frame_span *want,
			   size_t n)
{
	CU_ASSERT_EQUAL_FATAL(lost->nr, n);
	for (size_t i = 0; i < n; i++) {
		CU_ASSERT_EQUAL(lost->v[i].start, want[i].start);
		CU_ASSERT_EQUAL(lost->v[i].end, want[i].end);
		CU_ASSERT_EQUAL(lost->v[i].kind, want[i].kind);
	}
}

/* A function of Go 1.19 with a frame of 0x18 bytes that calls: trusted, but for the two
 * instructions after sub and the add after the restoring mov. */
static void test_go119_function(void)
{
	struct frame_spans lost = { 0 };
	struct fn f;
	uint64_t body, add;

	begin(&f);
	prologue(&f, 0x18, false);
	body = at(&f);
	call(&f, CALLEE);
	epilogue(&f, 0x18, false);
	add = at(&f) - 5;
	tail(&f);
	end(&f);
	CU_ASSERT_EQUAL(judge(&f, &lost), 1);
	{
		const struct frame_span want[] = {
			{ body - 10, body, FRAME_LOST_CALLER }, { add, add + 4, FRAME_LOST_CALLER },
		};

		expect_windows(&lost, want, 2);
	}
	/* Go ends its table with a row of the same rule at the last byte. */
	f.rows[f.nr - 1].end--;
	f.rows[f.nr++] = (struct frame_row){ START + f.len - 1, START + f.len, 8, CFI_FRAME_SP8 };
	CU_ASSERT_EQUAL(judge(&f, &lost), 1);
	/* Without the stack check's target known, its call is one made without a record. */
	CU_ASSERT_EQUAL(frames__go_function(f.code, START, f.len, f.rows, f.nr, NULL, 0, &lost), 0);
	frames__free(&lost);
}

/* Frames past 0x80 bytes: 32-bit displacements and immediates; 0x80 itself, as Go encodes
 * it (add $-0x80 to grow, sub $-0x80 to shrink). */
static void test_go119_large_frames(void)
{
	struct frame_spans lost = { 0 };
	struct fn f;

	begin(&f);
	prologue(&f, 0x88, true);
	call(&f, CALLEE);
	epilogue(&f, 0x88, true);
	end(&f);
	CU_ASSERT_EQUAL(judge(&f, &lost), 1);
	CU_ASSERT_EQUAL(lost.nr, 2);
	begin(&f);
	emit(&f, "\x48\x83\xc4\x80", 4);		/* add $-0x80, rsp */
	row(&f, 0x88);
	emit(&f, "\x48\x89\x6c\x24\x78\x48\x8d\x6c\x24\x78", 10);
	call(&f, CALLEE);
	emit(&f, "\x48\x8b\x6c\x24\x78\x48\x83\xec\x80", 9);	/* ...; sub $-0x80, rsp */
	row(&f, 8);
	emit(&f, "\xc3", 1);
	end(&f);
	CU_ASSERT_EQUAL(judge(&f, &lost), 1);
	CU_ASSERT_EQUAL(lost.nr, 2);
	frames__free(&lost);
}

/* A frame of one word (K = 16) and the push/mov prologue of later Go: the return address is
 * at sp or sp + 8 wherever rbp is not the record, as the leaf's fix-up finds it: no window. */
static void test_return_address_near_sp(void)
{
	struct frame_spans lost = { 0 };
	struct fn f;

	begin(&f);
	emit(&f, "\x48\x83\xec\x08", 4);
	row(&f, 16);
	emit(&f, "\x48\x89\x2c\x24\x48\x8d\x2c\x24", 8);	/* mov rbp, (rsp); lea (rsp), rbp */
	call(&f, CALLEE);
	emit(&f, "\x48\x8b\x2c\x24\x48\x83\xc4\x08", 8);
	row(&f, 8);
	emit(&f, "\xc3", 1);
	end(&f);
	CU_ASSERT_EQUAL(judge(&f, &lost), 1);
	CU_ASSERT_EQUAL(lost.nr, 0);
	begin(&f);
	emit(&f, "\x55", 1);					/* push rbp */
	row(&f, 16);
	emit(&f, "\x48\x89\xe5\x48\x83\xec\x10", 7);		/* mov rsp, rbp; sub $16 */
	row(&f, 32);
	call(&f, CALLEE);
	emit(&f, "\x48\x83\xc4\x10", 4);			/* add $16, rsp */
	row(&f, 16);
	emit(&f, "\x5d", 1);					/* pop rbp */
	row(&f, 8);
	emit(&f, "\xc3", 1);
	end(&f);
	CU_ASSERT_EQUAL(judge(&f, &lost), 1);
	CU_ASSERT_EQUAL(lost.nr, 0);
	frames__free(&lost);
}

/* duffzero is called with a record made for the call: from the call to the mov that takes it
 * down, a walk's first return address is not the leaf's caller. */
static void test_duff_call(void)
{
	struct frame_spans lost = { 0 };
	struct fn f;
	uint64_t duff;

	begin(&f);
	prologue(&f, 0x48, false);
	duff = at(&f);
	emit(&f, "\x48\x89\x6c\x24\xf0\x48\x8d\x6c\x24\xf0", 10);
	call(&f, CALLEE + 0x150);
	emit(&f, "\x48\x8b\x6d\x00", 4);
	epilogue(&f, 0x48, false);
	end(&f);
	CU_ASSERT_EQUAL(judge(&f, &lost), 1);
	CU_ASSERT_EQUAL_FATAL(lost.nr, 3);
	CU_ASSERT_EQUAL(lost.v[1].start, duff + 10);
	CU_ASSERT_EQUAL(lost.v[1].end, duff + 19);
	CU_ASSERT_EQUAL(lost.v[1].kind, FRAME_LOST_EXTRA);
	frames__free(&lost);
}

/* Frameless leaves are trusted (the fix-up finds the caller at sp); a frameless function
 * that calls anything but the stack check's target is not. */
static void test_frameless(void)
{
	struct frame_spans lost = { 0 };
	struct fn f;

	begin(&f);
	emit(&f, "\x48\x8b\x07\x48\x01\xd8\xc3", 7);		/* mov (rdi), rax; add; ret */
	end(&f);
	CU_ASSERT_EQUAL(judge(&f, &lost), 1);
	CU_ASSERT_EQUAL(lost.nr, 0);
	begin(&f);
	emit(&f, "\x48\x89\xc7", 3);
	emit(&f, "\xff\xd7\xc3", 3);				/* call rdi (systemstack's way) */
	end(&f);
	CU_ASSERT_EQUAL(judge(&f, &lost), 0);
	frames__free(&lost);
}

/* What leaves the convention: rbp written (assembly using it as a register, as
 * crypto/sha256.block does), a prologue's store elsewhere than CFA - 16, an epilogue that
 * does not restore rbp, rows that cut an instruction. */
static void test_not_the_convention(void)
{
	struct frame_spans lost = { 0 };
	struct fn f;

	begin(&f);
	prologue(&f, 0x18, false);
	emit(&f, "\x48\x8d\x2d\x00\x01\x00\x00", 7);		/* lea rip+0x100, rbp */
	epilogue(&f, 0x18, false);
	end(&f);
	CU_ASSERT_EQUAL(judge(&f, &lost), 0);
	begin(&f);
	prologue(&f, 0x18, false);
	f.code[f.len - 6] = 0x08;				/* mov rbp, 8(rsp) */
	call(&f, CALLEE);
	epilogue(&f, 0x18, false);
	end(&f);
	CU_ASSERT_EQUAL(judge(&f, &lost), 0);
	begin(&f);
	prologue(&f, 0x18, false);
	call(&f, CALLEE);
	emit(&f, "\x0f\x1f\x44\x00\x00", 5);			/* nop instead of the mov */
	emit(&f, "\x48\x83\xc4\x18", 4);
	row(&f, 8);
	emit(&f, "\xc3", 1);
	end(&f);
	CU_ASSERT_EQUAL(judge(&f, &lost), 0);
	begin(&f);
	prologue(&f, 0x18, false);
	call(&f, CALLEE);
	epilogue(&f, 0x18, false);
	end(&f);
	f.rows[0].end++;					/* into the mov */
	f.rows[1].start++;
	CU_ASSERT_EQUAL(judge(&f, &lost), 0);
	frames__free(&lost);
}

/* Assembly that moves rsp to another stack or aligns it (runtime.nanotime1 calling the vDSO)
 * keeps its record; where the frame is two words at most, the leaf's fix-up would read the
 * return address where the rows say, and find another word: not trusted there. */
static void test_rsp_moved(void)
{
	struct frame_spans lost = { 0 };
	struct fn f;

	begin(&f);
	prologue(&f, 0x18, false);
	emit(&f, "\x49\x89\xe4\x48\x83\xe4\xf0", 7);	/* mov rsp, r12; and $-16, rsp */
	call(&f, CALLEE);
	emit(&f, "\x4c\x89\xe4", 3);			/* mov r12, rsp */
	epilogue(&f, 0x18, false);
	end(&f);
	CU_ASSERT_EQUAL(judge(&f, &lost), 1);
	begin(&f);
	emit(&f, "\x55", 1);				/* push rbp */
	row(&f, 16);
	emit(&f, "\x48\x89\xe5\x48\x83\xe4\xf0", 7);	/* mov rsp, rbp; and $-16, rsp */
	call(&f, CALLEE);
	emit(&f, "\x48\x89\xec\x5d", 4);		/* mov rbp, rsp; pop rbp */
	row(&f, 8);
	emit(&f, "\xc3", 1);
	end(&f);
	CU_ASSERT_EQUAL(judge(&f, &lost), 0);
	frames__free(&lost);
}

/* Assembly that keeps rbp's value in its frame across a call and loads it back (as
 * runtime.gcWriteBarrier does) keeps its record; not when the slot is written in between. */
static void test_rbp_kept_in_a_slot(void)
{
	struct frame_spans lost = { 0 };
	struct fn f;

	begin(&f);
	prologue(&f, 0x78, false);
	emit(&f, "\x48\x89\x6c\x24\x30", 5);			/* mov rbp, 0x30(rsp) */
	emit(&f, "\x48\x89\x44\x24\x38", 5);			/* mov rax, 0x38(rsp) */
	call(&f, CALLEE);
	emit(&f, "\x48\x8b\x44\x24\x28", 5);			/* mov 0x28(rsp), rax */
	emit(&f, "\x48\x8b\x6c\x24\x30", 5);			/* mov 0x30(rsp), rbp */
	epilogue(&f, 0x78, false);
	end(&f);
	CU_ASSERT_EQUAL(judge(&f, &lost), 1);
	memcpy(f.code + 20 + 5, "\x48\x89\x44\x24\x30", 5);	/* mov rax, 0x30(rsp) */
	CU_ASSERT_EQUAL(judge(&f, &lost), 0);
	frames__free(&lost);
}

/* --- a whole .debug_frame ----------------------------------------------------------------- */

static unsigned char dbg[512];
static size_t dbg_len;

static void dput(const void *p, size_t n)
{
	memcpy(dbg + dbg_len, p, n);
	dbg_len += n;
}

/* Go's FDE for F at PC: CFA = rsp + K per row, as def_cfa_offset_sf (factored by -4). */
static void go_fde(const struct fn *f, uint64_t pc)
{
	size_t start = dbg_len;
	uint32_t zero = 0, n;
	uint64_t range = f->len, loc = pc;

	dput(&zero, 4);
	dput(&zero, 4);					/* the CIE at 0 */
	dput(&pc, 8);
	dput(&range, 8);
	for (int i = 0; i < f->nr; i++) {
		unsigned char op[4] = { 0x13, (unsigned char)((-f->rows[i].sp_off / 4) & 0x7f) };
		uint64_t adv = f->rows[i].start - START + pc - loc;
		int len = 2;

		if (-f->rows[i].sp_off / 4 < -64) {	/* two bytes of sleb */
			int32_t v = -f->rows[i].sp_off / 4;

			op[1] = (unsigned char)((v & 0x7f) | 0x80);
			op[2] = (unsigned char)((v >> 7) & 0x7f);
			len = 3;
		}
		if (adv) {
			unsigned char a[2] = { 0x02, (unsigned char)adv };	/* advance_loc1 */

			dput(a, 2);
		}
		dput(op, (size_t)len);
		loc = f->rows[i].start - START + pc;
	}
	while ((dbg_len - start) % 4)
		dput("", 1);
	n = (uint32_t)(dbg_len - start - 4);
	memcpy(dbg + start, &n, 4);
}

/* Two Go functions and one that uses rbp, through .debug_frame converted by dso/ and the
 * code read by address: the first two trusted with their windows, the third not. */
static void test_build_go(void)
{
	static const unsigned char cie[] = {
		0x10, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 3, 0, 1, 0x7c, 16,
		0x0c, 0x07, 0x08, 0x05, 0x10, 0x02, 0x00,
	};
	static unsigned char text[0x300];
	struct frame_spans out, lost;
	struct dso_seg seg, recs_seg;
	struct cfi_mem code, recs;
	struct fde_table t;
	struct fde_index ix;
	struct fn a, b;

	begin(&a);
	prologue(&a, 0x18, false);
	call(&a, CALLEE);
	epilogue(&a, 0x18, false);
	end(&a);
	begin(&b);
	prologue(&b, 0x28, false);
	emit(&b, "\x48\x31\xed", 3);				/* xor rbp, rbp */
	epilogue(&b, 0x28, false);
	end(&b);
	dbg_len = 0;
	dput(cie, sizeof(cie));
	go_fde(&a, 0x401000);
	go_fde(&a, 0x401040);
	go_fde(&b, 0x401100);
	memset(text, 0xcc, sizeof(text));
	memcpy(text, a.code, a.len);
	memcpy(text + 0x40, a.code, a.len);
	memcpy(text + 0x100, b.code, b.len);
	seg = (struct dso_seg){ .vaddr = 0x401000, .offset = 0, .filesz = sizeof(text),
				.memsz = sizeof(text) };
	code = (struct cfi_mem){ text, sizeof(text), &seg, 1 };
	CU_ASSERT_EQUAL_FATAL(fde_index__debug_frame(dbg, dbg_len, 0x500000, 0x400000, &ix), 0);
	recs_seg = (struct dso_seg){ .vaddr = ix.recs_vaddr, .filesz = ix.recs_len,
				     .memsz = ix.recs_len };
	recs = (struct cfi_mem){ ix.recs, ix.recs_len, &recs_seg, 1 };
	t = fde_index__table(&ix);
	CU_ASSERT_EQUAL_FATAL(t.count, 3);
	CU_ASSERT_EQUAL_FATAL(frames__build_go(&recs, &t, &code, checks, 0, &out, &lost), 0);
	/* a's copies are trusted (no stack check in them), padding between them too; b not. */
	CU_ASSERT_EQUAL(frames__kind(&out, 0x401000), FRAME_TRUSTED);
	CU_ASSERT_EQUAL(frames__kind(&out, 0x401050), FRAME_TRUSTED);
	CU_ASSERT_EQUAL(frames__kind(&out, 0x401100), FRAME_NOREC);
	CU_ASSERT_EQUAL(frames__kind(&out, 0x401100 + b.len - 1), FRAME_NOREC);
	CU_ASSERT_EQUAL(out.nr_calling, 3);
	CU_ASSERT_EQUAL(out.nr_record, 2);
	/* Two windows in each copy of a, none in b. */
	CU_ASSERT_EQUAL(lost.nr, 4);
	CU_ASSERT_EQUAL(frames__kind(&lost, 0x401000 + 10), FRAME_LOST_CALLER);
	CU_ASSERT_EQUAL(frames__kind(&lost, 0x401040 + 10), FRAME_LOST_CALLER);
	CU_ASSERT_EQUAL(frames__kind(&lost, 0x401000 + 20), FRAME_NONE);
	CU_ASSERT_EQUAL(frames__kind(&lost, 0x401100 + 10), FRAME_NONE);
	frames__free(&out);
	frames__free(&lost);
	fde_index__free(&ix);
}

int register_gofp_suite(void)
{
	CU_pSuite s = CU_add_suite("Go's frame records", NULL, NULL);

	if (!s || !CU_add_test(s, "a function of Go 1.19", test_go119_function) ||
	    !CU_add_test(s, "large frames", test_go119_large_frames) ||
	    !CU_add_test(s, "return address at sp or sp + 8", test_return_address_near_sp) ||
	    !CU_add_test(s, "calls of duffzero", test_duff_call) ||
	    !CU_add_test(s, "frameless functions", test_frameless) ||
	    !CU_add_test(s, "what leaves the convention", test_not_the_convention) ||
	    !CU_add_test(s, "rbp kept in a slot across a call", test_rbp_kept_in_a_slot) ||
	    !CU_add_test(s, "rsp moved", test_rsp_moved) ||
	    !CU_add_test(s, "a whole .debug_frame", test_build_go))
		return -1;
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * frames: the instructions that may stand around a frame record, painting kinds over spans,
 * and merging spans down to what BPF holds without making any walk wrong.
 */
#include <string.h>
#include "unwind/frames.h"
#include "suites.h"

static void test_no_call(void)
{
	static const struct {
		const char *code;
		size_t n;
		bool setup;
	} cases[] = {
		{ "\x55", 1, true },				/* push rbp */
		{ "\x48\x89\xe5", 3, true },			/* mov rbp, rsp */
		{ "\x48\x8b\xec", 3, true },			/* mov rbp, rsp (8b) */
		{ "\xf3\x0f\x1e\xfa\x55", 5, true },		/* endbr64; push rbp */
		{ "\x5d\xc3", 2, true },			/* pop rbp; ret */
		{ "\xc9\xe9\x00\x00\x00\x00", 6, true },	/* leave; jmp (tail call) */
		{ "\x66\x0f\x1f\x44\x00\x00", 6, true },	/* nopw 0(rax,rax) */
		{ "\x0f\x1f\x80\x00\x00\x00\x00", 7, true },	/* nopl 0(rax) */
		{ "\x41\xff\xe3", 3, true },			/* jmp r11 */
		{ "\xe8\x00\x00\x00\x00", 5, false },		/* call */
		{ "\xff\xd0", 2, false },			/* call rax */
		{ "\x48\x83\xec\x08\xff\xd7", 6, false },	/* sub rsp, 8; call rdi */
		{ "\x48\x89", 2, false },			/* cut short */
		{ "\x0f\x1f", 2, false },			/* cut short */
		{ "\x0f\x1f\x44\x00", 4, false },		/* cut short */
		/* GCC -O2 -fno-omit-frame-pointer: moves scheduled between push rbp and mov
		 * rbp, rsp (XZ Utils' lzma_alloc_zero, lzma_code, main). */
		{ "\x55\xb8\x01\x00\x00\x00\x48\x89\xe5", 9, true },	/* mov $1, eax */
		{ "\x45\x31\xc0", 3, true },			/* xor r8d, r8d */
		{ "\x41\xb9\x01\x00\x00\x00", 6, true },	/* mov $1, r9d */
		{ "\x48\x8d\x35\x10\x20\x00\x00", 7, true },	/* lea x(rip), rsi */
		{ "\x66\x0f\xef\xc0", 4, true },		/* pxor xmm0, xmm0 */
		{ "\x8b\x3f", 2, true },			/* mov (rdi), edi */
		{ "\x48\x8d\x44\x24\x08", 5, true },		/* lea 8(rsp), rax (SIB) */
		{ "\x48\xb8\x01\x02\x03\x04\x05\x06\x07\x08", 10, true },	/* movabs */
		{ "\xc7\x07\x01\x00\x00\x00", 6, true },	/* movl $1, (rdi) */
		{ "\x48\x83\xec\x08", 4, true },		/* sub rsp, 8 */
		{ "\x55\x48\xc1\xe2\x05\x48\x89\xe5", 8, true },	/* shl $5, rdx (node) */
		{ "\x48\xd3\xe0", 3, true },			/* shl cl, rax */
		{ "\x48\xf7\xd8", 3, true },			/* neg rax */
		{ "\xf7\xc7\x01\x00\x00\x00", 6, true },	/* test $1, edi */
		{ "\xf7\xc7\x01\x00", 4, false },		/* test $imm cut short */
		{ "\x6b\xc0\x03", 3, true },			/* imul $3, eax, eax */
		{ "\x48\x25\x00\xf0\xff\xff", 6, true },	/* and $-4096, rax */
		{ "\x48\x98", 2, true },			/* cltq */
		{ "\x0f\x0b", 2, false },			/* ud2 */
		{ "\x48\x8d\x35\x10\x20\x00", 6, false },	/* lea cut short */
		{ "\x55\xb8\x01\x00\x00\x00\xe8\x00\x00\x00\x00", 11, false },	/* call */
		{ "\x41\xff\xd3", 3, false },			/* call r11 */
		{ "\xff\x15\x00\x00\x00\x00", 6, false },	/* call *x(rip) */
		{ "\xc7\x47\x01\x00\x00\x00", 6, false },	/* c7 /0 cut short */
		{ "\xc7\xc8\x00\x00\x00\x00", 6, false },	/* c7 /1: not a mov */
		{ "\x0f\x05", 2, false },			/* syscall */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CU_ASSERT_EQUAL(frames__no_call((const unsigned char *)cases[i].code,
						cases[i].n), cases[i].setup);
}

static void expect_spans(const struct frame_span *v, size_t n, const struct frame_span *want,
			 size_t nw)
{
	CU_ASSERT_EQUAL_FATAL(n, nw);
	for (size_t i = 0; i < n; i++) {
		CU_ASSERT_EQUAL(v[i].start, want[i].start);
		CU_ASSERT_EQUAL(v[i].end, want[i].end);
		CU_ASSERT_EQUAL(v[i].kind, want[i].kind);
	}
}

static void test_paint(void)
{
	struct frame_spans s = { 0 };
	static const struct frame_span want[] = {
		{ 0x100, 0x120, FRAME_NOREC }, { 0x120, 0x130, FRAME_BOTTOM },
		{ 0x130, 0x150, FRAME_TRUSTED }, { 0x150, 0x160, FRAME_THIN },
		{ 0x160, 0x200, FRAME_NOREC },
	};

	CU_ASSERT_EQUAL(frames__paint(&s, 0x100, 0x200, FRAME_NOREC), 0);
	CU_ASSERT_EQUAL(frames__paint(&s, 0x130, 0x160, FRAME_TRUSTED), 0);	/* inside one */
	CU_ASSERT_EQUAL(frames__paint(&s, 0x150, 0x160, FRAME_THIN), 0);	/* its tail */
	CU_ASSERT_EQUAL(frames__paint(&s, 0x120, 0x130, FRAME_BOTTOM), 0);	/* a gap's edge */
	CU_ASSERT_EQUAL(frames__paint(&s, 0x140, 0x140, FRAME_BOTTOM), 0);	/* empty: no-op */
	expect_spans(s.v, s.nr, want, sizeof(want) / sizeof(want[0]));
	/* Over several at once, and past both ends. */
	CU_ASSERT_EQUAL(frames__paint(&s, 0x110, 0x170, FRAME_TRUSTED), 0);
	CU_ASSERT_EQUAL(frames__paint(&s, 0x80, 0x90, FRAME_NOREC), 0);
	CU_ASSERT_EQUAL(frames__paint(&s, 0x1f0, 0x300, FRAME_THIN), 0);
	{
		static const struct frame_span want2[] = {
			{ 0x80, 0x90, FRAME_NOREC }, { 0x100, 0x110, FRAME_NOREC },
			{ 0x110, 0x170, FRAME_TRUSTED }, { 0x170, 0x1f0, FRAME_NOREC },
			{ 0x1f0, 0x300, FRAME_THIN },
		};

		expect_spans(s.v, s.nr, want2, sizeof(want2) / sizeof(want2[0]));
	}
	frames__free(&s);
}

static void test_reduce(void)
{
	/* A program with frame pointers (big trusted spans, a small PLT), a gap, and a
	 * library without them with a few small trusted islands and a bottom. */
	struct frame_span v[] = {
		{ 0x1000, 0x1020, FRAME_NOREC }, { 0x1020, 0x1040, FRAME_BOTTOM },
		{ 0x1040, 0x9000, FRAME_TRUSTED }, { 0x9000, 0x9010, FRAME_THIN },
		{ 0x9010, 0xf000, FRAME_TRUSTED }, { 0xf000, 0x100000, FRAME_NONE },
		{ 0x100000, 0x100100, FRAME_NOREC }, { 0x100100, 0x100110, FRAME_TRUSTED },
		{ 0x100110, 0x100200, FRAME_NOREC }, { 0x100200, 0x100240, FRAME_BOTTOM },
		{ 0x100240, 0x100300, FRAME_NOREC }, { 0x100300, 0x100308, FRAME_TRUSTED },
		{ 0x100308, 0x100400, FRAME_NOREC },
	};
	struct frame_span w[13];
	size_t n = sizeof(v) / sizeof(v[0]), m;

	memcpy(w, v, sizeof(v));
	CU_ASSERT_EQUAL(frames__reduce(w, n, n), n);		/* room for all: unchanged */
	expect_spans(w, n, v, n);
	/* Room for 8: the trusted islands of the library go first (they cost 24 bytes), the
	 * gap joins the library's code (a walk stops in either), the PLT's thin span
	 * comes next; bottoms stay. */
	m = frames__reduce(w, n, 8);
	CU_ASSERT(m <= 8);
	for (size_t i = 0; i < m; i++) {
		CU_ASSERT(i == 0 || w[i].start == w[i - 1].end);
		if (w[i].start <= 0x2000 && w[i].end > 0x2000)
			CU_ASSERT_EQUAL(w[i].kind, FRAME_TRUSTED);
		if (w[i].start <= 0x100100 && w[i].end > 0x100100)
			CU_ASSERT_NOT_EQUAL(w[i].kind, FRAME_TRUSTED);
	}
	CU_ASSERT_EQUAL(w[0].start, 0x1000);
	CU_ASSERT_EQUAL(w[m - 1].end, 0x100400);
	/* Never trusted where it was not: every address keeps its kind or gets a worse one. */
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < m; j++) {
			if (v[i].start >= w[j].start && v[i].start < w[j].end) {
				if (v[i].kind == FRAME_BOTTOM)
					CU_ASSERT_EQUAL(w[j].kind, FRAME_BOTTOM);
				if (v[i].kind != FRAME_TRUSTED)
					CU_ASSERT_NOT_EQUAL(w[j].kind, FRAME_TRUSTED);
			}
		}
	}
	/* Only merges with bottoms left: no room is made. */
	{
		struct frame_span b[] = {
			{ 0, 1, FRAME_BOTTOM }, { 1, 2, FRAME_NOREC }, { 2, 3, FRAME_BOTTOM },
		};

		CU_ASSERT_EQUAL(frames__reduce(b, 3, 1), 3);
	}
}

int register_frames_suite(void)
{
	CU_pSuite s = CU_add_suite("frames", NULL, NULL);

	if (!s || !CU_add_test(s, "prologue and epilogue instructions", test_no_call) ||
	    !CU_add_test(s, "painting kinds over spans", test_paint) ||
	    !CU_add_test(s, "merging down to a budget", test_reduce))
		return -1;
	return 0;
}

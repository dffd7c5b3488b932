// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * x86: instruction lengths and operands from hand-written bytes (checked against objdump),
 * legacy, VEX and EVEX; which write rbp; calls, block ends and stack adjustments.
 */
#include <stdio.h>
#include <string.h>
#include "dso/x86.h"
#include "suites.h"

struct insn_case {
	const char *bytes;
	size_t n;		/* bytes available */
	size_t len;		/* expected length, 0: not decoded */
	int writes_rbp;
};

static void test_lengths(void)
{
	static const struct insn_case cases[] = {
		{ "\x55", 1, 1, 0 },					/* push rbp */
		{ "\x5d", 1, 1, 1 },					/* pop rbp */
		{ "\x41\x5d", 2, 2, 0 },				/* pop r13 */
		{ "\x48\x89\xe5", 3, 3, 1 },				/* mov rsp, rbp */
		{ "\x48\x89\x6c\x24\x60", 5, 5, 0 },			/* mov rbp, 0x60(rsp) */
		{ "\x48\x8d\x6c\x24\x60", 5, 5, 1 },			/* lea 0x60(rsp), rbp */
		{ "\x48\x8b\xac\x24\x10\x02\x00\x00", 8, 8, 1 },	/* mov 0x210(rsp), rbp */
		{ "\x4c\x8b\x6c\x24\x08", 5, 5, 0 },			/* mov 8(rsp), r13 */
		{ "\x48\x8b\x6d\x00", 4, 4, 1 },			/* mov 0(rbp), rbp */
		{ "\x49\x3b\x66\x10", 4, 4, 0 },			/* cmp 0x10(r14), rsp */
		{ "\x0f\x86\x2a\x05\x00\x00", 6, 6, 0 },		/* jbe rel32 */
		{ "\x48\x81\xec\x88\x00\x00\x00", 7, 7, 0 },		/* sub $0x88, rsp */
		{ "\x48\x83\xc4\x80", 4, 4, 0 },			/* add $-0x80, rsp */
		{ "\x48\x8d\x2d\x00\x10\x00\x00", 7, 7, 1 },		/* lea rip+0x1000, rbp */
		{ "\x48\xbd\x01\x02\x03\x04\x05\x06\x07\x08", 10, 10, 1 },	/* movabs */
		{ "\x66\x0f\x1f\x44\x00\x00", 6, 6, 0 },		/* nopw */
		{ "\xf3\x0f\x1e\xfa", 4, 4, 0 },			/* endbr64 */
		{ "\x0f\x05", 2, 2, 0 },				/* syscall */
		{ "\x87\xe8", 2, 2, 1 },				/* xchg ebp, eax */
		{ "\x87\x45\x00", 3, 3, 0 },				/* xchg eax, 0(rbp) */
		{ "\x0f\xc1\x6f\x08", 4, 4, 1 },			/* xadd ebp, 8(rdi) */
		{ "\xc9", 1, 1, 1 },					/* leave */
		{ "\xf7\xc5\x01\x00\x00\x00", 6, 6, 0 },		/* test $1, ebp */
		{ "\xf7\xdd", 2, 2, 1 },				/* neg ebp */
		{ "\x39\xe8", 2, 2, 0 },				/* cmp ebp, eax */
		{ "\xc4\xe2\x50\xf2\xec", 5, 5, 1 },			/* andn esp, ebp, ebp */
		{ "\xc4\xe3\x79\x16\xc5\x01", 6, 6, 1 },		/* vpextrd $1, xmm0, ebp */
		{ "\xc5\xfd\x6f\x6c\x24\x20", 6, 6, 0 },		/* vmovdqa 32(rsp), ymm5 */
		{ "\xc5\xf9\x7e\xed", 4, 4, 1 },			/* vmovd xmm5, ebp */
		{ "\xc5\xf8\x77", 3, 3, 0 },				/* vzeroupper */
		{ "\x62\xf1\x7d\x48\x6f\x45\x01", 7, 7, 0 },		/* vmovdqa32 64(rbp) */
		{ "\x62\xf1\xfe\x48\x6f\x2c\x24", 7, 7, 0 },		/* vmovdqu64 (rsp), zmm5 */
		{ "\x66\x0f\x3a\x0f\xc1\x08", 6, 6, 0 },		/* palignr $8, xmm1, xmm0 */
		{ "\x66\x48\x0f\x7e\xc5", 5, 5, 1 },			/* movq xmm0, rbp */
		{ "\xf3\x0f\x7e\xc5", 4, 4, 0 },			/* movq xmm5, xmm0 */
		{ "\x0f\x38\xcb\xd1", 4, 4, 0 },			/* sha256rnds2 */
		{ "\xa1\x00\x00\x00\x00\x00\x00\x00\x00", 9, 9, 0 },	/* movabs moffs, eax */
		{ "\xc8\x10\x00\x00", 4, 4, 1 },			/* enter */
		{ "\x48\x89\x6c\x24", 4, 0, 0 },			/* cut short */
		{ "\x0f", 1, 0, 0 },					/* cut short */
		{ "\xc5\xfd", 2, 0, 0 },				/* cut short */
		{ "\x06", 1, 0, 0 },					/* not in 64-bit mode */
		{ "\x0f\x0f\xc1\xb4", 4, 0, 0 },			/* 3DNow! */
		{ "\xc7\xc8\x00\x00\x00\x00", 6, 0, 0 },		/* c7 /1: #UD */
		{ "\xc7\xf8\x00\x00\x00\x00", 6, 6, 0 },		/* xbegin */
		{ "\x66\xc5\xf8\x77", 4, 0, 0 },			/* 66 before VEX */
		{ "\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x90", 15, 15, 0 },
		{ "\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x90", 16, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct x86_insn in;
		size_t len = x86__decode((const unsigned char *)cases[i].bytes, cases[i].n, &in);

		CU_ASSERT_EQUAL(len, cases[i].len);
		if (len != cases[i].len)
			fprintf(stderr, "\nx86 case %zu: length %zu\n", i, len);
		if (len)
			CU_ASSERT_EQUAL(x86__writes_gpr(&in, X86_RBP), cases[i].writes_rbp);
	}
}

/* Decode the N bytes at S into IN; returns the length. */
static size_t dec(const char *s, size_t n, struct x86_insn *in)
{
	return x86__decode((const unsigned char *)s, n, in);
}

static void test_operands(void)
{
	struct x86_insn in;

	/* mov rbp, 0x80(rsp): reg rbp, base rsp, no index, disp 0x80 */
	CU_ASSERT_EQUAL_FATAL(dec("\x48\x89\xac\x24\x80\x00\x00\x00", 8, &in), 8);
	CU_ASSERT(in.op == 0x89 && in.rex == 0x48 && in.mod == 2 && in.reg == X86_RBP);
	CU_ASSERT(in.base == X86_RSP && in.index == X86_NO_REG && in.disp == 0x80);
	/* mov r13, 8(r12, rax, 4) */
	CU_ASSERT_EQUAL_FATAL(dec("\x4d\x89\x6c\x84\x08", 5, &in), 5);
	CU_ASSERT(in.reg == 13 && in.base == 12 && in.index == 0 && in.disp == 8);
	/* rip-relative */
	CU_ASSERT_EQUAL_FATAL(dec("\x48\x8b\x05\xf0\xff\xff\xff", 7, &in), 7);
	CU_ASSERT(in.base == 16 && in.disp == -16);
	/* call rel32: the target is relative to the next instruction */
	CU_ASSERT_EQUAL_FATAL(dec("\xe8\xfb\xff\xff\xff", 5, &in), 5);
	CU_ASSERT(x86__is_call(&in) && in.imm == -5 && !x86__ends_block(&in));
	/* VEX.vvvv: blsr ebp, eax writes vvvv */
	CU_ASSERT_EQUAL_FATAL(dec("\xc4\xe2\x50\xf3\xc8", 5, &in), 5);
	CU_ASSERT(in.vex == 3 && in.map == X86_MAP_0F38 && in.vvvv == 5);
	CU_ASSERT(x86__writes_gpr(&in, X86_RBP));
}

static void test_control_and_stack(void)
{
	static const struct {
		const char *bytes;
		size_t n;
		int call, ends;
		int moves;
		int64_t delta;
	} cases[] = {
		{ "\xc3", 1, 0, 1, 0, 0 },				/* ret */
		{ "\xeb\xfe", 2, 0, 1, 0, 0 },				/* jmp rel8 */
		{ "\xff\xe0", 2, 0, 1, 0, 0 },				/* jmp rax */
		{ "\xff\xd7", 2, 1, 0, 0, 0 },				/* call rdi */
		{ "\x41\xff\xd3", 3, 1, 0, 0, 0 },			/* call r11 */
		{ "\xff\x52\x18", 3, 1, 0, 0, 0 },			/* call *0x18(rdx) */
		{ "\x0f\x0b", 2, 0, 1, 0, 0 },				/* ud2 */
		{ "\xcc", 1, 0, 0, 0, 0 },				/* int3 */
		{ "\x55", 1, 0, 0, 1, -8 },				/* push rbp */
		{ "\x41\x5f", 2, 0, 0, 1, 8 },				/* pop r15 */
		{ "\x9c", 1, 0, 0, 1, -8 },				/* pushfq */
		{ "\x48\x83\xec\x18", 4, 0, 0, 1, -0x18 },		/* sub $0x18, rsp */
		{ "\x48\x83\xec\x80", 4, 0, 0, 1, 0x80 },		/* sub $-0x80, rsp */
		{ "\x48\x81\xc4\x00\x01\x00\x00", 7, 0, 0, 1, 0x100 },	/* add $0x100, rsp */
		{ "\x48\x8d\x64\x24\xf8", 5, 0, 0, 1, -8 },		/* lea -8(rsp), rsp */
		{ "\x48\x83\xe4\xf0", 4, 0, 0, 0, 0 },			/* and $-16, rsp */
		{ "\x48\x83\xc5\x10", 4, 0, 0, 0, 0 },			/* add $16, rbp */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct x86_insn in;
		int64_t delta = 0;

		CU_ASSERT_EQUAL_FATAL(x86__decode((const unsigned char *)cases[i].bytes, cases[i].n,
						  &in), cases[i].n);
		CU_ASSERT_EQUAL(x86__is_call(&in), cases[i].call);
		CU_ASSERT_EQUAL(x86__ends_block(&in), cases[i].ends);
		CU_ASSERT_EQUAL(x86__sp_delta(&in, &delta), cases[i].moves);
		if (cases[i].moves)
			CU_ASSERT_EQUAL(delta, cases[i].delta);
	}
}

int register_x86_suite(void)
{
	CU_pSuite s = CU_add_suite("x86", NULL, NULL);

	if (!s || !CU_add_test(s, "lengths, and which write rbp", test_lengths) ||
	    !CU_add_test(s, "operands", test_operands) ||
	    !CU_add_test(s, "calls, block ends, stack adjustments", test_control_and_stack))
		return -1;
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * leafscan (bpf/leafscan.h): where a JIT leaf's return address is, from its code, at every
 * instruction of functions HotSpot's C2 and C1 and V8 compiled (bytes as they were in the
 * processes, checked against objdump).
 */
#include <linux/types.h>
#include <string.h>
#include "leafscan.h"
#include "suites.h"

struct at {
	unsigned int pc;	/* offset in the function */
	int verdict;
	int off;		/* LEAF_RA*: the return address's offset from sp */
	int bp_is_sp;		/* the sample's rbp == rsp */
};

static int scan(const unsigned char *code, size_t n, unsigned int pc, int bp_is_sp, int *off)
{
	struct leaf_scan s;

	memset(&s, 0, sizeof(s));
	if (pc < n)
		memcpy(s.c, code + pc, n - pc < LEAF_SCAN_BYTES ? n - pc : LEAF_SCAN_BYTES);
	leaf_scan_init(&s, bp_is_sp);
	for (int k = 0; k < LEAF_SCAN_INSNS && !s.verdict; k++)
		leaf_scan_step(&s);
	leaf_scan_finish(&s);
	*off = s.off;
	return s.verdict;
}

static void check(const char *what, const unsigned char *code, size_t n, const struct at *v,
		  size_t nv)
{
	for (size_t i = 0; i < nv; i++) {
		int off, verdict = scan(code, n, v[i].pc, v[i].bp_is_sp, &off);

		if (verdict != v[i].verdict ||
		    ((verdict == LEAF_RA || verdict == LEAF_RA_BP) && off != v[i].off))
			fprintf(stderr, "\n%s at +%#x: verdict %d off %d, not %d %d\n", what,
				v[i].pc, verdict, off, v[i].verdict, v[i].off);
		CU_ASSERT_EQUAL(verdict, v[i].verdict);
		if (v[i].verdict == LEAF_RA || v[i].verdict == LEAF_RA_BP)
			CU_ASSERT_EQUAL(off, v[i].off);
	}
}

/* C2's `static long d(long x) { return x * 31 + 7; }` under -XX:+PreserveFramePointer:
 * its record is made at +0x13 and left at +0x25. */
static const unsigned char c2_leaf[] = {
	0x48, 0x81, 0xec, 0x18, 0x00, 0x00, 0x00,	/* 0x00 sub $0x18, rsp */
	0x48, 0x89, 0x6c, 0x24, 0x10,			/* 0x07 mov rbp, 0x10(rsp) */
	0x48, 0x8b, 0xec,				/* 0x0c mov rsp, rbp */
	0x48, 0x83, 0xc5, 0x10,				/* 0x0f add $0x10, rbp */
	0x48, 0x8b, 0xc6,				/* 0x13 mov rsi, rax */
	0x48, 0xc1, 0xe0, 0x05,				/* 0x16 shl $5, rax */
	0x48, 0x2b, 0xc6,				/* 0x1a sub rsi, rax */
	0x48, 0x83, 0xc0, 0x07,				/* 0x1d add $7, rax */
	0x48, 0x83, 0xc4, 0x10,				/* 0x21 add $0x10, rsp */
	0x5d,						/* 0x25 pop rbp */
	0x49, 0x3b, 0xa7, 0x40, 0x03, 0x00, 0x00,	/* 0x26 cmp 0x340(r15), rsp */
	0x0f, 0x87, 0x01, 0x00, 0x00, 0x00,		/* 0x2d ja +1 */
	0xc3,						/* 0x33 ret */
	0x49, 0xba, 0x26, 0x76, 0xec, 0xf0, 0xf7, 0x7f,	/* 0x34 movabs ..., r10 */
	0x00, 0x00,
};

static void test_c2_leaf(void)
{
	static const struct at v[] = {
		{ 0x00, LEAF_RA, 0, 0 },		/* the record will be at sp - 8 */
		{ 0x07, LEAF_RA, 0x18, 0 },	/* rbp stored at sp + 0x10 after this */
		{ 0x0c, LEAF_RA_BP, 0x18, 0 },	/* stored: the caller's rbp at sp + 0x10 */
		{ 0x0f, LEAF_RA_BP, 0x18, 1 },	/* rbp = sp, to be sp + 0x10 */
		{ 0x0f, LEAF_CUT, 0, 0 },		/* (rbp not sp: no telling where it goes) */
		{ 0x13, LEAF_RECORD, 0, 0 },	/* the body */
		{ 0x1d, LEAF_RECORD, 0, 0 },
		{ 0x21, LEAF_RA_BP, 0x18, 0 },	/* the record at sp + 0x10, exactly */
		{ 0x25, LEAF_RA_BP, 8, 0 },
		{ 0x26, LEAF_RA, 0, 0 },		/* past the poll, ret */
		{ 0x2d, LEAF_RA, 0, 0 },
		{ 0x33, LEAF_RA, 0, 0 },
	};

	check("C2 leaf", c2_leaf, sizeof(c2_leaf), v, sizeof(v) / sizeof(v[0]));
}

/* C2's `static long c(long x) { return d(x) + 1; }`: a stack bang, push rbp. */
static const unsigned char c2_caller[] = {
	0x89, 0x84, 0x24, 0x00, 0xc0, 0xfe, 0xff,	/* 0x00 mov eax, -0x14000(rsp) */
	0x55,						/* 0x07 push rbp */
	0x48, 0x8b, 0xec,				/* 0x08 mov rsp, rbp */
	0x48, 0x83, 0xec, 0x10,				/* 0x0b sub $0x10, rsp */
	0xe8, 0xcc, 0xf9, 0xff, 0xff,			/* 0x0f call d */
	0x48, 0x83, 0xc0, 0x01,				/* 0x14 add $1, rax */
	0x48, 0x83, 0xc4, 0x10,				/* 0x18 add $0x10, rsp */
	0x5d,						/* 0x1c pop rbp */
	0x49, 0x3b, 0xa7, 0x40, 0x03, 0x00, 0x00,	/* 0x1d cmp 0x340(r15), rsp */
	0x0f, 0x87, 0x0e, 0x00, 0x00, 0x00,		/* 0x24 ja */
	0xc3,						/* 0x2a ret */
	0x48, 0x8b, 0xf0,				/* 0x2b mov rax, rsi (exception path) */
	0x48, 0x83, 0xc4, 0x10,				/* 0x2e add $0x10, rsp */
	0x5d,						/* 0x32 pop rbp */
	0xe9, 0x28, 0x2c, 0xb7, 0xff,			/* 0x33 jmp the handler */
};

static void test_c2_caller(void)
{
	static const struct at v[] = {
		{ 0x00, LEAF_RA, 0, 0 },
		{ 0x07, LEAF_RA, 0, 0 },
		{ 0x08, LEAF_RA_BP, 8, 0 },	/* pushed: the caller's rbp at sp */
		{ 0x0b, LEAF_RECORD, 0, 0 },	/* (made: rbp = sp) */
		{ 0x0b, LEAF_RECORD, 0, 1 },
		{ 0x14, LEAF_RECORD, 0, 0 },
		{ 0x18, LEAF_RA_BP, 0x18, 0 },
		{ 0x1c, LEAF_RA_BP, 8, 0 },
		{ 0x1d, LEAF_RA, 0, 0 },
		{ 0x2a, LEAF_RA, 0, 0 },
		{ 0x2b, LEAF_RECORD, 0, 0 },
		{ 0x2e, LEAF_RA_BP, 0x18, 0 },
		{ 0x32, LEAF_RA_BP, 8, 0 },
		{ 0x33, LEAF_RECORD, 0, 0 },	/* a jump: the scan cannot tell (rbp is the
						 * caller's here, a limit) */
	};

	check("C2 caller", c2_caller, sizeof(c2_caller), v, sizeof(v) / sizeof(v[0]));
}

/* V8's frames: push rbp; mov rbp, rsp; push the context and the function; ...; mov rsp,
 * rbp; pop rbp; ret $n. */
static const unsigned char v8_frame[] = {
	0x55,						/* 0x00 push rbp */
	0x48, 0x89, 0xe5,				/* 0x01 mov rsp, rbp */
	0x56,						/* 0x04 push rsi */
	0x57,						/* 0x05 push rdi */
	0x50,						/* 0x06 push rax */
	0x49, 0x8b, 0x45, 0x08,				/* 0x07 mov 8(r13), rax */
	0x48, 0x89, 0xec,				/* 0x0b mov rbp, rsp */
	0x5d,						/* 0x0e pop rbp */
	0xc2, 0x10, 0x00,				/* 0x0f ret $0x10 */
};

static void test_v8_frame(void)
{
	static const struct at v[] = {
		{ 0x00, LEAF_RA, 0, 0 },
		{ 0x01, LEAF_RA_BP, 8, 0 },
		{ 0x04, LEAF_RECORD, 0, 1 },
		{ 0x07, LEAF_RECORD, 0, 0 },
		{ 0x0b, LEAF_FRAMED, 0, 0 },	/* rsp from the record's rbp: it is live */
		{ 0x0e, LEAF_RA_BP, 8, 0 },
		{ 0x0f, LEAF_RA, 0, 0 },
	};

	check("V8 frame", v8_frame, sizeof(v8_frame), v, sizeof(v) / sizeof(v[0]));
}

/* What the scan cannot follow, and frameless code. */
static void test_edges(void)
{
	/* rbp pushed and popped as a callee-saved register by a frameless function: at the
	 * push, the caller's rbp is still in the register. */
	static const unsigned char saver[] = {
		0x55,				/* push rbp */
		0x48, 0x83, 0xc0, 0x01,		/* add $1, rax (unknown to the scan) */
	};
	static const unsigned char saver_tail[] = {
		0x55,				/* push rbp */
		0x5d,				/* pop rbp */
		0xc3,				/* ret */
	};
	/* leave; ret: the record is the leaf's. mov rbp, rsp from an rbp the scan set: */
	static const unsigned char leave[] = { 0xc9, 0xc3 };
	/* endbr64, then a frame like GCC's. */
	static const unsigned char endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5,
					       0xe8, 0, 0, 0, 0 };
	/* rsp from an rbp the scan does not know, then ret: cut. */
	static const unsigned char lost[] = { 0x48, 0x89, 0xec, 0xc3 };
	/* Nothing readable (zeros): nothing said. */
	static const unsigned char zeros[8] = { 0 };
	/* lea 0x10(rsp), rbp after storing it there with a disp32. */
	static const unsigned char lea[] = {
		0x48, 0x89, 0xac, 0x24, 0x10, 0x00, 0x00, 0x00,	/* mov rbp, 0x10(rsp) */
		0x48, 0x8d, 0x6c, 0x24, 0x10,			/* lea 0x10(rsp), rbp */
		0xe8, 0, 0, 0, 0,
	};
	int off;

	CU_ASSERT_EQUAL(scan(saver, sizeof(saver), 0, 0, &off), LEAF_RECORD);
	CU_ASSERT_EQUAL(scan(saver_tail, sizeof(saver_tail), 0, 0, &off), LEAF_RA);
	CU_ASSERT_EQUAL(off, 0);
	CU_ASSERT_EQUAL(scan(saver_tail, sizeof(saver_tail), 1, 0, &off),
			LEAF_RA_BP);
	CU_ASSERT_EQUAL(off, 8);
	CU_ASSERT_EQUAL(scan(leave, sizeof(leave), 0, 0, &off), LEAF_FRAMED);
	CU_ASSERT_EQUAL(scan(endbr, sizeof(endbr), 0, 0, &off), LEAF_RA);
	CU_ASSERT_EQUAL(off, 0);
	CU_ASSERT_EQUAL(scan(lost, sizeof(lost), 0, 0, &off), LEAF_CUT);
	CU_ASSERT_EQUAL(scan(zeros, sizeof(zeros), 0, 0, &off), LEAF_RECORD);
	CU_ASSERT_EQUAL(scan(lea, sizeof(lea), 0, 0, &off), LEAF_RA);
	CU_ASSERT_EQUAL(off, 0x18);
	CU_ASSERT_EQUAL(scan(lea, sizeof(lea), 8, 0, &off), LEAF_RA_BP);
	CU_ASSERT_EQUAL(off, 0x18);
}

int register_leafscan_suite(void)
{
	CU_pSuite s = CU_add_suite("leafscan", NULL, NULL);

	if (!s || !CU_add_test(s, "HotSpot C2's leaf, at each instruction", test_c2_leaf) ||
	    !CU_add_test(s, "HotSpot C2's caller, with its exception path", test_c2_caller) ||
	    !CU_add_test(s, "V8's frame", test_v8_frame) ||
	    !CU_add_test(s, "what it cannot follow, frameless code", test_edges))
		return -1;
	return 0;
}

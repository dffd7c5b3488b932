// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Functions without CFI followed from their code (frames_follow.c): builtins of Debian's
 * node 18 byte for byte (SortCompareDefault: a frame record, a call into C++ with rsp
 * aligned, a ret and a jump back to it; Abort: the return address pushed again under an
 * argument and a jump to the runtime), and made-up code for what is not followed: paths
 * that meet with different frames, the return address's slot written, a ret with the
 * frame still there, a jump into an instruction; OpenBLAS's kernel's way of keeping its
 * CFA in a register while it aligns rsp, and a loop that meets with the caller's rbp in
 * its slot only; then the C library's functions, followed as if they had no CFI, against
 * their CFI.
 */
#include <stdlib.h>
#include <string.h>
#include "dso/cfirec.h"
#include "dso/dso.h"
#include "unwind/frames.h"
#include "unwind/utab.h"
#include "suites.h"

/* Builtins_SortCompareDefault, its first 0xc4 bytes (the rest is padding). */
static const unsigned char sort_compare_default[] = {
	0x55, 0x48, 0x89, 0xe5, 0x6a, 0x22, 0x48, 0x83, 0xec, 0x18, 0x48, 0x89,
	0x4d, 0xe8, 0x48, 0x89, 0x75, 0xe0, 0xf6, 0xc3, 0x01, 0x75, 0x47, 0xf6,
	0xc1, 0x01, 0x75, 0x54, 0x49, 0x89, 0xe2, 0x48, 0x83, 0xec, 0x08, 0x48,
	0x83, 0xe4, 0xf0, 0x4c, 0x89, 0x14, 0x24, 0x49, 0x8d, 0x7d, 0x80, 0x48,
	0x8b, 0xf3, 0x48, 0x8b, 0xd1, 0x49, 0x8b, 0x85, 0x90, 0x1e, 0x00, 0x00,
	0x4c, 0x8d, 0x15, 0x00, 0x00, 0x00, 0x00, 0x4d, 0x89, 0x55, 0x70, 0x49,
	0x89, 0x6d, 0x68, 0xff, 0xd0, 0x49, 0xc7, 0x45, 0x68, 0x00, 0x00, 0x00,
	0x00, 0x48, 0x8b, 0x24, 0x24, 0x48, 0x8b, 0xe5, 0x5d, 0xc3, 0x4c, 0x8b,
	0x43, 0xff, 0x45, 0x0f, 0xb7, 0x40, 0x0b, 0x41, 0x81, 0xf8, 0x80, 0x00,
	0x00, 0x00, 0x7c, 0x12, 0x48, 0x8b, 0xc3, 0xe8, 0x48, 0x73, 0xfa, 0xff,
	0x48, 0x8b, 0x75, 0xe0, 0x48, 0x8b, 0x4d, 0xe8, 0xeb, 0x03, 0x48, 0x8b,
	0xc3, 0xf6, 0xc1, 0x01, 0x74, 0x22, 0x48, 0x8b, 0xd9, 0x48, 0x8b, 0x4b,
	0xff, 0x0f, 0xb7, 0x49, 0x0b, 0x81, 0xf9, 0x80, 0x00, 0x00, 0x00, 0x7d,
	0x12, 0x48, 0x8b, 0xd0, 0x48, 0x8b, 0xc3, 0xe8, 0xd8, 0x7e, 0xed, 0xff,
	0xeb, 0xaf, 0xeb, 0xc4, 0x48, 0x8b, 0xd9, 0x48, 0x89, 0x45, 0xf0, 0x48,
	0x8b, 0xc3, 0xe8, 0x05, 0x73, 0xfa, 0xff, 0x48, 0x8b, 0xd8, 0x48, 0x8b,
	0x45, 0xf0, 0xeb, 0xd9,
};

/* Builtins_Abort: push (%rsp); mov 0x40b0(%r13), %rbx; mov $1, %eax; xor %esi, %esi;
 * mov %rdx, 8(%rsp); jmp Builtins_CEntry_... (out of the builtin); nop. */
static const unsigned char abort_builtin[] = {
	0xff, 0x34, 0x24, 0x49, 0x8b, 0x9d, 0xb0, 0x40, 0x00, 0x00, 0xb8, 0x01,
	0x00, 0x00, 0x00, 0x33, 0xf6, 0x48, 0x89, 0x54, 0x24, 0x08, 0xe9, 0x25,
	0x06, 0x06, 0x00, 0x90,
};

static struct follow_frame *follow(const unsigned char *code, size_t len, int *res)
{
	struct follow_frame *at = calloc(len, sizeof(*at));

	CU_ASSERT_PTR_NOT_NULL_FATAL(at);
	*res = frames__follow(code, len, at);
	return at;
}

/* Whether CODE is followed whole (frames__follow's result). */
static int followed(const unsigned char *code, size_t len)
{
	int res;

	free(follow(code, len, &res));
	return res;
}

static void expect_rsp(const struct follow_frame *f, int32_t k, uint8_t bp, int32_t ra)
{
	CU_ASSERT_EQUAL(f->kind, FOLLOW_RSP);
	CU_ASSERT_EQUAL(f->k, k);
	CU_ASSERT_EQUAL(f->bp, bp);
	CU_ASSERT_EQUAL(f->ra, ra);
}

static void test_frame_record(void)
{
	int res;
	struct follow_frame *at = follow(sort_compare_default, sizeof(sort_compare_default), &res);

	CU_ASSERT_EQUAL(res, 1);
	expect_rsp(&at[0], 8, FOLLOW_BP_SAME, -8);		/* push %rbp */
	expect_rsp(&at[1], 16, FOLLOW_BP_PUSHED, -8);	/* mov %rsp, %rbp */
	CU_ASSERT_EQUAL(at[2].kind, FOLLOW_NONE);		/* (inside it) */
	CU_ASSERT_EQUAL(at[4].kind, FOLLOW_RBP);		/* push $0x22 */
	CU_ASSERT_EQUAL(at[4].d, 0);
	CU_ASSERT_EQUAL(at[6].kind, FOLLOW_RBP);		/* sub $0x18, %rsp */
	CU_ASSERT_EQUAL(at[6].d, -8);
	CU_ASSERT_EQUAL(at[0xa].d, -32);
	/* The call into C++ with rsp aligned (and $-16, %rsp): rsp not known from rbp, the
	 * frame still the record's. */
	CU_ASSERT_EQUAL(at[0x4b].kind, FOLLOW_RBP);		/* call *%rax */
	CU_ASSERT_EQUAL(at[0x4b].d, FOLLOW_D_UNKNOWN);
	/* mov %rbp, %rsp; pop %rbp; ret, reached by its fall-through and a jump back. */
	CU_ASSERT_EQUAL(at[0x59].kind, FOLLOW_RBP);
	expect_rsp(&at[0x5c], 16, FOLLOW_BP_SAVED, -8);
	expect_rsp(&at[0x5d], 8, FOLLOW_BP_SAME, -8);
	/* After a call of another builtin, the record's frame. */
	CU_ASSERT_EQUAL(at[0xa8].kind, FOLLOW_RBP);	/* jmp back, after StringCompare */
	free(at);
}

static void test_return_address_pushed_again(void)
{
	int res;
	struct follow_frame *at = follow(abort_builtin, sizeof(abort_builtin), &res);

	/* The jump to the runtime leaves with the copy at rsp, the argument above it: whole. */
	CU_ASSERT_EQUAL(res, 1);
	expect_rsp(&at[0], 8, FOLLOW_BP_SAME, -8);
	expect_rsp(&at[3], 16, FOLLOW_BP_SAME, -16);	/* the copy is the one at rsp */
	/* mov %rdx, 8(%rsp) writes the first slot, not the copy. */
	expect_rsp(&at[0x16], 16, FOLLOW_BP_SAME, -16);
	free(at);
}

static void test_paths_that_meet_apart(void)
{
	/* test %al, %al; je 5; push %rax; 5: nop; ret. */
	static const unsigned char code[] = { 0x84, 0xc0, 0x74, 0x01, 0x50, 0x90, 0xc3 };
	int res;
	struct follow_frame *at = follow(code, sizeof(code), &res);

	CU_ASSERT_EQUAL(res, 1);
	expect_rsp(&at[4], 8, FOLLOW_BP_SAME, -8);
	CU_ASSERT_EQUAL(at[5].kind, FOLLOW_UNKNOWN);
	CU_ASSERT_EQUAL(at[6].kind, FOLLOW_UNKNOWN);
	free(at);
}

static void test_return_slot_written(void)
{
	/* mov %rax, (%rsp); ret: the return address is no longer there. And with the store
	 * above the slot (mov %rax, 8(%rsp)), it is. */
	static const unsigned char over[] = { 0x48, 0x89, 0x04, 0x24, 0xc3 };
	static const unsigned char above[] = { 0x48, 0x89, 0x44, 0x24, 0x08, 0xc3 };
	int res;
	struct follow_frame *at = follow(over, sizeof(over), &res);

	CU_ASSERT_EQUAL(res, 1);
	CU_ASSERT_EQUAL(at[4].kind, FOLLOW_UNKNOWN);
	free(at);
	at = follow(above, sizeof(above), &res);
	CU_ASSERT_EQUAL(res, 1);
	expect_rsp(&at[5], 8, FOLLOW_BP_SAME, -8);
	free(at);
}

static void test_not_followed(void)
{
	/* push %rax; ret: left with a word more at rsp. */
	static const unsigned char ret_deep[] = { 0x50, 0xc3 };
	/* push %rbp; mov %rsp, %rbp; ret: left with the record made. */
	static const unsigned char ret_framed[] = { 0x55, 0x48, 0x89, 0xe5, 0xc3 };
	/* jmp 1 (into the two bytes of itself): a jump into an instruction. */
	static const unsigned char into[] = { 0xeb, 0xff, 0xc3 };
	/* push %rax; jmp far out of the builtin: a tail call with a word more. */
	static const unsigned char tail_deep[] = { 0x50, 0xe9, 0x00, 0x10, 0x00, 0x00 };
	/* pop %rcx (the return address); lea (%rsp,%rax,8), %rsp; push %rcx; ret: not
	 * followed past the pop, the ret not judged. */
	static const unsigned char drop[] = { 0x59, 0x48, 0x8d, 0x24, 0xc4, 0x51, 0xc3 };
	int res;
	struct follow_frame *at;

	CU_ASSERT_EQUAL(followed(ret_deep, sizeof(ret_deep)), 0);
	CU_ASSERT_EQUAL(followed(ret_framed, sizeof(ret_framed)), 0);
	CU_ASSERT_EQUAL(followed(into, sizeof(into)), 0);
	CU_ASSERT_EQUAL(followed(tail_deep, sizeof(tail_deep)), 0);
	at = follow(drop, sizeof(drop), &res);
	CU_ASSERT_EQUAL(res, 1);
	expect_rsp(&at[0], 8, FOLLOW_BP_SAME, -8);
	CU_ASSERT_EQUAL(at[1].kind, FOLLOW_UNKNOWN);
	CU_ASSERT_EQUAL(at[6].kind, FOLLOW_UNKNOWN);
	free(at);
}

/* OpenBLAS's dgemm_kernel_ZEN's prologue and epilogue around a body that uses rbp: registers
 * saved under a frame of 0x60, rsp kept in rbx, a 28 KiB buffer aligned under it. */
static void test_cfa_kept_in_a_register(void)
{
	static const unsigned char code[] = {
		0x48, 0x83, 0xec, 0x60,				/* 0: sub $0x60, %rsp */
		0x48, 0x89, 0x1c, 0x24,				/* 4: mov %rbx, (%rsp) */
		0x48, 0x89, 0x6c, 0x24, 0x08,			/* 8: mov %rbp, 8(%rsp) */
		0xc5, 0xf8, 0x77,				/* d: vzeroupper */
		0x48, 0x89, 0xe3,				/* 10: mov %rsp, %rbx */
		0x48, 0x81, 0xec, 0x80, 0x70, 0x00, 0x00,	/* 13: sub $0x7080, %rsp */
		0x48, 0x81, 0xe4, 0x00, 0xf0, 0xff, 0xff,	/* 1a: and $-4096, %rsp */
		0x48, 0x89, 0xc5,				/* 21: mov %rax, %rbp */
		0x48, 0x89, 0xdc,				/* 24: mov %rbx, %rsp */
		0x48, 0x8b, 0x1c, 0x24,				/* 27: mov (%rsp), %rbx */
		0x48, 0x8b, 0x6c, 0x24, 0x08,			/* 2b: mov 8(%rsp), %rbp */
		0x48, 0x83, 0xc4, 0x60,				/* 30: add $0x60, %rsp */
		0xc3,						/* 34: ret */
	};
	int res;
	struct follow_frame *at = follow(code, sizeof(code), &res);

	CU_ASSERT_EQUAL(res, 1);
	expect_rsp(&at[4], 0x68, FOLLOW_BP_SAME, -8);
	expect_rsp(&at[0xd], 0x68, FOLLOW_BP_PUSHED, -8);
	CU_ASSERT_EQUAL(at[0xd].bpo, -0x60);
	expect_rsp(&at[0x1a], 0x68 + 0x7080, FOLLOW_BP_PUSHED, -8);
	CU_ASSERT_EQUAL(at[0x21].kind, FOLLOW_REG);		/* CFA = rbx + 0x68 */
	CU_ASSERT_EQUAL(at[0x21].reg, 3);
	CU_ASSERT_EQUAL(at[0x21].d, 0x68);
	CU_ASSERT_EQUAL(at[0x24].kind, FOLLOW_REG);
	/* rbp the body's, the caller's saved */
	CU_ASSERT_EQUAL(at[0x24].bp, FOLLOW_BP_SAVED);
	expect_rsp(&at[0x27], 0x68, FOLLOW_BP_SAVED, -8);
	expect_rsp(&at[0x30], 0x68, FOLLOW_BP_SAME, -8);	/* rbp back from its slot */
	expect_rsp(&at[0x34], 8, FOLLOW_BP_SAME, -8);
	free(at);
}

/* A loop whose body overwrites rbp after the caller's was saved: where the paths meet, the
 * caller's rbp is in its slot (on both), not in the register. */
static void test_paths_meet_on_the_slot(void)
{
	static const unsigned char code[] = {
		0x55,						/* 0: push %rbp */
		0x48, 0x31, 0xc9,				/* 1: xor %rcx, %rcx */
		0x48, 0xff, 0xc1,				/* 4: inc %rcx (loop head) */
		0x48, 0x89, 0xcd,				/* 7: mov %rcx, %rbp */
		0x48, 0x83, 0xf9, 0x10,				/* a: cmp $16, %rcx */
		0x75, 0xf4,					/* e: jne 4 */
		0x5d,						/* 10: pop %rbp */
		0xc3,						/* 11: ret */
	};
	int res;
	struct follow_frame *at = follow(code, sizeof(code), &res);

	CU_ASSERT_EQUAL(res, 1);
	expect_rsp(&at[4], 16, FOLLOW_BP_SAVED, -8);
	CU_ASSERT_EQUAL(at[4].bpo, -16);
	expect_rsp(&at[0x11], 8, FOLLOW_BP_SAME, -8);
	free(at);
}

/*
 * The C library's functions that have CFI, followed as if they had none: where the follower
 * says it knows the frame and the CFI defines the CFA from rsp or rbp (not from another
 * register, which the follower does not choose the same way: OpenSSL's perlasm keeps rsp in
 * r9 where this goes on from rsp), both give the same CFA and return address. GCC's cold
 * parts (jumped to inside their function's frame), PLT stubs and the entry are not followed
 * by utab_build.c either. Here: 220,556 of 220,694 instructions, the rest __longjmp's, whose
 * CFI describes the frame it jumps to, and __mpn_addmul_1's, whose CFI leaves out its two
 * pushes (the follower has them right).
 */
static void test_agrees_with_cfi(void)
{
	static const uint8_t dwarf[16] = { 0, 2, 1, 3, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15 };
	struct dso *d = dso__open("/lib/x86_64-linux-gnu/libc.so.6", NULL);
	struct utab *t = d ? utab__build(d, NULL, 0) : NULL;
	const struct dso_seg *segs;
	struct follow_frame *at = malloc(sizeof(*at) << 20);
	uint64_t lo, hi, known = 0, agree = 0, followed = 0;
	const unsigned char *img;
	struct cfi_mem m;
	size_t size, nsegs;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_PTR_NOT_NULL_FATAL(at);
	img = dso__image(d, &size);
	segs = dso__segs(d, &nsegs);
	m = (struct cfi_mem){ img, size, segs, (int)nsegs };
	dso__extent(d, &lo, &hi);
	for (uint64_t a = lo; a < hi;) {
		uint64_t fs, fe;
		const char *name = dso__lookup_range(d, a, &fs, &fe);
		const unsigned char *code;
		struct cfi_rule r;

		if (!name || fs > a || fe <= a) {
			a++;
			continue;
		}
		a = fe;
		if (strstr(name, "@plt") || strstr(name, ".cold") || fs == t->entry ||
		    fe - fs > (1u << 20) || utab__rule(t, fs, &r) ||
		    !(code = cfi_mem__ptr(&m, fs, fe - fs)) ||
		    frames__follow(code, fe - fs, at) != 1)
			continue;
		followed++;
		for (uint64_t b = 0; b < fe - fs; b++) {
			const struct follow_frame *f = &at[b];
			int reg, off;

			if ((f->kind != FOLLOW_RSP && f->kind != FOLLOW_RBP &&
			     f->kind != FOLLOW_REG) ||
			    utab__rule(t, fs + b, &r) || r.cfa_deref != CFI_CFA_REG ||
			    (r.cfa_reg != CFI_REG_RSP && r.cfa_reg != CFI_REG_RBP))
				continue;
			reg = f->kind == FOLLOW_RSP ? CFI_REG_RSP :
			      f->kind == FOLLOW_RBP ? CFI_REG_RBP : dwarf[f->reg & 15];
			off = f->kind == FOLLOW_RSP ? f->k : f->kind == FOLLOW_RBP ? 16 : f->d;
			known++;
			agree += r.cfa_reg == reg && r.cfa_off == off && r.ra == CFI_AT_CFA &&
				 r.ra_off == f->ra;
		}
	}
	CU_ASSERT(followed >= 1000);
	CU_ASSERT(known >= 100000);
	CU_ASSERT(agree * 1000 >= known * 999);
	free(at);
	utab__free(t);
	dso__free(d);
}

int register_follow_suite(void)
{
	CU_pSuite s = CU_add_suite("functions without CFI followed from their code", NULL, NULL);

	if (!s || !CU_add_test(s, "a frame record (SortCompareDefault)", test_frame_record) ||
	    !CU_add_test(s, "the return address pushed again (Abort)",
			 test_return_address_pushed_again) ||
	    !CU_add_test(s, "paths that meet with other frames", test_paths_that_meet_apart) ||
	    !CU_add_test(s, "the return address's slot written", test_return_slot_written) ||
	    !CU_add_test(s, "what is not followed", test_not_followed) ||
	    !CU_add_test(s, "the CFA kept in a register (OpenBLAS)", test_cfa_kept_in_a_register) ||
	    !CU_add_test(s, "paths that meet on the caller's rbp's slot",
			 test_paths_meet_on_the_slot) ||
	    !CU_add_test(s, "agreement with the C library's CFI", test_agrees_with_cfi))
		return -1;
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * unwind: DWARF unwinding of this very process, as a sample would bring it: registers, a
 * copy of the top of the stack, and the rest read live. __builtin_return_address is the
 * oracle for the first caller.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "proc/procmaps.h"
#include "self.h"
#include "suites.h"
#include "dso/dsos.h"
#include "unwind/unwind.h"

static struct procmaps *pm;
static struct dsos *dsos;
static struct unwinder *unw;

static int setup(void)
{
	return self_unwinder_open(&pm, &dsos, &unw);
}

static int teardown(void)
{
	self_unwinder_close(pm, dsos, unw);
	return 0;
}

struct result {
	uint64_t ips[128];
	int n;
	enum unwind_stop stop;
	uint64_t ret0;	/* return address of capture(), from the compiler */
};

/* Take this frame's registers and COPY bytes of stack, as BPF would, and unwind. */
__attribute__((noinline)) static void capture(size_t copy, struct result *r)
{
	static unsigned char buf[8192];
	struct unwind_sample s = { .pid = getpid() };
	uint64_t ip, sp, bp;

	__asm__ volatile("lea (%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	self_copy_stack(buf, (void *)sp, copy);
	s.ip = ip;
	s.sp = sp;
	s.bp = bp;
	s.stack = buf;
	s.stack_len = copy;
	r->n = unwinder__unwind(unw, &s, r->ips, 128, &r->stop);
	r->ret0 = (uint64_t)__builtin_return_address(0);
}

/* As capture, sent as BPF sends a stack its walk from the tables took up to a frame: two
 * frames known first, then this frame's registers (BP_OK: rbp with them) as a caller's. */
__attribute__((noinline)) static void capture_rest(bool bp_ok, struct result *r)
{
	static unsigned char buf[8192];
	static const uint64_t known[2] = { 0x1111, 0x2222 };
	struct unwind_sample s = { .pid = getpid(), .prefix = known, .nr_prefix = 2 };
	uint64_t ip, sp, bp;

	__asm__ volatile("lea (%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	self_copy_stack(buf, (void *)sp, 4096);
	s.ip = ip;
	s.sp = sp;
	s.bp = bp_ok ? bp : 0xdead;
	s.bp_ok = bp_ok;
	s.stack = buf;
	s.stack_len = 4096;
	r->n = unwinder__unwind(unw, &s, r->ips, 128, &r->stop);
	r->ret0 = (uint64_t)__builtin_return_address(0);
	r->ips[127] = ip;
}

__attribute__((noinline)) static void middle(size_t copy, struct result *r)
{
	capture(copy, r);
	__asm__ volatile("" ::: "memory");
}

static void test_unwind_self(void)
{
	static const size_t copies[] = { 4096, 256, 16 };

	for (size_t i = 0; i < sizeof(copies) / sizeof(copies[0]); i++) {
		struct result r = { 0 };

		middle(copies[i], &r);
		/* capture, middle, test_unwind_self, CUnit's runner..., main, libc, _start */
		CU_ASSERT(r.n >= 5);
		CU_ASSERT_EQUAL(r.ips[1], r.ret0);
		CU_ASSERT_EQUAL(r.stop, UNWIND_STOP_END);
	}
}

/* From a frame past the leaf (BPF's walk stopped there): the frames known, then that
 * frame and its callers; rbp not known, never a guess from the value given. */
static void test_unwind_from_a_frame_past_the_leaf(void)
{
	for (int bp_ok = 1; bp_ok >= 0; bp_ok--) {
		struct result r = { 0 };

		capture_rest(bp_ok, &r);
		CU_ASSERT_EQUAL(r.ips[0], 0x1111);
		CU_ASSERT_EQUAL(r.ips[1], 0x2222);
		CU_ASSERT_EQUAL(r.ips[2], r.ips[127]);
		if (bp_ok || r.stop == UNWIND_STOP_END) {
			CU_ASSERT(r.n >= 6);
			CU_ASSERT_EQUAL(r.ips[3], r.ret0);
			CU_ASSERT_EQUAL(r.stop, UNWIND_STOP_END);
		} else {
			/* (Its frame's CFA from rbp: cut there, marked.) */
			CU_ASSERT(r.n == 3 || r.ips[3] == r.ret0);
		}
	}
}

static void test_unwind_unknown_ip(void)
{
	uint64_t ips[8], words[2] = { 0 };
	struct unwind_sample s = {
		.pid = getpid(), .ip = 0x10, .sp = 0x1000, .stack = words,
		.stack_len = sizeof(words),
	};
	enum unwind_stop stop;
	int n = unwinder__unwind(unw, &s, ips, 8, &stop);

	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_EQUAL(ips[0], 0x10);
	CU_ASSERT_NOT_EQUAL(stop, UNWIND_STOP_END);
}

/* At a function's first instruction the return address is at sp: the CFI says so; a word
 * there that is no address of code the process maps is not taken for one. */
static void test_leaf_return_at_entry(void)
{
	uint64_t code = (uint64_t)(uintptr_t)&test_unwind_self + 8;
	uint64_t words[2] = { code, 0x1111 }, ret = 0;
	struct unwind_sample s = {
		.pid = getpid(), .ip = (uint64_t)(uintptr_t)&capture, .sp = 0x100000,
		.stack = words, .stack_len = sizeof(words),
	};

	CU_ASSERT_EQUAL(unwinder__leaf_return(unw, &s, &ret), 0);
	CU_ASSERT_EQUAL(ret, code);
	words[0] = 0x5555deadbeef;
	CU_ASSERT_NOT_EQUAL(unwinder__leaf_return(unw, &s, &ret), 0);
	words[0] = code;
	s.ip = 0x10;	/* no unwind info */
	CU_ASSERT_NOT_EQUAL(unwinder__leaf_return(unw, &s, &ret), 0);
}

/*
 * An epilogue that popped rbp while its CFI still says rbp is saved at CFA-16 (as GCC
 * leaves V8's ieee754::sin): that word is below sp, in the red zone. It is read as it was at
 * the sample (unwind_sample.below), not from the process, which has moved on or exited.
 */
__asm__(".text\n"
	".type rz_leaf, @function\n"
	"rz_leaf:\n"
	".cfi_startproc\n"
	"push %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"pop %rbp\n"
	".cfi_def_cfa_offset 8\n"
	"rz_after_pop:\n"
	"ret\n"
	".cfi_endproc\n"
	".size rz_leaf, .-rz_leaf\n"
	".type rz_caller, @function\n"
	"rz_caller:\n"
	".cfi_startproc\n"
	"push %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"mov %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"call rz_leaf\n"
	"rz_caller_ret:\n"
	"pop %rbp\n"
	".cfi_def_cfa %rsp, 8\n"
	"ret\n"
	".cfi_endproc\n"
	".size rz_caller, .-rz_caller\n");
extern const char rz_after_pop[], rz_caller_ret[];

static void test_red_zone_from_the_sample(void)
{
	/* sp is no address of this process: only the copy and the words below it hold. */
	const uint64_t sp = 0x100000, rbp = sp + 0x20;
	uint64_t words[8] = { (uint64_t)(uintptr_t)rz_caller_ret }, below[16] = { 0 };
	struct unwind_sample s = {
		.pid = getpid(), .ip = (uint64_t)(uintptr_t)rz_after_pop, .sp = sp, .bp = 0x5,
		.stack = words, .stack_len = sizeof(words), .below = below,
	};
	uint64_t ips[8];
	enum unwind_stop stop;
	int n;

	words[(rbp - sp) / 8 + 1] = 0;	/* rz_caller's return address: a zeroed word */
	below[15] = rbp;		/* the word at sp - 8: rbp as the epilogue popped it */
	n = unwinder__unwind(unw, &s, ips, 8, &stop);
	CU_ASSERT_EQUAL(n, 2);
	CU_ASSERT_EQUAL(ips[1], (uint64_t)(uintptr_t)rz_caller_ret);
	/* A return address of 0 is no root (CFI would say undefined): a bad frame, cut. */
	CU_ASSERT_EQUAL(stop, UNWIND_STOP_BAD_FRAME);
	/* Without the words below sp (not readable here): cut where rbp is needed, truncated,
	 * not guessed. */
	s.below = NULL;
	n = unwinder__unwind(unw, &s, ips, 8, &stop);
	CU_ASSERT(n <= 2);
	CU_ASSERT_EQUAL(stop, UNWIND_STOP_NO_MEMORY);
}

/* The leaf's caller for a stack the frame-pointer walk made (stacks__leaf_caller): at the
 * ret after pop rbp, the return address is the word at sp, whatever rbp's rule names below
 * it (GCC -fno-omit-frame-pointer's epilogues, XZ Utils' lzma_mf_bt4_find). */
static void test_leaf_return_after_pop(void)
{
	uint64_t words[2] = { (uint64_t)(uintptr_t)rz_caller_ret, 0 }, ret = 0;
	struct unwind_sample s = {
		.pid = getpid(), .ip = (uint64_t)(uintptr_t)rz_after_pop, .sp = 0x100000,
		.stack = words, .stack_len = sizeof(words),
	};

	CU_ASSERT_EQUAL(unwinder__leaf_return(unw, &s, &ret), 0);
	CU_ASSERT_EQUAL(ret, (uint64_t)(uintptr_t)rz_caller_ret);
}

/*
 * glibc's __vfork pops its return address into rdi around the system call: its CFI says so
 * (DW_CFA_register), and the sample's registers have it.
 */
__asm__(".text\n"
	".type vf_leaf, @function\n"
	"vf_leaf:\n"
	".cfi_startproc\n"
	"pop %rdi\n"
	".cfi_adjust_cfa_offset -8\n"
	".cfi_register %rip, %rdi\n"
	"vf_in:\n"
	"push %rdi\n"
	"ret\n"
	".cfi_endproc\n"
	".size vf_leaf, .-vf_leaf\n");
extern const char vf_in[];

static void test_return_address_in_a_register(void)
{
	const uint64_t sp = 0x100000, rbp = sp + 0x20;
	uint64_t words[8] = { 0 }, regs[UNWIND_NR_REGS] = { 0 };
	struct unwind_sample s = {
		.pid = getpid(), .ip = (uint64_t)(uintptr_t)vf_in, .sp = sp, .bp = rbp,
		.stack = words, .stack_len = sizeof(words),
	};
	uint64_t ips[8], fast;
	enum unwind_stop stop;
	int n;

	regs[5] = (uint64_t)(uintptr_t)rz_caller_ret;	/* rdi */
	regs[6] = rbp;
	regs[7] = sp;
	words[(rbp - sp) / 8 + 1] = 0;	/* rz_caller's return address: a zeroed word */
	s.regs = regs;
	fast = unwinder__counts(unw)->fast;
	n = unwinder__unwind(unw, &s, ips, 8, &stop);
	CU_ASSERT_EQUAL(n, 2);
	CU_ASSERT_EQUAL(ips[1], (uint64_t)(uintptr_t)rz_caller_ret);
	CU_ASSERT_EQUAL(stop, UNWIND_STOP_BAD_FRAME);	/* a 0: no root */
	CU_ASSERT_EQUAL(unwinder__counts(unw)->fast, fast + 1);	/* by the cached rules */
	/* Without the registers: rdi unknown, so is the caller (libunwind too). */
	s.regs = NULL;
	n = unwinder__unwind(unw, &s, ips, 8, &stop);
	CU_ASSERT_NOT_EQUAL(stop, UNWIND_STOP_END);
}

/*
 * Stacks of this process go through the cached CFI rules, and libunwind, asked again for
 * each (PROFILE_UNWIND_CHECK), finds the same frames.
 */
static void test_fast_path_agrees_with_libunwind(void)
{
	static const size_t copies[] = { 4096, 512, 64 };
	struct unwinder *saved = unw;
	const struct unwind_counts *c;

	setenv("PROFILE_UNWIND_CHECK", "1", 1);
	unw = unwinder__new(pm, dsos);
	unsetenv("PROFILE_UNWIND_CHECK");
	CU_ASSERT_PTR_NOT_NULL_FATAL(unw);
	for (size_t i = 0; i < sizeof(copies) / sizeof(copies[0]); i++) {
		struct result r = { 0 };

		middle(copies[i], &r);
		CU_ASSERT_EQUAL(r.ips[1], r.ret0);
		CU_ASSERT_EQUAL(r.stop, UNWIND_STOP_END);
	}
	c = unwinder__counts(unw);
	CU_ASSERT_EQUAL(c->fast, 3);
	CU_ASSERT_EQUAL(c->slow, 0);
	CU_ASSERT_EQUAL(c->mismatches, 0);
	unwinder__free(unw);
	unw = saved;
}

int register_unwind_suite(void)
{
	CU_pSuite s = CU_add_suite("unwind", setup, teardown);

	if (!s || !CU_add_test(s, "unwind this process from a stack copy", test_unwind_self) ||
	    !CU_add_test(s, "an address without unwind info", test_unwind_unknown_ip) ||
	    !CU_add_test(s, "from a frame past the leaf, the frames before it known",
			 test_unwind_from_a_frame_past_the_leaf) ||
	    !CU_add_test(s, "leaf return address at function entry", test_leaf_return_at_entry) ||
	    !CU_add_test(s, "a popped register read from the red zone as sampled",
			 test_red_zone_from_the_sample) ||
	    !CU_add_test(s, "a leaf's return address at ret, rbp's slot below sp",
			 test_leaf_return_after_pop) ||
	    !CU_add_test(s, "a return address kept in a register (__vfork)",
			 test_return_address_in_a_register) ||
	    !CU_add_test(s, "cached CFI rules agree with libunwind",
			 test_fast_path_agrees_with_libunwind))
		return -1;
	return 0;
}

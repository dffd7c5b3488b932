// SPDX-License-Identifier: GPL-3.0-or-later
/* fixup: stack bottoms and trimming by name, the truncated mark, the leaf's caller put after
 * the leaf, kernel stack depth, the walk's frames over a DWARF unwind, frame kinds. */
#include <string.h>
#include "collect/fixup.h"
#include "suites.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_stack_bottoms(void)
{
	static const struct {
		const char *name;
		bool bottom;
	} cases[] = {
		{ "__libc_start_call_main", true },
		{ "start_thread", true },
		{ "__libc_start_main", false },
		{ "_start", false },
		{ "clone3", false },
		{ "start_thread_[j]", false },
		{ "start_threa", false },
		{ "runtime.goexit.abi0", true },		/* Go's goroutines */
		{ "runtime.mstart.abi0", true },		/* its threads' system stacks */
		{ "runtime.rt0_go.abi0", true },		/* its main thread's */
		{ "runtime.goexit", true },
		{ "runtime.goexit1", false },
		{ "runtime.mstart0", false },
		{ "runtime.main", false },
		{ "", false },
		{ NULL, false },
	};

	for (size_t i = 0; i < N(cases); i++)
		CU_ASSERT_EQUAL(fixup__is_stack_bottom(cases[i].name), cases[i].bottom);
}

/* The addresses a stack keeps: up to and including its first stack bottom past the leaf. */
static int trimmed(const char *const *outer, int n)
{
	for (int i = 0; i < n; i++)
		if (fixup__ends_at(i, outer[i]))
			return i + 1;
	return n;
}

static void test_trim_at_bottom(void)
{
	static const char *const main_thread[] = {
		"leaf", "main", "__libc_start_call_main", "__libc_start_main", "_start",
	};
	static const char *const thread[] = { "work", "start_thread", "clone3" };
	static const char *const no_bottom[] = { "leaf", "main", NULL, "_start" };
	static const char *const leaf_is_bottom[] = { "start_thread", "clone3" };
	static const char *const unnamed_past[] = { "leaf", NULL, "start_thread" };
	static const char *const goroutine[] = {
		"crypto/sha256.block.abi0", "main.main", "runtime.main", "runtime.goexit.abi0", "?",
	};

	CU_ASSERT_EQUAL(trimmed(main_thread, N(main_thread)), 3);
	CU_ASSERT_EQUAL(trimmed(thread, N(thread)), 2);
	CU_ASSERT_EQUAL(trimmed(no_bottom, N(no_bottom)), 4);
	/* The leaf itself never ends a stack: the sample is inside the bottom function. */
	CU_ASSERT_EQUAL(trimmed(leaf_is_bottom, N(leaf_is_bottom)), 2);
	CU_ASSERT_EQUAL(trimmed(unnamed_past, N(unnamed_past)), 3);
	CU_ASSERT_EQUAL(trimmed(goroutine, N(goroutine)), 4);	/* what a DWARF step past it read */
	CU_ASSERT_EQUAL(trimmed(NULL, 0), 0);
}

static void test_truncated(void)
{
	static const struct {
		bool unwind_truncated;
		const char *outer;
		bool want;
	} cases[] = {
		{ false, "main", false },		/* the walk ended cleanly */
		{ false, NULL, false },
		{ true, "main", true },
		{ true, NULL, true },			/* no user stack, or unnamed */
		{ true, "start_thread", false },	/* reached a bottom all the same */
		{ true, "__libc_start_call_main", false },
		{ true, "__libc_start_main", true },
		{ true, "runtime.goexit.abi0", false },	/* a Go goroutine's first frame */
	};

	for (size_t i = 0; i < N(cases); i++)
		CU_ASSERT_EQUAL(fixup__truncated(cases[i].unwind_truncated, cases[i].outer),
				cases[i].want);
}

static void test_leaf_caller(void)
{
	static const struct {
		uint64_t ips[4];
		int n;
		uint64_t ret;
		uint64_t want[5];
		int want_n;
	} cases[] = {
		{ { 0x100, 0x300, 0x400 }, 3, 0x200, { 0x100, 0x200, 0x300, 0x400 }, 4 },
		{ { 0x100 }, 1, 0x200, { 0x100, 0x200 }, 2 },
		{ { 0x100, 0x200, 0x300 }, 3, 0x200, { 0x100, 0x200, 0x300 }, 3 },	/* has it */
		{ { 0x100, 0x300 }, 2, 0, { 0x100, 0x300 }, 2 },			/* none */
		{ { 0 }, 0, 0x200, { 0 }, 0 },						/* no stack */
		/* Only the slot after the leaf counts: deeper, it is another frame. */
		{ { 0x100, 0x300, 0x200 }, 3, 0x200, { 0x100, 0x200, 0x300, 0x200 }, 4 },
	};

	for (size_t i = 0; i < N(cases); i++) {
		uint64_t ips[5] = { 0 };
		int n;

		memcpy(ips, cases[i].ips, sizeof(cases[i].ips));
		n = fixup__add_leaf_caller(ips, cases[i].n, cases[i].ret);
		CU_ASSERT_EQUAL(n, cases[i].want_n);
		CU_ASSERT_EQUAL(memcmp(ips, cases[i].want, n * sizeof(*ips)), 0);
	}
}

static void test_sampling_frames(void)
{
	/* What bpf_get_task_stack puts first on a page fault (6.x): cut. */
	CU_ASSERT(fixup__is_sampling_frame("bpf_get_task_stack"));
	CU_ASSERT(fixup__is_sampling_frame("__bpf_get_stack"));
	CU_ASSERT(fixup__is_sampling_frame("bpf_prog_2b7c1d3a_do_sample"));
	CU_ASSERT(fixup__is_sampling_frame("bpf_overflow_handler"));
	CU_ASSERT(fixup__is_sampling_frame("__perf_event_overflow"));
	CU_ASSERT(fixup__is_sampling_frame("perf_swevent_event"));
	CU_ASSERT(fixup__is_sampling_frame("___perf_sw_event"));
	CU_ASSERT(fixup__is_sampling_frame("stack_trace_save_tsk"));
	/* The fault's own: kept. */
	CU_ASSERT(!fixup__is_sampling_frame("exc_page_fault"));
	CU_ASSERT(!fixup__is_sampling_frame("do_user_addr_fault"));
	CU_ASSERT(!fixup__is_sampling_frame("handle_mm_fault"));
	CU_ASSERT(!fixup__is_sampling_frame(NULL));
}

static void test_kernel_depth(void)
{
	uint64_t ips[4] = { 0xffffffff81000010, 0xffffffff81000020, 0, 0xffffffff81000030 };
	uint64_t full[3] = { 1, 2, 3 };

	CU_ASSERT_EQUAL(fixup__kernel_depth(ips, 4), 2);	/* a 0 ends it */
	CU_ASSERT_EQUAL(fixup__kernel_depth(full, 3), 3);	/* every slot used */
	CU_ASSERT_EQUAL(fixup__kernel_depth(&ips[2], 2), 0);
	CU_ASSERT_EQUAL(fixup__kernel_depth(ips, 0), 0);
}

static void test_prefer_walk(void)
{
	CU_ASSERT_TRUE(fixup__prefer_walk(1, UNWIND_STOP_NO_INFO, 5));	/* no CFI at the leaf */
	CU_ASSERT_FALSE(fixup__prefer_walk(1, UNWIND_STOP_END, 5));	/* one frame, complete */
	CU_ASSERT_FALSE(fixup__prefer_walk(2, UNWIND_STOP_NO_INFO, 5));	/* DWARF got further */
	CU_ASSERT_FALSE(fixup__prefer_walk(1, UNWIND_STOP_NO_INFO, 1));	/* the walk has no more */
	/* CFI at the leaf that led to a bad frame (a 0, CFI not following its code): the walk
	 * from rbp would skip a frameless leaf's caller. */
	CU_ASSERT_FALSE(fixup__prefer_walk(1, UNWIND_STOP_BAD_FRAME, 5));
}

static void test_is_exec(void)
{
	CU_ASSERT_TRUE(fixup__is_exec("bprm_execve"));
	CU_ASSERT_TRUE(fixup__is_exec("do_execveat_common.isra.0"));
	CU_ASSERT_TRUE(fixup__is_exec("__do_execve_file"));
	CU_ASSERT_FALSE(fixup__is_exec("bprm_execve_x"));	/* another function */
	CU_ASSERT_FALSE(fixup__is_exec("load_elf_binary"));	/* also before the point of no return */
	CU_ASSERT_FALSE(fixup__is_exec("bprm_exec"));
	CU_ASSERT_FALSE(fixup__is_exec(""));
	CU_ASSERT_FALSE(fixup__is_exec(NULL));
}

int register_fixup_suite(void)
{
	CU_pSuite s = CU_add_suite("fixup", NULL, NULL);

	if (!s ||
	    !CU_add_test(s, "stack-bottom names", test_stack_bottoms) ||
	    !CU_add_test(s, "trim after the first bottom past the leaf", test_trim_at_bottom) ||
	    !CU_add_test(s, "truncated unless at a bottom", test_truncated) ||
	    !CU_add_test(s, "leaf caller after the leaf", test_leaf_caller) ||
	    !CU_add_test(s, "kernel stack depth", test_kernel_depth) ||
	    !CU_add_test(s, "the sampling's own kernel frames", test_sampling_frames) ||
	    !CU_add_test(s, "walk frames over a DWARF unwind", test_prefer_walk) ||
	    !CU_add_test(s, "frames of an execve", test_is_exec))
		return -1;
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Stacks whose frames past the leaf are at the same places, with the same return addresses,
 * by other callers: what a walk that goes on from the thread's last one (issue 28,
 * bpf/tabwalk.bpf.h: tab_memo_try) must tell apart by the words above them. Built as Debian
 * builds (no frame pointers): its stacks are walked in BPF from the files' tables.
 *
 *   memo SECONDS   main -> memo_run, which calls each of these in turn, some microseconds
 *                  each, for SECONDS:
 *     memo_via_a -> memo_mid -> memo_leaf, memo_via_b -> memo_mid -> memo_leaf
 *         via_a's and via_b's frames are of one size: memo_mid's frame is at the same sp
 *         with the same return address either way; only its return address's caller, one
 *         word further up, tells which;
 *     memo_deep_a -> memo_framed -> memo_mid2 -> memo_leaf, memo_deep_b -> (the same)
 *         memo_framed keeps its frame by rbp (alloca: its CFA is rbp + 16) and allocates
 *         on deep_b's path what deep_a's frame has more: memo_mid2's frame is at the same
 *         sp with the same return address either way, rbp not (the rbp it has is
 *         memo_framed's, which its caller's frame moves).
 * At the start it measures where memo_mid's and memo_mid2's frames are on each path (and
 * sizes deep_b's allocation from that); at the end it prints (on stderr) "mid a SP b SP mid2
 * a SP b SP rbp a BP b BP" and the CPU time on each path, in ms, "via_a A via_b B deep_a C
 * deep_b D": what a profile is compared with.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "spin.h"

static volatile unsigned long sink;
static uintptr_t mid_sp, mid2_sp, mid2_bp;
static long extra[2];	/* memo_framed's allocation on deep_a's, deep_b's path */

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void memo_leaf(long n)
{
	for (long i = 0; i < n; i++)
		sink = sink * 33 + i;
}

__attribute__((noinline)) void memo_mid(long n)
{
	volatile char here;

	mid_sp = (uintptr_t)&here;
	memo_leaf(n);
	sink += here;
}

/* (Two functions, alike but for their constants: not folded into one.) */
__attribute__((noinline)) void memo_via_a(long n)
{
	volatile char buf[48];

	buf[0] = 1;
	memo_mid(n);
	sink += buf[0];
}

__attribute__((noinline)) void memo_via_b(long n)
{
	volatile char buf[48];

	buf[0] = 2;
	memo_mid(n);
	sink += buf[0] * 3;
}

__attribute__((noinline)) void memo_mid2(long n)
{
	volatile char here;

	mid2_sp = (uintptr_t)&here;
	mid2_bp = (uintptr_t)__builtin_frame_address(1);
	memo_leaf(n);
	sink += here;
}

__attribute__((noinline)) void memo_framed(long n, int which)
{
	volatile char *p = __builtin_alloca(16 + extra[which]);

	p[0] = (char)which;
	memo_mid2(n);
	sink += p[0];
}

__attribute__((noinline)) void memo_deep_a(long n)
{
	volatile char buf[320];

	buf[0] = 1;
	memo_framed(n, 0);
	sink += buf[0];
}

__attribute__((noinline)) void memo_deep_b(long n)
{
	volatile char buf[64];

	buf[0] = 2;
	memo_framed(n, 1);
	sink += buf[0] * 5;
}

static void (*const paths[4])(long) = { memo_via_a, memo_via_b, memo_deep_a, memo_deep_b };

__attribute__((noinline)) int memo_run(double seconds, long n)
{
	uintptr_t sp[4], bp[2];
	double spent[4] = { 0 }, end, t;

	/* Where memo_mid2 is on each path with no allocation; deep_b's then makes it the
	 * same as deep_a's. */
	for (int k = 0; k < 4; k++) {
		paths[k](1);
		sp[k] = k < 2 ? mid_sp : mid2_sp;
	}
	if (sp[3] < sp[2]) {
		fprintf(stderr, "memo: memo_mid2 lower on deep_b's path (%#lx) than on "
			"deep_a's (%#lx)\n", (unsigned long)sp[3], (unsigned long)sp[2]);
		return 1;
	}
	extra[1] = (long)(sp[3] - sp[2]);
	for (int k = 0; k < 4; k++) {
		paths[k](1);
		sp[k] = k < 2 ? mid_sp : mid2_sp;
		if (k >= 2)
			bp[k - 2] = mid2_bp;
	}
	end = spin_now() + seconds;
	for (int k = 0; spin_now() < end; k = (k + 1) & 3) {
		t = cpu_ms();
		for (int i = 0; i < 4; i++)
			paths[k](n);
		spent[k] += cpu_ms() - t;
	}
	fprintf(stderr, "mid a %#lx b %#lx mid2 a %#lx b %#lx rbp a %#lx b %#lx\n",
		(unsigned long)sp[0], (unsigned long)sp[1], (unsigned long)sp[2],
		(unsigned long)sp[3], (unsigned long)bp[0], (unsigned long)bp[1]);
	fprintf(stderr, "via_a %.0f via_b %.0f deep_a %.0f deep_b %.0f\n", spent[0], spent[1],
		spent[2], spent[3]);
	return 0;
}

int main(int argc, char **argv)
{
	return memo_run(spin_seconds(argc, argv), 2000);
}

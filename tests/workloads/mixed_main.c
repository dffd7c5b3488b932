// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Frame-pointer code calling through code without frame pointers that leaves rbp alone, as
 * a no-FP library between FP code does (built with frame pointers; mixed_mid.c without):
 *
 *	mixed SECONDS mid	main -> mixed_outer -> mixed_middle (no FP) -> mixed_leaf
 *	mixed SECONDS qsort	main -> sort_outer -> qsort (libc, no FP) -> sort_cmp
 *
 * A frame-pointer walk from mixed_leaf skips mixed_outer: mixed_middle keeps no frame record,
 * so the saved rbp in mixed_leaf's record is mixed_outer's own.
 */
#include <stdlib.h>
#include <string.h>
#include "spin.h"

void mixed_middle(double seconds, void (*leaf)(double));

volatile unsigned long mixed_sink;

__attribute__((noinline)) void mixed_leaf(double seconds)
{
	double end = spin_now() + seconds;
	unsigned long x = mixed_sink;

	while (spin_now() < end)
		for (int i = 0; i < 200000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	mixed_sink = x;
}

__attribute__((noinline)) static void mixed_outer(double seconds)
{
	mixed_middle(seconds, mixed_leaf);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static int sort_cmp(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	/* Work enough that most samples land here, under qsort. */
	for (int i = 0; i < 200; i++)
		mixed_sink += i ^ x;
	return x < y ? -1 : x > y;
}

__attribute__((noinline)) static void sort_outer(double seconds)
{
	enum { N = 4096 };
	static unsigned long v[N];
	double end = spin_now() + seconds;
	unsigned long seed = 1;

	while (spin_now() < end) {
		for (int i = 0; i < N; i++)
			v[i] = seed = seed * 6364136223846793005UL + 1442695040888963407UL;
		qsort(v, N, sizeof(v[0]), sort_cmp);
	}
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	double seconds = spin_seconds(argc, argv);

	if (argc > 2 && !strcmp(argv[2], "qsort"))
		sort_outer(seconds);
	else
		mixed_outer(seconds);
	return 0;
}

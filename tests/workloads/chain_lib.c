// SPDX-License-Identifier: GPL-3.0-or-later
/* The shared-library half of the chain workload: c() and the hot loop. */
#include "spin.h"

volatile unsigned long chain_sink;

__attribute__((noinline)) void chain_hot_loop(unsigned long n)
{
	unsigned long x = chain_sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	chain_sink = x;
}

__attribute__((noinline)) void chain_c(double seconds)
{
	double end = spin_now() + seconds;

	while (spin_now() < end)
		chain_hot_loop(200000);
	__asm__ volatile("" ::: "memory");
}

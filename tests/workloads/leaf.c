// SPDX-License-Identifier: GPL-3.0-or-later
/* Frame pointers everywhere but in the hot leaf (-momit-leaf-frame-pointer):
 * main -> leaf_caller -> leaf_hot. A walk from rbp skips leaf_caller. */
#include "spin.h"

volatile unsigned long leaf_sink;

__attribute__((noinline)) void leaf_hot(unsigned long n)
{
	unsigned long x = leaf_sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + i;
	leaf_sink = x;
}

__attribute__((noinline)) void leaf_caller(double seconds)
{
	double end = spin_now() + seconds;

	while (spin_now() < end)
		leaf_hot(500000);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	leaf_caller(spin_seconds(argc, argv));
	return 0;
}

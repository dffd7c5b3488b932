// SPDX-License-Identifier: GPL-3.0-or-later
/* Static functions only: stripped, their names live in a debug file found by .gnu_debuglink. */
#include "spin.h"

static volatile unsigned long hidden_sink;

__attribute__((noinline)) static void hidden_leaf(void)
{
	for (int i = 0; i < 100000; i++)
		hidden_sink = hidden_sink * 31 + i;
}

__attribute__((noinline)) static void hidden_middle(double seconds)
{
	double end = spin_now() + seconds;

	while (spin_now() < end)
		hidden_leaf();
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	hidden_middle(spin_seconds(argc, argv));
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * fetched: a program and a library stripped of their symbols and DWARF (as a distribution
 * ships them), whose debug files only a debuginfod server has. main -> main_static_spin ->
 * main_mix (inlined) for half the time, then fetched_lib_work -> lib_static_spin -> lib_mix
 * (inlined) in libfetched.so.
 */
#include "spin.h"

void fetched_lib_work(double seconds);

volatile unsigned long fetched_sink;

static inline __attribute__((always_inline)) unsigned long main_mix(unsigned long x,
								    unsigned long i)
{
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9UL;
	return x + i;
}

__attribute__((noinline)) static void main_static_spin(double seconds)
{
	double end = spin_now() + seconds;
	unsigned long x = fetched_sink;

	while (spin_now() < end)
		for (unsigned long i = 0; i < 1000000; i++)
			x = main_mix(x, i);
	fetched_sink = x;
}

int main(int argc, char **argv)
{
	double seconds = spin_seconds(argc, argv);

	main_static_spin(seconds / 2);
	fetched_lib_work(seconds / 2);
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * The library half of the fetched workload: an exported entry, a static function and an
 * inlined one, which only the debug file names (the library is stripped of its symbols).
 */
#include "spin.h"

volatile unsigned long fetched_lib_sink;

static inline __attribute__((always_inline)) unsigned long lib_mix(unsigned long x,
								   unsigned long i)
{
	x ^= x >> 31;
	x *= 0x94d049bb133111ebUL;
	return x + i;
}

__attribute__((noinline)) static void lib_static_spin(double seconds)
{
	double end = spin_now() + seconds;
	unsigned long x = fetched_lib_sink;

	while (spin_now() < end)
		for (unsigned long i = 0; i < 1000000; i++)
			x = lib_mix(x, i);
	fetched_lib_sink = x;
}

__attribute__((noinline)) void fetched_lib_work(double seconds)
{
	lib_static_spin(seconds);
	__asm__ volatile("" ::: "memory");
}

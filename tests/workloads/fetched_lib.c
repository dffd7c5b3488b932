// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * The library half of the fetched workload: an exported entry, a static function and the
 * inlined fetched_mix, which only the debug files name (the library is stripped of its
 * symbols).
 */
#include "fetched.h"
#include "spin.h"

volatile unsigned long fetched_lib_sink;

__attribute__((noinline)) static void lib_static_spin(double seconds)
{
	double end = spin_now() + seconds;
	unsigned long x = fetched_lib_sink;

	while (spin_now() < end)
		for (unsigned long i = 0; i < 1000000; i++)
			x = fetched_mix(x, i);
	fetched_lib_sink = x;
}

__attribute__((noinline)) void fetched_lib_work(double seconds)
{
	lib_static_spin(seconds);
	__asm__ volatile("" ::: "memory");
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * fetched: a program and a library stripped of their symbols and DWARF (as a distribution
 * ships them), whose debug files only a debuginfod server has, made by dwz as Debian's are
 * (a common file for both). main -> main_static_spin -> fetched_mix (inlined) for half the
 * time, then fetched_lib_work -> lib_static_spin -> fetched_mix (inlined) in libfetched.so.
 */
#include "fetched.h"
#include "spin.h"

void fetched_lib_work(double seconds);

volatile unsigned long fetched_sink;

__attribute__((noinline)) static void main_static_spin(double seconds)
{
	double end = spin_now() + seconds;
	unsigned long x = fetched_sink;

	while (spin_now() < end)
		for (unsigned long i = 0; i < 1000000; i++)
			x = fetched_mix(x, i);
	fetched_sink = x;
}

int main(int argc, char **argv)
{
	double seconds = spin_seconds(argc, argv);

	main_static_spin(seconds / 2);
	fetched_lib_work(seconds / 2);
	return 0;
}

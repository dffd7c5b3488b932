// SPDX-License-Identifier: GPL-3.0-or-later
/* hash_loop -> mix_outer -> mix_inner, both always inlined: one address, three frames. */
#include "spin.h"

volatile unsigned long inline_sink;

static inline __attribute__((always_inline)) unsigned long mix_inner(unsigned long x,
								     unsigned long i)
{
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9UL;
	return x + i;
}

static inline __attribute__((always_inline)) unsigned long mix_outer(unsigned long x,
								     unsigned long i)
{
	x = mix_inner(x, i);
	return x ^ (x >> 31);
}

__attribute__((noinline)) static void hash_loop(double seconds)
{
	double end = spin_now() + seconds;
	unsigned long x = inline_sink;

	while (spin_now() < end)
		for (unsigned long i = 0; i < 1000000; i++)
			x = mix_outer(x, i);
	inline_sink = x;
}

int main(int argc, char **argv)
{
	hash_loop(spin_seconds(argc, argv));
	return 0;
}

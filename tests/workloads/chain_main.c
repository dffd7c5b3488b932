// SPDX-License-Identifier: GPL-3.0-or-later
/* main -> chain_a -> chain_b -> chain_c (shared library) -> chain_hot_loop. */
#include "spin.h"

void chain_c(double seconds);

__attribute__((noinline)) static void chain_b(double seconds)
{
	chain_c(seconds);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void chain_a(double seconds)
{
	chain_b(seconds);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	chain_a(spin_seconds(argc, argv));
	return 0;
}

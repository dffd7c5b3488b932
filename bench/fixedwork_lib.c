// SPDX-License-Identifier: GPL-3.0-or-later
/* The shared-library half of bench/fixedwork: three more levels of calls. */
#include "fixedwork.h"

FW_NOINLINE uint64_t fw_lib_mix(uint64_t x, int n);
FW_NOINLINE uint64_t fw_lib_inner(uint64_t x, int n);

/* Leaf: xorshift64*, a dependency chain the compiler cannot shorten. */
FW_NOINLINE uint64_t fw_lib_mix(uint64_t x, int n)
{
	for (int i = 0; i < n; i++) {
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		x *= 0x2545F4914F6CDD1DULL;
	}
	return x;
}

FW_NOINLINE uint64_t fw_lib_inner(uint64_t x, int n)
{
	uint64_t a = fw_lib_mix(x, n / 2);
	uint64_t b = fw_lib_mix(a ^ 0x9e3779b97f4a7c15ULL, n - n / 2);

	return a + b;	/* not a tail call: this frame stays on the stack */
}

FW_NOINLINE uint64_t fw_lib_stage(uint64_t x, int n)
{
	uint64_t r = fw_lib_inner(x + 1, n);

	return r ^ (x << 1);
}

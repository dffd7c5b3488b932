// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * bench/spin: a shallow busy process for the system-wide benchmark (bench/selfcost.py): one
 * thread in main -> spin, no system calls, until killed. Built without frame pointers, as
 * Debian builds its packages.
 */
#include <stdint.h>

__attribute__((noinline, noclone)) static uint64_t spin(uint64_t x)
{
	for (int i = 0; i < 1000000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

int main(void)
{
	volatile uint64_t sink = 1;

	for (;;)
		sink = spin(sink);
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* Calls through the PLT in a tight loop: main -> plt_caller -> labs@plt -> labs (libc), so
 * that a good share of samples lands in the PLT stub itself, which has no symbol of its own. */
#include <stdlib.h>
#include "spin.h"

volatile long plt_sink;

__attribute__((noinline)) void plt_caller(double seconds)
{
	double end = spin_now() + seconds;
	long x = plt_sink;

	while (spin_now() < end)
		for (int i = 0; i < 100000; i++)
			x += labs(x - i);	/* -fno-builtin: a real call, through the PLT */
	plt_sink = x;
}

int main(int argc, char **argv)
{
	plt_caller(spin_seconds(argc, argv));
	return 0;
}

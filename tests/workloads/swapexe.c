// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Two versions of one program (SWAP_V 1 and 2), for a file rewritten in place between two
 * runs (cp over it: the same inode): version 1 calls itself "vone" and runs alpha_work,
 * version 2 "vtwo" and beta_work. swapexe SECONDS.
 */
#include <sys/prctl.h>
#include "spin.h"

#if SWAP_V == 1
#define WORK	alpha_work
#define NAME	"vone"
#else
#define WORK	beta_work
#define NAME	"vtwo"
#endif

static volatile unsigned long sink;

__attribute__((noinline)) void WORK(long n)
{
	for (long i = 0; i < n; i++)
		sink = sink * 31 + i;
}

int main(int argc, char **argv)
{
	double end = spin_now() + spin_seconds(argc, argv);

	prctl(PR_SET_NAME, NAME);
	while (spin_now() < end)
		WORK(100000);
	return 0;
}

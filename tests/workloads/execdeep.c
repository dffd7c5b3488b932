// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * A program that execs itself into a deeper one, for the `procs` entry of a program before
 * its exec: execdeep SECONDS DEEP_SECONDS spins in shallow_work (a frame under main) until
 * SIGUSR1 comes (the profiler's test hook sends it) or SECONDS have gone by, then execs
 * itself as "execdeep deep DEEP_SECONDS", which spins in deep_leaf under 12 deep_frame calls
 * of 512-byte frames (over 6 KiB of stack). Built without frame pointers: every stack of it
 * goes to DWARF with --unwind dwarf.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "spin.h"

#define DEEP_FRAMES 12

static volatile unsigned long sink;
static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

__attribute__((noinline)) void shallow_work(double end)
{
	while (!go && spin_now() < end)
		for (int i = 0; i < 100000; i++)
			sink = sink * 31 + i;
}

__attribute__((noinline)) void deep_leaf(double end)
{
	while (spin_now() < end)
		for (int i = 0; i < 100000; i++)
			sink = sink * 17 + i;
}

__attribute__((noinline)) void deep_frame(int depth, double end)
{
	volatile char pad[512];

	memset((char *)pad, depth, sizeof(pad));
	if (depth < DEEP_FRAMES)
		deep_frame(depth + 1, end);
	else
		deep_leaf(end);
	sink += pad[depth % 512];
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "deep")) {
		deep_frame(1, spin_now() + atof(argv[2]));
		return 0;
	}
	if (argc < 3)
		return 2;
	signal(SIGUSR1, on_usr1);
	shallow_work(spin_now() + atof(argv[1]));
	execl("/proc/self/exe", "execdeep", "deep", argv[2], (char *)NULL);
	return 1;
}

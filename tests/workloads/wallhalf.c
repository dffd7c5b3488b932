// SPDX-License-Identifier: GPL-3.0-or-later
/* Computes for a second in wall_compute, then sleeps a second in wall_sleep (argument:
 * seconds of each, default 1); prints the CPU time it had: "cpu SECONDS". */
#include <stdio.h>
#include <time.h>
#include "spin.h"

volatile double wall_sink;

__attribute__((noinline)) void wall_compute(double seconds)
{
	double end = spin_now() + seconds, x = 1;

	while (spin_now() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 1.0000001 + 1e-9;
	wall_sink = x;
}

__attribute__((noinline)) void wall_sleep(double seconds)
{
	struct timespec t = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };

	while (nanosleep(&t, &t))
		;
}

int main(int argc, char **argv)
{
	double s = argc > 1 ? spin_seconds(argc, argv) : 1.0;
	struct timespec cpu;

	wall_compute(s);
	wall_sleep(s);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	printf("cpu %.6f\n", cpu.tv_sec + cpu.tv_nsec / 1e9);
	return 0;
}

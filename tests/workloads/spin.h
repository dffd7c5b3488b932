/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shared by the test workloads: run for a given number of seconds. */
#ifndef SPIN_H
#define SPIN_H
#include <stdlib.h>
#include <time.h>

static inline double spin_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Seconds to run: argv[1], or 2. */
static inline double spin_seconds(int argc, char **argv)
{
	return argc > 1 ? atof(argv[1]) : 2.0;
}
#endif

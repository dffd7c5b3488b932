// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * bench/fixedwork: a fixed amount of CPU work for the overhead benchmark (bench/overhead.py).
 *
 * Usage: fixedwork [UNITS]   (default 580 work units per thread: about 3 s
 *                            on the 2-vCPU VM the figures in bench/README.md come from)
 *
 * Two threads each run UNITS work units through several levels of non-inlined calls, half of
 * the time in this executable and half in libfixedwork_*.so. It prints the wall time of the
 * work only, from just before the threads are created to just after they are joined, so the
 * start-up and tear-down of a profiler around it are not counted:
 *
 *   fixedwork: units=580 threads=2 elapsed=3.012345 cpu=6.020000
 *
 * cpu= is this process's own user+system time (getrusage RUSAGE_SELF) at that point.
 *
 * Built with -DFW_QSORT (sortwork_fp), a unit sorts an array with the C library's qsort
 * instead, through a comparator that does the work: frame-pointer code called back by a
 * library built without frame pointers, where a frame-pointer walk alone skips frames.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include "fixedwork.h"

#define NTHREADS 2
#define DEFAULT_UNITS 580

FW_NOINLINE uint64_t exe_mix(uint64_t x, int n);
FW_NOINLINE uint64_t stage_b(uint64_t x);
FW_NOINLINE uint64_t stage_a(uint64_t x);
FW_NOINLINE uint64_t do_unit(uint64_t x);
FW_NOINLINE uint64_t run_units(uint64_t seed, long units);

static long units = DEFAULT_UNITS;
volatile uint64_t fixedwork_sink;

/* Leaf in the executable: a splitmix-like chain. */
FW_NOINLINE uint64_t exe_mix(uint64_t x, int n)
{
	for (int i = 0; i < n; i++) {
		x += 0x9e3779b97f4a7c15ULL;
		x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
		x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	}
	return x;
}

/* Splits one unit into slices so each call stays short and the stacks vary a little. */
FW_NOINLINE uint64_t stage_b(uint64_t x)
{
	uint64_t acc = x;

	for (int s = 0; s < 10; s++) {
		acc = exe_mix(acc, FW_ITERS / 20);
		acc = fw_lib_stage(acc, FW_ITERS / 20);
	}
	return acc + 1;
}

FW_NOINLINE uint64_t stage_a(uint64_t x)
{
	uint64_t r = stage_b(x ^ 0x5bd1e995);

	return r * 3;
}

#ifndef FW_QSORT
FW_NOINLINE uint64_t do_unit(uint64_t x)
{
	uint64_t r = 0;

	/* One unit is 100 slices of stage_a: about 5 ms on the VM of bench/README.md. */
	for (int i = 0; i < 100; i++)
		r += stage_a(x + i);
	return r;
}
#else
#define SORT_N	1024

/* Orders by a mix of the values: the comparisons are the work. */
static FW_NOINLINE int cmp_mix(const void *a, const void *b)
{
	uint64_t x = exe_mix(*(const uint64_t *)a, FW_ITERS / 200);
	uint64_t y = exe_mix(*(const uint64_t *)b, FW_ITERS / 200);

	return x < y ? -1 : x > y;
}

FW_NOINLINE uint64_t do_unit(uint64_t x)
{
	uint64_t v[SORT_N];

	for (int i = 0; i < SORT_N; i++)
		v[i] = x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	qsort(v, SORT_N, sizeof(v[0]), cmp_mix);
	return v[0] ^ v[SORT_N - 1];
}
#endif

FW_NOINLINE uint64_t run_units(uint64_t seed, long n)
{
	uint64_t r = seed;

	for (long i = 0; i < n; i++)
		r = do_unit(r);
	return r + 7;
}

static void *thread_main(void *arg)
{
	uint64_t r = run_units((uintptr_t)arg + 1, units);

	fixedwork_sink += r;
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	pthread_t t[NTHREADS];
	struct rusage ru;
	double start, elapsed;

	if (argc > 1) {
		char *end;

		units = strtol(argv[1], &end, 10);
		if (*end || units <= 0) {
			fprintf(stderr, "usage: %s [UNITS]\n", argv[0]);
			return 2;
		}
	}
	start = now();
	for (long i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, thread_main, (void *)i)) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	elapsed = now() - start;
	getrusage(RUSAGE_SELF, &ru);
	printf("fixedwork: units=%ld threads=%d elapsed=%.6f cpu=%.6f\n", units, NTHREADS, elapsed,
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	fflush(stdout);
	return 0;
}

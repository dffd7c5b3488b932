// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * bench/gaps: what a profiler takes from the program it samples, seen from inside that
 * program (bench/intrusion.py).
 *
 * Usage: gaps [SECONDS [THREADS]]   (default 5 s, one thread per online CPU)
 *
 * Prints "gaps: ready pid=PID" and waits for SIGUSR1 (so that a profiler can attach first),
 * then every thread, pinned to its own CPU, reads the TSC in a tight loop
 * for SECONDS, a few calls deep. Any step between two reads longer than GAP_NS is time the
 * thread did not run its own code: an interrupt (the profiler's sampling timer, the
 * scheduler tick), another task scheduled on its CPU (the profiler's own process), or the
 * hypervisor. It prints the gaps in two classes, split at 100 us: short ones are
 * interrupts, long ones are other tasks or the host:
 *
 *   gaps: threads=2 seconds=5.000 short=12345 short_ns=23456789 long=3 long_ns=1234567
 *
 * counts and nanoseconds summed over the threads. With the environment variable GAPS_NOWAIT
 * set it starts without waiting for SIGUSR1.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define GAP_NS		300	/* a step longer than this is a gap (a loop step is ~10 ns) */
#define LONG_NS		100000	/* gaps from here on are other tasks or the host */
#define DEPTH		5	/* calls between the thread's start and the loop */

#define NOINLINE __attribute__((noinline))

struct result {
	uint64_t short_n, short_ns, long_n, long_ns;
} __attribute__((aligned(64)));	/* one cache line per thread */

static double seconds = 5;
static double tsc_per_ns;
static volatile uint64_t sink;

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* TSC ticks per nanosecond, against CLOCK_MONOTONIC over 200 ms. */
static double calibrate(void)
{
	uint64_t t0 = now_ns(), c0 = rdtsc(), t1, c1;

	do
		t1 = now_ns();
	while (t1 - t0 < 200000000);
	c1 = rdtsc();
	return (double)(c1 - c0) / (double)(t1 - t0);
}

static NOINLINE void loop(struct result *r)
{
	uint64_t gap = (uint64_t)(GAP_NS * tsc_per_ns), lng = (uint64_t)(LONG_NS * tsc_per_ns);
	uint64_t prev = rdtsc(), end = prev + (uint64_t)(seconds * 1e9 * tsc_per_ns), t, d;

	for (;;) {
		t = rdtsc();
		d = t - prev;
		prev = t;
		if (d > gap) {
			if (d >= lng) {
				r->long_n++;
				r->long_ns += d;
			} else {
				r->short_n++;
				r->short_ns += d;
			}
		}
		if (t >= end)
			break;
	}
	r->short_ns = (uint64_t)(r->short_ns / tsc_per_ns);
	r->long_ns = (uint64_t)(r->long_ns / tsc_per_ns);
}

/* A few real frames under the loop, as a profiled program has. */
static NOINLINE void descend(struct result *r, int n)
{
	if (n > 0)
		descend(r, n - 1);
	else
		loop(r);
	sink += (uint64_t)n;
}

static void *thread_main(void *arg)
{
	descend(arg, DEPTH);
	return NULL;
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int nthreads = (int)(ncpu > 0 ? ncpu : 1);
	struct result total = {0}, *res;
	pthread_t *tids;
	sigset_t set;
	int sig;

	if (argc > 1)
		seconds = atof(argv[1]);
	if (argc > 2)
		nthreads = atoi(argv[2]);
	if (seconds <= 0 || nthreads <= 0 || argc > 3) {
		fprintf(stderr, "usage: gaps [SECONDS [THREADS]]\n");
		return 2;
	}
	tsc_per_ns = calibrate();
	if (!getenv("GAPS_NOWAIT")) {
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		printf("gaps: ready pid=%d\n", getpid());
		fflush(stdout);
		sigwait(&set, &sig);
	}
	res = calloc((size_t)nthreads, sizeof(*res));
	tids = calloc((size_t)nthreads, sizeof(*tids));
	if (!res || !tids)
		return 1;
	for (int i = 0; i < nthreads; i++) {
		pthread_attr_t attr;
		cpu_set_t cpus;

		pthread_attr_init(&attr);
		if (ncpu > 0 && nthreads <= ncpu) {
			CPU_ZERO(&cpus);
			CPU_SET(i, &cpus);
			pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
		}
		if (pthread_create(&tids[i], &attr, thread_main, &res[i])) {
			perror("gaps: pthread_create");
			return 1;
		}
		pthread_attr_destroy(&attr);
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(tids[i], NULL);
		total.short_n += res[i].short_n;
		total.short_ns += res[i].short_ns;
		total.long_n += res[i].long_n;
		total.long_ns += res[i].long_ns;
	}
	printf("gaps: threads=%d seconds=%.3f short=%llu short_ns=%llu long=%llu long_ns=%llu\n",
	       nthreads, seconds, (unsigned long long)total.short_n,
	       (unsigned long long)total.short_ns, (unsigned long long)total.long_n,
	       (unsigned long long)total.long_ns);
	free(res);
	free(tids);
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* Two threads for a timeline: "grinder" works the whole time; "napper" works 200 ms, sleeps
 * 300 ms, over and over (its naps are time with no on-CPU samples). */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>
#include "spin.h"

static double end_at;
static volatile unsigned long sink;

__attribute__((noinline)) static void grind(void)
{
	for (int i = 0; i < 100000; i++)
		sink = sink * 6364136223846793005UL + 1442695040888963407UL;
}

__attribute__((noinline)) static void nap_work(void)
{
	for (int i = 0; i < 100000; i++)
		sink = sink * 2862933555777941757UL + 3037000493UL;
}

static void *grinder(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "grinder");
	while (spin_now() < end_at)
		grind();
	return NULL;
}

static void *napper(void *arg)
{
	struct timespec nap = { 0, 300 * 1000000L };

	(void)arg;
	pthread_setname_np(pthread_self(), "napper");
	while (spin_now() < end_at) {
		double until = spin_now() + 0.2;

		while (spin_now() < until)
			nap_work();
		nanosleep(&nap, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	end_at = spin_now() + spin_seconds(argc, argv);
	pthread_create(&a, NULL, grinder, NULL);
	pthread_create(&b, NULL, napper, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}

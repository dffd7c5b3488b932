// SPDX-License-Identifier: GPL-3.0-or-later
#define _GNU_SOURCE
/* Four named threads spinning in their own functions. */
#include <pthread.h>
#include <stdio.h>
#include "spin.h"

static double seconds;
volatile unsigned long threads_sink;

__attribute__((noinline)) static void thread_work(void)
{
	for (int i = 0; i < 100000; i++)
		threads_sink += i;
}

__attribute__((noinline)) static void *thread_main(void *arg)
{
	char name[16];
	double end = spin_now() + seconds;

	snprintf(name, sizeof(name), "worker-%ld", (long)arg);
	pthread_setname_np(pthread_self(), name);
	while (spin_now() < end)
		thread_work();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[4];

	seconds = spin_seconds(argc, argv);
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, thread_main, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Threads that wait, the time of each wait known: one sleeps 200 ms in nanosleep, one reads
 * a pipe that another thread writes 300 ms later, one waits 100 ms for a mutex another thread
 * holds; ten times each, all at once (about 3 s). Each wait is in a function of its own
 * (offcpu_sleep, offcpu_pipe_read, offcpu_mutex_wait) under the thread's main function; the
 * helpers wait in functions of theirs. Argument: rounds (default 10). At the end, prints the
 * seconds each of the three spent waiting, as measured around the calls: "NAME SECONDS".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int rounds = 10;
static int pipefd[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int held[2];		/* the holder writes a byte here once it holds the lock */
static double waited[3];	/* seconds in offcpu_sleep, offcpu_pipe_read, offcpu_mutex_wait */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&t, &t))
		;
}

__attribute__((noinline)) void offcpu_sleep(void)
{
	nap(200);
}

__attribute__((noinline)) void offcpu_pipe_read(void)
{
	char c;

	if (read(pipefd[0], &c, 1) != 1)
		abort();
}

__attribute__((noinline)) void offcpu_mutex_wait(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) void helper_write_later(void)
{
	nap(300);
	if (write(pipefd[1], "x", 1) != 1)
		abort();
}

__attribute__((noinline)) void helper_hold_lock(void)
{
	pthread_mutex_lock(&lock);
	if (write(held[1], "x", 1) != 1)
		abort();
	nap(100);
	pthread_mutex_unlock(&lock);
	nap(20);	/* the waiter takes it and lets go before the next round */
}

__attribute__((noinline)) void waiter_wait_held(void)
{
	char c;

	if (read(held[0], &c, 1) != 1)
		abort();
}

static void *sleeper_main(void *arg)
{
	for (int i = 0; i < rounds; i++) {
		double t = now();

		offcpu_sleep();
		waited[0] += now() - t;
	}
	return arg;
}

static void *reader_main(void *arg)
{
	for (int i = 0; i < rounds; i++) {
		double t = now();

		offcpu_pipe_read();
		waited[1] += now() - t;
	}
	return arg;
}

static void *writer_main(void *arg)
{
	for (int i = 0; i < rounds; i++)
		helper_write_later();
	return arg;
}

static void *waiter_main(void *arg)
{
	for (int i = 0; i < rounds; i++) {
		double t;

		waiter_wait_held();
		t = now();
		offcpu_mutex_wait();
		waited[2] += now() - t;
	}
	return arg;
}

static void *holder_main(void *arg)
{
	for (int i = 0; i < rounds; i++)
		helper_hold_lock();
	return arg;
}

int main(int argc, char **argv)
{
	void *(*mains[])(void *) = { sleeper_main, reader_main, writer_main, waiter_main,
				     holder_main };
	pthread_t t[5];

	if (argc > 1)
		rounds = atoi(argv[1]);
	if (pipe(pipefd) || pipe(held))
		return 1;
	for (int i = 0; i < 5; i++)
		if (pthread_create(&t[i], NULL, mains[i], NULL))
			return 1;
	for (int i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	printf("offcpu_sleep %.6f\noffcpu_pipe_read %.6f\noffcpu_mutex_wait %.6f\n", waited[0],
	       waited[1], waited[2]);
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * A context-switch-heavy fixed amount of work, for bench/offcpu.py:
 *   switchwork pingpong OPS     two processes pass a byte back and forth over two pipes,
 *                               OPS round trips (each side blocks in read every time)
 *   switchwork pool THREADS OPS THREADS threads take one mutex OPS times in all, a little
 *                               work inside: most takes wait for it (futex)
 * It waits DELAY seconds first (environment SWITCHWORK_DELAY, default 0), so that tools can
 * attach, then prints "switchwork: mode=M ops=N elapsed=SECONDS" for its work alone.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void pp_serve(int in, int out, long ops)
{
	char c;

	for (long i = 0; i < ops; i++)
		if (read(in, &c, 1) != 1 || write(out, &c, 1) != 1)
			exit(1);
}

__attribute__((noinline)) void pp_drive(int in, int out, long ops)
{
	char c = 'x';

	for (long i = 0; i < ops; i++)
		if (write(out, &c, 1) != 1 || read(in, &c, 1) != 1)
			exit(1);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long shared;
static long per_thread;

__attribute__((noinline)) void pool_take(void)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < 1000; i++)
		shared = shared * 31 + i;
	pthread_mutex_unlock(&lock);
}

static void *pool_worker(void *arg)
{
	for (long i = 0; i < per_thread; i++)
		pool_take();
	return arg;
}

int main(int argc, char **argv)
{
	const char *delay = getenv("SWITCHWORK_DELAY");
	double t;

	if (argc < 3 || (strcmp(argv[1], "pingpong") && strcmp(argv[1], "pool"))) {
		fprintf(stderr, "usage: switchwork pingpong OPS | pool THREADS OPS\n");
		return 2;
	}
	if (delay)
		usleep((useconds_t)(atof(delay) * 1e6));
	if (!strcmp(argv[1], "pingpong")) {
		long ops = atol(argv[2]);
		int a[2], b[2];
		pid_t pid;

		if (pipe(a) || pipe(b))
			return 1;
		t = now();
		pid = fork();
		if (pid == 0) {
			pp_serve(a[0], b[1], ops);
			_exit(0);
		}
		pp_drive(b[0], a[1], ops);
		waitpid(pid, NULL, 0);
		printf("switchwork: mode=pingpong ops=%ld elapsed=%.6f\n", ops, now() - t);
	} else {
		int n = argc > 3 ? atoi(argv[2]) : 4;
		long ops = atol(argv[argc > 3 ? 3 : 2]);
		pthread_t th[64];

		if (n < 1 || n > 64)
			return 2;
		per_thread = ops / n;
		t = now();
		for (int i = 0; i < n; i++)
			pthread_create(&th[i], NULL, pool_worker, NULL);
		for (int i = 0; i < n; i++)
			pthread_join(th[i], NULL);
		printf("switchwork: mode=pool ops=%ld elapsed=%.6f\n", per_thread * n, now() - t);
	}
	return 0;
}

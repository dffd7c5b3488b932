// SPDX-License-Identifier: GPL-3.0-or-later
/* Most of the time in a signal handler: main -> sig_outer -> sig_loop, interrupted 100 times
 * a second by SIGALRM, whose handler spins for most of the 10 ms. The handler's caller is
 * glibc's signal trampoline __restore_rt, above the interrupted frames. */
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include "spin.h"

volatile unsigned long sig_sink;

__attribute__((noinline)) static void sig_busy(double seconds)
{
	double end = spin_now() + seconds;
	unsigned long x = sig_sink;

	while (spin_now() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005UL + i;
	sig_sink = x;
}

__attribute__((noinline)) static void sig_handler(int sig)
{
	(void)sig;
	sig_busy(0.008);
}

__attribute__((noinline)) void sig_loop(double seconds)
{
	double end = spin_now() + seconds;

	while (spin_now() < end)
		sig_sink++;
}

__attribute__((noinline)) void sig_outer(double seconds)
{
	sig_loop(seconds);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sig_handler;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	sig_outer(spin_seconds(argc, argv));
	return 0;
}

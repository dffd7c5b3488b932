// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * deepserve: stacks whose callers lie past the stack copy, with another caller there a few
 * milliseconds later (issue 26). `deepserve MODE SECONDS PHASE_MS`:
 *
 * deep: a server loop whose two routes share a handler with a 32 KiB buffer on its stack,
 *	route_get -> serve -> parse_get and route_post -> serve -> parse_post, requests of
 *	~0.2 ms, the route switching every PHASE_MS. The routes' frames are 32 KiB above the
 *	parser's: past a 16 KiB copy, and read later they are whichever route runs then.
 * alt:	main -> alt_outer_a -> alt_inner_a and main -> alt_outer_b -> alt_inner_b in turn
 *	(PHASE_MS each), interrupted every ms by SIGPROF, whose handler spins ~0.3 ms on an
 *	alternate stack: the interrupted frames are not in the copy taken from the handler's sp.
 *
 * sleep: 100 nested calls of deep_sleep with 512-byte frames (~55 KiB), then sleeps of
 *	PHASE_MS in a loop: a stack off the CPU deeper than any copy, the same while it waits.
 *
 * Built without frame pointers: every stack is unwound from the copy. A stack that pairs a
 * route (an outer) with the other one's parser (inner) is wrong.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include "spin.h"

#define BUF	(32 * 1024)

volatile unsigned long ds_sink;

__attribute__((noinline)) void work(double seconds)
{
	double end = spin_now() + seconds;
	unsigned long x = ds_sink;

	while (spin_now() < end)
		for (int i = 0; i < 200; i++)
			x = x * 6364136223846793005UL + i;
	ds_sink = x;
}

__attribute__((noinline)) void parse_get(volatile char *buf)
{
	buf[1] = 'g';
	work(0.0002);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void parse_post(volatile char *buf)
{
	buf[1] = 'p';
	work(0.0002);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void serve(int post)
{
	volatile char buf[BUF];

	buf[0] = (char)post;
	buf[BUF - 1] = 0;
	if (post)
		parse_post(buf);
	else
		parse_get(buf);
	ds_sink += buf[1] + buf[BUF - 1];
}

__attribute__((noinline)) void route_get(void)
{
	serve(0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void route_post(void)
{
	serve(1);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void alt_inner_a(double seconds)
{
	work(seconds);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void alt_inner_b(double seconds)
{
	work(seconds);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void alt_outer_a(double seconds)
{
	alt_inner_a(seconds);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void alt_outer_b(double seconds)
{
	alt_inner_b(seconds);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void alt_handler(int sig)
{
	(void)sig;
	work(0.0003);
	__asm__ volatile("" ::: "memory");
}

static void alt_setup(void)
{
	static char altstack[64 * 1024];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa;
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };

	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = alt_handler;
	sa.sa_flags = SA_ONSTACK | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
}

__attribute__((noinline)) void deep_sleep(int depth, double end, double phase)
{
	volatile char pad[512];

	memset((char *)pad, depth, sizeof(pad));
	if (depth < 100) {
		deep_sleep(depth + 1, end, phase);
	} else {
		struct timespec ts = { 0, (long)(phase * 1e9) };

		while (spin_now() < end)
			nanosleep(&ts, NULL);
	}
	ds_sink += pad[depth % 512];
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "deep";
	double seconds = argc > 2 ? atof(argv[2]) : 2.0;
	double phase = (argc > 3 ? atof(argv[3]) : 2.0) / 1000.0;
	double start = spin_now(), now;
	int alt = !strcmp(mode, "alt");

	if (!strcmp(mode, "sleep")) {
		deep_sleep(1, start + seconds, phase);
		return 0;
	}
	if (alt)
		alt_setup();
	while ((now = spin_now()) < start + seconds) {
		int odd = (long)((now - start) / phase) & 1;

		if (alt)
			(odd ? alt_outer_b : alt_outer_a)(phase);
		else if (odd)
			route_post();
		else
			route_get();
	}
	return 0;
}

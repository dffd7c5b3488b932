// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * coro: a makecontext coroutine on a heap stack, main switching to it in a loop:
 * __start_context -> co_entry -> co_work. glibc's makecontext has co_entry "return" into the
 * first instruction of __start_context (no call before it): the coroutine's stack bottom.
 */
#include <stdlib.h>
#include <ucontext.h>
#include "spin.h"

static ucontext_t main_ctx, co_ctx;

__attribute__((noinline)) static void co_work(void)
{
	volatile unsigned long x = 0;

	for (long i = 0; i < 2000000; i++)
		x += i * i;
}

__attribute__((noinline)) static void co_entry(void)
{
	for (;;) {
		co_work();
		swapcontext(&co_ctx, &main_ctx);
	}
}

int main(int argc, char **argv)
{
	double end = spin_now() + spin_seconds(argc, argv);
	size_t size = 1 << 16;
	char *stack = malloc(size);

	if (!stack || getcontext(&co_ctx))
		return 1;
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = size;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, co_entry, 0);
	while (spin_now() < end)
		swapcontext(&main_ctx, &co_ctx);
	free(stack);
	return 0;
}

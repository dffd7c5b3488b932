// SPDX-License-Identifier: GPL-3.0-or-later
/* The no-frame-pointer function in the middle of mixed_main.c's chain: it keeps no frame
 * record and leaves rbp alone. */

void mixed_middle(double seconds, void (*leaf)(double));

__attribute__((noinline)) void mixed_middle(double seconds, void (*leaf)(double))
{
	leaf(seconds);
	__asm__ volatile("" ::: "memory");
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * scanleaf: main -> sl_caller -> (through a function pointer) sl_leaf, an assembly leaf no
 * CFI describes, in a 5 KiB stretch without FDEs, that keeps 256 bytes of the stack it does
 * not write and uses rbp for something else. Before each call, sl_caller calls sl_stale_a
 * -> sl_stale_b -> sl_stale_c, whose return addresses stay in the words the leaf's frame
 * takes: a scan of the stack meets them before the leaf's own. The leaf's caller is found
 * only by a stack scan; sl_stale_a or sl_stale_b above sl_leaf is wrong.
 */
#include "spin.h"

__asm__(".text\n"
	".globl sl_leaf\n"
	".type sl_leaf,@function\n"
	"sl_leaf:\n"
	"	mov %rbp, %r11\n"
	"	sub $256, %rsp\n"
	"	xor %ebp, %ebp\n"
	"1:	add $3, %rbp\n"
	"	dec %rdi\n"
	"	jnz 1b\n"
	"	add $256, %rsp\n"
	"	mov %r11, %rbp\n"
	"	ret\n"
	"	.fill 5120, 1, 0x90\n"
	".size sl_leaf, .-sl_leaf\n");

void sl_leaf(long n);

volatile unsigned long sl_sink;
void (*volatile sl_fn)(long) = sl_leaf;

__attribute__((noinline)) void sl_stale_c(volatile char *buf)
{
	buf[0] = 1;
	sl_sink += buf[0];
}

__attribute__((noinline)) void sl_stale_b(void)
{
	volatile char buf[64];

	sl_stale_c(buf);
	sl_sink += buf[0];
}

__attribute__((noinline)) void sl_stale_a(void)
{
	volatile char buf[64];

	sl_stale_b();
	buf[0] = 2;
	sl_sink += buf[0];
}

__attribute__((noinline)) void sl_caller(double seconds)
{
	double end = spin_now() + seconds;

	while (spin_now() < end) {
		sl_stale_a();
		sl_fn(300000);
	}
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	sl_caller(spin_seconds(argc, argv));
	return 0;
}

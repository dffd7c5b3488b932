// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * gapleaf: main -> gap_caller -> gap_spin, gap_spin a small hand-written leaf that no CFI
 * describes (as _init, _fini or an assembly routine without .cfi directives), keeping no
 * frame record. Built with frame pointers, the record at rbp is gap_caller's: a guess from it
 * would show main;gap_spin, whole and wrong.
 */
#include "spin.h"

__asm__(".text\n"
	".globl gap_spin\n"
	".type gap_spin,@function\n"
	"gap_spin:\n"
	"	mov $20000, %ecx\n"
	"1:	dec %ecx\n"
	"	jnz 1b\n"
	"	ret\n"
	".size gap_spin, .-gap_spin\n");

void gap_spin(void);

__attribute__((noinline)) void gap_caller(double seconds)
{
	double end = spin_now() + seconds;

	while (spin_now() < end)
		for (int i = 0; i < 100; i++)
			gap_spin();
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	gap_caller(spin_seconds(argc, argv));
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * zerora: main -> zr_caller -> a leaf whose unwind reads a return address of 0 where its
 * caller's is: (big) a 5 KiB stretch of assembly no CFI describes, whose rbp points at two
 * zeroed words above sp (a frame-record guess reads 0, 0); (badcfi) a leaf whose CFI says
 * its return address is at sp while it has pushed two zeros there (CFI that does not
 * follow its code). Neither 0 is a root: such stacks are cut and marked, never shown whole
 * with the leaf alone under the process.
 */
#include <string.h>
#include "spin.h"

__asm__(".text\n"
	".globl zr_big_leaf\n"
	".type zr_big_leaf,@function\n"
	"zr_big_leaf:\n"
	"	mov %rbp, %r11\n"
	"	sub $48, %rsp\n"
	"	movq $0, 16(%rsp)\n"
	"	movq $0, 24(%rsp)\n"
	"	lea 16(%rsp), %rbp\n"
	"1:	dec %rdi\n"
	"	jnz 1b\n"
	"	add $48, %rsp\n"
	"	mov %r11, %rbp\n"
	"	ret\n"
	"	.fill 5120, 1, 0x90\n"
	".size zr_big_leaf, .-zr_big_leaf\n"
	".globl zr_badcfi_leaf\n"
	".type zr_badcfi_leaf,@function\n"
	"zr_badcfi_leaf:\n"
	".cfi_startproc\n"
	"	pushq $0\n"
	"	pushq $0\n"
	"2:	dec %rdi\n"
	"	jnz 2b\n"
	"	add $16, %rsp\n"
	"	ret\n"
	".cfi_endproc\n"
	".size zr_badcfi_leaf, .-zr_badcfi_leaf\n");

void zr_big_leaf(long n);
void zr_badcfi_leaf(long n);

__attribute__((noinline)) void zr_caller(void (*leaf)(long), double seconds)
{
	double end = spin_now() + seconds;

	while (spin_now() < end)
		leaf(200000);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "big";

	zr_caller(strcmp(mode, "badcfi") ? zr_big_leaf : zr_badcfi_leaf,
		  spin_seconds(argc - 1, argv + 1));
	return 0;
}

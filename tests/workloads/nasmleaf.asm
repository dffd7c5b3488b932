; SPDX-License-Identifier: GPL-3.0-or-later
; Hand-written functions as NASM leaves them (x264's, ffmpeg's): global labels without a
; type or a size (`global f`, not `global f:function`), and no CFI. nasmleaf.c calls them.
default rel
section .text

global nasm_one
global nasm_two
global nasm_three

nasm_one:
	mov rax, rdi
.loop:
	dec rax
	jnz .loop
	ret

nasm_two:
	mov rax, rdi
	nop
.loop:
	dec rax
	jnz .loop
	ret

nasm_three:
	mov rax, rdi
	nop
	nop
.loop:
	dec rax
	jnz .loop
	ret

section .note.GNU-stack noalloc noexec nowrite progbits

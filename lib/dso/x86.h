/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * x86: the length and operands of one x86-64 instruction, read from its bytes, enough to
 * follow a function instruction by instruction: where each starts, which general registers it
 * may write, and the few forms that set up and take down a frame record (frames_go.c). Not a
 * disassembler: vector and x87 operands are not described, only told apart from general
 * registers.
 */
#ifndef DSO_X86_H
#define DSO_X86_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* General registers by number (with REX's fourth bit). */
#define X86_RSP		4
#define X86_RBP		5
#define X86_NO_REG	0xff

/* Opcode maps. */
enum x86_map {
	X86_MAP_1B = 0,		/* one-byte opcodes */
	X86_MAP_0F,		/* 0f xx, and VEX/EVEX map 1 */
	X86_MAP_0F38,		/* 0f 38 xx, VEX/EVEX map 2 */
	X86_MAP_0F3A,		/* 0f 3a xx, VEX/EVEX map 3 */
	X86_MAP_OTHER,		/* EVEX maps 5 and 6 (AVX512-FP16): vector operands only */
};

struct x86_insn {
	uint8_t len;		/* bytes, 1 to 15 */
	uint8_t map;		/* enum x86_map */
	uint8_t op;		/* the opcode byte in its map */
	uint8_t rex;		/* the REX prefix (0x40-0x4f), or 0 */
	uint8_t vex;		/* 0, or 2 / 3 for a VEX prefix of that length, 4 for EVEX */
	uint8_t pfx;		/* f2 or f3 (the last), else 66, before the opcode; VEX pp */
	bool modrm;		/* a ModRM byte follows the opcode */
	uint8_t mod;		/* its fields: mod (3: rm is a register) ... */
	uint8_t reg;		/* ... reg, with REX.R / VEX.R (an opcode extension for some) ... */
	uint8_t rm;		/* ... rm with REX.B / VEX.B (the base when rm says SIB) */
	uint8_t base;		/* a memory operand's base register (X86_NO_REG: none, 16: rip) */
	uint8_t index;		/* its index register (X86_NO_REG: none) */
	uint8_t vvvv;		/* VEX/EVEX's extra register (low four bits), else X86_NO_REG */
	int32_t disp;		/* the memory operand's displacement */
	int64_t imm;		/* the immediate (sign-extended), or the branch's relative target */
};

/*
 * Decode the instruction at P (at most N bytes available) into *IN. Returns its length, or 0
 * when the bytes are cut short or are not an instruction of 64-bit mode this decoder knows
 * (3DNow!, XOP, AMX-like maps, prefixes in invalid places).
 */
size_t x86__decode(const unsigned char *p, size_t n, struct x86_insn *in);

/*
 * Whether IN (decoded) may write general register REG (0-15): an operand it writes, or an
 * implicit one (pop, leave, enter, xchg, ...). Errs towards yes: a byte register numbered as
 * REG counts (ch and bpl alike), and an instruction whose operands are not known to this
 * decoder counts when a register field holds REG.
 */
bool x86__writes_gpr(const struct x86_insn *in, int reg);

/* Whether IN only reads its memory operand, if it writes anything it is a general register
 * (loads into general registers, compares, tests, lea): a few common forms; false for any
 * other. */
bool x86__reads_only(const struct x86_insn *in);

/* The register a 64-bit register-to-register mov IN writes from register FROM (either
 * encoding: 89 or 8b with REX.W), or -1 when IN is no such mov. */
int x86__mov_from(const struct x86_insn *in, int from);

/* Whether IN is a push (OP 0x55) or pop (0x5d) of rbp: no REX.B, no operand-size prefix. */
bool x86__is_rbp_push_pop(const struct x86_insn *in, uint8_t op);

/* Whether IN is one-byte opcode OP with REX.W, register operand REG and a memory operand
 * [BASE + disp] with no index: *DISP gets disp (mov d(%rsp), %rbp: 0x8b, X86_RBP,
 * X86_RSP). */
bool x86__mem_form(const struct x86_insn *in, uint8_t op, int reg, int base, int32_t *disp);

/* Whether IN is a call (direct, indirect or far). */
bool x86__is_call(const struct x86_insn *in);

/* Whether control never goes on to the next instruction after IN: ret, jmp, ud2, int3, hlt. */
bool x86__ends_block(const struct x86_insn *in);

/*
 * The change IN makes to rsp when it is one of the forms a frame is made with (add or sub of
 * an immediate to rsp, push or pop of a register, pushf, popf): *DELTA gets it (negative: the
 * stack grows). Returns false for any other instruction.
 */
bool x86__sp_delta(const struct x86_insn *in, int64_t *delta);

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * x86: one x86-64 instruction's length and operands (x86.h), after the Intel SDM volume 2
 * (chapter 2, instruction format; appendix A, opcode maps). Every byte read is checked
 * against the bytes available.
 */
#include <string.h>
#include "dso/x86.h"

#define MAX_LEN		15

/* Legacy prefixes: lock, rep, segments, operand and address size. */
static bool is_prefix(uint8_t b)
{
	switch (b) {
	case 0xf0: case 0xf2: case 0xf3: case 0x2e: case 0x36: case 0x3e: case 0x26:
	case 0x64: case 0x65: case 0x66: case 0x67:
		return true;
	}
	return false;
}

/* One-byte opcodes that do not exist in 64-bit mode (0x62, 0xc4 and 0xc5 are EVEX and VEX
 * there, handled before). */
static bool map1b_invalid(uint8_t op)
{
	switch (op) {
	case 0x06: case 0x07: case 0x0e: case 0x16: case 0x17: case 0x1e: case 0x1f:
	case 0x27: case 0x2f: case 0x37: case 0x3f: case 0x60: case 0x61: case 0x82:
	case 0x9a: case 0xce: case 0xd4: case 0xd5: case 0xd6: case 0xea:
		return true;
	}
	return false;
}

static bool map1b_modrm(uint8_t op)
{
	if (op < 0x40)
		return (op & 7) < 4;
	if ((op >= 0x80 && op <= 0x8f) || (op >= 0xd0 && op <= 0xd3) || (op >= 0xd8 && op <= 0xdf))
		return true;
	switch (op) {
	case 0x63: case 0x69: case 0x6b: case 0xc0: case 0xc1: case 0xc6: case 0xc7:
	case 0xf6: case 0xf7: case 0xfe: case 0xff:
		return true;
	}
	return false;
}

/* Bytes of immediate (or relative target, or absolute address) after a one-byte opcode. */
static int map1b_imm(const struct x86_insn *in, bool o16, bool a32)
{
	uint8_t op = in->op, ext = in->reg & 7;
	int v = o16 ? 2 : 4;

	if (op < 0x40 && (op & 7) == 4)
		return 1;
	if (op < 0x40 && (op & 7) == 5)
		return v;
	if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe7) || (op >= 0xb0 && op <= 0xb7))
		return 1;
	if (op >= 0xb8 && op <= 0xbf)
		return in->rex & 8 ? 8 : v;
	if (op >= 0xa0 && op <= 0xa3)
		return a32 ? 4 : 8;
	switch (op) {
	case 0x68: case 0x69: case 0x81: case 0xa9: case 0xc7:
		return v;
	case 0x6a: case 0x6b: case 0x80: case 0x83: case 0xa8: case 0xc0: case 0xc1: case 0xc6:
	case 0xcd: case 0xeb:
		return 1;
	case 0xe8: case 0xe9:
		return 4;
	case 0xc2: case 0xca:
		return 2;
	case 0xc8:
		return 3;
	case 0xf6:
		return ext < 2 ? 1 : 0;
	case 0xf7:
		return ext < 2 ? v : 0;
	}
	return 0;
}

/* 0f xx: -1 for what this decoder does not know, else whether a ModRM byte follows. */
static int map0f_modrm(uint8_t op, uint8_t pfx)
{
	if ((op >= 0x30 && op <= 0x37) || (op >= 0x80 && op <= 0x8f) || (op >= 0xc8 && op <= 0xcf))
		return op == 0x36 ? -1 : 0;
	switch (op) {
	case 0x04: case 0x0a: case 0x0c: case 0x0f: case 0x24: case 0x25: case 0x26: case 0x27:
	case 0x39: case 0x3b: case 0x3c: case 0x3d: case 0x3e: case 0x3f: case 0x7a: case 0x7b:
	case 0xa6: case 0xa7:
		return -1;
	case 0x78:
		return pfx == 0x66 || pfx == 0xf2 ? -1 : 1;	/* SSE4a extrq, insertq */
	case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0b: case 0x0e: case 0x77:
	case 0xa0: case 0xa1: case 0xa2: case 0xa8: case 0xa9: case 0xaa:
		return 0;
	}
	return 1;
}

/* Bytes of immediate after an opcode of map MAP (0f and beyond, legacy, VEX or EVEX). */
static int map_imm(uint8_t map, uint8_t op)
{
	if (map == X86_MAP_0F3A)
		return 1;
	if (map != X86_MAP_0F)
		return 0;
	if (op >= 0x80 && op <= 0x8f)
		return 4;				/* jcc rel32 */
	if ((op >= 0x70 && op <= 0x73) || op == 0xc2 || op == 0xc4 || op == 0xc5 || op == 0xc6)
		return 1;
	return op == 0xa4 || op == 0xac || op == 0xba ? 1 : 0;
}

/* The N (0 to 8) bytes at P, little endian, sign-extended. */
static int64_t read_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	if (n > 0 && n < 8 && (v >> (8 * n - 1) & 1))
		v |= ~(uint64_t)0 << (8 * n);
	return (int64_t)v;
}

/* The ModRM byte at P[*I] and what follows it (SIB, displacement); R, X, B extend the
 * fields. Returns false when the bytes are cut short. */
static bool read_modrm(const unsigned char *p, size_t n, size_t *i, struct x86_insn *in,
		       int r, int x, int b)
{
	uint8_t m, rmf;
	int disp = 0;

	if (*i >= n)
		return false;
	m = p[(*i)++];
	in->modrm = true;
	in->mod = m >> 6;
	in->reg = (uint8_t)(((m >> 3) & 7) | r << 3);
	rmf = m & 7;
	in->rm = (uint8_t)(rmf | b << 3);
	if (in->mod == 3)
		return true;
	if (rmf == 4) {
		uint8_t s, idx;

		if (*i >= n)
			return false;
		s = p[(*i)++];
		idx = (uint8_t)(((s >> 3) & 7) | x << 3);
		in->index = idx == 4 ? X86_NO_REG : idx;
		in->base = (uint8_t)((s & 7) | b << 3);
		if ((s & 7) == 5 && in->mod == 0) {
			in->base = X86_NO_REG;
			disp = 4;
		}
	} else if (rmf == 5 && in->mod == 0) {
		in->base = 16;				/* rip-relative */
		disp = 4;
	} else {
		in->base = in->rm;
	}
	if (in->mod == 1)
		disp = 1;
	else if (in->mod == 2)
		disp = 4;
	if (disp > (int)(n - *i))
		return false;
	in->disp = (int32_t)read_le(p + *i, disp);
	*i += disp;
	return true;
}

/* A VEX (C4, C5) or EVEX (62) instruction from its first byte at P[I]. */
static size_t decode_vex(const unsigned char *p, size_t n, size_t i, struct x86_insn *in)
{
	uint8_t kind = p[i], b1, b2;
	int r, x = 0, b = 0, map;

	if (in->rex || in->pfx)
		return 0;			/* REX, 66, f2, f3 before VEX: #UD */
	if (kind == 0xc5) {
		if (n - i < 3)
			return 0;
		b1 = p[i + 1];
		r = !(b1 & 0x80);
		in->vvvv = (uint8_t)(~b1 >> 3 & 15);
		b2 = b1;
		map = 1;
		i += 2;
		in->vex = 2;
	} else {
		size_t hdr = kind == 0x62 ? 4 : 3;

		if (n - i < hdr + 1)
			return 0;
		b1 = p[i + 1];
		b2 = p[i + 2];
		r = !(b1 & 0x80);
		x = !(b1 & 0x40);
		b = !(b1 & 0x20);
		map = kind == 0x62 ? b1 & 7 : b1 & 0x1f;
		in->vvvv = (uint8_t)(~b2 >> 3 & 15);
		i += hdr;
		in->vex = kind == 0x62 ? 4 : 3;
		if (kind == 0x62 && (!(b2 & 4) || map == 0 || map == 4 || map == 7))
			return 0;
		if (kind == 0xc4 && (map == 0 || map > 3))
			return 0;
	}
	in->pfx = (b2 & 3) == 1 ? 0x66 : (b2 & 3) == 2 ? 0xf3 : (b2 & 3) == 3 ? 0xf2 : 0;
	in->map = map <= 3 ? (uint8_t)map : X86_MAP_OTHER;
	in->op = p[i++];
	/* vzeroupper and vzeroall take no ModRM. */
	if (!(in->vex != 4 && map == 1 && in->op == 0x77) && !read_modrm(p, n, &i, in, r, x, b))
		return 0;
	{
		/* (map 1 has no jcc rel32 under VEX or EVEX) */
		int imm = map > 3 || (map == 1 && in->op >= 0x80 && in->op <= 0x8f) ? 0 :
			  map_imm((uint8_t)map, in->op);

		if (imm > (int)(n - i))
			return 0;
		in->imm = imm ? read_le(p + i, imm) : 0;
		i += imm;
	}
	return i;
}

size_t x86__decode(const unsigned char *p, size_t n, struct x86_insn *in)
{
	bool o16 = false, a32 = false;
	size_t i = 0, end;
	int imm, has;

	memset(in, 0, sizeof(*in));
	in->base = in->index = in->vvvv = X86_NO_REG;
	if (n > MAX_LEN)
		n = MAX_LEN;
	for (; i < n && (is_prefix(p[i]) || (p[i] & 0xf0) == 0x40); i++) {
		if ((p[i] & 0xf0) == 0x40) {
			in->rex = p[i];		/* only right before the opcode does it count */
			continue;
		}
		in->rex = 0;
		if (p[i] == 0x66) {
			o16 = true;
			if (!in->pfx)
				in->pfx = 0x66;
		} else if (p[i] == 0xf2 || p[i] == 0xf3) {
			in->pfx = p[i];
		} else if (p[i] == 0x67) {
			a32 = true;
		}
	}
	if (i >= n)
		return 0;
	if (p[i] == 0xc4 || p[i] == 0xc5 || p[i] == 0x62) {
		end = decode_vex(p, n, i, in);
		in->len = (uint8_t)end;
		return end;
	}
	in->op = p[i++];
	if (in->op != 0x0f) {
		in->map = X86_MAP_1B;
		if (map1b_invalid(in->op))
			return 0;
		if (map1b_modrm(in->op) &&
		    !read_modrm(p, n, &i, in, in->rex >> 2 & 1, in->rex >> 1 & 1, in->rex & 1))
			return 0;
		if (in->op == 0x8f && (in->reg & 7))
			return 0;		/* XOP */
		/* mov $imm, r/m is /0 of its group; /7 only as xabort, xbegin (f8); the rest
		 * is #UD. */
		if ((in->op == 0xc6 || in->op == 0xc7) && (in->reg & 7) &&
		    !((in->reg & 7) == 7 && in->mod == 3 && (in->rm & 7) == 0))
			return 0;
		imm = map1b_imm(in, o16, a32);
	} else {
		if (i >= n)
			return 0;
		in->op = p[i++];
		if (in->op == 0x38 || in->op == 0x3a) {
			in->map = in->op == 0x38 ? X86_MAP_0F38 : X86_MAP_0F3A;
			if (i >= n)
				return 0;
			in->op = p[i++];
			has = 1;
		} else {
			in->map = X86_MAP_0F;
			has = map0f_modrm(in->op, in->pfx);
			if (has < 0)
				return 0;
		}
		if (has &&
		    !read_modrm(p, n, &i, in, in->rex >> 2 & 1, in->rex >> 1 & 1, in->rex & 1))
			return 0;
		imm = map_imm(in->map, in->op);
		if (in->map == X86_MAP_0F && in->op >= 0x80 && in->op <= 0x8f && o16)
			imm = 2;
	}
	if (imm > (int)(n - i))
		return 0;
	/* enter's two immediates, a moffs address: only their length matters. */
	in->imm = imm && imm <= 8 && in->op != 0xc8 ? read_le(p + i, imm) : 0;
	i += imm;
	in->len = (uint8_t)i;
	return i;
}

/* --- what an instruction writes ----------------------------------------------------------- */

/* VEX and EVEX instructions that write a general register: the rest write vector registers,
 * mask registers or memory. */
static bool vex_writes(const struct x86_insn *in, int r)
{
	bool w_reg = in->reg == r, w_rm = in->mod == 3 && in->rm == r;

	switch (in->map) {
	case X86_MAP_0F:
		switch (in->op) {
		case 0x2c: case 0x2d: case 0x50: case 0xc5: case 0xd7:
			return w_reg;
		case 0x78: case 0x79:			/* EVEX vcvt(t)s[sd]2usi */
			return in->vex == 4 && w_reg;
		case 0x93:				/* kmov r32, k */
			return in->vex != 4 && w_reg;
		case 0x7e:
			return in->pfx == 0x66 && w_rm;
		}
		return false;
	case X86_MAP_0F38:
		if (in->vex == 4)
			return false;
		switch (in->op) {
		case 0xf2: case 0xf5: case 0xf7:	/* andn, bzhi/pdep/pext, bextr/shlx/... */
			return w_reg;
		case 0xf3:				/* blsr, blsmsk, blsi */
			return in->vvvv == r;
		case 0xf6:				/* mulx */
			return w_reg || in->vvvv == r;
		}
		return false;
	case X86_MAP_0F3A:
		if (in->op >= 0x14 && in->op <= 0x17)	/* (v)pextr*, extractps */
			return w_rm;
		return in->vex != 4 && in->op == 0xf0 && w_reg;	/* rorx */
	}
	return false;
}

static bool map0f_writes(const struct x86_insn *in, int r)
{
	bool w_reg = in->modrm && in->reg == r, w_rm = in->modrm && in->mod == 3 && in->rm == r;
	uint8_t op = in->op, ext = in->reg & 7;

	if (op >= 0xc8 && op <= 0xcf)			/* bswap */
		return ((op & 7) | (in->rex & 1) << 3) == r;
	if (op >= 0x40 && op <= 0x4f)			/* cmov */
		return w_reg;
	if (op >= 0x90 && op <= 0x9f)			/* setcc */
		return w_rm;
	switch (op) {
	case 0x00:					/* sldt, str */
		return ext <= 1 && w_rm;
	case 0x01:					/* smsw */
		return ext == 4 && w_rm;
	case 0x02: case 0x03: case 0x2c: case 0x2d: case 0x50: case 0xaf: case 0xb2: case 0xb4:
	case 0xb5: case 0xb6: case 0xb7: case 0xb8: case 0xbc: case 0xbd: case 0xbe: case 0xbf:
	case 0xc5: case 0xd7:
		return w_reg;
	case 0x20: case 0x21: case 0x78: case 0xa4: case 0xa5: case 0xab: case 0xac: case 0xad:
	case 0xb0: case 0xb1: case 0xb3: case 0xbb: case 0xc7:
		return w_rm;
	case 0x7e:					/* movd/movq to r/m; f3: movq xmm */
		return in->pfx != 0xf3 && w_rm;
	case 0xae:					/* rdfsbase, rdgsbase */
		return ext <= 1 && w_rm;
	case 0xba:					/* bts, btr, btc */
		return ext >= 5 && w_rm;
	case 0xc0: case 0xc1:				/* xadd */
		return w_reg || w_rm;
	}
	return false;
}

bool x86__writes_gpr(const struct x86_insn *in, int r)
{
	bool w_reg = in->modrm && in->reg == r, w_rm = in->modrm && in->mod == 3 && in->rm == r;
	uint8_t op = in->op, ext = in->reg & 7;
	int plusr = (op & 7) | (in->rex & 1) << 3;

	if (in->vex)
		return vex_writes(in, r);
	switch (in->map) {
	case X86_MAP_0F:
		return map0f_writes(in, r);
	case X86_MAP_0F38:				/* movbe, crc32, adcx, adox */
		return (op == 0xf0 || op == 0xf1 || op == 0xf6) && w_reg;
	case X86_MAP_0F3A:
		return op >= 0x14 && op <= 0x17 && w_rm;
	case X86_MAP_OTHER:
		return false;
	}
	if (op < 0x40) {
		if ((op & 0x38) == 0x38)
			return false;			/* cmp */
		switch (op & 7) {
		case 0: case 1:
			return w_rm;
		case 2: case 3:
			return w_reg;
		}
		return r == 0;				/* al/eax forms */
	}
	if (op >= 0x58 && op <= 0x5f)			/* pop */
		return plusr == r;
	if (op >= 0x91 && op <= 0x97)			/* xchg rax, r */
		return plusr == r || r == 0;
	if (op == 0x90)					/* nop, or xchg rax, r8 */
		return (in->rex & 1) && (r == 8 || r == 0);
	if (op >= 0xb0 && op <= 0xbf)			/* mov r, imm */
		return plusr == r;
	switch (op) {
	case 0x63: case 0x69: case 0x6b: case 0x8a: case 0x8b: case 0x8d:
		return w_reg;
	case 0x80: case 0x81: case 0x83:
		return ext != 7 && w_rm;
	case 0x86: case 0x87:
		return w_reg || w_rm;
	case 0x88: case 0x89: case 0x8c: case 0x8f: case 0xc0: case 0xc1:
	case 0xd0: case 0xd1: case 0xd2: case 0xd3:
		return w_rm;
	case 0xc6: case 0xc7:
		return ext == 0 && w_rm;
	case 0xc8: case 0xc9:				/* enter, leave */
		return r == X86_RBP || r == X86_RSP;
	case 0xf6: case 0xf7:
		if (ext == 2 || ext == 3)
			return w_rm;
		return ext >= 4 && (r == 0 || r == 2);
	case 0xfe: case 0xff:
		return ext <= 1 && w_rm;
	}
	/* The rest write no register operand; their implicit ones (rax, rcx, rdx, rsi, rdi, rsp,
	 * r11) are not rbp. */
	return false;
}

bool x86__is_call(const struct x86_insn *in)
{
	if (in->vex || in->map != X86_MAP_1B)
		return false;
	return in->op == 0xe8 || (in->op == 0xff && ((in->reg & 7) == 2 || (in->reg & 7) == 3));
}

bool x86__ends_block(const struct x86_insn *in)
{
	if (in->vex)
		return false;
	if (in->map == X86_MAP_0F)
		return in->op == 0x0b || in->op == 0xb9 || in->op == 0xff;	/* ud2, ud1, ud0 */
	if (in->map != X86_MAP_1B)
		return false;
	switch (in->op) {
	case 0xc2: case 0xc3: case 0xca: case 0xcb: case 0xcf: case 0xe9: case 0xeb: case 0xf4:
		return true;
	case 0xff:
		return (in->reg & 7) == 4 || (in->reg & 7) == 5;
	}
	return false;
}

int x86__mov_from(const struct x86_insn *in, int from)
{
	if (in->vex || in->map != X86_MAP_1B || !(in->rex & 8) || in->mod != 3)
		return -1;
	if (in->op == 0x89 && in->reg == from)
		return in->rm;
	if (in->op == 0x8b && in->rm == from)
		return in->reg;
	return -1;
}

bool x86__is_rbp_push_pop(const struct x86_insn *in, uint8_t op)
{
	return !in->vex && in->map == X86_MAP_1B && in->op == op && !(in->rex & 1) &&
	       in->pfx != 0x66;
}

bool x86__mem_form(const struct x86_insn *in, uint8_t op, int reg, int base, int32_t *disp)
{
	if (in->vex || in->map != X86_MAP_1B || in->op != op || !(in->rex & 8) || in->mod == 3 ||
	    in->reg != reg || in->base != base || in->index != X86_NO_REG)
		return false;
	*disp = in->disp;
	return true;
}

bool x86__reads_only(const struct x86_insn *in)
{
	uint8_t op = in->op;

	if (in->vex)
		return false;
	if (in->map == X86_MAP_0F)
		return (op >= 0x40 && op <= 0x4f) || op == 0xaf || op == 0xb6 || op == 0xb7 ||
		       op == 0xbe || op == 0xbf;
	if (in->map != X86_MAP_1B)
		return false;
	if (op < 0x40)
		return (op & 7) == 2 || (op & 7) == 3 || (op & 0x38) == 0x38;
	switch (op) {
	case 0x63: case 0x69: case 0x6b: case 0x84: case 0x85: case 0x8a: case 0x8b: case 0x8d:
		return true;
	case 0x80: case 0x81: case 0x83:
		return (in->reg & 7) == 7;
	}
	return false;
}

bool x86__sp_delta(const struct x86_insn *in, int64_t *delta)
{
	uint8_t op = in->op, ext = in->reg & 7;

	if (in->vex || in->map != X86_MAP_1B || in->pfx == 0x66)
		return false;
	if ((op >= 0x50 && op <= 0x57) || op == 0x9c || op == 0x68 || op == 0x6a ||
	    (op == 0xff && ext == 6)) {
		*delta = -8;				/* push */
		return true;
	}
	if ((op >= 0x58 && op <= 0x5f) || op == 0x9d || op == 0x8f) {
		*delta = 8;				/* pop */
		return true;
	}
	if ((op == 0x81 || op == 0x83) && (in->rex & 8) && in->mod == 3 && in->rm == X86_RSP &&
	    (ext == 0 || ext == 5)) {
		*delta = ext == 0 ? in->imm : -in->imm;	/* add, sub */
		return true;
	}
	if (op == 0x8d && (in->rex & 8) && in->reg == X86_RSP && in->base == X86_RSP &&
	    in->index == X86_NO_REG) {
		*delta = in->disp;			/* lea d(rsp), rsp */
		return true;
	}
	return false;
}

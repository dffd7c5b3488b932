// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * ruby/rbline: iseq.c's succ_index_lookup and get_insn_info_succinct_bitvector (3.1) over
 * bytes read from another process. The table:
 *   imm_part[6]   uint64: 9 ranks of 7 bits each, for positions 0..53 (only
 *                 (iseq_size + 8) / 9 of them allocated while iseq_size < 54)
 *   succ_part[]   from byte 48, 80 bytes each, a block of 512 positions from 54:
 *                 rank (uint32, 4 bytes of padding), small_block_ranks (uint64: 7 ranks of
 *                 9 bits, of the 2nd to 8th 64-bit word), bits[8] (uint64: a position
 *                 with an entry)
 * The rank of position x (entries at or before x) less one is x's entry.
 */
#include "ruby/rbline.h"

#define IMM_SIZE	54	/* IMMEDIATE_TABLE_SIZE */
#define IMM_WORDS	(IMM_SIZE / 9)
#define BLOCK_SIZE	80	/* sizeof(struct succ_dict_block) */

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

size_t rb_line__succ_len(uint32_t iseq_size)
{
	if (iseq_size < IMM_SIZE)
		return (size_t)((iseq_size + 8) / 9) * 8;
	return IMM_WORDS * 8 + (size_t)((iseq_size - IMM_SIZE + 511) / 512) * BLOCK_SIZE;
}

/* succ_index_lookup(SUCC, X), or -1 when SUCC (LEN bytes, of an iseq of ISEQ_SIZE) does not
 * hold what X needs. */
static long succ_rank(const uint8_t *succ, size_t len, uint32_t iseq_size, uint32_t x)
{
	size_t need = rb_line__succ_len(iseq_size);

	if (!succ || len < need || x >= iseq_size)
		return -1;
	if (x < IMM_SIZE) {
		uint32_t i = x / 9, j = x % 9;

		if ((size_t)(i + 1) * 8 > need)
			return -1;
		return (long)((le64(succ + i * 8) >> (j * 7)) & 0x7f);
	} else {
		uint32_t bi = (x - IMM_SIZE) / 512, bit = (x - IMM_SIZE) % 512, sb = bit / 64;
		const uint8_t *b = succ + IMM_WORDS * 8 + (size_t)bi * BLOCK_SIZE;
		uint64_t small, bits;
		long rank;

		if ((size_t)(b - succ) + BLOCK_SIZE > need)
			return -1;
		rank = (long)le32(b);
		small = le64(b + 8);
		bits = le64(b + 16 + sb * 8) << (63 - bit % 64);
		if (sb)
			rank += (long)((small >> ((sb - 1) * 9)) & 0x1ff);
		return rank + __builtin_popcountll(bits);
	}
}

int rb_line__for(const struct rb_layout *l, uint32_t iseq_size, uint32_t info_size,
		 const uint8_t *info, size_t info_len, const uint8_t *succ, size_t succ_len,
		 uint32_t pcpos)
{
	uint32_t pos = pcpos ? pcpos - 1 : 0;
	size_t at;
	long entry;

	if (!l || pcpos > iseq_size)
		return -1;
	if (info_size == 0)
		return 0;
	if (info_size == 1) {
		entry = 0;
	} else {
		long r = succ_rank(succ, succ_len, iseq_size, pos);

		if (r < 1 || r > (long)info_size)
			return -1;
		entry = r - 1;
	}
	at = (size_t)entry * l->insn_info_size + l->insn_info_line;
	if (!info || at + 4 > info_len || l->insn_info_line + 4u > l->insn_info_size)
		return -1;
	{
		int32_t line = (int32_t)le32(info + at);

		return line < 0 ? -1 : line;
	}
}

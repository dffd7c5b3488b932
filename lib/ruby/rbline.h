/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * rbline: the source line of a Ruby frame from its iseq's insns_info as CRuby 3.1 keeps it
 * (VM_INSN_INFO_TABLE_IMPL 2): the entries (struct iseq_insn_info_entry, line first) and the
 * succinct index table that maps an instruction position to its entry; the positions array
 * itself is freed once the table is made (VM_CHECK_MODE 0).
 */
#ifndef RUBY_RBLINE_H
#define RUBY_RBLINE_H

#include <stddef.h>
#include <stdint.h>
#include "ruby/rblayout.h"

/* Bytes of the succinct index table of an iseq of ISEQ_SIZE VALUEs: 8 a word of its
 * immediate part (one per 9 positions, at most 6), then 80 a block of 512 positions past
 * the first 54. rb_line__for reads no further. */
size_t rb_line__succ_len(uint32_t iseq_size);

/*
 * The line of a Ruby frame whose pc is PCPOS VALUEs past its iseq's iseq_encoded (pc points
 * at the next instruction, so the line is that of position PCPOS - 1, as calc_pos in
 * vm_backtrace.c takes it), as caller_locations gives it: rb_iseq_line_no of that position.
 * ISEQ_SIZE and INFO_SIZE are the body's iseq_size and insns_info.size; INFO (INFO_LEN
 * bytes) its insns_info.body, SUCC (SUCC_LEN bytes) its succ_index_table (not read when
 * INFO_SIZE is 1).
 *
 * Returns the line (>= 0; 0 when the iseq has no entries, as Ruby says then), or -1 when
 * PCPOS is past ISEQ_SIZE, INFO or SUCC is short of what the position needs, or the table
 * gives an entry outside [0, INFO_SIZE). Reads only INFO[0 .. INFO_LEN) and
 * SUCC[0 .. SUCC_LEN); a bounded number of steps.
 */
int rb_line__for(const struct rb_layout *l, uint32_t iseq_size, uint32_t info_size,
		 const uint8_t *info, size_t info_len, const uint8_t *succ, size_t succ_len,
		 uint32_t pcpos);

#endif

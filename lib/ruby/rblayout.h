/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * rblayout: where CRuby 3.1 keeps what a profiler reads from outside the process (x86-64,
 * glibc, the default build: VM_CHECK_MODE 0, VM_INSN_INFO_TABLE_IMPL 2, USE_ISEQ_NODE_ID,
 * no USE_RVARGC): the offsets BPF follows to a thread's control frames (struct rb_offsets,
 * bpf/profile.h) and those userspace needs to name a frame's
 * iseq (label, path, first line, line table) and read the strings and arrays they point
 * at. Every number comes from Debian bookworm's ruby3.1 (3.1.2): its own headers and
 * config.h compiled with its flags; tests/integration/rblayout_check.py checks them again
 * against the headers and a live interpreter.
 */
#ifndef RUBY_RBLAYOUT_H
#define RUBY_RBLAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "profile.h"

struct rb_layout {
	int major, minor;
	struct rb_offsets bpf;

	/* rb_vm_t, reached from the library's ruby_current_vm_ptr */
	uint16_t vm_main_thread;	/* .ractor.main_thread */

	/* rb_iseq_constant_body */
	uint16_t body_type;		/* enum iseq_type (unsigned int) */
	uint16_t body_iseq_size;	/* unsigned int: VALUEs of iseq_encoded */
	uint16_t body_iseq_encoded;	/* VALUE * */
	uint16_t body_pathobj;		/* location.pathobj: String, or Array [path, realpath] */
	uint16_t body_base_label;	/* location.base_label: String */
	uint16_t body_label;		/* location.label: String ("block in foo") */
	uint16_t body_first_lineno;	/* location.first_lineno: a Fixnum */
	uint16_t body_insns_info;	/* insns_info.body: struct iseq_insn_info_entry[] */
	uint16_t body_insns_positions;	/* insns_info.positions (NULL once the table is made) */
	uint16_t body_insns_size;	/* insns_info.size (unsigned int) */
	uint16_t body_succ_table;	/* insns_info.succ_index_table */
	uint16_t body_read;		/* bytes from the body's start covering them all */
	uint16_t insn_info_size;	/* sizeof(struct iseq_insn_info_entry) */
	uint16_t insn_info_line;	/* .line_no (int) */

	/* RBasic, RString, RArray */
	uint16_t obj_flags;		/* RBasic.flags: type in T_MASK, then FL_USER bits */
	uint16_t str_heap_len;		/* RString.as.heap.len (long) */
	uint16_t str_heap_ptr;		/* RString.as.heap.ptr */
	uint16_t str_embed;		/* RString.as.embed.ary */
	uint16_t str_size;		/* sizeof(struct RString) */
	uint16_t ary_embed;		/* RArray.as.ary */
	uint16_t ary_heap_len;		/* RArray.as.heap.len */
	uint16_t ary_heap_ptr;		/* RArray.as.heap.ptr */
	uint32_t type_mask;		/* RUBY_T_MASK */
	uint32_t type_string;		/* RUBY_T_STRING */
	uint32_t type_array;		/* RUBY_T_ARRAY */
	uint32_t str_noembed;		/* RSTRING_NOEMBED (FL_USER1) */
	uint32_t str_embed_len_mask;	/* RSTRING_EMBED_LEN_MASK, */
	uint8_t str_embed_len_shift;	/* its shift */
	uint32_t ary_embed_flag;	/* RARRAY_EMBED_FLAG (FL_USER1) */
	uint32_t ary_embed_len_mask;	/* RARRAY_EMBED_LEN_MASK, */
	uint8_t ary_embed_len_shift;	/* its shift */
};

/* The layout of CRuby MAJOR.MINOR (a static table, never freed), or NULL when it is not
 * 3.1. */
const struct rb_layout *rb_layout__for(int major, int minor);

/* What a control frame is, from its pc, iseq and ep[0] as BPF reads them. */
enum rb_frame_kind {
	RB_FRAME_SKIP = 0,	/* IFUNC, dummy, or an iseq frame without pc: not in backtraces */
	RB_FRAME_RUBY,		/* iseq and pc: a method, block, class body, top, eval, rescue */
	RB_FRAME_CFUNC,		/* a method in C: its name from the method entry at ep[-2] */
};

/* The kind of a frame whose pc, iseq and ep[0] are PC, ISEQ and EP0; as
 * rb_ec_partial_backtrace_object tells them apart (a frame with an iseq is Ruby when its pc
 * is set; without, a C method when its magic is CFUNC). */
enum rb_frame_kind rb_frame__kind(uint64_t pc, uint64_t iseq, uint64_t ep0);

/*
 * The word BPF records for a frame (bpf/profile.h): PC, ISEQ and EP0 as for rb_frame__kind,
 * ME the word at ep[-2]. 0 for a frame not recorded (RB_FRAME_SKIP, an address past 48 bits
 * or not 8-aligned).
 */
uint64_t rb_word__make(uint64_t pc, uint64_t iseq, uint64_t ep0, uint64_t me);

/*
 * The position (pc - iseq_encoded, in VALUEs) of the Ruby frame word WORD, given its iseq's
 * ISEQ_ENCODED and ISEQ_SIZE as read later. 0 and *POS set when the position is at most
 * ISEQ_SIZE and ISEQ_SIZE is below 0x10000 (the word keeps 16 bits of pc / 8); -EINVAL
 * otherwise or when WORD is a CFUNC word.
 */
int rb_word__pos(uint64_t word, uint64_t iseq_encoded, uint32_t iseq_size, uint32_t *pos);

#endif

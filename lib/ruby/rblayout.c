// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * ruby/rblayout: CRuby 3.1's layout as Debian bookworm's ruby3.1 (3.1.2p20, packaged as
 * 3.1.7+really3.1.2) builds it: offsetof and sizeof from its own headers (vm_core.h,
 * ractor_core.h, iseq.h, include/ruby/internal/core/r*.h) with its config.h and CFLAGS
 * (tests/integration/rblayout_check.py compiles them again, and walks a live ruby3.1 by
 * the table). Other 3.1.x releases keep the same structs on x86-64 glibc; rb_ractor_t's
 * threads.running_ec (520) sits behind pthread mutexes and conds, so it is glibc's.
 *
 * The walk, for the reader of the table:
 *   ruby_current_vm_ptr (.bss, exported) -> rb_vm_t -> .ractor.main_ractor
 *     -> .threads.running_ec: the ec of the thread holding the main ractor's GVL
 *   ruby_current_ec (a TLS variable, exported, general-dynamic: module libruby, offset 8 of
 *     its 16-byte block) -> the ec the thread runs (its fiber's), set at thread start and at
 *     fiber switches, not cleared when the GVL is released
 *   ec -> vm_stack, vm_stack_size, cfp: frames from cfp up by 64 bytes to
 *     vm_stack + vm_stack_size VALUEs; the last one is the thread's dummy frame
 *   frame -> pc (next instruction), iseq -> body -> location, iseq_encoded, insns_info;
 *     ep[0] its flags (magic, FINISH), ep[-2] its method entry or cref
 */
#include <errno.h>
#include "ruby/rblayout.h"

static const struct rb_layout layouts[] = {
	{
		.major = 3, .minor = 1,
		.bpf = {
			.vm_main_ractor = 32, .ractor_running_ec = 520, .ractor_threads = 304,
			.thread_node = 0, .thread_ec = 40, .thread_tid = 88, .thread_pthread = 80,
			.thread_ractor = 24,
			.ec_vm_stack = 0, .ec_vm_stack_size = 8, .ec_cfp = 16, .ec_thread = 48,
			.cfp_size = 64, .cfp_pc = 0, .cfp_iseq = 16, .cfp_ep = 32, .cfp_read = 40,
			.iseq_body = 16, .body_first_lineno = 88,
		},
		.vm_main_thread = 40,
		.body_type = 0, .body_iseq_size = 4, .body_iseq_encoded = 8, .body_pathobj = 64,
		.body_base_label = 72, .body_label = 80, .body_first_lineno = 88,
		.body_insns_info = 120, .body_insns_positions = 128, .body_insns_size = 136,
		.body_succ_table = 144, .body_read = 152,
		.insn_info_size = 12, .insn_info_line = 0,
		.obj_flags = 0, .str_heap_len = 16, .str_heap_ptr = 24, .str_embed = 16,
		.str_size = 40, .ary_embed = 16, .ary_heap_len = 16, .ary_heap_ptr = 32,
		.type_mask = 0x1f, .type_string = 0x05, .type_array = 0x07,
		.str_noembed = 0x2000, .str_embed_len_mask = 0x7c000, .str_embed_len_shift = 14,
		.ary_embed_flag = 0x2000, .ary_embed_len_mask = 0x18000, .ary_embed_len_shift = 15,
	},
};

const struct rb_layout *rb_layout__for(int major, int minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].major == major && layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

enum rb_frame_kind rb_frame__kind(uint64_t pc, uint64_t iseq, uint64_t ep0)
{
	if (iseq)
		return pc ? RB_FRAME_RUBY : RB_FRAME_SKIP;
	return (ep0 & RB_FRAME_MAGIC_MASK) == RB_FRAME_MAGIC_CFUNC ? RB_FRAME_CFUNC
								    : RB_FRAME_SKIP;
}

uint64_t rb_word__make(uint64_t pc, uint64_t iseq, uint64_t ep0, uint64_t me)
{
	switch (rb_frame__kind(pc, iseq, ep0)) {
	case RB_FRAME_RUBY:
		if (iseq & ~RB_WORD_ADDR)
			return 0;
		return iseq | ((pc >> 3) & 0xffff) << RB_PC_SHIFT |
		       ((ep0 & RB_FRAME_FLAG_FINISH) ? RB_WORD_ENTRY : 0);
	case RB_FRAME_CFUNC:
		if (!me || (me & ~RB_WORD_ADDR))
			return 0;
		return me | RB_WORD_CFUNC;
	default:
		return 0;
	}
}

int rb_word__pos(uint64_t word, uint64_t iseq_encoded, uint32_t iseq_size, uint32_t *pos)
{
	uint32_t p;

	if ((word & RB_WORD_CFUNC) || !(word & RB_WORD_ADDR) || !pos || iseq_size >= 0x10000 ||
	    (iseq_encoded & 7))
		return -EINVAL;
	p = (uint32_t)((word >> RB_PC_SHIFT) - (iseq_encoded >> 3)) & 0xffff;
	/* A pc may be iseq_encoded + iseq_size (past the last instruction), no further. */
	if (p > iseq_size)
		return -EINVAL;
	*pos = p;
	return 0;
}

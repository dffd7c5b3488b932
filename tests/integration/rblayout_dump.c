// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * rblayout_dump: lib/ruby's 3.1 table as JSON, for tests/integration/rblayout_check.py,
 * which builds this file and lib/ruby/*.c into a shared object and calls lib/ruby's
 * functions through ctypes (the walk of a live interpreter takes the decoding the
 * profiler will).
 */
#include <stdio.h>
#include "ruby/rblayout.h"
#include "ruby/rbline.h"
#include "ruby/rbstr.h"

int rblayout_dump_json(int major, int minor, char *out, size_t len);

int rblayout_dump_json(int major, int minor, char *out, size_t len)
{
	const struct rb_layout *l = rb_layout__for(major, minor);
	const struct rb_offsets *b;

	if (!l)
		return -1;
	b = &l->bpf;
	return snprintf(out, len,
		"{\"vm_main_ractor\": %u, \"ractor_running_ec\": %u, \"ractor_threads\": %u, "
		"\"thread_node\": %u, \"thread_ec\": %u, \"thread_tid\": %u, "
		"\"thread_pthread\": %u, \"thread_ractor\": %u, \"ec_vm_stack\": %u, "
		"\"ec_vm_stack_size\": %u, \"ec_cfp\": %u, \"ec_thread\": %u, \"cfp_size\": %u, "
		"\"cfp_pc\": %u, \"cfp_iseq\": %u, \"cfp_ep\": %u, \"cfp_read\": %u, "
		"\"iseq_body\": %u, \"bpf_body_first_lineno\": %u, "
		"\"vm_main_thread\": %u, \"body_type\": %u, \"body_iseq_size\": %u, "
		"\"body_iseq_encoded\": %u, \"body_pathobj\": %u, \"body_base_label\": %u, "
		"\"body_label\": %u, \"body_first_lineno\": %u, \"body_insns_info\": %u, "
		"\"body_insns_positions\": %u, \"body_insns_size\": %u, \"body_succ_table\": %u, "
		"\"body_read\": %u, \"insn_info_size\": %u, \"insn_info_line\": %u, "
		"\"obj_flags\": %u, \"str_heap_len\": %u, \"str_heap_ptr\": %u, \"str_embed\": %u, "
		"\"str_size\": %u, \"ary_embed\": %u, \"ary_heap_len\": %u, \"ary_heap_ptr\": %u, "
		"\"type_mask\": %u, \"type_string\": %u, \"type_array\": %u, \"str_noembed\": %u, "
		"\"str_embed_len_mask\": %u, \"str_embed_len_shift\": %u, \"ary_embed_flag\": %u, "
		"\"ary_embed_len_mask\": %u, \"ary_embed_len_shift\": %u, "
		"\"VM_FRAME_MAGIC_MASK\": %u, \"VM_FRAME_MAGIC_CFUNC\": %u, "
		"\"VM_FRAME_MAGIC_IFUNC\": %u, \"VM_FRAME_MAGIC_DUMMY\": %u, "
		"\"VM_FRAME_FLAG_FINISH\": %u, \"VM_FRAME_FLAG_CFRAME\": %u, "
		"\"VM_ENV_DATA_INDEX_ME_CREF\": 2, \"VM_ENV_DATA_INDEX_FLAGS\": 0, "
		"\"VM_INSN_INFO_TABLE_IMPL\": 2, \"VM_CHECK_MODE\": 0}",
		b->vm_main_ractor, b->ractor_running_ec, b->ractor_threads, b->thread_node,
		b->thread_ec, b->thread_tid, b->thread_pthread, b->thread_ractor, b->ec_vm_stack,
		b->ec_vm_stack_size, b->ec_cfp, b->ec_thread, b->cfp_size, b->cfp_pc, b->cfp_iseq,
		b->cfp_ep, b->cfp_read, b->iseq_body, b->body_first_lineno,
		l->vm_main_thread, l->body_type, l->body_iseq_size, l->body_iseq_encoded,
		l->body_pathobj, l->body_base_label, l->body_label, l->body_first_lineno,
		l->body_insns_info, l->body_insns_positions, l->body_insns_size,
		l->body_succ_table, l->body_read, l->insn_info_size, l->insn_info_line,
		l->obj_flags, l->str_heap_len, l->str_heap_ptr, l->str_embed, l->str_size,
		l->ary_embed, l->ary_heap_len, l->ary_heap_ptr, l->type_mask, l->type_string,
		l->type_array, l->str_noembed, l->str_embed_len_mask, l->str_embed_len_shift,
		l->ary_embed_flag, l->ary_embed_len_mask, l->ary_embed_len_shift,
		RB_FRAME_MAGIC_MASK, RB_FRAME_MAGIC_CFUNC, RB_FRAME_MAGIC_IFUNC,
		RB_FRAME_MAGIC_DUMMY, RB_FRAME_FLAG_FINISH, RB_FRAME_FLAG_CFRAME);
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * rblayout_offsets: the 3.1 offsets and constants lib/ruby/rblayout.c holds, as the
 * interpreter's own headers give them: built by tests/integration/rblayout_check.py
 * against a ruby3.1 source tree (-DRB_INTERNAL: vm_core.h, ractor_core.h, iseq.h; `apt-get
 * source ruby3.1`) or the public headers of ruby3.1-dev only, with the arch config.h of
 * ruby3.1-dev and the package's CFLAGS. Prints "name value" lines named as
 * rblayout_dump's JSON.
 */
#include "ruby/ruby.h"
#ifdef RB_INTERNAL
#include "vm_core.h"
#include "ractor_core.h"
#include "iseq.h"
#endif
#include <stdio.h>
#include <stddef.h>

#define P(name, v) printf("%s %lu\n", name, (unsigned long)(v))
#define O(name, t, f) P(name, offsetof(t, f))

int main(void)
{
#ifdef RB_INTERNAL
	O("vm_main_ractor", rb_vm_t, ractor.main_ractor);
	O("vm_main_thread", rb_vm_t, ractor.main_thread);
	O("ractor_running_ec", rb_ractor_t, threads.running_ec);
	O("ractor_threads", rb_ractor_t, threads.set);
	O("thread_node", rb_thread_t, lt_node);
	O("thread_ec", rb_thread_t, ec);
	O("thread_tid", rb_thread_t, tid);
	O("thread_pthread", rb_thread_t, thread_id);
	O("thread_ractor", rb_thread_t, ractor);
	O("ec_vm_stack", rb_execution_context_t, vm_stack);
	O("ec_vm_stack_size", rb_execution_context_t, vm_stack_size);
	O("ec_cfp", rb_execution_context_t, cfp);
	O("ec_thread", rb_execution_context_t, thread_ptr);
	P("cfp_size", sizeof(rb_control_frame_t));
	O("cfp_pc", rb_control_frame_t, pc);
	O("cfp_iseq", rb_control_frame_t, iseq);
	O("cfp_ep", rb_control_frame_t, ep);
	P("cfp_read", offsetof(rb_control_frame_t, ep) + sizeof(((rb_control_frame_t *)0)->ep));
	O("iseq_body", rb_iseq_t, body);
	O("bpf_body_first_lineno", struct rb_iseq_constant_body, location.first_lineno);
	O("body_type", struct rb_iseq_constant_body, type);
	O("body_iseq_size", struct rb_iseq_constant_body, iseq_size);
	O("body_iseq_encoded", struct rb_iseq_constant_body, iseq_encoded);
	O("body_pathobj", struct rb_iseq_constant_body, location.pathobj);
	O("body_base_label", struct rb_iseq_constant_body, location.base_label);
	O("body_label", struct rb_iseq_constant_body, location.label);
	O("body_first_lineno", struct rb_iseq_constant_body, location.first_lineno);
	O("body_insns_info", struct rb_iseq_constant_body, insns_info.body);
	O("body_insns_positions", struct rb_iseq_constant_body, insns_info.positions);
	O("body_insns_size", struct rb_iseq_constant_body, insns_info.size);
	O("body_succ_table", struct rb_iseq_constant_body, insns_info.succ_index_table);
	P("body_read", offsetof(struct rb_iseq_constant_body, insns_info.succ_index_table) + 8);
	P("insn_info_size", sizeof(struct iseq_insn_info_entry));
	O("insn_info_line", struct iseq_insn_info_entry, line_no);
	/* what rbline.c assumes of the build */
	P("VM_INSN_INFO_TABLE_IMPL", VM_INSN_INFO_TABLE_IMPL);
	P("VM_CHECK_MODE", VM_CHECK_MODE);
	P("VM_FRAME_MAGIC_MASK", VM_FRAME_MAGIC_MASK);
	P("VM_FRAME_MAGIC_CFUNC", VM_FRAME_MAGIC_CFUNC);
	P("VM_FRAME_MAGIC_IFUNC", VM_FRAME_MAGIC_IFUNC);
	P("VM_FRAME_MAGIC_DUMMY", VM_FRAME_MAGIC_DUMMY);
	P("VM_FRAME_FLAG_FINISH", VM_FRAME_FLAG_FINISH);
	P("VM_FRAME_FLAG_CFRAME", VM_FRAME_FLAG_CFRAME);
	P("VM_ENV_DATA_INDEX_ME_CREF", -(long)VM_ENV_DATA_INDEX_ME_CREF);
	P("VM_ENV_DATA_INDEX_FLAGS", VM_ENV_DATA_INDEX_FLAGS);
#endif
	O("obj_flags", struct RBasic, flags);
	O("str_heap_len", struct RString, as.heap.len);
	O("str_heap_ptr", struct RString, as.heap.ptr);
	O("str_embed", struct RString, as.embed.ary);
	P("str_size", sizeof(struct RString));
	O("ary_embed", struct RArray, as.ary);
	O("ary_heap_len", struct RArray, as.heap.len);
	O("ary_heap_ptr", struct RArray, as.heap.ptr);
	P("type_mask", RUBY_T_MASK);
	P("type_string", RUBY_T_STRING);
	P("type_array", RUBY_T_ARRAY);
	P("str_noembed", RSTRING_NOEMBED);
	P("str_embed_len_mask", RSTRING_EMBED_LEN_MASK);
	P("str_embed_len_shift", RSTRING_EMBED_LEN_SHIFT);
	P("ary_embed_flag", RARRAY_EMBED_FLAG);
	P("ary_embed_len_mask", RARRAY_EMBED_LEN_MASK);
	P("ary_embed_len_shift", RARRAY_EMBED_LEN_SHIFT);
	return 0;
}

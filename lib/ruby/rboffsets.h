/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * rboffsets: PROPOSED for bpf/profile.h (issue 29, Ruby), next to struct py_offsets: what
 * BPF follows from the sampled thread to its Ruby control frames, and the words it records
 * per frame. It lives here until the BPF side is written; then this file's body moves to
 * bpf/profile.h as it is, and rblayout.h includes "profile.h" instead (lib/python's way).
 * Nothing in bpf/ uses it yet.
 *
 * Per sample (see lib/ruby/README.md):
 *   ec      = *(fsbase + rb_proc.ec_tls)           ruby_current_ec of the thread (static TLS)
 *   running = *(rb_proc.main_ractor + ractor_running_ec)   the GVL holder's ec
 *   {vm_stack, vm_stack_size, cfp} = one 24-byte read of ec
 *   per frame, from cfp up to (not into) the last frame before vm_stack + vm_stack_size*8:
 *     {pc, iseq, ep} = one read of cfp_read bytes at the frame; ep[-2..0] one 24-byte read
 *   then RB_MARK (| RB_MARK_NOGVL) and one word per frame, leaf first, like PY_MARK's.
 */
#ifndef RUBY_RBOFFSETS_H
#define RUBY_RBOFFSETS_H

#include <linux/types.h>

#define RB_NO_FIELD	0xffff
#define RB_MAX_FRAMES	64	/* control frames looked at per sample */

struct rb_offsets {
	__u16 vm_main_ractor;		/* rb_vm_t.ractor.main_ractor */
	__u16 ractor_running_ec;	/* rb_ractor_t.threads.running_ec: the GVL holder's ec */
	__u16 ractor_threads;		/* rb_ractor_t.threads.set (list_head: .next first) */
	__u16 thread_node;		/* rb_thread_t.lt_node (list_node: .next first) */
	__u16 thread_ec;		/* rb_thread_t.ec (the fiber it runs now) */
	__u16 thread_tid;		/* rb_thread_t.tid (int: the kernel's tid) */
	__u16 thread_pthread;		/* rb_thread_t.thread_id (pthread_t: the fs base) */
	__u16 thread_ractor;		/* rb_thread_t.ractor */
	__u16 ec_vm_stack;		/* rb_execution_context_t.vm_stack (VALUE *) */
	__u16 ec_vm_stack_size;		/* .vm_stack_size (size_t, in VALUEs) */
	__u16 ec_cfp;			/* .cfp (the leaf control frame) */
	__u16 ec_thread;		/* .thread_ptr */
	__u16 cfp_size;			/* sizeof(rb_control_frame_t): frames go up by it */
	__u16 cfp_pc;			/* rb_control_frame_t.pc (the next instruction; 0: C) */
	__u16 cfp_iseq;			/* .iseq (rb_iseq_t *; 0 in a CFUNC frame) */
	__u16 cfp_ep;			/* .ep: ep[0] the frame's flags, ep[-2] its method entry */
	__u16 cfp_read;			/* bytes from the frame's start covering pc, iseq, ep */
	__u16 iseq_body;		/* rb_iseq_t.body (announcing an iseq) */
	__u16 body_first_lineno;	/* rb_iseq_constant_body.location.first_lineno (a Fixnum) */
	__u16 pad;
};

/* ep[0]'s flags (VM_FRAME_MAGIC_*, VM_FRAME_FLAG_*: vm_core.h). */
#define RB_FRAME_MAGIC_MASK	0x7fff0001u
#define RB_FRAME_MAGIC_CFUNC	0x55550001u
#define RB_FRAME_MAGIC_IFUNC	0x66660001u
#define RB_FRAME_MAGIC_DUMMY	0x79990001u
#define RB_FRAME_FLAG_FINISH	0x0020u	/* the first frame a run of vm_exec pushed */
#define RB_FRAME_FLAG_CFRAME	0x0080u	/* a C frame (CFUNC, IFUNC, dummy) */

/*
 * The words after RB_MARK, leaf first. A Ruby frame (iseq and pc not 0):
 *   bits 3-47   the iseq's address (rb_iseq_t: 8-aligned, below 1 << 48)
 *   bits 48-63  (pc >> 3) & 0xffff: with the iseq's iseq_encoded, its position exactly while
 *               iseq_size < 0x10000 VALUEs (rb_word__pos)
 *   bit 0       RB_WORD_ENTRY: ep[0] had VM_FRAME_FLAG_FINISH: the first frame of a run of
 *               vm_exec (rb_vm_exec's frame in the native stack)
 * A CFUNC frame: its method entry (ep[-2], a rb_callable_method_entry_t) | RB_WORD_CFUNC,
 * bits 48-63 0. IFUNC and dummy frames, and the stack's last frame, are not recorded.
 */
#define RB_MARK		0xffffffffffffffe0ULL
#define RB_MARK_NOGVL	1ULL		/* in RB_MARK: the thread did not hold the GVL */
#define RB_WORD_ENTRY	1ULL
#define RB_WORD_CFUNC	2ULL
#define RB_WORD_ADDR	0x0000fffffffffff8ULL
#define RB_PC_SHIFT	48

/* A process running Ruby (rb_procs, by tgid), filled by userspace. */
struct rb_proc {
	__u64 main_ractor;	/* *(*ruby_current_vm_ptr + vm_main_ractor): fixed for life */
	__s64 ec_tls;		/* &ruby_current_ec - fs base, the same in every thread while
				 * libruby's TLS is static (linked at start); 0: not known
				 * (dlopen'ed libruby): find the thread by tid in the list */
	struct rb_offsets off;
};

#endif

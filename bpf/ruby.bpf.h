/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The Ruby control frames of the sampled thread, read as the sample is taken (CRuby 3.1:
 * struct rb_offsets, bpf/profile.h): the thread's ec (its thread-local ruby_current_ec once
 * its place is learnt, else the GVL holder's), when its thread is the sampled one (its
 * pthread_t is the fs base), then its control frames from cfp up to the last before the
 * end of its VM stack. A Ruby frame (an iseq and a pc) is one word: the
 * iseq's address, 16 bits of pc / 8 and RB_WORD_ENTRY for the first frame of a run of the
 * VM's loop (VM_FRAME_FLAG_FINISH); a C method's frame is its method entry with
 * RB_WORD_CFUNC; other frames are not kept. Iseqs new to a process are sent once
 * (`rb_iseqs`, with their body, first line and the period: one in a freed one's place is
 * sent again, and each in each period). Every read
 * may fail: a frame that cannot be read ends the Ruby frames there. Included by
 * profile.bpf.c only.
 */
#ifndef PROFILE_RUBY_BPF_H
#define PROFILE_RUBY_BPF_H

const volatile bool ruby = false;	/* processes in `rb_procs` have their Ruby frames read */
/* Set by userspace before the first `rb_procs` entry (never cleared): until then no sample
 * looks there. */
bool rb_any;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct rb_proc);
} rb_procs SEC(".maps");

struct rb_iseq_key {
	__u32 pid;
	__u32 pad;
	__u64 iseq;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct rb_iseq_key);
	__type(value, __u64);
} rb_iseqs SEC(".maps");

struct rb_walk {
	const struct rb_offsets *o;
	struct ustack *st;
	__u64 cfp, end;		/* the frame to read next; the last one (not read) */
	__u64 gen;
	__u32 pid;
	__u32 pad;
};

/* Iseq ISEQ of process W->pid sent to userspace, unless it was (with the same body and
 * first line). */
static __always_inline void rb_announce(struct rb_walk *w, __u64 iseq)
{
	struct rb_iseq_key k = { .pid = w->pid, .iseq = iseq };
	struct rb_iseq_event ev = { .pid = w->pid, .magic = RB_ISEQ_MAGIC, .iseq = iseq,
				    .gen = w->gen };
	__u64 body = 0, line = 0, *known;

	if (bpf_probe_read_user(&body, sizeof(body), (void *)(iseq + w->o->iseq_body)) || !body)
		return;
	bpf_probe_read_user(&line, sizeof(line), (void *)(body + w->o->body_first_lineno));
	/* (And the period: in continuous mode userspace keeps them for a period.) */
	line ^= body << 16 ^ (__u64)period << 56;
	known = bpf_map_lookup_elem(&rb_iseqs, &k);
	if (known && *known == line)
		return;
	bpf_map_update_elem(&rb_iseqs, &k, &line, BPF_ANY);
	if (bpf_ringbuf_output(&events, &ev, sizeof(ev), ring_flags()))
		stat_inc(STAT_EVENTS_LOST);
}

/* bpf_loop's callback: one control frame into W->st. */
static long rb_step(__u64 i, void *arg)
{
	struct rb_walk *w = arg;
	const struct rb_offsets *o = w->o;
	struct ustack *st = w->st;
	__u64 cfp = w->cfp, pc = 0, iseq = 0, ep = 0, ep0 = 0, me = 0, word = 0;
	__u32 n;

	if (!st || !cfp || cfp >= w->end)
		return 1;
	n = st->nr;
	if (n >= PROFILE_MAX_DEPTH)
		return 1;
	w->cfp = cfp + o->cfp_size;
	if (bpf_probe_read_user(&pc, sizeof(pc), (void *)(cfp + o->cfp_pc)) ||
	    bpf_probe_read_user(&iseq, sizeof(iseq), (void *)(cfp + o->cfp_iseq)) ||
	    bpf_probe_read_user(&ep, sizeof(ep), (void *)(cfp + o->cfp_ep)) ||
	    bpf_probe_read_user(&ep0, sizeof(ep0), (void *)ep))
		return 1;
	if (iseq) {
		if (!pc || (iseq & ~RB_WORD_ADDR))
			return 0;	/* not in backtraces */
		word = iseq | ((pc >> 3) & 0xffff) << RB_PC_SHIFT |
		       ((ep0 & RB_FRAME_FLAG_FINISH) ? RB_WORD_ENTRY : 0);
		rb_announce(w, iseq);
	} else if ((ep0 & RB_FRAME_MAGIC_MASK) == RB_FRAME_MAGIC_CFUNC) {
		if (bpf_probe_read_user(&me, sizeof(me), (void *)(ep - 16)) || !me ||
		    (me & ~RB_WORD_ADDR))
			return 0;
		word = me | RB_WORD_CFUNC;
	} else {
		return 0;
	}
	return ustack_push(st, word) ? 0 : 1;
}

struct rb_learn {
	__u64 fsbase, ec;
	__s64 found;
};

/* bpf_loop's callback: the word I + 1 below the fs base, the GVL holder's ec? */
static long rb_learn_step(__u64 i, void *arg)
{
	struct rb_learn *l = arg;
	__u64 v = 0, at = l->fsbase - 8 * (i + 1);

	if (bpf_probe_read_user(&v, sizeof(v), (void *)at))
		return 1;
	if (v == l->ec) {
		l->found = -(__s64)(8 * (i + 1));
		return 1;
	}
	return 0;
}

/*
 * The Ruby frames of the current thread (fs base FSBASE) of process TGID, when it is one
 * running CRuby, after RB_MARK behind the NR frames of ST (GEN: the sample's). The thread's
 * ec: its ruby_current_ec once its place in the static TLS is known (learnt from the GVL
 * holder's: the word below its fs base that holds its ec), else the GVL holder's when it is
 * this thread; a thread not holding the GVL gets RB_MARK_NOGVL. Returns how many. A global
 * function: the verifier checks it once.
 */
__noinline int rb_frames(struct ustack *st, __u32 tgid, __u64 fsbase, __u64 gen)
{
	struct rb_proc *p = bpf_map_lookup_elem(&rb_procs, &tgid);
	struct rb_walk w = { .st = st, .pid = tgid, .gen = gen };
	__u64 vm = 0, ractor = 0, ec = 0, running = 0, th = 0, id = 0, stack = 0, size = 0;
	__u64 mark = RB_MARK;
	__u32 n;

	if (!p || !st)
		return 0;
	w.o = &p->off;
	if (bpf_probe_read_user(&vm, sizeof(vm), (void *)p->vm_ptr) || !vm ||
	    bpf_probe_read_user(&ractor, sizeof(ractor), (void *)(vm + p->off.vm_main_ractor)) ||
	    !ractor ||
	    bpf_probe_read_user(&running, sizeof(running),
				(void *)(ractor + p->off.ractor_running_ec)))
		return 0;
	ec = running;
	if (p->ec_tls && bpf_probe_read_user(&ec, sizeof(ec), (void *)(fsbase + p->ec_tls)))
		return 0;
	if (!ec ||
	    bpf_probe_read_user(&th, sizeof(th), (void *)(ec + p->off.ec_thread)) || !th ||
	    bpf_probe_read_user(&id, sizeof(id), (void *)(th + p->off.thread_pthread)) ||
	    id != fsbase)
		return 0;
	if (ec != running)
		mark |= RB_MARK_NOGVL;
	/* The GVL holder, this thread: where its ec is kept, learnt (once a process). */
	if (!p->ec_tls && p->learn < RB_LEARN_TRIES) {
		struct rb_learn l = { .fsbase = fsbase, .ec = ec };

		p->learn++;
		bpf_loop(RB_TLS_WORDS, rb_learn_step, &l, 0);
		if (l.found)
			p->ec_tls = l.found;
	}
	if (bpf_probe_read_user(&stack, sizeof(stack), (void *)(ec + p->off.ec_vm_stack)) ||
	    bpf_probe_read_user(&size, sizeof(size), (void *)(ec + p->off.ec_vm_stack_size)) ||
	    bpf_probe_read_user(&w.cfp, sizeof(w.cfp), (void *)(ec + p->off.ec_cfp)))
		return 0;
	/* The frames grow down from the stack's end; the last is the thread's dummy frame. */
	if (!p->off.cfp_size || size > (64u << 20) || stack + size * 8 < stack)
		return 0;
	w.end = stack + size * 8 - p->off.cfp_size;
	n = st->nr;
	if (!w.cfp || w.cfp >= w.end || n + 1 >= PROFILE_MAX_DEPTH || !ustack_push(st, mark))
		return 0;
	bpf_loop(RB_MAX_FRAMES, rb_step, &w, 0);
	if (st->nr == n + 1) {
		st->nr = n;	/* none read */
		return 0;
	}
	/* Control frames past what was read: the outer ones are not there. */
	if (w.cfp && w.cfp < w.end)
		ustack_or(st, n, RB_MARK_CUT);
	return (int)(st->nr - n - 1);
}

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A sample sent to userspace for DWARF unwinding: its registers, the frames found and a
 * copy of the user stack (send_event). Included by profile.bpf.c only.
 */
#ifndef PROFILE_SEND_BPF_H
#define PROFILE_SEND_BPF_H

/*
 * Send the sample to userspace for DWARF unwinding, WHY (enum profile_send) it was sent (OFF_SEQ
 * not 0: the stacks of a task leaving the CPU, whose time off it comes later in a struct
 * off_weight of that seq; CTX NULL then):
 * registers, the frames found, and the user stack from sp, copied a page at a time (bpf_probe_read_user is all or nothing) up to
 * `stack_copy` bytes or the first unreadable page, the end of the stack. A page that is not
 * there (never written: a frame just made, or the unused part of a large frame, as in the
 * dynamic linker's start-up) is not the end when it is sp's own page or lies below the main
 * thread's stack top (STACK_TOP, 0 when unknown): zeros stand for it, marked in `holes`, and
 * the copy goes on. The record is built in `event_buf` and goes to the ring with only the
 * stack_len bytes of stack it holds.
 */
static __always_inline void send_event(struct bpf_perf_event_data *ctx, struct task_struct *task,
				       const struct uregs *r, const struct ustack *st,
				       const struct proc_ranges *pr, __u32 tgid, __u32 tid,
				       const struct count_key *ck, __u64 stack_top, __u32 why,
				       struct off_pending *op, __u64 ck_weight)
{
	struct sample_event *e;
	__u64 off = 0, n, want = stack_copy, flags = BPF_RB_NO_WAKEUP;
	__u32 key = 0;
	const struct zero_page *zero = bpf_map_lookup_elem(&zeros, &key);

	if (pr && pr->copy_hint && pr->copy_hint < want)
		want = pr->copy_hint;

	stat_inc(STAT_EVENTS);
	e = bpf_map_lookup_elem(&event_buf, &key);
	if (!e) {
		stat_inc(STAT_EVENTS_LOST);
		return;
	}
	e->pid = tgid;
	e->tid = tid;
	e->kstack_id = ck->kstack_id;
	e->period = ck->period;
	e->ip = r->ip;
	e->sp = r->sp;
	e->bp = r->bp;
	user_gprs(ctx, task, e->regs);
	e->nr_frames = st->nr;
	e->holes = 0;
	e->why = why;
	e->below_ok = !bpf_probe_read_user(e->below, sizeof(e->below),
					   (void *)(r->sp - sizeof(e->below)));
	e->gen = ck->gen;
	e->weight = ck_weight;
	e->off_seq = op ? op->seq : 0;
	e->event = op && !(ck->flags & COUNT_F_OFF_CPU);
	e->evflags = ck->flags & COUNT_F_EVENT_MASK;
	e->pad = 0;
	/* Only a main thread's sp lies this close under its stack top. */
	if (stack_top <= r->sp || stack_top - r->sp > MAIN_STACK_SPAN)
		stack_top = 0;
	for (int i = 0; i < PROFILE_MAX_DEPTH; i++) {
		if (i >= st->nr)
			break;
		e->frames[i] = st->ips[i];
	}
	if (want > PROFILE_MAX_STACK_COPY)
		want = PROFILE_MAX_STACK_COPY;
	n = PROFILE_PAGE_SIZE - (r->sp & (PROFILE_PAGE_SIZE - 1));
	for (int i = 0; i < PROFILE_MAX_STACK_COPY / PROFILE_PAGE_SIZE + 1; i++) {
		if (off >= want)
			break;
		if (n > want - off)
			n = want - off;
		/* Keep the bounds where the verifier sees them. */
		asm volatile("" : "+r"(n), "+r"(off));
		if (off > PROFILE_MAX_STACK_COPY || n > PROFILE_PAGE_SIZE || n == 0)
			break;
		if (bpf_probe_read_user(&e->stack[off], n, (void *)(r->sp + off))) {
			if (off && r->sp + off + n > stack_top)
				break;
			if (!zero || bpf_probe_read_kernel(&e->stack[off], n, zero->b))
				break;
			e->holes |= 1u << i;
		}
		off += n;
		n = PROFILE_PAGE_SIZE;
	}
	e->stack_len = off;
	/* A wakeup per record costs about 8 us here (an IPI in a VM) against 1 us for the
	 * whole sample: userspace polls every 20 ms while records come, and is woken only when
	 * the ring fills, or for the first record after it went to sleep for longer. */
	if (wake_user) {
		wake_user = false;
		flags = BPF_RB_FORCE_WAKEUP;
	} else if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >
		   bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 4) {
		flags = BPF_RB_FORCE_WAKEUP;
	}
	if (off > PROFILE_MAX_STACK_COPY + PROFILE_PAGE_SIZE)
		return;
	if (op && same_stacks(e, op))
		return;
	if (bpf_ringbuf_output(&events, e, offsetof(struct sample_event, stack) + off, flags))
		stat_inc(STAT_EVENTS_LOST);
}

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A sample sent to userspace for DWARF unwinding: its registers, the frames found and a
 * copy of the user stack (send_event). Included by profile.bpf.c only.
 */
#ifndef PROFILE_SEND_BPF_H
#define PROFILE_SEND_BPF_H

/* What is sent of a sample for DWARF unwinding. */
struct dwarf_send {
	const struct uregs *r;		/* its user registers */
	const struct ustack *st;	/* the frames the frame-pointer walk found */
	const struct proc_ranges *pr;	/* its process as userspace described it, or NULL */
	const struct count_key *ck;	/* its kernel stack, period, program and event */
	struct off_pending *op;		/* a task leaving the CPU (or an event's sample with a
					 * seq): its seq; else NULL */
	__u64 weight;			/* what the sample weighs (0: its time comes later) */
	__u64 stack_top;		/* the main thread's stack top (mm->start_stack) */
	__u32 tgid, tid;
	__u32 why;			/* enum profile_send */
	__u32 bp_ok;			/* R->bp is the frame's rbp */
};

/* The flags of a record into `events`: a wakeup per record costs about 8 us here (an IPI in
 * a VM) against 1 us for the whole sample: userspace polls every 20 ms while records come,
 * and is woken only when the ring fills, or for the first record after it went to sleep for
 * longer. */
static __always_inline __u64 ring_flags(void)
{
	if (wake_user) {
		wake_user = false;
		return BPF_RB_FORCE_WAKEUP;
	}
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >
	    bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 4)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/* A timeline's record of a sample or wait counted under KEY: taken (begun) at TIME by TID,
 * weighing WEIGHT. */
static __always_inline void send_timed(__u64 time, __u64 weight, __u32 tid,
				       const struct count_key *key)
{
	struct timed_sample tr = { .time = time, .weight = weight, .tid = tid, .key = *key };

	if (bpf_ringbuf_output(&events, &tr, sizeof(tr), ring_flags()))
		stat_inc(STAT_EVENTS_LOST);
}

/* The header of the record of D into E: who, why, registers, the walk's frames. */
static __always_inline void event_header(struct bpf_perf_event_data *ctx,
					 struct task_struct *task, const struct dwarf_send *d,
					 struct sample_event *e)
{
	const struct uregs *r = d->r;

	e->pid = d->tgid;
	e->tid = d->tid;
	e->kstack_id = d->ck->kstack_id;
	e->period = d->ck->period;
	e->ip = r->ip;
	e->sp = r->sp;
	e->bp = r->bp;
	e->bp_ok = d->bp_ok;
	e->time = bpf_ktime_get_ns();
	user_gprs(ctx, task, e->regs);
	e->nr_frames = d->st->nr;
	e->holes = 0;
	e->why = d->why;
	e->below_ok = !bpf_probe_read_user(e->below, sizeof(e->below),
					   (void *)(r->sp - sizeof(e->below)));
	e->gen = d->ck->gen;
	e->weight = d->weight;
	e->off_seq = d->op ? d->op->seq : 0;
	e->event = d->op && !(d->ck->flags & COUNT_F_OFF_CPU);
	e->evflags = d->ck->flags & COUNT_F_EVENT_MASK;
	e->ktid = BPF_CORE_READ(task, pid);
	for (int i = 0; i < PROFILE_MAX_DEPTH; i++) {
		if (i >= d->st->nr)
			break;
		e->frames[i] = d->st->ips[i];
	}
}

/*
 * Up to WANT bytes of the user stack from SP into E->stack, a page at a time
 * (bpf_probe_read_user is all or nothing), to the first unreadable page: the end of the
 * stack. A page that is not there (never written: a frame just made, or the unused part of
 * a large frame, as in the dynamic linker's start-up) is not the end when it is sp's own
 * page or lies below the main thread's STACK_TOP (0 when unknown): zeros stand for it,
 * marked in `holes`, and the copy goes on. Returns the bytes copied.
 */
static __always_inline __u64 copy_user_stack(struct sample_event *e, __u64 sp, __u64 want,
					     __u64 stack_top)
{
	__u32 key = 0;
	const struct zero_page *zero = bpf_map_lookup_elem(&zeros, &key);
	__u64 off = 0, n;

	/* Only a main thread's sp lies this close under its stack top. */
	if (stack_top <= sp || stack_top - sp > MAIN_STACK_SPAN)
		stack_top = 0;
	if (want > PROFILE_MAX_STACK_COPY)
		want = PROFILE_MAX_STACK_COPY;
	n = PROFILE_PAGE_SIZE - (sp & (PROFILE_PAGE_SIZE - 1));
	for (int i = 0; i < PROFILE_MAX_STACK_COPY / PROFILE_PAGE_SIZE + 1; i++) {
		if (off >= want)
			break;
		if (n > want - off)
			n = want - off;
		/* Keep the bounds where the verifier sees them. */
		asm volatile("" : "+r"(n), "+r"(off));
		if (off > PROFILE_MAX_STACK_COPY || n > PROFILE_PAGE_SIZE || n == 0)
			break;
		if (bpf_probe_read_user(&e->stack[off], n, (void *)(sp + off))) {
			if (off && sp + off + n > stack_top)
				break;
			if (!zero || bpf_probe_read_kernel(&e->stack[off], n, zero->b))
				break;
			e->holes |= 1u << i;
		}
		off += n;
		n = PROFILE_PAGE_SIZE;
	}
	return off;
}

struct deep_ctx {
	struct sample_event *e;
	const struct deep_words *dw;
};

/* bpf_loop's callback: word I of the task's deepwords, read now. */
static long read_deep(__u64 i, void *arg)
{
	struct deep_ctx *c = arg;

	if (i >= PROFILE_DEEP_WORDS)
		return 1;
	c->e->deep_addr[i] = c->dw->addr[i];
	if (!bpf_probe_read_user(&c->e->deep_val[i], sizeof(__u64), (void *)c->dw->addr[i]))
		c->e->deep_ok |= 1u << i;
	return 0;
}

/* The words past the copy that task TASK's last unwinds needed, as they are at its sample;
 * looked up only for a process PR says has some. */
static __always_inline void read_deep_words(struct task_struct *task,
					    const struct proc_ranges *pr, struct sample_event *e)
{
	__u32 ktid = BPF_CORE_READ(task, pid);
	struct deep_ctx c = { .e = e };
	__u32 n;

	e->nr_deep = 0;
	e->deep_ok = 0;
	if (!pr || !pr->has_deep)
		return;
	c.dw = bpf_map_lookup_elem(&deepwords, &ktid);
	if (!c.dw)
		return;
	n = c.dw->nr < PROFILE_DEEP_WORDS ? c.dw->nr : PROFILE_DEEP_WORDS;
	bpf_loop(n, read_deep, &c, 0);
	e->nr_deep = n;
}

/*
 * Send sample D to userspace for DWARF unwinding (D->op set: the stacks of a task leaving
 * the CPU, whose time off it comes later in a struct off_weight of that seq; CTX NULL then):
 * its header and `stack_copy` bytes of its stack at most (fewer where its process's copies
 * were found to need less). The record is built in `event_buf` and goes to the ring with
 * only the bytes of stack it holds; not at all when it is the task's last stacks again.
 */
static __always_inline void send_event(struct bpf_perf_event_data *ctx, struct task_struct *task,
				       const struct dwarf_send *d)
{
	struct sample_event *e;
	__u64 off, want = stack_copy, flags;
	__u32 key = 0;

	if (d->pr && d->pr->copy_hint && d->pr->copy_hint < want)
		want = d->pr->copy_hint;
	stat_inc(STAT_EVENTS);
	e = bpf_map_lookup_elem(&event_buf, &key);
	if (!e) {
		stat_inc(STAT_EVENTS_LOST);
		return;
	}
	event_header(ctx, task, d, e);
	read_deep_words(task, d->pr, e);
	off = copy_user_stack(e, d->r->sp, want, d->stack_top);
	e->stack_len = off;
	flags = ring_flags();
	if (off > PROFILE_MAX_STACK_COPY + PROFILE_PAGE_SIZE)
		return;
	if (d->op && same_stacks(e, d->op))
		return;
	if (bpf_ringbuf_output(&events, e, offsetof(struct sample_event, stack) + off, flags))
		stat_inc(STAT_EVENTS_LOST);
}

#endif

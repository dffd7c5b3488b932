// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/offcpu: --off-cpu and --wall's stacks that wait for their time. The stacks a task
 * left the CPU with are parked (unwound, or raw until a table comes) until the off_weight of
 * their seq says how long it was off; at a period's end the waits under way are split.
 */
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/clock.h"
#include "base/grow.h"
#include "base/limits.h"
#include "base/log.h"
#include "collect/fixup.h"
#include "collect/parking.h"
#include "collect/session_int.h"
#include "collect/ucounts.h"
#include "proc/procfile.h"
#include "proc/procmaps.h"
#include "sandbox/symbolizer.h"
#include "unwind/unwind.h"
#include "profile.skel.h"
#include "collect/samples_int.h"

/* --- off-CPU stacks that wait for their time ------------------------------------------- */

/*
 * The stacks a task last left the CPU with that came for DWARF unwinding
 * (sample_event.off_seq) wait in the session's parking (collect/parking.h), one entry per
 * task: unwound at once, or, when the unwind waits for a file's table, the event itself
 * (a struct queued) with 64 KiB of the live stack read past the copy, unwound from those
 * bytes only once its time comes (the task has run since). Its time comes in an off_weight
 * of its seq; so do the times of the task's later waits with the same registers and stack
 * bytes, which BPF sends no event for (off_weight.same_as).
 */

static void kept_free(struct queued *q)
{
	limits__release(q->bytes);
	free(q);
}

void offcpu__free_raw(void *raw)
{
	kept_free(raw);
}

/* Before task TID's entry is replaced: the time on its raw sample not counted yet waits in
 * the queue, with the other samples that wait for a table (or is counted now, cut, when
 * the queue is full). Returns 0 or -ENOMEM. */
static int settle_raw(struct session *s, pid_t tid)
{
	struct parked *old = parking__find(&s->parked, tid);
	struct queued *q;
	struct sample_event *e;

	if (!old || !old->raw || !old->pending_ns)
		return 0;
	q = old->raw;
	e = (struct sample_event *)q->event;
	old->raw = NULL;
	e->weight = old->pending_ns;
	e->kstack_id = old->pending_kstack;
	if (samples__queue_kept(s, q)) {
		limits__hit(LIMIT_TABLE_QUEUE, 1);
		if (samples__unwind(s, e, q->stack, q->stack_len, false) < 0) {
			kept_free(q);
			return -ENOMEM;
		}
		kept_free(q);
	}
	return 0;
}

/* The unwound stacks of off-CPU event E (its unwind read USED bytes of stack, and stopped
 * as STOP): its task's entry, unless that holds a later one. */
int offcpu__park_unwound(struct session *s, const struct sample_event *e,
			const struct stack_key *key, const uint64_t *ips, uint32_t nr,
			size_t used, enum unwind_stop stop)
{
	struct parked *p = parking__find(&s->parked, (pid_t)e->tid);

	if (p && p->seq > e->off_seq)
		return 0;
	if (settle_raw(s, (pid_t)e->tid))
		return -ENOMEM;
	return parking__park(&s->parked, (pid_t)e->tid, e->off_seq, (pid_t)e->pid, key, ips, nr,
			     used, stop);
}

/* P (raw) as its task's entry, unless that is of a later wait. Returns 0 or -ENOMEM (P is
 * freed then). */
static int put_parked(struct session *s, struct parked *p)
{
	struct parked *cur = parking__find(&s->parked, p->tid);
	int r = 0;

	if ((cur && cur->seq > p->seq) || (r = settle_raw(s, p->tid))) {
		parked__free(&s->parked, p);
		return r;
	}
	return parking__put(&s->parked, p);
}

/* Off-CPU event E from the ring (or an -e event's sample with a seq): unwound now and
 * parked (the sample counted), or parked as it is (see struct parked). */
int offcpu__park(struct session *s, const struct sample_event *e)
{
	struct parked *p;
	int r = samples__unwind(s, e, e->stack, e->stack_len, !s->tables_wait);

	if (r != 1)
		return r;
	p = parked__new((pid_t)e->tid, e->off_seq, 0);
	if (p) {
		struct queued *q = samples__keep(e, e->stack, e->stack_len, !e->event);

		/* The bytes read past the copy are the wait's only if the task has not come
		 * back since (asked after they were read). */
		if (q && q->stack_len > e->stack_len &&
		    !session__still_off(s, (pid_t)e->ktid, e->off_seq))
			q->stack_len = e->stack_len;
		p->raw = q;
		/* An event's sample weighs already: counted once its table comes. */
		p->pending_ns = e->event ? e->weight : 0;
		p->pending_kstack = e->kstack_id;
	}
	if (!p || !p->raw) {
		parked__free(&s->parked, p);
		limits__hit(LIMIT_TABLE_QUEUE, 1);
		return 0;
	}
	return put_parked(s, p);
}

/* Entry P, raw with time to count: unwound now, unless its table is still being made (then
 * it waits, unless at the end: 1); counted, and its task's entry made of the stacks (P is freed
 * then: 0). Returns -ENOMEM on failure. */
static int flush_raw(struct session *s, struct parked *p)
{
	struct queued *q = p->raw;
	struct sample_event *e = (struct sample_event *)q->event;
	int r;

	p->raw = NULL;
	e->weight = p->pending_ns;
	e->kstack_id = p->pending_kstack;
	r = samples__unwind(s, e, q->stack, q->stack_len, !s->tables_wait);
	if (r == 1) {
		e->weight = 0;
		p->raw = q;
		return 1;
	}
	kept_free(q);
	return r < 0 ? r : 0;
}

/* Task TID's time off the CPU, NS, on the stacks of event SEQ (W->same_as, or W->seq),
 * with kernel stack W->kstack_id: counted. */
int offcpu__on_weight(struct session *s, const struct off_weight *w, uint64_t ns)
{
	struct ucount *counted;
	struct parked *p;
	int r = parking__weigh(&s->parked, s->unwound, &counted, (pid_t)w->tid,
			       w->same_as ? w->same_as : w->seq, w->kstack_id, ns, &p);

	switch (r) {
	case PARK_UNMATCHED:
		s->stats.off_unmatched++;
		return 0;
	case PARK_COUNTED:
		/* (A wait: from when it began, as long as it was; an event's sample at the
		 * same place as an earlier one: when it was taken, weighing its events.) */
		if (s->opts.timeline &&
		    timeline__unwound(s, w->start, (pid_t)w->tid, ns, counted))
			return -ENOMEM;
		/* A wait at the same place as the one unwound: the copy it needed, again (the
		 * process's copies shrink to what its unwinds need after 256 of them). */
		if (w->same_as && p->used)
			session__learn_copy_size(s, p->pid, p->used, p->stop);
		/* An event's sample on the stacks DWARF unwound: one of the DWARF-unwound. */
		if (!p->key.off_cpu)
			s->stats.dwarf++;
		return 0;
	case PARK_RAW:
		if (((const struct sample_event *)((struct queued *)p->raw)->event)->event)
			s->stats.dwarf++;
		r = flush_raw(s, p);
		return r < 0 ? r : 0;
	default:
		return r;
	}
}

/* Raw entries with time to count, tried again (a table came, or the end: S->tables_wait). */
int offcpu__retry_parked(struct session *s)
{
	for (size_t i = 0; i < s->parked.nr; i++) {
		struct parked *p = s->parked.v[i];
		int r;

		if (!p->raw || !p->pending_ns)
			continue;
		r = flush_raw(s, p);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Task TID's (in the profiler's namespace: its /proc) CPU time into *RAN
 * (se.sum_exec_runtime, ns): a wait BPF saw begin and no switch end, though the task came
 * back (see on_switch), ended as long before now as it ran since. Returns -1 when the task
 * is gone. */
static int task_ran(uint32_t tid, uint64_t *ran)
{
	char buf[128];
	unsigned long long v;

	if (proc__read((pid_t)tid, "schedstat", buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%llu", &v) != 1)
		return -1;
	*ran = v;
	return 0;
}

/* The time off the CPU of wait OP by END_NS: less what its task ran since (*BACK, not 0
 * when it came back unseen). A task gone (it ran to exit: BPF ends the waits of tasks
 * that exit, so this one came back unseen before its entry was made) waited none of it. */
static uint64_t off_ns(const struct off_pending *op, uint64_t end_ns, uint64_t *back)
{
	uint64_t ns = end_ns - op->start, ran;

	if (task_ran(op->tid, &ran)) {
		*back = ns;
		return 0;
	}
	*back = ran > op->ran ? ran - op->ran : 0;
	return ns > *back ? ns - *back : 0;
}

int session__end_off_cpu(struct session *s, uint64_t end_ns)
{
	int fd = bpf_map__fd(s->skel->maps.offpend), cfd = bpf_map__fd(s->skel->maps.counts);
	__u32 key, *prev = NULL;
	struct off_pending op;
	int err = 0;

	while (!err && bpf_map_get_next_key(fd, prev, &key) == 0) {
		uint64_t ns, count, back;

		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &op) || end_ns <= op.start)
			continue;
		ns = off_ns(&op, end_ns, &back);
		if (back)
			s->stats.off_unseen++;
		if (!ns || ns < (uint64_t)s->opts.min_block_us * 1000)
			continue;
		s->stats.off_waits_end++;
		if (op.seq) {
			struct off_weight w = {
				.tid = op.tid, .kstack_id = op.key.kstack_id, .seq = op.seq,
				.same_as = op.same_as, .start = op.start,
			};

			err = offcpu__on_weight(s, &w, ns);
			continue;
		}
		if (s->opts.timeline)
			err = timeline__counted(s, op.start, ns, (pid_t)op.tid, &op.key);
		if (!bpf_map_lookup_elem(cfd, &op.key, &count))
			ns += count;
		bpf_map_update_elem(cfd, &op.key, &ns, BPF_ANY);
	}
	if (!err)
		err = offcpu__retry_parked(s);
	session__free_parked(s);
	return err;
}

/* A new, zeroed kernel stack of the session's own (KSTACK_EXTRA), its id s->xk.nr until the
 * caller counts it; NULL on ENOMEM or past the ids there are. */
static uint64_t *xk_new(struct session *s)
{
	size_t size = PROFILE_MAX_DEPTH * sizeof(uint64_t);

	if (s->xk.nr >= KSTACK_EXTRA - 1 || array_grow(&s->xk.v, &s->xk.cap, size, s->xk.nr))
		return NULL;
	memset(s->xk.v + (size_t)s->xk.nr * PROFILE_MAX_DEPTH, 0, size);
	return s->xk.v + (size_t)s->xk.nr * PROFILE_MAX_DEPTH;
}

int session__extra_kstack(const struct session *s, int32_t id, uint64_t *kips)
{
	size_t i = (uint32_t)id & ~(uint32_t)KSTACK_EXTRA;

	if (!(id & KSTACK_EXTRA) || i >= s->xk.nr)
		return -ENOENT;
	memcpy(kips, s->xk.v + i * PROFILE_MAX_DEPTH, PROFILE_MAX_DEPTH * sizeof(*kips));
	return 0;
}

/* Task R, off the CPU as sampling begins (since SINCE): its stacks taken (the user stack
 * read now, from its registers), parked as any off-CPU event's, and an `offpend` entry
 * made for it, unless it has one (it came back and left again already). E: room for an
 * event. Returns 0 or -ENOMEM. */
static int off_task_begin(struct session *s, const struct off_task *r, uint64_t since,
			  struct sample_event *e)
{
	uint32_t n = r->nr_kframes < PROFILE_MAX_DEPTH ? r->nr_kframes : PROFILE_MAX_DEPTH;
	uint64_t sp = r->regs[7];
	struct iovec local, remote;
	struct off_pending op;
	uint64_t ran;
	ssize_t got;

	uint64_t *kips = xk_new(s);

	if (!kips)
		return -ENOMEM;
	memcpy(kips, r->kframes, n * sizeof(uint64_t));
	memset(e, 0, offsetof(struct sample_event, stack));
	e->pid = r->pid;
	e->tid = r->tid;
	e->ktid = r->ktid;
	e->kstack_id = n ? (int32_t)(KSTACK_EXTRA | s->xk.nr++) : -1;
	e->ip = r->ip;
	e->sp = sp;
	e->bp = r->regs[6];
	memcpy(e->regs, r->regs, sizeof(e->regs));
	e->why = SEND_DWARF;
	e->time = since;
	e->period = s->period & 1;
	/* From BPF's own count (its .bss is mapped here): later seqs are later stacks. */
	e->off_seq = __atomic_add_fetch(&s->skel->bss->off_seq, 1, __ATOMIC_SEQ_CST);
	local = (struct iovec){ e->below, sizeof(e->below) };
	remote = (struct iovec){ (void *)(uintptr_t)(sp - sizeof(e->below)), sizeof(e->below) };
	e->below_ok = process_vm_readv((pid_t)r->pid, &local, 1, &remote, 1, 0) ==
		      (ssize_t)sizeof(e->below);
	local = (struct iovec){ e->stack, session__stack_copy_max(&s->opts) };
	remote = (struct iovec){ (void *)(uintptr_t)sp, local.iov_len };
	got = process_vm_readv((pid_t)r->pid, &local, 1, &remote, 1, 0);
	e->stack_len = got > 0 ? (uint32_t)got : 0;
	/* The entry first: while it is there, the task has not come back, and what the unwind
	 * reads past the copy is its stack as it left (session__still_off). */
	op = (struct off_pending){
		.start = since, .ran = r->ran, .seq = e->off_seq, .tid = r->tid, .ktid = r->ktid,
		.key = { .pid = r->pid, .kstack_id = e->kstack_id, .flags = COUNT_F_OFF_CPU,
			 .period = e->period },
	};
	/* A task that ran since the iterator listed it, or is gone, came back: its wait is
	 * over (its stack read above may be another's). */
	if (task_ran(r->tid, &ran) || ran > r->ran)
		return 0;
	/* A task that came back and left again since the iterator read it has a later wait,
	 * parked or under way: this stale one is not parked over it. (Its seq, taken now, is
	 * higher than that wait's, which parking would have let it replace: the later wait's
	 * time was then lost, "waits whose stacks were lost".) */
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.offpend), &r->ktid, &op, BPF_NOEXIST) ||
	    parking__find(&s->parked, (pid_t)r->tid))
		return 0;
	return offcpu__park(s, e);
}

/* Kernel stack ID of the maps of parity PAR into the session's own (KSTACK_EXTRA), for use
 * past the period's end; its new id, or ID itself when it has none to copy. */
static int32_t keep_kstack(struct session *s, int32_t id, uint32_t par)
{
	struct bpf_map *map = par ? s->skel->maps.kstacks_b : s->skel->maps.kstacks;
	uint64_t *kips;

	if (id < 0 || (id & KSTACK_EXTRA))
		return id;
	if (id & KSTACK_SECOND) {
		map = par ? s->skel->maps.kstacks2_b : s->skel->maps.kstacks2;
		id &= ~KSTACK_SECOND;
	}
	kips = xk_new(s);
	if (!kips)
		return KSTACK_LOST;
	if (bpf_map_lookup_elem(bpf_map__fd(map), &id, kips))
		return KSTACK_LOST;
	return (int32_t)(KSTACK_EXTRA | s->xk.nr++);
}

int session__split_off_cpu(struct session *s, uint64_t end_ns, uint32_t par)
{
	int fd = bpf_map__fd(s->skel->maps.offpend), cfd = bpf_map__fd(s->skel->maps.counts);
	int ufd = bpf_map__fd(s->skel->maps.ustacks);
	__u32 key, *prev = NULL;
	struct off_pending op, nop, cur;
	struct ustack *us = malloc(sizeof(*us));
	/* (PROFILE_TEST_SPLIT_DELAY_MS, tests: this long between reading each wait and
	 * splitting it, time for it to end and its task to begin another.) */
	const char *delay = getenv("PROFILE_TEST_SPLIT_DELAY_MS");
	useconds_t delay_us = delay ? (useconds_t)atoi(delay) * 1000 : 0;
	int err = 0;

	while (us && !err && bpf_map_get_next_key(fd, prev, &key) == 0) {
		struct sample_event e = { 0 };
		struct stack_key k;
		const uint64_t *ips = NULL;
		uint32_t nr = 0;
		uint64_t ns, count, back;
		bool kept;

		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &op) || op.key.period != par || end_ns <= op.start)
			continue;
		/* (A task back on a CPU unseen: its wait ended; the next period's part is
		 * what it waits after its CPU time now, none if it runs on.) */
		ns = off_ns(&op, end_ns, &back);
		/* The stacks, for the rest of the wait: the user frames in a parked entry of a
		 * new seq, the kernel's copied out of the maps about to be cleared. */
		stack_key__decode(&k, &op.key);
		if (op.seq) {
			const struct parked *p = parking__find(&s->parked, (pid_t)op.tid);

			if (!p || p->raw || p->seq != (op.same_as ? op.same_as : op.seq))
				continue;
			k = p->key;
			k.kstack_id = op.key.kstack_id;
			ips = p->ips;
			nr = p->nr;
		} else if (op.key.ustack_hash) {
			if (bpf_map_lookup_elem(ufd, &op.key.ustack_hash, us))
				continue;
			ips = (const uint64_t *)us->ips;
			nr = us->nr < PROFILE_MAX_DEPTH ? us->nr : PROFILE_MAX_DEPTH;
		}
		nop = op;
		nop.start = end_ns;
		nop.ran = op.ran + back;
		nop.same_as = 0;
		nop.seq = __atomic_add_fetch(&s->skel->bss->off_seq, 1, __ATOMIC_SEQ_CST);
		nop.key.kstack_id = keep_kstack(s, op.key.kstack_id, par);
		nop.key.period = !par;
		if (delay_us)
			usleep(delay_us);
		/* The wait as it is now, taken out of the map: the one read above may have
		 * ended since, counted whole, and the task begun another (a loop of sleeps),
		 * whose entry an update in place would have replaced, the first wait's time so
		 * far counted twice. */
		if (bpf_map_lookup_and_delete_elem(fd, &key, &cur))
			continue;	/* back on a CPU meanwhile: counted whole */
		if (cur.start != op.start || cur.ran != op.ran) {
			/* Another wait, left as it is (in the next period). */
			bpf_map_update_elem(fd, &key, &cur, BPF_NOEXIST);
			continue;
		}
		/* (Should the task come back before this is in, the next time it leaves finds
		 * it there and ends it when it came back: its CPU time since, ran. Should it
		 * have left again too, the rest of this wait is lost, its time so far not.) */
		kept = !bpf_map_update_elem(fd, &key, &nop, BPF_NOEXIST);
		/* The wait so far: this period's. */
		if (op.seq) {
			struct ucount *counted;

			err = ucounts__add_entry(s->unwound, &k, ips, nr, ns, &counted);
			if (!err && s->opts.timeline)
				err = timeline__unwound(s, op.start, (pid_t)op.tid, ns, counted);
		} else {
			if (s->opts.timeline)
				err = timeline__counted(s, op.start, ns, (pid_t)op.tid, &op.key);
			if (!bpf_map_lookup_elem(cfd, &op.key, &count))
				ns += count;
			bpf_map_update_elem(cfd, &op.key, &ns, BPF_ANY);
		}
		/* The rest: the next period's, on these stacks. */
		e.pid = op.key.pid;
		e.tid = op.tid;
		e.off_seq = nop.seq;
		k.kstack_id = nop.key.kstack_id;
		k.period = nop.key.period;
		if (!err && kept)
			err = offcpu__park_unwound(s, &e, &k, ips, nr, 0, UNWIND_STOP_END);
	}
	free(us);
	return err;
}

void session__off_cpu_begin(struct session *s)
{
	struct bpf_link *link = bpf_program__attach_iter(s->skel->progs.off_tasks, NULL);
	uint64_t since = clock_mono_ns();
	size_t len = 0, cap = 0, nr = 0;
	struct sample_event *e;
	char *buf = NULL;
	ssize_t got = 0;
	int fd = link ? bpf_iter_create(bpf_link__fd(link)) : -1;

	while (fd >= 0) {
		if (len == cap) {
			char *b = realloc(buf, cap ? 2 * cap : 65536);

			if (!b)
				break;
			buf = b;
			cap = cap ? 2 * cap : 65536;
		}
		got = read(fd, buf + len, cap - len);
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	e = malloc(sizeof(*e));
	if (fd < 0 || got < 0 || !e)
		pr_warn("waits that began before the profile are not counted: the kernel did not "
			"list the tasks off the CPU (%s)", strerror(errno));
	for (size_t off = 0; e && off + sizeof(struct off_task) <= len;
	     off += sizeof(struct off_task), nr++) {
		struct off_task r;

		memcpy(&r, buf + off, sizeof(r));
		if (off_task_begin(s, &r, since, e))
			break;
	}
	pr_debug("%zu tasks off the CPU as the profile began", nr);
	free(e);
	free(buf);
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
}

void session__free_parked(struct session *s)
{
	parking__clear(&s->parked);
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/samples: the consumer of DWARF samples. A sample whose user stack BPF could not
 * complete comes through the `events` ring buffer with its registers and a copy of the stack;
 * it is unwound here while the process still runs and counted in the session's ucounts.
 */
#include <errno.h>
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
#include "collect/session_int.h"
#include "collect/ucounts.h"
#include "proc/procmaps.h"
#include "sandbox/symbolizer.h"
#include "unwind/unwind.h"
#include "profile.skel.h"

/* A sample whose user stack BPF could not complete: unwind it with DWARF now, while the
 * process still runs (older frames past the copy are read from it). */
_Static_assert(PROFILE_NR_REGS == UNWIND_NR_REGS, "sample_event.regs is unwind_sample.regs");
_Static_assert(PROFILE_RED_ZONE == UNWIND_RED_ZONE, "sample_event.below is unwind_sample.below");

/*
 * A thread's stack begins where the process's spans say so (SPAN_BOTTOM: CFI's outermost
 * frames, the start functions found in its files, named or not, as musl's): the unwind of
 * the N frames of IPS ends at the first return address there, whole, whatever it made of
 * the words past it. Returns the new number of frames; *STOP set to UNWIND_STOP_END then.
 */
static int end_at_bottom(struct session *s, pid_t pid, const uint64_t *ips, int n,
			 enum unwind_stop *stop)
{
	for (int i = 1; i < n; i++) {
		if (session__span_kind(s, pid, ips[i] - 1) == SPAN_BOTTOM) {
			*stop = UNWIND_STOP_END;
			return i + 1;
		}
	}
	return n;
}

static int park_unwound(struct session *s, const struct sample_event *e,
			const struct count_key *key, const uint64_t *ips, uint32_t nr,
			size_t used, enum unwind_stop stop);

/*
 * Unwind sample E (its header: from the ring buffer or the queue) with STACK_LEN bytes of
 * STACK from sp, and count it; or, when MAY_WAIT and its unwind met a file whose table the
 * worker is still making, return 1 without counting it (for the queue). Else 0, or -ENOMEM.
 */
static int unwind_event(struct session *s, const struct sample_event *e, const void *stack,
			uint32_t stack_len, bool may_wait)
{
	uint64_t ips[USER_MAX_DEPTH];
	struct count_key key = { 0 };
	struct unwind_sample us;
	enum unwind_stop stop;
	uint64_t t0;
	pid_t as;
	int n;

	/* mmap records of a process that just started may still wait in their buffer. */
	if (!procmaps__find(s->maps, e->pid, e->ip)) {
		perf_buffer__consume(s->mmap_pb);
		session__flush_procstate(s);
	}
	procmaps__ensure(s->maps, e->pid);
	/* BPF knew nothing of the process's code: from now on it checks its walks. */
	if (!session__described(s, e->pid))
		session__describe(s, e->pid);
	/* The mappings of the program sampled: an earlier one of the pid when it exec'd since
	 * (a fork's child sampled before its exec: bash's code, not the new program's), kept
	 * apart under a pid of their own. */
	as = procmaps__incarnation(s->maps, (pid_t)e->pid, e->gen);
	us = (struct unwind_sample){
		.pid = as, .ip = e->ip, .sp = e->sp, .bp = e->bp, .regs = (const uint64_t *)e->regs,
		.stack = stack, .stack_len = stack_len,
		.holes = e->holes, .below = e->below_ok ? (const uint64_t *)e->below : NULL,
		/* An off-CPU event unwound once its time came: the task has run since. */
		.copy_only = e->off_seq && e->weight,
	};
	t0 = clock_mono_ns();
	n = unwinder__unwind(s->unw, &us, ips, USER_MAX_DEPTH, &stop);
	/* A return address into a library whose mmap record still waits in another CPU's
	 * buffer (the leaf's program was known): read the records, and unwind again if any
	 * came. */
	if (stop == UNWIND_STOP_BAD_FRAME || stop == UNWIND_STOP_NO_INFO) {
		uint64_t seen = s->sideband_records;

		s->stats.unwind_ns += clock_mono_ns() - t0;
		perf_buffer__consume(s->mmap_pb);
		t0 = clock_mono_ns();
		if (s->sideband_records != seen) {
			session__flush_procstate(s);
			n = unwinder__unwind(s->unw, &us, ips, USER_MAX_DEPTH, &stop);
		}
	}
	s->stats.unwind_ns += clock_mono_ns() - t0;
	/* (What the unwinder keeps of a program that is gone is rebuilt if it is needed.) */
	if (as != (pid_t)e->pid)
		unwinder__forget(s->unw, as);
	/* Cut where a table is still being made: again when it came. */
	if (may_wait && unwinder__met_later(s->unw, NULL))
		return 1;
	/* (The spans are the current program's.) */
	if (as == (pid_t)e->pid)
		n = end_at_bottom(s, e->pid, ips, n, &stop);
	s->stats.unwind_frames += n;
	s->stats.copy_bytes += e->stack_len;
	if (!e->off_seq || e->event)
		s->stats.dwarf++;
	s->stats.unwind_stop[stop]++;
	/* A stack not readable at sp (a process between programs in an execve) says nothing of
	 * the copy it needs. */
	if (!(us.holes & 1))
		session__learn_copy_size(s, e->pid, unwinder__stack_used(s->unw), stop);
	/* No unwind info even at the leaf (code without CFI, JIT code): the frames the
	 * frame-pointer walk found are the better stack; still truncated unless they reach a
	 * stack bottom, which the model's builder checks by name. */
	if (fixup__prefer_walk(n, stop == UNWIND_STOP_END, e->nr_frames)) {
		n = e->nr_frames;
		memcpy(ips, e->frames, n * sizeof(*ips));
	}
	key.pid = e->pid;
	key.gen = e->gen;
	key.tid = s->opts.threads ? e->tid : 0;
	key.kstack_id = e->kstack_id;
	key.period = e->period;
	if (stop != UNWIND_STOP_END)
		key.flags |= COUNT_F_USER_TRUNCATED;
	if ((us.holes & 1) && n == 1 && stop == UNWIND_STOP_NO_MEMORY)
		key.flags |= COUNT_F_USER_NO_STACK;
	/* For --explain, counted with the stack (the model's builder reads them once per
	 * distinct stack): how the unwind stopped, why BPF sent it, and where a walk that met a
	 * function keeping no frame record stopped. */
	key.flags |= (uint32_t)stop << COUNT_F_STOP_SHIFT & COUNT_F_STOP_MASK;
	key.flags |= e->why << COUNT_F_SEND_SHIFT & COUNT_F_SEND_MASK;
	key.flags |= e->evflags & COUNT_F_EVENT_MASK;
	if (e->why == SEND_NOREC && e->nr_frames)
		key.walk_end = e->frames[e->nr_frames - 1];
	if (e->off_seq && !e->event)
		key.flags |= COUNT_F_OFF_CPU;
	/* Off-CPU stacks: their task's entry, for the times of this wait (still to come, when
	 * E has no weight) and of later ones at the same place. */
	if (e->off_seq) {
		int r = park_unwound(s, e, &key, ips, (uint32_t)n,
				     (us.holes & 1) ? 0 : unwinder__stack_used(s->unw), stop);

		if (r || !e->weight)
			return r;
	}
	/* On the CPU, a sample of an event other than the clocks weighs its period. */
	if (ucounts__add(s->unwound, &key, ips, n, e->weight ? e->weight : 1))
		return -ENOMEM;
	return 0;
}

/*
 * A sample waiting in the queue: the file whose table it waits for, the event's header, and
 * its stack: the copy BPF made and, read from the live process when it was queued, up to
 * QUEUE_STACK_MORE bytes past it (what the unwind will read past the copy may be gone by the
 * time the table comes: a deep start-up stack).
 */
#define QUEUE_STACK_MORE	(64u << 10)
#define EVENT_HDR		offsetof(struct sample_event, stack)

struct queued {
	size_t bytes;			/* all of it */
	uint32_t file;			/* dso id */
	uint32_t stack_len;
	unsigned char event[EVENT_HDR];
	unsigned char stack[];
};

/* A copy of event E's header and the STACK_LEN bytes of its STACK, with (READ_MORE) up to
 * QUEUE_STACK_MORE bytes more of the live stack past them; NULL when over the limits. */
static struct queued *keep_event(const struct sample_event *e, const void *stack,
				 uint32_t stack_len, bool read_more)
{
	size_t need = sizeof(struct queued) + stack_len + (read_more ? QUEUE_STACK_MORE : 0);
	struct iovec local, remote;
	struct queued *q, *fit;
	ssize_t more = 0;

	if (!limits__reserve(need))
		return NULL;
	q = malloc(need);
	if (!q) {
		limits__release(need);
		return NULL;
	}
	memcpy(q->event, e, EVENT_HDR);
	memcpy(q->stack, stack, stack_len);
	local = (struct iovec){ q->stack + stack_len, QUEUE_STACK_MORE };
	remote = (struct iovec){ (void *)(uintptr_t)(e->sp + stack_len), QUEUE_STACK_MORE };
	if (read_more && stack_len)
		more = process_vm_readv((pid_t)e->pid, &local, 1, &remote, 1, 0);
	if (more < 0)
		more = 0;
	q->stack_len = stack_len + (uint32_t)more;
	q->bytes = sizeof(*q) + q->stack_len;
	q->file = 0;
	fit = realloc(q, q->bytes);
	if (fit)
		q = fit;
	else
		q->bytes = need;
	limits__release(need - q->bytes);
	return q;
}

/* Put Q (from keep_event) in the queue until the table its unwind met comes. Returns 0, or
 * -ENOSPC when the queue is full (Q is not taken then). */
static int queue_kept(struct session *s, struct queued *q)
{
	if (s->queue.bytes + q->bytes > LIMIT_TABLE_QUEUE_MAX)
		return -ENOSPC;
	if (s->queue.nr == s->queue.cap) {
		size_t cap = s->queue.cap ? 2 * s->queue.cap : 64;
		struct queued **v = realloc(s->queue.v, cap * sizeof(*v));

		if (!v)
			return -ENOSPC;
		s->queue.v = v;
		s->queue.cap = cap;
	}
	unwinder__met_later(s->unw, &q->file);
	s->queue.v[s->queue.nr++] = q;
	s->queue.bytes += q->bytes;
	if (s->queue.nr > s->stats.queued_max)
		s->stats.queued_max = s->queue.nr;
	s->stats.queued++;
	return 0;
}

/* Keep sample E until the table its unwind met comes (unwinder__met_later). Returns 0, or
 * -ENOSPC when the queue is full. */
static int queue_sample(struct session *s, const struct sample_event *e)
{
	struct queued *q;

	if (s->queue.bytes + sizeof(*q) + e->stack_len > LIMIT_TABLE_QUEUE_MAX)
		return -ENOSPC;
	q = keep_event(e, e->stack, e->stack_len, true);
	if (!q)
		return -ENOSPC;
	if (queue_kept(s, q)) {
		limits__release(q->bytes);
		free(q);
		return -ENOSPC;
	}
	return 0;
}

/* --- off-CPU stacks that wait for their time ------------------------------------------- */

/*
 * The stacks a task last left the CPU with that came for DWARF unwinding
 * (sample_event.off_seq), one entry per task: unwound at once (the task is off the CPU: its
 * stack is as it left it, older frames read live), or, when the unwind waits for a file's
 * table, the event itself with 64 KiB of the live stack read past the copy (raw), unwound
 * from those bytes only once its time comes (the task has run since). Its time comes in an
 * off_weight of its seq; so do the times of the task's later waits with the same registers
 * and stack bytes, which BPF sends no event for (off_weight.same_as): the entry stays until
 * the task sends other stacks.
 */
struct parked {
	uint32_t tid;
	uint64_t seq;
	struct queued *raw;	/* the event, or NULL: unwound into key and ips */
	uint64_t pending_ns;	/* raw: time off the CPU on it not counted yet (its table is
				 * still being made) */
	int32_t pending_kstack;	/* ... and the kernel stack of the last of those waits */
	pid_t pid;
	size_t used;		/* stack bytes its unwind read (0: none to learn from) */
	enum unwind_stop stop;
	struct count_key key;
	uint32_t nr;
	uint64_t ips[];
};

static uint64_t tid_hash(uint32_t tid)
{
	return hash_u64(HASH_SEED, tid);
}

static void kept_free(struct queued *q)
{
	limits__release(q->bytes);
	free(q);
}

static void parked_free(struct parked *p)
{
	if (!p)
		return;
	if (p->raw)
		kept_free(p->raw);
	limits__release(sizeof(*p) + p->nr * sizeof(p->ips[0]));
	free(p);
}

/* The index of task TID's entry in s->parked.v, or HTAB_NONE. */
static uint32_t parked_find(const struct session *s, uint32_t tid)
{
	uint32_t pos, id;

	for (id = htab__first(&s->parked.index, tid_hash(tid), &pos); id != HTAB_NONE;
	     id = htab__next(&s->parked.index, tid_hash(tid), &pos))
		if (s->parked.v[id]->tid == tid)
			break;
	return id;
}

/* Make P (made by the caller) its task's entry, in place of the one it had (whose time is
 * counted first). Returns 0 or -ENOMEM (P is freed then). */
static int parked_put(struct session *s, struct parked *p)
{
	uint32_t id = parked_find(s, p->tid);

	if (id != HTAB_NONE && s->parked.v[id]->raw && s->parked.v[id]->pending_ns) {
		/* Its time waits in the queue, with the other samples that wait for a table. */
		struct parked *old = s->parked.v[id];
		struct queued *q = old->raw;
		struct sample_event *e = (struct sample_event *)q->event;

		old->raw = NULL;
		e->weight = old->pending_ns;
		e->kstack_id = old->pending_kstack;
		if (queue_kept(s, q)) {
			limits__hit(LIMIT_TABLE_QUEUE, 1);
			if (unwind_event(s, e, q->stack, q->stack_len, false) < 0) {
				kept_free(q);
				parked_free(p);
				return -ENOMEM;
			}
			kept_free(q);
		}
		id = parked_find(s, p->tid);
	}

	if (id != HTAB_NONE) {
		parked_free(s->parked.v[id]);
		s->parked.v[id] = p;
		return 0;
	}
	if (s->parked.nr == s->parked.cap) {
		size_t cap = s->parked.cap ? 2 * s->parked.cap : 64;
		struct parked **v = realloc(s->parked.v, cap * sizeof(*v));

		if (!v) {
			parked_free(p);
			return -ENOMEM;
		}
		s->parked.v = v;
		s->parked.cap = cap;
	}
	if (htab__insert(&s->parked.index, tid_hash(p->tid), (uint32_t)s->parked.nr)) {
		parked_free(p);
		return -ENOMEM;
	}
	s->parked.v[s->parked.nr++] = p;
	return 0;
}

/* An entry for E's task, with room for NR frames; NULL past the memory budget. */
static struct parked *parked_new(const struct sample_event *e, uint32_t nr)
{
	size_t size = sizeof(struct parked) + nr * sizeof(uint64_t);
	struct parked *p;

	if (!limits__reserve(size))
		return NULL;
	p = calloc(1, size);
	if (!p) {
		limits__release(size);
		return NULL;
	}
	p->tid = e->tid;
	p->seq = e->off_seq;
	p->nr = nr;
	return p;
}

/* The unwound stacks of off-CPU event E (its unwind read USED bytes of stack, and stopped
 * as STOP): its task's entry, unless that holds a later one. */
static int park_unwound(struct session *s, const struct sample_event *e,
			const struct count_key *key, const uint64_t *ips, uint32_t nr,
			size_t used, enum unwind_stop stop)
{
	uint32_t id = parked_find(s, e->tid);
	struct parked *p;

	if (id != HTAB_NONE && s->parked.v[id]->seq > e->off_seq)
		return 0;
	p = parked_new(e, nr);
	if (!p) {
		limits__hit(LIMIT_TABLE_QUEUE, 1);
		return 0;
	}
	p->key = *key;
	p->pid = (pid_t)e->pid;
	p->used = used;
	p->stop = stop;
	memcpy(p->ips, ips, nr * sizeof(*ips));
	return parked_put(s, p);
}

/* Off-CPU event E from the ring (or an -e event's sample with a seq): unwound now and
 * parked (the sample counted), or parked as it is (see struct parked). */
static int park(struct session *s, const struct sample_event *e)
{
	struct parked *p;
	int r = unwind_event(s, e, e->stack, e->stack_len, !s->tables_wait);

	if (r != 1)
		return r;
	p = parked_new(e, 0);
	if (p) {
		p->raw = keep_event(e, e->stack, e->stack_len, true);
		/* An event's sample weighs already: counted once its table comes. */
		p->pending_ns = e->event ? e->weight : 0;
		p->pending_kstack = e->kstack_id;
	}
	if (!p || !p->raw) {
		parked_free(p);
		limits__hit(LIMIT_TABLE_QUEUE, 1);
		return 0;
	}
	return parked_put(s, p);
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
	r = unwind_event(s, e, q->stack, q->stack_len, !s->tables_wait);
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
static int on_weight(struct session *s, const struct off_weight *w, uint64_t ns)
{
	uint64_t seq = w->same_as ? w->same_as : w->seq;
	uint32_t id = parked_find(s, w->tid);
	struct parked *p = id == HTAB_NONE ? NULL : s->parked.v[id];
	struct count_key key;
	int r;

	if (!p || p->seq != seq) {
		s->stats.off_unmatched++;
		return 0;
	}
	if (!p->raw) {
		key = p->key;
		key.kstack_id = w->kstack_id;
		/* A wait at the same place as the one unwound: the copy it needed, again (the
		 * process's copies shrink to what its unwinds need after 256 of them). */
		if (w->same_as && p->used)
			session__learn_copy_size(s, p->pid, p->used, p->stop);
		/* An event's sample on the stacks DWARF unwound: one of the DWARF-unwound. */
		if (!(p->key.flags & COUNT_F_OFF_CPU))
			s->stats.dwarf++;
		return ucounts__add(s->unwound, &key, p->ips, p->nr, ns);
	}
	p->pending_ns += ns;
	p->pending_kstack = w->kstack_id;
	if (((const struct sample_event *)p->raw->event)->event)
		s->stats.dwarf++;
	r = flush_raw(s, p);
	return r < 0 ? r : 0;
}

/* Raw entries with time to count, tried again (a table came, or the end: S->tables_wait). */
static int retry_parked(struct session *s)
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

int session__end_off_cpu(struct session *s, uint64_t end_ns)
{
	int fd = bpf_map__fd(s->skel->maps.offpend), cfd = bpf_map__fd(s->skel->maps.counts);
	__u32 key, *prev = NULL;
	struct off_pending op;
	int err = 0;

	while (!err && bpf_map_get_next_key(fd, prev, &key) == 0) {
		uint64_t ns, count;

		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &op) || end_ns <= op.start)
			continue;
		ns = end_ns - op.start;
		if (ns < (uint64_t)s->opts.min_block_us * 1000)
			continue;
		s->stats.bpf[STAT_OFF_CPU]++;
		if (op.seq) {
			struct off_weight w = {
				.tid = op.tid, .kstack_id = op.key.kstack_id, .seq = op.seq,
				.same_as = op.same_as,
			};

			err = on_weight(s, &w, ns);
			continue;
		}
		if (!bpf_map_lookup_elem(cfd, &op.key, &count))
			ns += count;
		bpf_map_update_elem(cfd, &op.key, &ns, BPF_ANY);
	}
	if (!err)
		err = retry_parked(s);
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
	ssize_t got;
	int err;

	uint64_t *kips = xk_new(s);

	if (!kips)
		return -ENOMEM;
	memcpy(kips, r->kframes, n * sizeof(uint64_t));
	memset(e, 0, offsetof(struct sample_event, stack));
	e->pid = r->pid;
	e->tid = r->tid;
	e->kstack_id = n ? (int32_t)(KSTACK_EXTRA | s->xk.nr++) : -1;
	e->ip = r->ip;
	e->sp = sp;
	e->bp = r->regs[6];
	memcpy(e->regs, r->regs, sizeof(e->regs));
	e->why = SEND_DWARF;
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
	err = park(s, e);
	if (err)
		return err;
	op = (struct off_pending){
		.start = since, .seq = e->off_seq, .tid = r->tid, .ktid = r->ktid,
		.key = { .pid = r->pid, .kstack_id = e->kstack_id, .flags = COUNT_F_OFF_CPU,
			 .period = e->period },
	};
	bpf_map_update_elem(bpf_map__fd(s->skel->maps.offpend), &r->ktid, &op, BPF_NOEXIST);
	return 0;
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
	struct off_pending op, nop;
	struct ustack *us = malloc(sizeof(*us));
	int err = 0;

	while (us && !err && bpf_map_get_next_key(fd, prev, &key) == 0) {
		struct sample_event e = { 0 };
		struct count_key k;
		const uint64_t *ips = NULL;
		uint32_t nr = 0, id = HTAB_NONE;
		uint64_t ns, count;

		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &op) || op.key.period != par || end_ns <= op.start)
			continue;
		ns = end_ns - op.start;
		/* The stacks, for the rest of the wait: the user frames in a parked entry of a
		 * new seq, the kernel's copied out of the maps about to be cleared. */
		k = op.key;
		if (op.seq) {
			id = parked_find(s, op.tid);
			if (id == HTAB_NONE || s->parked.v[id]->raw ||
			    s->parked.v[id]->seq != (op.same_as ? op.same_as : op.seq))
				continue;
			k = s->parked.v[id]->key;
			k.kstack_id = op.key.kstack_id;
			ips = s->parked.v[id]->ips;
			nr = s->parked.v[id]->nr;
		} else if (op.key.ustack_hash) {
			if (bpf_map_lookup_elem(ufd, &op.key.ustack_hash, us))
				continue;
			ips = (const uint64_t *)us->ips;
			nr = us->nr < PROFILE_MAX_DEPTH ? us->nr : PROFILE_MAX_DEPTH;
			k.walk_end = 0;
			k.ucheck = 0;
		}
		nop = op;
		nop.start = end_ns;
		nop.same_as = 0;
		nop.seq = __atomic_add_fetch(&s->skel->bss->off_seq, 1, __ATOMIC_SEQ_CST);
		nop.key.kstack_id = keep_kstack(s, op.key.kstack_id, par);
		nop.key.period = !par;
		if (bpf_map_update_elem(fd, &key, &nop, BPF_EXIST))
			continue;	/* back on a CPU meanwhile: counted whole */
		/* The wait so far: this period's. */
		if (op.seq) {
			err = ucounts__add(s->unwound, &k, ips, nr, ns);
		} else {
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
		if (!err)
			err = park_unwound(s, &e, &k, ips, nr, 0, UNWIND_STOP_END);
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
	for (size_t i = 0; i < s->parked.nr; i++)
		parked_free(s->parked.v[i]);
	free(s->parked.v);
	s->parked.v = NULL;
	s->parked.nr = s->parked.cap = 0;
	htab__free(&s->parked.index);
}

static int on_sample_event(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	const struct sample_event *e = data;
	int err;

	if (size == sizeof(struct off_weight)) {
		const struct off_weight *w = data;

		return on_weight(s, w, w->ns) < 0 ? -ENOMEM : 0;
	}
	if (size < EVENT_HDR || e->stack_len > size - EVENT_HDR ||
	    e->nr_frames > PROFILE_MAX_DEPTH)
		return 0;
	if (e->off_seq)
		return park(s, e);
	err = unwind_event(s, e, e->stack, e->stack_len, !s->tables_wait);
	if (err == 1) {
		if (!queue_sample(s, e))
			return 0;
		/* No room to wait: counted as it is, cut and truncated. */
		limits__hit(LIMIT_TABLE_QUEUE, 1);
		err = unwind_event(s, e, e->stack, e->stack_len, false);
	}
	return err < 0 ? err : 0;
}

/* Queued sample Q freed, its bytes given back. */
static void queued__free(struct session *s, struct queued *q)
{
	s->queue.bytes -= q->bytes;
	limits__release(q->bytes);
	free(q);
}

int session__retry_queued(struct session *s, bool all)
{
	uint64_t answered = symbolizer__tables_answered(s->sym);
	size_t kept = 0;
	int err = 0;

	if ((!s->queue.nr && !s->parked.nr) || (!all && answered == s->queue.answered))
		return 0;
	s->queue.answered = answered;
	/* The spans first: a stack ends at the first stack bottom they hold. */
	session__respan(s);
	for (size_t i = 0; i < s->queue.nr; i++) {
		struct queued *q = s->queue.v[i];
		const struct sample_event *e = (const struct sample_event *)q->event;
		int r = 1;

		/* Unwound again when the table it waited for came (the next file's may not
		 * have: it waits for that one then). */
		if (all || !symbolizer__table_pending(s->sym, q->file)) {
			r = err ? 0 : unwind_event(s, e, q->stack, q->stack_len, !all);
			if (r == 1)
				unwinder__met_later(s->unw, &q->file);
		}
		if (r == 1) {
			s->queue.v[kept++] = q;
			continue;
		}
		if (r < 0)
			err = r;
		queued__free(s, q);
	}
	s->queue.nr = kept;
	/* Off-CPU stacks whose time waited for a table too. */
	if (!err)
		err = retry_parked(s);
	return err;
}

void session__free_queue(struct session *s)
{
	for (size_t i = 0; i < s->queue.nr; i++)
		queued__free(s, s->queue.v[i]);
	free(s->queue.v);
	s->queue.v = NULL;
	s->queue.nr = s->queue.cap = 0;
}

int session__open_samples(struct session *s)
{
	struct epoll_event ev = { .events = EPOLLIN };

	s->events = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_sample_event, s, NULL);
	if (!s->events)
		return session__fail(s, SESSION_ERR_RUNTIME, -errno,
				     "cannot open the sample ring buffer: %s", strerror(errno));
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0 ||
	    epoll_ctl(s->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(s->events), &ev))
		return session__fail(s, SESSION_ERR_RUNTIME, -errno, "cannot wait for samples: %s",
				     strerror(errno));
	return 0;
}

int session__wait(struct session *s, int ms)
{
	struct epoll_event ev[4];
	int fd = symbolizer__fd(s->sym), n;
	unsigned int gen = symbolizer__worker_gen(s->sym);

	/* The worker's socket, registered once per worker: another when a worker was replaced
	 * (the old one left the set when it was closed; the new one may have the same
	 * number). */
	if (fd != s->ep_sock || gen != s->ep_gen) {
		if (s->ep_sock >= 0)
			epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->ep_sock, NULL);
		if (fd >= 0) {
			struct epoll_event want = { .events = EPOLLIN, .data.u32 = 1 };

			if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &want) && errno != EEXIST)
				fd = -1;
		}
		s->ep_sock = fd;
		s->ep_gen = gen;
	}
	n = epoll_wait(s->epfd, ev, 4, ms);
	return n < 0 ? -errno : 0;
}

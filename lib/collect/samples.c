// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/samples: the consumer of DWARF samples. A sample whose user stack BPF could not
 * complete comes through the `events` ring buffer with its registers and a copy of the stack;
 * it is unwound here while the process still runs and counted in the session's ucounts (or
 * queued until the table its unwind needs comes).
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
#include "base/grow.h"
#include "base/limits.h"
#include "base/log.h"
#include "collect/session_int.h"
#include "collect/stacks.h"
#include "collect/ucounts.h"
#include "proc/procmaps.h"
#include "sandbox/symbolizer.h"
#include "unwind/unwind.h"
#include "profile.skel.h"
#include "collect/samples_int.h"

/* A sample whose user stack BPF could not complete: unwind it with DWARF now, while the
 * process still runs (older frames past the copy are read from it). */
_Static_assert(PROFILE_NR_REGS == UNWIND_NR_REGS, "sample_event.regs is unwind_sample.regs");
_Static_assert(PROFILE_RED_ZONE == UNWIND_RED_ZONE, "sample_event.below is unwind_sample.below");
_Static_assert(PROFILE_DEEP_WORDS == UNWIND_DEEP_WORDS, "sample_event.deep_* is unwind_sample.deep_*");
_Static_assert(PROFILE_SP_WORDS == STACK_SP_WORDS, "ustack.sp_words is stacks__leaf_caller's words");

/* --- the collector as the stack stage sees it (collect/stacks.h) --------------------------- */

static void env_prepare(void *ctx, pid_t pid)
{
	struct session *s = ctx;

	procmaps__ensure(s->maps, pid);
	/* BPF knew nothing of the process's code: from now on it checks its walks. */
	if (!session__described(s, pid))
		session__describe(s, pid);
}

static bool env_more_records(void *ctx)
{
	struct session *s = ctx;
	uint64_t seen = s->sideband_records;

	session__read_sideband(s);
	session__flush_procstate(s);
	return s->sideband_records != seen;
}

static enum stack_place env_place(void *ctx, pid_t pid, uint64_t addr)
{
	switch (session__span_kind(ctx, pid, addr)) {
	case SPAN_TRUSTED: return STACK_PLACE_TRUSTED;
	case SPAN_BOTTOM: return STACK_PLACE_BOTTOM;
	default: return STACK_PLACE_OTHER;
	}
}

static void env_learn_copy(void *ctx, pid_t pid, size_t used, enum unwind_stop stop)
{
	session__learn_copy_size(ctx, pid, used, stop);
}

bool session__still_off(struct session *s, pid_t ktid, uint64_t seq)
{
	struct off_pending op;
	__u32 key = (__u32)ktid;

	/* BPF's entry for the task's wait, made as it left the CPU with SEQ's stacks, goes
	 * when it comes back (on_switch). */
	return seq && !bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.offpend), &key, &op) &&
	       op.seq == seq;
}

static bool env_still(void *ctx, const struct sample *smp)
{
	return !smp->weight && session__still_off(ctx, smp->ktid, smp->off_seq);
}

static void env_deep_words(void *ctx, const struct sample *smp, const uint64_t *addrs, int n)
{
	struct session *s = ctx;
	int fd = bpf_map__fd(s->skel->maps.deepwords);
	struct deep_words dw = { .nr = (__u32)n };
	__u32 key = (__u32)smp->ktid;

	if (!key)
		return;
	if (!n) {
		bpf_map_delete_elem(fd, &key);
		return;
	}
	memcpy(dw.addr, addrs, (size_t)n * sizeof(*addrs));
	if (bpf_map_update_elem(fd, &key, &dw, BPF_ANY))
		return;
	session__proc_has_deep(s, smp->pid);
}

struct stack_env session__stack_env(struct session *s)
{
	return (struct stack_env){ s, env_prepare, env_more_records, env_place, env_learn_copy,
				   env_still, env_deep_words };
}

/* How many of E's frames are native: those before PY_MARK (its Python frames follow). */
static uint32_t native_frames(const struct sample_event *e)
{
	uint32_t n = e->nr_frames < PROFILE_MAX_DEPTH ? e->nr_frames : PROFILE_MAX_DEPTH;

	return (uint32_t)python_split((const uint64_t *)e->frames, (int)n);
}

/* Sample E (its header: from the ring buffer or the queue) with STACK_LEN bytes of STACK from
 * sp, as plain data: the one place a BPF sample record is read. */
static void sample__decode(struct sample *smp, const struct sample_event *e, const void *stack,
			   uint32_t stack_len)
{
	bool rest = e->why == SEND_TABLE_REST;

	*smp = (struct sample){
		.pid = (pid_t)e->pid, .tid = (pid_t)e->tid, .ktid = (pid_t)e->ktid,
		.gen = e->gen, .weight = e->weight, .off_seq = e->off_seq,
		/* Taken on the CPU, its task ran on at once; an off-CPU event unwound once its
		 * time came, its task ran since. Only a task off the CPU may still be as it
		 * was (stacks.c asks env_still). */
		.copy_only = !e->off_seq || e->event || e->weight,
		/* (A checked walk from the tables is not a frame-pointer walk to fall back
		 * on: the unwind checked stands alone.) */
		.walk = (const uint64_t *)e->frames,
		.nr_walk = e->why == SEND_TABLE_CHECK || rest ? 0 : native_frames(e),
		/* (Sent from where BPF's walk from the tables stopped: the frames it walked
		 * first, the registers and copy the next frame's; the leaf's are not sent.) */
		.prefix = rest ? (const uint64_t *)e->frames : NULL,
		.nr_prefix = rest ? native_frames(e) : 0,
		.bp_ok = !rest || e->bp_ok,
		.ip = e->ip, .sp = e->sp, .bp = e->bp,
		.regs = rest ? NULL : (const uint64_t *)e->regs,
		.stack = stack, .stack_len = stack_len, .holes = e->holes,
		.below = e->below_ok && !rest ? (const uint64_t *)e->below : NULL,
		.deep_addr = (const uint64_t *)e->deep_addr,
		.deep_val = (const uint64_t *)e->deep_val,
		.nr_deep = e->nr_deep <= PROFILE_DEEP_WORDS ? e->nr_deep : 0, .deep_ok = e->deep_ok,
	};
}

/* Why BPF sent a stack (its enum profile_send), as the stages past it say it. */
static enum stack_sent sent_of(uint32_t why)
{
	switch (why) {
	case SEND_WALK_BROKEN: return STACK_SENT_WALK_BROKEN;
	case SEND_NOREC: return STACK_SENT_NOREC;
	case SEND_NO_PROC: return STACK_SENT_NO_PROC;
	case SEND_DWARF: case SEND_TABLE_CHECK: return STACK_SENT_DWARF;
	case SEND_TABLE_REST: return STACK_SENT_TABLE_REST;
	default: return STACK_COUNTED;
	}
}

void stack_key__decode(struct stack_key *out, const struct count_key *k)
{
	*out = (struct stack_key){
		.pid = (pid_t)k->pid, .tid = (pid_t)k->tid, .gen = k->gen,
		.kstack_id = k->kstack_id, .period = k->period,
		.event = (k->flags & COUNT_F_EVENT_MASK) >> COUNT_F_EVENT_SHIFT,
		.off_cpu = k->flags & COUNT_F_OFF_CPU,
		.truncated = k->flags & COUNT_F_USER_TRUNCATED,
		.stop = UNWIND_STOP_END, .sent = STACK_COUNTED,
	};
}

/* The first frame where IPS (N of them) and E's frames differ. */
static int first_difference(const uint64_t *ips, int n, const struct sample_event *e)
{
	int i = 0;

	while (i < n && i < (int)native_frames(e) && ips[i] == e->frames[i])
		i++;
	return i;
}

/* PROFILE_TABLE_WALK_CHECK: whether BPF's walk of E from the tables (its frames) is the
 * unwind of its copy here (IPS, N frames, stopped as STOP), counted; the first ones that are
 * not, said with -v. An unwind cut short (the copy ended, a word not read) that BPF's walk
 * goes on from, the same frames up to there, is BPF's walk reading at the sample what the
 * copy did not hold: counted apart. */
static void check_table_walk(struct session *s, const struct sample_event *e,
			     const uint64_t *ips, int n, enum unwind_stop stop)
{
	int common = first_difference(ips, n, e);
	bool same = stop == UNWIND_STOP_END && n == (int)native_frames(e) && common == n;

	s->stats.table_checked++;
	if (same)
		return;
	if (stop != UNWIND_STOP_END && common == n && n < (int)native_frames(e)) {
		s->stats.table_further++;
		return;
	}
	s->stats.table_differ++;
	if (s->stats.table_differ <= 5)
		pr_info("table walk check: pid %u ip %#llx: BPF %u frames, userspace %d (%s), "
			"first difference at frame %d", e->pid, (unsigned long long)e->ip,
			native_frames(e), n, unwind_stop_names[stop], first_difference(ips, n, e));
	if (s->stats.table_differ <= 5)
		for (int i = 0; i < n || i < (int)native_frames(e); i++)
			pr_debug("table walk check:   #%d BPF %#llx userspace %#llx", i,
				 i < (int)native_frames(e) ? (unsigned long long)e->frames[i] : 0ull,
				 i < n ? (unsigned long long)ips[i] : 0ull);
}

/*
 * Unwind sample E (its header: from the ring buffer or the queue) with STACK_LEN bytes of
 * STACK from sp, and count it; or, when MAY_WAIT and its unwind met a file whose table the
 * worker is still making, return 1 without counting it (for the queue). Else 0, or -ENOMEM.
 */
int samples__unwind(struct session *s, const struct sample_event *e, const void *stack,
			uint32_t stack_len, bool may_wait)
{
	uint64_t ips[USER_MAX_DEPTH + PROFILE_MAX_DEPTH];
	struct stack_env env = session__stack_env(s);
	struct user_stack us = { .ips = ips };
	uint32_t nat = native_frames(e), all = e->nr_frames < PROFILE_MAX_DEPTH ?
					       e->nr_frames : PROFILE_MAX_DEPTH;
	struct stack_key key;
	struct sample smp;
	struct ucount *entry;
	enum unwind_stop stop;
	bool learnt;
	int n, r;

	/* (Before its unwind, which may move them.) */
	learnt = session__copy_learnt(s, (pid_t)e->pid);
	sample__decode(&smp, e, stack, stack_len);
	r = stacks__unwind(&env, s->unw, s->maps, &smp, may_wait, &us, USER_MAX_DEPTH);
	if (r)
		return r;
	n = us.n;
	stop = us.stop;
	if (e->why == SEND_TABLE_CHECK)
		check_table_walk(s, e, ips, n, stop);
	s->stats.unwind_ns += us.ns;
	s->stats.unwind_frames += n;
	/* The Python frames BPF read, behind the native ones. */
	if (all > nat && all - nat <= PROFILE_MAX_DEPTH) {
		memcpy(ips + n, e->frames + nat, (all - nat) * sizeof(*ips));
		n += (int)(all - nat);
	}
	s->stats.copy_bytes += e->stack_len;
	if (learnt) {
		s->stats.copies_learnt++;
		s->stats.copies_learnt_bytes += e->stack_len;
	}
	if (!e->off_seq || e->event)
		s->stats.dwarf++;
	s->stats.unwind_stop[stop]++;
	/* For --explain, counted with the stack (the model's builder reads them once per
	 * distinct stack): how the unwind stopped, why BPF sent it, and where a walk that met a
	 * function keeping no frame record stopped. */
	key = (struct stack_key){
		.pid = smp.pid, .tid = s->opts.threads ? smp.tid : 0, .gen = smp.gen,
		.kstack_id = e->kstack_id, .period = e->period,
		.event = (e->evflags & COUNT_F_EVENT_MASK) >> COUNT_F_EVENT_SHIFT,
		.off_cpu = e->off_seq && !e->event, .truncated = stop != UNWIND_STOP_END,
		.no_stack = us.no_stack, .stop = stop, .sent = sent_of(e->why),
		.walk_end = e->why == SEND_NOREC && native_frames(e) ?
			    e->frames[native_frames(e) - 1] : 0,
		.scan_pc = us.scan_pc,
	};
	/* Off-CPU stacks: their task's entry, for the times of this wait (still to come, when
	 * E has no weight) and of later ones at the same place. */
	if (e->off_seq) {
		r = offcpu__park_unwound(s, e, &key, ips, (uint32_t)n, us.used, stop);
		if (r || !e->weight)
			return r;
	}
	/* On the CPU, a sample of an event other than the clocks weighs its period. */
	if (ucounts__add_entry(s->unwound, &key, ips, n, e->weight ? e->weight : 1, &entry))
		return -ENOMEM;
	/* (Its time, for a timeline: when it was taken, whenever it was unwound.) */
	if (s->opts.timeline)
		return timeline__unwound(s, e->time, smp.tid, e->weight ? e->weight : 1, entry);
	return 0;
}

/* A copy of event E's header and the STACK_LEN bytes of its STACK, with (READ_MORE) up to
 * QUEUE_STACK_MORE bytes more of the live stack past them; NULL when over the limits. */
struct queued *samples__keep(const struct sample_event *e, const void *stack,
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

/* Put Q (from samples__keep) in the queue until the table its unwind met comes. Returns 0, or
 * -ENOSPC when the queue is full (Q is not taken then). */
int samples__queue_kept(struct session *s, struct queued *q)
{
	if (s->queue.bytes + q->bytes > LIMIT_TABLE_QUEUE_MAX)
		return -ENOSPC;
	if (array_grow(&s->queue.v, &s->queue.cap, sizeof(*s->queue.v), s->queue.nr))
		return -ENOSPC;
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
	/* (On the CPU: its task ran on, nothing is read past the copy.) */
	q = samples__keep(e, e->stack, e->stack_len, false);
	if (!q)
		return -ENOSPC;
	if (samples__queue_kept(s, q)) {
		limits__release(q->bytes);
		free(q);
		return -ENOSPC;
	}
	return 0;
}

static int on_sample_event(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	const struct sample_event *e = data;
	int err;

	if (size == sizeof(struct off_weight)) {
		const struct off_weight *w = data;

		return offcpu__on_weight(s, w, w->ns) < 0 ? -ENOMEM : 0;
	}
	if (size == sizeof(struct rb_iseq_event) &&
	    ((const struct rb_iseq_event *)data)->magic == RB_ISEQ_MAGIC)
		return python__on_iseq(s, data);
	if (size == sizeof(struct py_code_event) &&
	    ((const struct py_code_event *)data)->magic == PY_CODE_MAGIC)
		return python__on_code(s, data);
	if (size == sizeof(struct timed_sample)) {
		const struct timed_sample *r = data;

		return timeline__counted(s, r->time, r->weight, (pid_t)r->tid, &r->key);
	}
	if (size < EVENT_HDR || e->stack_len > size - EVENT_HDR ||
	    e->nr_frames > PROFILE_MAX_DEPTH)
		return 0;
	if (e->off_seq)
		return offcpu__park(s, e);
	err = samples__unwind(s, e, e->stack, e->stack_len, !s->tables_wait);
	if (err == 1) {
		if (!queue_sample(s, e))
			return 0;
		/* No room to wait: counted as it is, cut and truncated. */
		limits__hit(LIMIT_TABLE_QUEUE, 1);
		err = samples__unwind(s, e, e->stack, e->stack_len, false);
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

	if (!all && answered == s->queue.answered)
		return 0;
	s->queue.answered = answered;
	/* The spans first (and with them the tables BPF walks, whether or not a sample
	 * waits): a stack ends at the first stack bottom they hold. */
	session__respan(s);
	if (!s->queue.nr && !s->parked.nr)
		return 0;
	for (size_t i = 0; i < s->queue.nr; i++) {
		struct queued *q = s->queue.v[i];
		const struct sample_event *e = (const struct sample_event *)q->event;
		int r = 1;

		/* Unwound again when the table it waited for came (the next file's may not
		 * have: it waits for that one then). */
		if (all || !symbolizer__table_pending(s->sym, q->file)) {
			r = err ? 0 : samples__unwind(s, e, q->stack, q->stack_len, !all);
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
		err = offcpu__retry_parked(s);
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

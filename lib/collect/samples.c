// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/samples: the consumer of DWARF samples. A sample whose user stack BPF could not
 * complete comes through the `events` ring buffer with its registers and a copy of the stack;
 * it is unwound here while the process still runs and counted in the session's ucounts.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "base/clock.h"
#include "collect/fixup.h"
#include "collect/session_int.h"
#include "collect/ucounts.h"
#include "proc/procmaps.h"
#include "unwind/unwind.h"
#include "profile.skel.h"

/* A sample whose user stack BPF could not complete: unwind it with DWARF now, while the
 * process still runs (older frames past the copy are read from it). */
_Static_assert(PROFILE_NR_REGS == UNWIND_NR_REGS, "sample_event.regs is unwind_sample.regs");

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

static int on_sample_event(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	const struct sample_event *e = data;
	size_t hdr = offsetof(struct sample_event, stack);
	uint64_t ips[USER_MAX_DEPTH];
	struct count_key key = { 0 };
	struct unwind_sample us;
	enum unwind_stop stop;
	uint64_t t0;
	int n;

	if (size < hdr || e->stack_len > size - hdr || e->nr_frames > PROFILE_MAX_DEPTH)
		return 0;
	/* mmap records of a process that just started may still wait in their buffer. */
	if (!procmaps__find(s->maps, e->pid, e->ip)) {
		perf_buffer__consume(s->mmap_pb);
		session__flush_procstate(s);
	}
	procmaps__ensure(s->maps, e->pid);
	/* BPF knew nothing of the process's code: from now on it checks its walks. */
	if (!session__described(s, e->pid))
		session__describe(s, e->pid);
	us = (struct unwind_sample){
		.pid = e->pid, .ip = e->ip, .sp = e->sp, .bp = e->bp, .regs = (const uint64_t *)e->regs,
		.stack = e->stack, .stack_len = e->stack_len,
		.holes = e->holes,
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
	n = end_at_bottom(s, e->pid, ips, n, &stop);
	s->stats.unwind_frames += n;
	s->stats.copy_bytes += e->stack_len;
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
	if (e->why == SEND_NOREC && e->nr_frames)
		key.walk_end = e->frames[e->nr_frames - 1];
	if (ucounts__add(s->unwound, &key, ips, n))
		return -ENOMEM;
	return 0;
}

int session__open_samples(struct session *s)
{
	s->events = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_sample_event, s, NULL);
	if (!s->events)
		return session__fail(s, SESSION_ERR_RUNTIME, -errno,
				     "cannot open the sample ring buffer: %s", strerror(errno));
	return 0;
}

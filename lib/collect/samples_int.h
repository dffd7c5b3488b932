/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * samples_int: what samples.c (the DWARF samples: unwound, queued for a table) and offcpu.c
 * (the stacks a task left the CPU with, parked until their time comes) share; not for use
 * outside lib/collect.
 */
#ifndef COLLECT_SAMPLES_INT_H
#define COLLECT_SAMPLES_INT_H

#include <stddef.h>
#include <stdint.h>
#include "collect/session_int.h"
#include "unwind/unwind.h"

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

/* samples.c: unwind sample E (its header: from the ring buffer or the queue) with STACK_LEN
 * bytes of STACK from sp, and count it; or, when MAY_WAIT and its unwind met a file whose
 * table the worker is still making, return 1 without counting it. Else 0, or -ENOMEM. */
int samples__unwind(struct session *s, const struct sample_event *e, const void *stack,
		    uint32_t stack_len, bool may_wait);
/* samples.c: a copy of event E's header and STACK_LEN bytes of STACK, with (READ_MORE) up to
 * QUEUE_STACK_MORE bytes more of the live stack (only for a task off the CPU: the caller
 * checks it still is, after); NULL when over the limits. */
struct queued *samples__keep(const struct sample_event *e, const void *stack,
			     uint32_t stack_len, bool read_more);
/* samples.c: Q in the queue until the table its unwind met comes. Returns 0, or -ENOSPC
 * (Q is not taken then). */
int samples__queue_kept(struct session *s, struct queued *q);

/* offcpu.c: the stacks of a task leaving the CPU (E: its off_seq), unwound into KEY and the
 * NR frames of IPS (USED bytes read, STOP), kept until their time comes. 0 or -ENOMEM. */
int offcpu__park_unwound(struct session *s, const struct sample_event *e,
			 const struct stack_key *key, const uint64_t *ips, uint32_t nr,
			 size_t used, enum unwind_stop stop);
/* offcpu.c: event E of a task leaving the CPU, unwound now or kept raw. 0 or -ENOMEM. */
int offcpu__park(struct session *s, const struct sample_event *e);
/* offcpu.c: the time W says (NS of it) onto the stacks it is of. 0 or -ENOMEM. */
int offcpu__on_weight(struct session *s, const struct off_weight *w, uint64_t ns);
/* offcpu.c: raw parked stacks whose tables came, unwound. 0 or -ENOMEM. */
int offcpu__retry_parked(struct session *s);

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * parking: the off-CPU part of the stack stage (--off-cpu, --wall, and -e events whose
 * samples at the same place send their weight only). The stacks a task left the CPU with
 * wait here, one entry per task, until a weight says how long it was off; the weights of its
 * later waits at the same place count on the same stacks. No BPF, no session: offcpu.c
 * feeds it decoded samples and weights, unit tests feed it recorded ones.
 */
#ifndef COLLECT_PARKING_H
#define COLLECT_PARKING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "base/htab.h"
#include "collect/stacks.h"
#include "unwind/unwind.h"

struct ucount;
struct ucounts;

/*
 * A task's stacks of its wait SEQ: unwound at once (the task is off the CPU: its stack is as
 * it left it), or, while the unwind waits for a file's table, the sample itself kept raw
 * (the collector's, freed with the table's free_raw), unwound once its time comes.
 */
struct parked {
	pid_t tid;
	uint64_t seq;
	void *raw;		/* the sample kept, or NULL: unwound into key and ips */
	uint64_t pending_ns;	/* raw: time off the CPU on it not counted yet */
	int32_t pending_kstack;	/* ... and the kernel stack of the last of those waits */
	pid_t pid;
	size_t used;		/* stack bytes its unwind read (0: none to learn from) */
	enum unwind_stop stop;
	struct stack_key key;
	uint32_t nr;
	uint64_t ips[];
};

/* The entries, by tid. Zeroed is empty; FREE_RAW frees an entry's raw sample. */
struct parking {
	struct parked **v;
	size_t nr;
	uint32_t cap;
	struct htab index;
	void (*free_raw)(void *raw);
};

/* An entry for task TID's wait SEQ with room for NR frames (calloc'd: no key, no raw);
 * NULL past the memory budget (base/limits.h) or on ENOMEM. */
struct parked *parked__new(pid_t tid, uint64_t seq, uint32_t nr);
/* Free P and its raw sample (PK's free_raw). NULL is fine. */
void parked__free(struct parking *pk, struct parked *p);

/* Task TID's entry, or NULL. */
struct parked *parking__find(const struct parking *pk, pid_t tid);

/* P (made with parked__new) as its task's entry, in place of the one it had (freed),
 * unless that one is of a later wait (then P is freed). Returns 0, or -ENOMEM (P freed). */
int parking__put(struct parking *pk, struct parked *p);

/* The unwound stacks (KEY, the NR frames of IPS; USED bytes of stack read, STOP) of task
 * TID's wait SEQ of process PID, parked. Past the memory budget nothing is parked (counted
 * in base/limits.h). Returns 0 or -ENOMEM. */
int parking__park(struct parking *pk, pid_t tid, uint64_t seq, pid_t pid,
		  const struct stack_key *key, const uint64_t *ips, uint32_t nr, size_t used,
		  enum unwind_stop stop);

/* What a weight found (parking__weigh). */
enum park_weighed {
	PARK_UNMATCHED = 0,	/* no stacks of that wait (the task sent others since) */
	PARK_COUNTED,		/* counted on the unwound stacks */
	PARK_RAW,		/* added to a raw entry's pending time: to unwind and count */
};

/* Task TID was off the CPU NS on the stacks of its wait SEQ (the one it is at the same
 * place as, for a later wait), with kernel stack KSTACK_ID: counted into UC on those
 * stacks, with that kernel stack (its entry of UC into *COUNTED: PARK_COUNTED, when kept).
 * *ENTRY gets the entry it found (NULL when unmatched). Returns an enum park_weighed, or
 * -ENOMEM. */
int parking__weigh(struct parking *pk, struct ucounts *uc, struct ucount **counted,
		   pid_t tid, uint64_t seq, int32_t kstack_id, uint64_t ns,
		   struct parked **entry);

/* Free every entry and the table; it is empty (and usable) again. */
void parking__clear(struct parking *pk);

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
/* collect/parking: off-CPU stacks that wait for their time (see parking.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base/grow.h"
#include "base/limits.h"
#include "collect/parking.h"
#include "collect/ucounts.h"

static uint64_t tid_hash(pid_t tid)
{
	return hash_u64(HASH_SEED, (uint32_t)tid);
}

static size_t parked_size(uint32_t nr)
{
	return sizeof(struct parked) + nr * sizeof(uint64_t);
}

struct parked *parked__new(pid_t tid, uint64_t seq, uint32_t nr)
{
	struct parked *p;

	if (!limits__reserve(parked_size(nr)))
		return NULL;
	p = calloc(1, parked_size(nr));
	if (!p) {
		limits__release(parked_size(nr));
		return NULL;
	}
	p->tid = tid;
	p->seq = seq;
	p->nr = nr;
	return p;
}

void parked__free(struct parking *pk, struct parked *p)
{
	if (!p)
		return;
	if (p->raw && pk->free_raw)
		pk->free_raw(p->raw);
	limits__release(parked_size(p->nr));
	free(p);
}

/* The index of task TID's entry in PK->v, or HTAB_NONE. */
static uint32_t find(const struct parking *pk, pid_t tid)
{
	uint32_t pos, id;

	for (id = htab__first(&pk->index, tid_hash(tid), &pos); id != HTAB_NONE;
	     id = htab__next(&pk->index, tid_hash(tid), &pos))
		if (pk->v[id]->tid == tid)
			break;
	return id;
}

struct parked *parking__find(const struct parking *pk, pid_t tid)
{
	uint32_t id = find(pk, tid);

	return id == HTAB_NONE ? NULL : pk->v[id];
}

int parking__put(struct parking *pk, struct parked *p)
{
	uint32_t id = find(pk, p->tid);

	if (id != HTAB_NONE) {
		if (pk->v[id]->seq > p->seq) {
			parked__free(pk, p);
			return 0;
		}
		parked__free(pk, pk->v[id]);
		pk->v[id] = p;
		return 0;
	}
	if (array_grow(&pk->v, &pk->cap, sizeof(*pk->v), pk->nr) ||
	    htab__insert(&pk->index, tid_hash(p->tid), (uint32_t)pk->nr)) {
		parked__free(pk, p);
		return -ENOMEM;
	}
	pk->v[pk->nr++] = p;
	return 0;
}

int parking__park(struct parking *pk, pid_t tid, uint64_t seq, pid_t pid,
		  const struct stack_key *key, const uint64_t *ips, uint32_t nr, size_t used,
		  enum unwind_stop stop)
{
	struct parked *p = parking__find(pk, tid);

	if (p && p->seq > seq)
		return 0;
	p = parked__new(tid, seq, nr);
	if (!p) {
		limits__hit(LIMIT_TABLE_QUEUE, 1);
		return 0;
	}
	p->key = *key;
	p->pid = pid;
	p->used = used;
	p->stop = stop;
	memcpy(p->ips, ips, nr * sizeof(*ips));
	return parking__put(pk, p);
}

int parking__weigh(struct parking *pk, struct ucounts *uc, struct ucount **counted,
		   pid_t tid, uint64_t seq, int32_t kstack_id, uint64_t ns, struct parked **entry)
{
	struct parked *p = parking__find(pk, tid);
	struct stack_key key;

	*entry = NULL;
	*counted = NULL;
	if (!p || p->seq != seq)
		return PARK_UNMATCHED;
	*entry = p;
	if (p->raw) {
		p->pending_ns += ns;
		p->pending_kstack = kstack_id;
		return PARK_RAW;
	}
	key = p->key;
	key.kstack_id = kstack_id;
	return ucounts__add_entry(uc, &key, p->ips, p->nr, ns, counted) ? -ENOMEM : PARK_COUNTED;
}

void parking__clear(struct parking *pk)
{
	for (size_t i = 0; i < pk->nr; i++)
		parked__free(pk, pk->v[i]);
	free(pk->v);
	htab__free(&pk->index);
	pk->v = NULL;
	pk->nr = pk->cap = 0;
}

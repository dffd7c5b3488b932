// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/timeline: each sample's time and thread, for outputs that lay samples out in time
 * (speedscope's), kept until the profile of its period takes them (drain.c's
 * timeline__take). A sample BPF counted comes as a struct timed_sample (its count_key, kept
 * once per distinct key); one unwound here as its ucounts entry.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base/grow.h"
#include "base/limits.h"
#include "collect/session_int.h"
#include "collect/ucounts.h"

/* Bytes of the memory budget an entry holds (its slot, the array's slack aside). */
#define TL_ENT_BYTES	sizeof(struct tl_ent)

static uint64_t key_hash(const struct count_key *k)
{
	const uint64_t *w = (const uint64_t *)k;
	uint64_t h = HASH_SEED;

	for (size_t i = 0; i < sizeof(*k) / sizeof(*w); i++)
		h = hash_u64(h, w[i]);
	return h;
}

/* The index of key K in T's keys, added when new; UINT32_MAX on ENOMEM. */
static uint32_t key_index(struct timeline *t, const struct count_key *k)
{
	uint64_t h = key_hash(k);
	uint32_t pos, id;

	for (id = htab__first(&t->index, h, &pos); id != HTAB_NONE;
	     id = htab__next(&t->index, h, &pos))
		if (!memcmp(&t->keys[id].key, k, sizeof(*k)))
			return id;
	if (!limits__reserve(sizeof(struct tl_key) + 16))
		return UINT32_MAX;
	t->bytes += sizeof(struct tl_key) + 16;
	if (array_grow(&t->keys, &t->cap_keys, sizeof(*t->keys), t->nr_keys) ||
	    htab__insert(&t->index, h, (uint32_t)t->nr_keys))
		return UINT32_MAX;
	t->keys[t->nr_keys] = (struct tl_key){ .key = *k, .sample = UINT32_MAX };
	return (uint32_t)t->nr_keys++;
}

/* Room for one more entry in T, within the budget. */
static bool room(struct timeline *t)
{
	if (!limits__reserve(TL_ENT_BYTES))
		return false;
	t->bytes += TL_ENT_BYTES;
	if (array_grow(&t->v, &t->cap, sizeof(*t->v), t->nr)) {
		limits__release(TL_ENT_BYTES);
		t->bytes -= TL_ENT_BYTES;
		return false;
	}
	return true;
}

int timeline__counted(struct session *s, uint64_t time, uint64_t weight, pid_t tid,
		      const struct count_key *key)
{
	struct timeline *t = &s->tl;
	uint32_t k;

	if (!room(t)) {
		s->stats.timeline_lost++;
		return 0;
	}
	k = key_index(t, key);
	if (k == UINT32_MAX) {
		limits__release(TL_ENT_BYTES);
		t->bytes -= TL_ENT_BYTES;
		s->stats.timeline_lost++;
		return 0;
	}
	t->v[t->nr++] = (struct tl_ent){ .time = time, .weight = weight ? weight : 1,
					 .tid = tid, .key = k };
	return 0;
}

int timeline__unwound(struct session *s, uint64_t time, pid_t tid, uint64_t weight,
		      struct ucount *u)
{
	struct timeline *t = &s->tl;

	if (!u || !room(t)) {
		s->stats.timeline_lost++;
		return 0;
	}
	t->v[t->nr++] = (struct tl_ent){ .time = time, .weight = weight, .tid = tid,
					 .key = UINT32_MAX, .u = u };
	return 0;
}

void timeline__free(struct timeline *t)
{
	free(t->v);
	free(t->keys);
	htab__free(&t->index);
	limits__release(t->bytes);
	memset(t, 0, sizeof(*t));
}

// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "base/htab.h"
#include "base/limits.h"
#include "base/grow.h"
#include "collect/ucounts.h"

/* The entries in order of first addition, found through one htab by their hash. */
struct ucounts {
	struct ucount **ents;
	size_t nr, cap;
	struct htab index;
	uint64_t bytes;		/* of the memory budget the entries hold */
};

/* Bytes of the budget an entry of NR frames takes: itself, its slots in ents and the index. */
static uint64_t entry_bytes(uint32_t nr)
{
	return sizeof(struct ucount) + nr * sizeof(uint64_t) + sizeof(struct ucount *) + 16;
}

static uint64_t hash_entry(const struct stack_key *key, const uint64_t *ips, uint32_t nr)
{
	uint64_t h = stack_key__hash(HASH_SEED, key);

	for (uint32_t i = 0; i < nr; i++)
		h = hash_u64(h, ips[i]);
	return h;
}

static bool same(const struct ucount *e, const struct stack_key *key, const uint64_t *ips,
		 uint32_t nr)
{
	return e->nr == nr && stack_key__same(&e->key, key) &&
	       !memcmp(e->ips, ips, nr * sizeof(*ips));
}

struct ucounts *ucounts__new(void)
{
	return calloc(1, sizeof(struct ucounts));
}

void ucounts__free(struct ucounts *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->nr; i++)
		free(st->ents[i]);
	free(st->ents);
	htab__free(&st->index);
	limits__release(st->bytes);
	free(st);
}

int ucounts__add(struct ucounts *st, const struct stack_key *key, const uint64_t *ips,
		uint32_t nr, uint64_t n)
{
	struct ucount *e;

	return ucounts__add_entry(st, key, ips, nr, n, &e);
}

int ucounts__add_entry(struct ucounts *st, const struct stack_key *key, const uint64_t *ips,
		       uint32_t nr, uint64_t n, struct ucount **out)
{
	uint64_t h = hash_entry(key, ips, nr);
	struct ucount *e;
	uint32_t pos, id;

	*out = NULL;
	for (id = htab__first(&st->index, h, &pos); id != HTAB_NONE;
	     id = htab__next(&st->index, h, &pos)) {
		if (same(st->ents[id], key, ips, nr)) {
			st->ents[id]->count += n;
			*out = st->ents[id];
			return 0;
		}
	}
	/* A new stack: at most LIMIT_STACKS_MAX of them, within the memory budget; a sample of
	 * one more is dropped, and counted. */
	if (st->nr >= LIMIT_STACKS_MAX) {
		limits__hit(LIMIT_STACKS, 1);
		return 0;
	}
	if (!limits__reserve(entry_bytes(nr))) {
		limits__hit(LIMIT_MEMORY_STACKS, 1);
		return 0;
	}
	st->bytes += entry_bytes(nr);
	if (array_grow(&st->ents, &st->cap, sizeof(*st->ents), st->nr))
		return -ENOMEM;
	e = malloc(sizeof(*e) + nr * sizeof(*ips));
	if (!e)
		return -ENOMEM;
	e->key = *key;
	e->nr = nr;
	e->sample = UINT32_MAX;
	e->count = n;
	memcpy(e->ips, ips, nr * sizeof(*ips));
	if (htab__insert(&st->index, h, (uint32_t)st->nr)) {
		free(e);
		return -ENOMEM;
	}
	st->ents[st->nr++] = e;
	*out = e;
	return 0;
}

struct ucount *ucounts__next(const struct ucounts *st, size_t *pos)
{
	return *pos < st->nr ? st->ents[(*pos)++] : NULL;
}

// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "collect/ucounts.h"

struct ucounts {
	struct ucount **slots;	/* open addressing, at most half full */
	uint64_t *hashes;
	size_t cap, nr;
};

static uint64_t hash_entry(const struct count_key *key, const uint64_t *ips, uint32_t nr)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const unsigned char *k = (const unsigned char *)key;

	for (size_t i = 0; i < offsetof(struct count_key, ustack_hash); i++)
		h = (h ^ k[i]) * 0x100000001b3ULL;
	for (uint32_t i = 0; i < nr; i++)
		h = (h ^ ips[i]) * 0x100000001b3ULL;
	return h;
}

static bool same(const struct ucount *e, const struct count_key *key, const uint64_t *ips,
		 uint32_t nr)
{
	return e->nr == nr && !memcmp(&e->key, key, offsetof(struct count_key, ustack_hash)) &&
	       !memcmp(e->ips, ips, nr * sizeof(*ips));
}

struct ucounts *ucounts__new(void)
{
	struct ucounts *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->cap = 1024;
	st->slots = calloc(st->cap, sizeof(*st->slots));
	st->hashes = calloc(st->cap, sizeof(*st->hashes));
	if (!st->slots || !st->hashes) {
		ucounts__free(st);
		return NULL;
	}
	return st;
}

void ucounts__free(struct ucounts *st)
{
	if (!st)
		return;
	for (size_t i = 0; st->slots && i < st->cap; i++)
		free(st->slots[i]);
	free(st->slots);
	free(st->hashes);
	free(st);
}

static int ucounts__grow(struct ucounts *st)
{
	size_t cap = st->cap * 2;
	struct ucount **slots = calloc(cap, sizeof(*slots));
	uint64_t *hashes = calloc(cap, sizeof(*hashes));

	if (!slots || !hashes) {
		free(slots);
		free(hashes);
		return -ENOMEM;
	}
	for (size_t i = 0; i < st->cap; i++) {
		size_t j;

		if (!st->slots[i])
			continue;
		for (j = st->hashes[i] & (cap - 1); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = st->slots[i];
		hashes[j] = st->hashes[i];
	}
	free(st->slots);
	free(st->hashes);
	st->slots = slots;
	st->hashes = hashes;
	st->cap = cap;
	return 0;
}

int ucounts__add(struct ucounts *st, const struct count_key *key, const uint64_t *ips,
		uint32_t nr)
{
	uint64_t h = hash_entry(key, ips, nr);
	struct ucount *e;
	size_t i;

	if (2 * (st->nr + 1) > st->cap && ucounts__grow(st))
		return -ENOMEM;
	for (i = h & (st->cap - 1); st->slots[i]; i = (i + 1) & (st->cap - 1)) {
		if (st->hashes[i] == h && same(st->slots[i], key, ips, nr)) {
			st->slots[i]->count++;
			return 0;
		}
	}
	e = malloc(sizeof(*e) + nr * sizeof(*ips));
	if (!e)
		return -ENOMEM;
	e->key = *key;
	e->key.ustack_hash = 0;
	e->nr = nr;
	e->count = 1;
	memcpy(e->ips, ips, nr * sizeof(*ips));
	st->slots[i] = e;
	st->hashes[i] = h;
	st->nr++;
	return 0;
}

const struct ucount *ucounts__next(const struct ucounts *st, size_t *pos)
{
	for (; *pos < st->cap; (*pos)++)
		if (st->slots[*pos])
			return st->slots[(*pos)++];
	return NULL;
}

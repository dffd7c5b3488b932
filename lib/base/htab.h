/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * htab: the one hash table of lib/ and flamegraph/. An open-addressing index from 64-bit
 * hashes to the caller's entry ids (uint32_t); the caller keeps its entries (an array, an
 * arena) and says which candidate is equal. The table keeps 32 bits of each hash, so that
 * most unequal candidates are rejected without touching the entries and growing needs no
 * callback. It doubles when half full.
 *
 *	uint32_t pos, id;
 *
 *	for (id = htab__first(&t, h, &pos); id != HTAB_NONE; id = htab__next(&t, h, &pos))
 *		if (entry_equal(&entries[id], key))
 *			return id;
 *	id = nr_entries++;	(fill entries[id])
 *	err = htab__insert(&t, h, id);
 *
 * Also the hash functions the tables of lib/ use.
 */
#ifndef BASE_HTAB_H
#define BASE_HTAB_H

#include <stddef.h>
#include <stdint.h>

#define HTAB_NONE UINT32_MAX

struct htab_slot {
	uint32_t hash;	/* low 32 bits of the entry's hash */
	uint32_t id1;	/* entry id + 1; 0: empty */
};

struct htab {
	struct htab_slot *slots;
	uint32_t mask;	/* slots - 1; 0 with no slots yet */
	uint32_t used;
};

/* An empty table with room for about MIN entries before it grows (0: grow at the first
 * insert). Returns 0 or -ENOMEM. A zeroed struct htab is a valid empty table too. */
int htab__init(struct htab *t, uint32_t min);

/* Free the slots (not the caller's entries). The table is empty and usable afterwards. */
void htab__free(struct htab *t);

/*
 * Record that entry ID has hash HASH; the caller has checked it is not there yet. Grows the
 * table when it would be more than half full. Returns 0, -ENOMEM, or -E2BIG past 2^31
 * entries.
 */
int htab__insert(struct htab *t, uint64_t hash, uint32_t id);

/* Forget that entry ID has hash HASH (nothing when it is not recorded). The entries after it
 * in its probe run move back: no tombstones, lookups stay as short. */
void htab__remove(struct htab *t, uint64_t hash, uint32_t id);

/* Number of entries recorded. */
static inline uint32_t htab__count(const struct htab *t)
{
	return t->used;
}

/* The first candidate id for HASH, or HTAB_NONE; *POS keeps the place for htab__next. */
static inline uint32_t htab__next(const struct htab *t, uint64_t hash, uint32_t *pos)
{
	uint32_t h = (uint32_t)hash;

	if (!t->slots)
		return HTAB_NONE;
	for (;; *pos = (*pos + 1) & t->mask) {
		const struct htab_slot *s = &t->slots[*pos];

		if (!s->id1)
			return HTAB_NONE;
		if (s->hash == h) {
			uint32_t id = s->id1 - 1;

			*pos = (*pos + 1) & t->mask;
			return id;
		}
	}
}

static inline uint32_t htab__first(const struct htab *t, uint64_t hash, uint32_t *pos)
{
	*pos = (uint32_t)hash & t->mask;
	return htab__next(t, hash, pos);
}

/* --- hashes ---------------------------------------------------------------------------- */

#define HASH_SEED 0xcbf29ce484222325ULL

/* FNV-1a over LEN bytes at P, continuing from H (HASH_SEED to start). */
static inline uint64_t hash_bytes(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* H combined with the 64-bit value V: one multiply-xorshift round (for integer keys). */
static inline uint64_t hash_u64(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

#endif

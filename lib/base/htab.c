// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <stdlib.h>
#include "base/htab.h"

#define HTAB_MIN_SLOTS	16u
#define HTAB_MAX_SLOTS	(1u << 31)

/* Put (HASH, ID1) into the first empty slot of its probe sequence in SLOTS (MASK + 1). */
static void slots__put(struct htab_slot *slots, uint32_t mask, uint32_t hash, uint32_t id1)
{
	uint32_t i = hash & mask;

	while (slots[i].id1)
		i = (i + 1) & mask;
	slots[i] = (struct htab_slot){ hash, id1 };
}

/* Move every entry into a table of N slots (a power of two). */
static int htab__resize(struct htab *t, uint32_t n)
{
	struct htab_slot *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; t->slots && i <= t->mask; i++)
		if (t->slots[i].id1)
			slots__put(slots, n - 1, t->slots[i].hash, t->slots[i].id1);
	free(t->slots);
	t->slots = slots;
	t->mask = n - 1;
	return 0;
}

int htab__init(struct htab *t, uint32_t min)
{
	uint32_t n = HTAB_MIN_SLOTS;

	t->slots = NULL;
	t->mask = 0;
	t->used = 0;
	if (!min)
		return 0;
	while (n < HTAB_MAX_SLOTS && n / 2 < min)
		n *= 2;
	return htab__resize(t, n);
}

void htab__free(struct htab *t)
{
	free(t->slots);
	t->slots = NULL;
	t->mask = 0;
	t->used = 0;
}

int htab__insert(struct htab *t, uint64_t hash, uint32_t id)
{
	uint32_t slots = t->slots ? t->mask + 1 : 0;
	int err;

	if (id >= HTAB_MAX_SLOTS / 2)
		return -E2BIG;
	if (2 * ((uint64_t)t->used + 1) > slots) {
		if (slots >= HTAB_MAX_SLOTS)
			return -E2BIG;
		err = htab__resize(t, slots ? 2 * slots : HTAB_MIN_SLOTS);
		if (err)
			return err;
	}
	slots__put(t->slots, t->mask, (uint32_t)hash, id + 1);
	t->used++;
	return 0;
}

void htab__remove(struct htab *t, uint64_t hash, uint32_t id)
{
	uint32_t h = (uint32_t)hash, i, j;

	if (!t->slots)
		return;
	for (i = h & t->mask; t->slots[i].id1; i = (i + 1) & t->mask)
		if (t->slots[i].hash == h && t->slots[i].id1 == id + 1)
			break;
	if (!t->slots[i].id1)
		return;
	/* Backward shift: a later slot of the run moves into the hole unless its home lies
	 * (cyclically) after the hole, up to it. */
	for (j = (i + 1) & t->mask; t->slots[j].id1; j = (j + 1) & t->mask) {
		uint32_t home = t->slots[j].hash & t->mask;

		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		t->slots[i] = t->slots[j];
		i = j;
	}
	t->slots[i] = (struct htab_slot){ 0 };
	t->used--;
}

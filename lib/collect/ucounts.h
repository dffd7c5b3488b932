/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ucounts: counts of user stacks unwound in userspace, keyed by their stack_key (process,
 * thread, kernel stack, how the stack was made) and the user frames themselves.
 */
#ifndef UCOUNTS_H
#define UCOUNTS_H

#include <stddef.h>
#include <stdint.h>
#include "collect/stacks.h"

struct ucounts;

struct ucount {
	struct stack_key key;
	uint32_t nr;		/* frames in ips, leaf first */
	uint32_t sample;	/* its sample in the profile last made of it, UINT32_MAX: none */
	uint64_t count;
	uint64_t ips[];
};

/* A new, empty table; NULL on ENOMEM. Free with ucounts__free (NULL is fine). */
struct ucounts *ucounts__new(void);
void ucounts__free(struct ucounts *st);

/* Add N to the count of (KEY, IPS[0..NR)): samples, or ns off the CPU (KEY->off_cpu). A sample of a new stack past LIMIT_STACKS_MAX distinct stacks or the memory budget
 * (base/limits.h) is dropped and counted there. Returns 0 or -ENOMEM. */
int ucounts__add(struct ucounts *st, const struct stack_key *key, const uint64_t *ips,
		uint32_t nr, uint64_t n);

/* As ucounts__add, the entry into *OUT (NULL when the sample was dropped). */
int ucounts__add_entry(struct ucounts *st, const struct stack_key *key, const uint64_t *ips,
		       uint32_t nr, uint64_t n, struct ucount **out);

/* Iterate: pass *POS = 0 first; returns the next entry or NULL at the end. */
struct ucount *ucounts__next(const struct ucounts *st, size_t *pos);

#endif

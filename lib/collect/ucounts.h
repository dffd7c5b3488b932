/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ucounts: counts of user stacks unwound in userspace, keyed like the BPF `counts` map
 * (process, thread, kernel stack id, flags) plus the user frames themselves.
 */
#ifndef UCOUNTS_H
#define UCOUNTS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "profile.h"

struct ucounts;

struct ucount {
	struct count_key key;	/* walk_end, not ustack_hash; ucheck unused; period: the
				 * parity of the kernel stack maps of kstack_id */
	uint32_t nr;		/* frames in ips, leaf first */
	uint64_t count;
	uint64_t ips[];
};

/* A new, empty table; NULL on ENOMEM. Free with ucounts__free (NULL is fine). */
struct ucounts *ucounts__new(void);
void ucounts__free(struct ucounts *st);

/* Add N to the count of (KEY, IPS[0..NR)): samples, or ns off the CPU (COUNT_F_OFF_CPU in
 * KEY). A sample of a new stack past LIMIT_STACKS_MAX distinct stacks or the memory budget
 * (base/limits.h) is dropped and counted there. Returns 0 or -ENOMEM. */
int ucounts__add(struct ucounts *st, const struct count_key *key, const uint64_t *ips,
		uint32_t nr, uint64_t n);

/* Iterate: pass *POS = 0 first; returns the next entry or NULL at the end. */
const struct ucount *ucounts__next(const struct ucounts *st, size_t *pos);

#endif

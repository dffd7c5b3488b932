/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * stacks: counts of user stacks unwound in userspace, keyed like the BPF `counts` map
 * (process, thread, kernel stack id, flags) plus the user frames themselves.
 */
#ifndef STACKS_H
#define STACKS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "profile.h"

struct stacks;

struct stack_entry {
	struct count_key key;	/* ustack_hash is unused here */
	uint32_t nr;		/* frames in ips, leaf first */
	uint64_t count;
	uint64_t ips[];
};

/* A new, empty table; NULL on ENOMEM. Free with stacks__free (NULL is fine). */
struct stacks *stacks__new(void);
void stacks__free(struct stacks *st);

/* Count one more sample of (KEY, IPS[0..NR)). Returns 0 or -ENOMEM. */
int stacks__add(struct stacks *st, const struct count_key *key, const uint64_t *ips,
		uint32_t nr);

/* Iterate: pass *POS = 0 first; returns the next entry or NULL at the end. */
const struct stack_entry *stacks__next(const struct stacks *st, size_t *pos);

#endif

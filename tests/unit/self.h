/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the suites that unwind samples of this very process share: its unwinder, and a copy of
 * its stack made as BPF makes one. */
#ifndef TESTS_UNIT_SELF_H
#define TESTS_UNIT_SELF_H

#include <stddef.h>

struct procmaps;
struct dsos;
struct unwinder;

/* This process's mappings, a dso table and an unwinder over them into *PM, *DSOS, *UNW.
 * Returns 0, or -1 (CUnit's suite set-up fails). */
int self_unwinder_open(struct procmaps **pm, struct dsos **dsos, struct unwinder **unw);
void self_unwinder_close(struct procmaps *pm, struct dsos *dsos, struct unwinder *unw);

/* LEN bytes of this process's stack at SRC, past the objects of the caller's frame, as BPF
 * copies them: neither checked by AddressSanitizer (its red zones are part of the stack) nor
 * its memcpy. */
void self_copy_stack(unsigned char *dst, const void *src, size_t len);

#endif

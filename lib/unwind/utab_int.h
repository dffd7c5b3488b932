/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * utab_int: what utab.c (the table, its lookups), utab_build.c (made from a dso) and
 * utab_codec.c (encoded, decoded as untrusted input) share; not for use outside them.
 */
#ifndef UNWIND_UTAB_INT_H
#define UNWIND_UTAB_INT_H

#include <stdbool.h>
#include "unwind/utab.h"

/* Charge T's memory to the budget (limits); false when past it (T is not charged then). */
bool utab__charge(struct utab *t);

/* The last row of T (which has rows) whose start <= OFF (row 0 when none is: the caller
 * checks). */
uint32_t utab__row_index(const struct utab *t, uint32_t off);

#endif

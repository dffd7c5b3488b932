/* SPDX-License-Identifier: GPL-3.0-or-later */
/* proc/children: the processes under others, from /proc/PID/task/TID/children. */
#ifndef PROC_CHILDREN_H
#define PROC_CHILDREN_H

#include <stddef.h>
#include <sys/types.h>

/*
 * The descendants of the N processes of *V appended to it, breadth first (children, their
 * children, ...), each process once, *V grown (its room *CAP, base/grow.h) to MAX entries at
 * most. A process gone meanwhile has none. Returns the new number of entries, or -ENOMEM
 * (past MAX, or out of memory: *V holds those found so far, their number in *N_OUT).
 */
long proc__descendants(pid_t **v, size_t n, size_t *cap, size_t max, size_t *n_out);

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * mapguard: mappings of files that other users may truncate while they are mapped. Reading a
 * page of such a mapping past the file's new end raises SIGBUS. A SIGBUS at an address
 * inside a guarded mapping costs only that mapping: a handler (installed at the first
 * mapguard__add, for the life of the process) maps zero pages over the whole of it, with
 * MAP_FIXED at the same address and size so that every pointer into it stays valid, marks it
 * faulted, and returns; the read that faulted, and every later one, reads zeros. Its owner
 * asks mapguard__faulted and drops what it read since. A SIGBUS anywhere else goes to the
 * handler there was before (by default: fatal, with a core dump), as does one sent by kill.
 *
 * The registry the handler searches is a fixed array of slots written with atomics
 * (async-signal-safe to read); add and remove may be called from any thread.
 */
#ifndef BASE_MAPGUARD_H
#define BASE_MAPGUARD_H

#include <stdbool.h>
#include <stddef.h>

#define MAPGUARD_MAX	(1 << 16)	/* mappings guarded at once */

/* Install the SIGBUS handler now (mapguard__add does at its first call): a process about to
 * forbid itself rt_sigaction (the symbolizer worker's seccomp filter) calls it first.
 * Returns 0 or -errno. */
int mapguard__init(void);

/* Guard the mapping [ADDR, ADDR + LEN) (page-aligned ADDR, as mmap returns it). Returns its
 * slot (>= 0), or -ENOSPC when MAPGUARD_MAX are guarded, -errno when the handler cannot be
 * installed. */
int mapguard__add(void *addr, size_t len);

/* Stop guarding slot ID (before the mapping is unmapped). A negative ID is ignored. */
void mapguard__remove(int id);

/* Whether a SIGBUS hit the mapping of slot ID (its contents are zeros since). */
bool mapguard__faulted(int id);

#endif

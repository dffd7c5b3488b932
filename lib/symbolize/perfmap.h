/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * perfmap: symbols of JIT-compiled code from /tmp/perf-PID.map, the format node
 * (--perf-basic-prof), the JVM's perf-map-agent and others write: "START SIZE NAME" per line,
 * START and SIZE in hex.
 */
#ifndef PERFMAP_H
#define PERFMAP_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct perfmap;

/*
 * Parse perf-map text from F. Lines that do not parse are skipped, and lines with a name
 * longer than LIMIT_PERFMAP_NAME_MAX (1023) bytes; at most LIMIT_PERFMAP_ENTRIES_MAX (4M)
 * entries are read, within the memory budget (base/limits.h): the lines after are not, and
 * each bound met is counted. When two entries overlap the later one wins where both are
 * (JIT code is recompiled in place); the earlier one is kept for perfmap__lookup_at. Returns a new map the caller frees with perfmap__free, or NULL with
 * errno set (ENOMEM).
 */
struct perfmap *perfmap__parse(FILE *f);

/*
 * Open the map of PID (as our /proc numbers it): while PID lives, /tmp/perf-NSPID.map inside
 * its root directory (a container's own /tmp; NSPID its pid in its own namespace, which
 * names the file), no link leading out of that root; else /tmp/perf-PID.map. A regular file
 * only, not a link (/tmp is everyone's), owned by the process's effective user while it
 * lives. Returns the descriptor (the caller closes it), or a negative errno (-ENOENT when
 * there is none, -EPERM when another user owns it).
 */
int perfmap__open(pid_t pid);

/*
 * perfmap__parse of the descriptor FD (taken: closed with the map, or on failure), read from
 * its start. The map follows the file: a lookup after it changed reads it again, and the
 * lines a new text no longer holds (a runtime that writes its map anew: code freed since) are
 * kept as written before all of the new ones. NULL with errno set.
 */
struct perfmap *perfmap__read_fd(int fd);

/* perfmap__read_fd(perfmap__open(PID)). NULL with errno (ENOENT when there is none). */
struct perfmap *perfmap__load(pid_t pid);

/*
 * The start address of each whole line of the N bytes at BUF (perf-map text read as the file
 * grows), for FN(CTX, START, OFFSET of the line in BUF); lines without one are passed over.
 * Only the leading hex number is read: all the privileged process reads of such a file
 * (collect/jitwatch.c). Returns the bytes of the whole lines (the rest waits for more), or N
 * when a line is longer than N (passed over).
 */
size_t perfmap__line_starts(const char *buf, size_t n,
			    void (*fn)(void *ctx, uint64_t start, size_t offset), void *ctx);

/* Free the map. NULL is fine. */
void perfmap__free(struct perfmap *pm);

/* The name of the entry holding ADDR (START <= ADDR < START + SIZE), or NULL. Owned by PM. */
const char *perfmap__lookup(const struct perfmap *pm, uint64_t addr);

/*
 * The same as it was when the file held UPTO bytes: of the lines naming ADDR, the last one
 * that ends within UPTO (JIT code rewritten in place, its new line appended later); the
 * first one when all came after (code new since). UINT64_MAX: perfmap__lookup.
 */
const char *perfmap__lookup_at(const struct perfmap *pm, uint64_t addr, uint64_t upto);

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * limits: the bounds on what grows with input that profiled users control (how many files,
 * symbols, mappings, stacks and perf-map lines they make, what sizes their headers claim),
 * how often each bound was met, and the memory budget (--max-memory).
 *
 * The budget covers the caches that grow with the input: symbol tables, tables of FDEs and
 * converted .debug_frame, CFI rules, the DWARF handed to BFD (its sections' inflated sizes,
 * twice), perf maps, process mappings, distinct stacks and frame names. Sizes are counted
 * as allocated (not malloc's overhead): an estimate to within a few percent. Where a cache
 * would pass the budget, what it would add is not kept: a new file is not parsed (its frames
 * are FILE+0xADDR), a new stack is dropped, a perf map is cut; caches that only grow with
 * what is kept (names, mappings) are counted and never refused.
 *
 * Process-wide, like the one profile a process runs; every function is safe from any thread.
 */
#ifndef BASE_LIMITS_H
#define BASE_LIMITS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The fixed bounds (the budget aside), in one place. */
#define LIMIT_MAPS_MAX		16384		/* executable mappings kept per process */
#define LIMIT_SYMS_MAX		(4u << 20)	/* function symbols kept per file */
#define LIMIT_PERFMAP_ENTRIES_MAX (4u << 20)	/* entries kept per perf map */
#define LIMIT_PERFMAP_NAME_MAX	1023		/* bytes of a perf-map name; longer lines are
						 * skipped */
#define LIMIT_STACKS_MAX	(1u << 20)	/* distinct stacks unwound in userspace */
#define LIMIT_INCARNATIONS_MAX	65536		/* earlier programs of pids kept apart */
#define LIMIT_TABLE_QUEUE_MAX	(64u << 20)	/* bytes of DWARF samples waiting for tables */
#define LIMIT_SECTION_MAX	(256ull << 20)	/* bytes a compressed section other than DWARF
						 * is inflated to (DWARF: the budget) */

/* The bounds, counted each time one is met. */
enum limit {
	LIMIT_MEMORY_FILES,	/* files (symbols or CFI) not parsed: the budget was spent */
	LIMIT_MEMORY_DWARF,	/* files whose DWARF (inline frames) was not read: the budget */
	LIMIT_MEMORY_STACKS,	/* samples dropped: a new distinct stack past the budget */
	LIMIT_MEMORY_PERFMAP,	/* perf maps cut short: the budget */
	LIMIT_STACKS,		/* samples dropped: past the most distinct stacks kept */
	LIMIT_MAPS,		/* mappings left out: a process with more than the most kept */
	LIMIT_SYMS,		/* files whose symbols were cut at the most kept per file */
	LIMIT_PERFMAP_ENTRIES,	/* perf maps cut at the most entries kept */
	LIMIT_PERFMAP_LINES,	/* perf-map lines skipped: longer than a line may be */
	LIMIT_SECTION_SIZE,	/* compressed sections refused: a size past the cap or the file's */
	LIMIT_DWARF_LINK,	/* files whose DWARF was not read: an alt link BFD would follow out */
	LIMIT_FILE_FAULTS,	/* files that went bad while read (truncated under us: SIGBUS) */
	LIMIT_INCARNATIONS,	/* programs that ended (exec, exit) whose mappings were not kept
				 * apart: past LIMIT_INCARNATIONS_MAX */
	LIMIT_EPOCHS,		/* epochs of a program (a mapping replaced) merged into the next:
				 * past PROCMAPS_EPOCHS_MAX per pid */
	LIMIT_TABLE_QUEUE,	/* DWARF samples unwound without a file's table still being
				 * made: the queue of those waiting for one was full */
	LIMIT_BPF_TABLES,	/* files whose unwind tables were not put in BPF (their stacks
				 * go to userspace with a copy): the maps, or the budget, full */
	LIMIT__MAX
};

/* Count N more meetings of bound L. */
void limits__hit(enum limit l, uint64_t n);

/* How often bound L was met so far. */
uint64_t limits__count(enum limit l);

/* Forget every count and charge, and set the budget back to its default (for tests). */
void limits__reset(void);

/* The default budget: an eighth of the machine's memory, at most 1 GiB. */
uint64_t limits__default_budget(void);

/* Set the budget to BYTES (0: the default). */
void limits__set_budget(uint64_t bytes);
uint64_t limits__budget(void);

/* Reserve BYTES of the budget: true when they fit (and are charged), false (nothing
 * charged) when they would pass it. */
bool limits__reserve(uint64_t bytes);

/* Charge BYTES already taken, even past the budget (caches never refused). */
void limits__charge(uint64_t bytes);

/* Give back BYTES charged or reserved. */
void limits__release(uint64_t bytes);

/* Whether the budget is spent: nothing more may be reserved. */
bool limits__spent(void);

/* Bytes charged now, and the most at any time. */
uint64_t limits__used(void);
uint64_t limits__peak(void);

/*
 * A size as --max-memory takes it: a whole number of bytes, or with a suffix K, M, G or T
 * (binary: K = 1024; "KiB", "MB" and the like also read as binary). Returns 0 with *BYTES
 * set, or -EINVAL.
 */
int limits__parse_size(const char *s, uint64_t *bytes);

/* One line per bound met, "PREFIX: what, how often", on F; nothing when none was.
 * Returns how many lines. */
int limits__report(FILE *f, const char *prefix);

#endif

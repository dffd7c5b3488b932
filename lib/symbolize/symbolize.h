/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * symbolize: addresses -> frame names. User addresses go through the process's mappings
 * (procmaps) to an ELF file and a link-time address, then to its function symbol; kernel
 * addresses through /proc/kallsyms. Every distinct address is resolved once; ELF files are
 * opened once, lazily, and kept.
 */
#ifndef SYMBOLIZE_H
#define SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct dsos;
struct procmaps;
struct symbolizer;

#define SYMBOLIZE_INLINE	1	/* inline chains from DWARF */
#define SYMBOLIZE_DEMANGLE	2	/* C++ and Rust names demangled */

/* A new symbolizer over the mappings PM and the files DSOS (neither owned; both must outlive
 * the symbolizer) with FLAGS (SYMBOLIZE_*). NULL on ENOMEM. */
struct symbolizer *symbolizer__new(struct procmaps *pm, struct dsos *dsos, unsigned int flags);

/* Free it, with every ELF file and name it holds. NULL is fine. */
void symbolizer__free(struct symbolizer *s);

/*
 * The name of the user frame at ADDR in process PID. A return address (IS_RETURN: every frame
 * but the innermost) is looked up at ADDR - 1, inside the call instruction. Never NULL: an
 * address in a known file without a covering symbol is "[FILE]" (FILE the base name), an
 * address outside every known mapping "[unknown]". Owned by S, valid until symbolizer__free.
 */
const char *symbolizer__user(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return);

/*
 * The frames of the user address ADDR in process PID, root first: the function, then the
 * functions inlined into it at ADDR down to the innermost, which end in "_[i]". A return
 * address (IS_RETURN) is looked up at ADDR - 1. Fills at most MAX names (owned by S) into
 * OUT and returns how many, at least 1 when MAX is.
 */
int symbolizer__user_frames(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return,
			    const char **out, int max);

/* Whether process PID has a perf map of JIT symbols (/tmp/perf-PID.map, read once). */
bool symbolizer__has_perfmap(struct symbolizer *s, pid_t pid);

/*
 * Start doing what the first lookups would do later: read /proc/kallsyms (when KERNEL), and
 * the DWARF of every file already opened, in a thread at idle priority, so that it uses only
 * CPU the profiled programs leave and the end of a profile has less to do. Meant to be called
 * once while sampling; the first lookup (or symbolizer__free) waits for it to finish.
 * The dsos may still be used meanwhile: their symbols are read before it starts.
 */
void symbolizer__prepare(struct symbolizer *s, bool kernel);

/* The name of the kernel frame at ADDR, likewise; "[unknown]" when kallsyms is unreadable. */
const char *symbolizer__kernel(struct symbolizer *s, uint64_t addr, bool is_return);

#endif

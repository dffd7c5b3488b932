/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * symbolizer: addresses -> frame names, for the privileged process. User addresses go through
 * the process's mappings (procmaps) to a file (the dso table: its descriptor) and a file
 * offset, or to the process's perf map; the names come from the symbolizer worker (a process
 * without any privilege: worker.h), which is handed the files as descriptors and asked per
 * file, in batches. Kernel addresses are named here, from /proc/kallsyms (the kernel's, not
 * a user's). Every distinct (file, offset) is named once.
 *
 * Use: symbolizer__want every address a profile holds, symbolizer__resolve once, then
 * symbolizer__user_frames for each (an address not wanted before is resolved alone). A
 * file on which a worker fails (crashes, stalls, answers nonsense) has its frames named
 * FILE+0xOFFSET, with a warning; the next file gets a new worker.
 */
#ifndef SANDBOX_SYMBOLIZER_H
#define SANDBOX_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "symbolize/symfile.h"	/* SYMBOLIZE_INLINE, SYMBOLIZE_DEMANGLE */

struct dsos;
struct map;
struct procmaps;
struct symbolizer;

/* The user the workers run as when we are root, unless PROFILE_SANDBOX_USER=UID[:GID] says
 * another (not 0): nobody/nogroup. */
#define SANDBOX_UID		65534
#define SANDBOX_GID		65534
#define SANDBOX_USER_ENV	"PROFILE_SANDBOX_USER"

/*
 * A new symbolizer over the mappings PM and the files DSOS (neither owned; both must outlive
 * the symbolizer) with FLAGS (SYMBOLIZE_*), its worker started now (before the caller opens
 * descriptors it would rather not share: the worker gets none but its socket anyway). NULL
 * on ENOMEM, or with errno EINVAL for a bad PROFILE_SANDBOX_USER.
 */
struct symbolizer *symbolizer__new(struct procmaps *pm, struct dsos *dsos, unsigned int flags);

/* End the worker; free every name. NULL is fine. */
void symbolizer__free(struct symbolizer *s);

/* The worker's pid (0 when none runs now). */
pid_t symbolizer__worker_pid(const struct symbolizer *s);
/* The debuginfod fetcher's pid while it runs, else 0. */
pid_t symbolizer__fetcher_pid(const struct symbolizer *s);

/*
 * Fetch the debug files of files that have no symbols or no DWARF here from the debuginfod
 * servers of DEBUGINFOD_URLS (nothing when it names none), each within TIMEOUT seconds, while
 * sampling; the end (symbolizer__resolve) waits for those under way within their time and
 * says which it gave up on. Called before the session drops root (the cache directory is
 * made ready). Returns 0 or a negative errno.
 */
int symbolizer__debuginfod(struct symbolizer *s, double timeout);
#define DEBUGINFOD_TIMEOUT_S	15.0	/* its default */

/* Whether symbolizer__resolve waits for the debug files being fetched (the end of a
 * profile: yes, the default) or names with what has come (a period's end while sampling
 * goes on: the fetches go on too, and later periods get the names). */
void symbolizer__fetch_wait(struct symbolizer *s, bool wait);

/* What debuginfod did so far: debug files fetched, not found (or failed), under way. */
void symbolizer__fetch_counts(const struct symbolizer *s, unsigned int *fetched,
			      unsigned int *failed, unsigned int *pending);

/*
 * Hand the worker the files known so far to read at idle priority (symbols, debug files,
 * DWARF) and, when KERNEL, read /proc/kallsyms in a thread of ours at idle priority: what
 * the end of a profile would otherwise wait for. Meant once, while sampling.
 */
void symbolizer__prepare(struct symbolizer *s, bool kernel);

/*
 * While sampling, on every tick: answer what the worker asked meanwhile (its debug files),
 * hand it the files opened since, notice a worker that died. Never waits for it.
 */
void symbolizer__poll(struct symbolizer *s);

/* Continuous mode: a period's names were made (symbolizer__resolve raised the worker to
 * normal priority), sampling goes on: the worker back to what symbolizer__prepare set; a
 * worker whose memory more than doubled since its first period (by 32 MiB or more) is
 * replaced by a fresh one, started when a file is next asked about, which reads only those
 * (PROFILE_SANDBOX_TEST=recycle: at every other period). */
void symbolizer__sampling_again(struct symbolizer *s);

/* The descriptor that becomes readable when the worker has something to say (a table's
 * parts, a debug file asked for), -1 while none runs: the sampling loop waits on it beside
 * the ring buffer, so that a table comes as fast as the worker makes it. */
int symbolizer__fd(const struct symbolizer *s);

/* Which worker that descriptor is of: another number when a worker was replaced (its
 * descriptor may have the same number as the last one's). */
unsigned int symbolizer__worker_gen(const struct symbolizer *s);

/* How many tables have been answered (made, or given up on) so far: what waits for one
 * looks again when this moves. */
uint64_t symbolizer__tables_answered(const struct symbolizer *s);

/* Whether the table of the file with dso id ID is asked for and not answered yet. */
bool symbolizer__table_pending(const struct symbolizer *s, uint32_t id);

/* What the symbolizer holds (for -v): names of addresses, perf map sources (with the
 * forgotten ones' slots). */
void symbolizer__sizes(const struct symbolizer *s, uint32_t *names, uint32_t *maps);

/* Whether file ID cannot be forgotten now: its table is being made, or names of it awaited. */
bool symbolizer__file_busy(const struct symbolizer *s, uint32_t id);

/*
 * Continuous mode, after a period's names were made: forget the N files IDS (dso ids no
 * process maps any more, none symbolizer__file_busy) and the perf maps
 * of the NP processes PIDS (gone): their names, tables and descriptors, here and in the
 * worker; and the names of the addresses neither this period nor the one before sampled
 * (asked again when they are). Before the dsos forget the files: their ids may come again,
 * for other files.
 */
void symbolizer__forget(struct symbolizer *s, const uint32_t *ids, size_t n, const pid_t *pids,
			size_t np);

/* Note user address ADDR of PID (a return address when IS_RETURN) to be named by the next
 * symbolizer__resolve. */
void symbolizer__want(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return);

/* Name every address wanted so far: per file, in batches, by the worker. Returns 0 or
 * -ENOMEM (a worker's failure is not an error: those names are FILE+0xOFFSET). */
int symbolizer__resolve(struct symbolizer *s);

/*
 * The frames of the user address ADDR in process PID, root first (symbolize/symfile.h's
 * struct sym_frame): the function, then the functions inlined into it at ADDR down to the
 * innermost (SYM_INLINE); JIT code named by a perf map (SYM_JIT). A return address
 * (IS_RETURN) is looked up at ADDR - 1. Fills at most MAX frames (their strings owned by S,
 * valid until symbolizer__free) into OUT and returns how many, at least 1 when MAX is; one
 * SYM_UNNAMED frame where there is no name: "[FILE]" for an unreadable file or code outside
 * every function, FILE+0xSTART for a function without a symbol, FILE+0xOFFSET where the
 * worker failed, "[unknown]" outside every mapping.
 */
int symbolizer__user_frames(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return,
			    struct sym_frame *out, int max);

/* The outermost of those frames. */
const char *symbolizer__user(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return);

struct utab;

/*
 * The unwind table (unwind/utab.h) of the file of mapping M of PID, built by the worker from
 * the descriptor it is handed and checked as it comes: asked for at the first call, without
 * waiting; with WAIT, waited for (at most the worker's deadline). *READY says whether the
 * answer came: then NULL means the file has no table (no CFI, unreadable, no such file, or a
 * worker failed on it). Owned by S, kept while S lives. While a table is asked for and not
 * yet made, the worker runs at normal priority, whatever symbolizer__prepare said.
 */
const struct utab *symbolizer__table(struct symbolizer *s, pid_t pid, const struct map *m,
				     bool wait, bool *ready);

/* Whether process PID has a perf map of JIT symbols (/tmp/perf-PID.map, opened once). */
bool symbolizer__has_perfmap(struct symbolizer *s, pid_t pid);

/*
 * For following a perf map as it grows (collect/jitwatch.c): PID's map opened as the
 * symbolizer opens it (a descriptor the caller closes, or a negative errno), and the start
 * address of each of its whole lines in N bytes read of it (perfmap__line_starts: only
 * the leading hex number is read; the names are the worker's to parse).
 */
int symbolizer__open_perfmap(pid_t pid);
/*
 * PID's perf map (there now) handed to the worker at once, without waiting, for it to read
 * it before the runtime writes it anew (HotSpot at each Compiler.perfmap): the lines of code
 * freed in between stay (perfmap__follow). Returns 0 or a negative errno (-EAGAIN: the
 * socket full, handed at the next call).
 */
int symbolizer__perfmap_early(struct symbolizer *s, pid_t pid);
size_t symbolizer__perfmap_starts(const char *buf, size_t n,
				  void (*fn)(void *ctx, uint64_t start, size_t offset), void *ctx);

/*
 * What the symbols of the file of mapping M of PID were, as the worker said when it named
 * addresses there: *NR_SYMS function symbols, from a debug file (*DEBUG). Returns 0; -ENOENT
 * when the file could not be read; -EIO when a worker failed on it; -EAGAIN when no address
 * of it was named yet.
 */
int symbolizer__file_info(struct symbolizer *s, pid_t pid, const struct map *m,
			  size_t *nr_syms, bool *debug);

/*
 * A CPython code object as its process held it: the bytes of the object (at least its
 * version's code_read of them), of the str objects of its qualified name (3.11 on) and name,
 * of its file name, and of its line table's bytes object, each as read (untrusted: the
 * worker parses them). MINOR: CPython 3's minor version.
 */
enum { SYM_PY_CODE, SYM_PY_QUALNAME, SYM_PY_NAME, SYM_PY_FILE, SYM_PY_TABLE, SYM_PY_BLOBS };
#define SYM_PY_BLOB_MAX	(256u << 10)	/* bytes of one (more: left out) */
/* (Or a CRuby iseq's, RUBY set: its body, label's and path's bytes, insns_info entries and
 * succinct table in those slots; units: its frame words' top 16 bits.) */
struct sym_pycode {
	bool ruby;
	int minor;
	const uint8_t *blob[SYM_PY_BLOBS];
	uint32_t len[SYM_PY_BLOBS];
};
struct sym_pyname {
	char name[1024];	/* "[python: unreadable]" when the objects did not decode */
	char file[1024];	/* "" when not known (both valid UTF-8, cut at a character) */
	uint32_t line;		/* 0 when not known */
	bool named;
};
/*
 * The names of code object C at each of its N instructions UNITS (code units, as BPF records
 * them) into OUT, from the worker (waited for, its deadline). Returns 0, or a negative errno
 * (the worker failed: OUT not filled).
 */
int symbolizer__python(struct symbolizer *s, const struct sym_pycode *c, const uint32_t *units,
		       uint32_t n, struct sym_pyname *out);

/* The name of the kernel frame at ADDR (a return address when IS_RETURN); "[unknown]" when
 * kallsyms is unreadable. */
const char *symbolizer__kernel(struct symbolizer *s, uint64_t addr, bool is_return);

#endif

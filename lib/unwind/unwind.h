/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * unwind: DWARF CFI unwinding of sampled user stacks, in userspace, after the fact.
 *
 * A sample brings the registers (ip, sp, bp) and a copy of the top of the user stack. Each
 * frame's CFI rule (cfi.h), worked out once per address and cached per file, says where the
 * caller's sp, ip and rbp are in that copy; memory past it (older callers' frames, still in
 * place while the thread is inside them) is read from the live process with
 * process_vm_readv. A stack with a frame no such rule covers goes to libunwind (remote
 * interface, our accessors) as a whole. Unwind tables (.eh_frame_hdr, .eh_frame) and code
 * are read from each file's dso (lib/dso), shared with the symbolizer.
 */
#ifndef UNWIND_H
#define UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct dsos;
struct map;
struct procmaps;
struct unwinder;

/* The sampled user registers and stack copy of one sample. */
#define UNWIND_NR_REGS	16

struct unwind_sample {
	pid_t pid;
	const uint64_t *prefix;	/* not NULL: the stack's first NR_PREFIX frames, known (walked in
				 * BPF); ip, sp, bp and the copy are those of the frame after
				 * them, ip a return address, bp its rbp only when BP_OK; REGS and
				 * BELOW are NULL then */
	uint32_t nr_prefix;
	bool bp_ok;
	uint64_t ip, sp, bp;
	const uint64_t *regs;	/* UNWIND_NR_REGS general registers in DWARF's numbering (rax
				 * rdx rcx rbx rsi rdi rbp rsp r8..r15), or NULL: only ip, sp, bp */
	const void *stack;	/* copy of the user stack from sp */
	size_t stack_len;
	uint32_t holes;		/* bit i: page i of the copy (page 0 from sp to its page's end)
				 * was not readable and holds zeros, not the stack's words */
	const uint64_t *below;	/* UNWIND_RED_ZONE bytes below sp, as copied, or NULL */
	const uint64_t *deep_addr;	/* NR_DEEP words of the stack past the copy, read at the */
	const uint64_t *deep_val;	/* sample (DEEP_OK bit i: deep_val[i] was readable) */
	uint32_t nr_deep, deep_ok;
	bool copy_only;		/* the thread may have run since the copy: its live stack is
				 * not read past it (every sample taken on the CPU; an off-CPU
				 * stack unwound once its time came) */
};

/* Bytes below sp a leaf may still keep words in: below copies that many. */
#define UNWIND_RED_ZONE	128

/* Why an unwind stopped before the stack's first frame. */
enum unwind_stop {
	UNWIND_STOP_END = 0,		/* reached the end: complete */
	UNWIND_STOP_NO_INFO,		/* no unwind table for an address (no mapping, no .eh_frame) */
	UNWIND_STOP_BAD_FRAME,		/* unwind info present but the step failed */
	UNWIND_STOP_NO_MEMORY,		/* a needed word was neither copied nor readable */
	UNWIND_STOP_DEPTH,		/* the frame limit */
	UNWIND_STOP_COPY,		/* a needed word lay past what was copied at the sample,
					 * and the thread had run since (not read later) */
	UNWIND_STOP__MAX,
};

/* A name for each enum unwind_stop, for the summary. */
extern const char *const unwind_stop_names[UNWIND_STOP__MAX];

/* A new unwinder over the mappings PM and the files DSOS (neither owned; both must outlive the
 * unwinder). NULL on failure. */
struct unwinder *unwinder__new(struct procmaps *pm, struct dsos *dsos);

/* Free it with every file mapping and address space it holds. NULL is fine. */
void unwinder__free(struct unwinder *u);

/*
 * Unwind sample S into IPS (at most MAX frames, leaf first: IPS[0] is S->ip, the rest return
 * addresses). Returns the number of frames (at least 1) and sets *STOP to why it stopped.
 */
int unwinder__unwind(struct unwinder *u, const struct unwind_sample *s, uint64_t *ips, int max,
		     enum unwind_stop *stop);

/*
 * Where the CFI at S->ip puts the return address, when it is one of the N words copied from
 * S->sp (S->stack holds them): a leaf without a frame of its own, or a sample in a prologue.
 * Returns 0 and sets *RET, or -ENOENT when the return address is elsewhere (a normal frame)
 * or there is no unwind info.
 */
int unwinder__leaf_return(struct unwinder *u, const struct unwind_sample *s, uint64_t *ret);

/* Whether the code at IP of process PID keeps no frame record of its own there, by its CFI:
 * 1 (its CFA is sp-based: its return address lies at sp, and a walk from rbp skips its
 * caller), 0 (it keeps one, or it is a signal frame, or Go's code, whose CFI is sp-based
 * everywhere), -ENOENT (no CFI covers IP). */
int unwinder__leaf_frameless(struct unwinder *u, pid_t pid, uint64_t ip);

/* How the stacks were unwound so far. */
struct unwind_counts {
	uint64_t fast;		/* by cached CFI rules alone */
	uint64_t slow;		/* by libunwind (some frame had no rule a cache entry can hold) */
	uint64_t mismatches;	/* PROFILE_UNWIND_CHECK: fast stacks libunwind unwound otherwise */
};

/* The counts so far. Owned by U. */
const struct unwind_counts *unwinder__counts(const struct unwinder *u);

/* The pc of the frame (in code no CFI describes) whose caller the last unwinder__unwind found
 * by a scan of the stack copy, checked (see unwind.c's scan_caller); 0: none. */
uint64_t unwinder__scanned(const struct unwinder *u);

/* Words past the copy read with each sample (struct unwind_sample's deep words). */
#define UNWIND_DEEP_WORDS	32

/* The addresses of the stack past the copy whose words the last unwinder__unwind took from
 * the sample's deep words, in the order it took them, then those it needed and did not have
 * (the unwind stopped there): into ADDRS, at most UNWIND_DEEP_WORDS. Returns how many. */
int unwinder__deep_words(const struct unwinder *u, uint64_t *addrs);

/* Whether the last unwinder__unwind read words of the stack from the live process (past the
 * copy, for a sample not copy_only): they are the sample's only if the thread has not run
 * since. */
bool unwinder__read_live(const struct unwinder *u);

/* Bytes of stack from the sample's sp that the last unwinder__unwind read (from the copy or
 * from the live process). */
size_t unwinder__stack_used(const struct unwinder *u);

struct map;
struct frame_spans;

/*
 * Where the files' unwind tables come from: FN(CTX, PID, M, &LATER) gives the table of the
 * file of mapping M of PID (unwind/utab.h; owned by the source, kept while U lives), or NULL
 * when it has none; or NULL with LATER set when it is still being made (the source is asked
 * again at the file's next use). Without a source the unwinder builds them itself from the
 * dsos. With one, no file is parsed here (the sandboxed worker does it) and stacks the tables
 * cannot unwind are cut there (truncated) instead of going to libunwind, which reads the
 * files itself; with PROFILE_UNWIND_CHECK, libunwind still runs, to check. Call before the
 * first unwind.
 */
struct utab;
typedef const struct utab *(*unwind_table_fn)(void *ctx, pid_t pid, const struct map *m,
					      bool *later);
void unwinder__set_table_source(struct unwinder *u, unwind_table_fn fn, void *ctx);

/* Whether the last unwinder__unwind met a file whose table was still being made (its stack
 * is then cut there: unwind it again once the table came); *ID (when not NULL) gets the
 * file's dso id. */
bool unwinder__met_later(const struct unwinder *u, uint32_t *id);

/* The functions NAMES (N of them; not copied: they must outlive U) begin a thread's stack:
 * FRAME_BOTTOM in the spans of files that can be run. Call before the first unwind. */
void unwinder__set_bottoms(struct unwinder *u, const char *const *names, size_t n);

/*
 * Where a frame-pointer walk can be trusted in mapping M of PID (unwind/frames.h): OUT gets
 * spans in runtime addresses covering [M->start, M->end), at most MAX of them (merged where
 * that costs least). From the file's table (utab.h), made from its CFI at the first use: the
 * bottoms (unwinder__set_bottoms) are FRAME_BOTTOM in files that can be run (an entry
 * point). Code the CFI does not cover is FRAME_NOREC, so is all but the bottoms of a file
 * built without frame pointers (frames__fp_built), and a mapping without CFI to judge by
 * (anonymous code, a file without unwind tables or that cannot be read) is FRAME_TRUSTED.
 * A mapping whose table is still being made (unwinder__set_table_source) is all FRAME_NOREC
 * until it comes: returns 1 then. OUT is the caller's (frames__free). Returns 0, 1 or
 * -ENOMEM.
 */
int unwinder__map_spans(struct unwinder *u, pid_t pid, const struct map *m, size_t max,
			struct frame_spans *out);

/*
 * The unwind table of the file of mapping M of PID (utab.h; owned by U or its table source),
 * *ID its file's id (the dso id: one per file and version, whichever process maps it), and
 * *BIAS such that the table's row offset of runtime address pc in M is pc - *BIAS; NULL when
 * the file has no table with CFI (or it is still being made).
 */
const struct utab *unwinder__map_table(struct unwinder *u, pid_t pid, const struct map *m,
				       uint32_t *id, uint64_t *bias);

/*
 * A frame-pointer walk IPS (NR addresses, leaf first; room for NR + 1) of process PID, put
 * right where its leaf is in one of Go's windows (frames__go_function), where the walk from
 * rbp goes wrong: a prologue or epilogue, whose rbp is the caller's record, skips the leaf's
 * caller C1; it is put back when the walk's next return address follows a direct call of C1
 * (in C2) and only one call in C1 may go to the leaf's function (its one direct call of it
 * and no indirect call, or its one indirect call and no direct one). The call of duffzero or
 * duffcopy gives one return address too many: it is dropped. Returns NR when the leaf is in
 * no such window (or the spans of its file were not made: unwinder__map_spans), the new
 * number of addresses when the walk was put right, or -ENOENT when it cannot be: only the
 * leaf is to be kept, and the stack marked truncated. WORDS (NR_WORDS of them, 0 where they
 * were not code) are the words at sp at the sample: where the leaf's CFI puts its return
 * address among them, that is the caller, as a DWARF unwind has it.
 */
int unwinder__fp_window(struct unwinder *u, pid_t pid, uint64_t *ips, int nr,
			const uint64_t *words, int nr_words);

/* Forget what is cached about PID (it exec'd or exited). */
void unwinder__forget(struct unwinder *u, pid_t pid);

/* Forget the N files IDS (dso ids no process maps any more): their rules, and where any
 * process was still said to load them. Before their tables' source and the dsos forget them. */
void unwinder__forget_files(struct unwinder *u, const uint32_t *ids, size_t n);

#endif

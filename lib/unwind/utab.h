/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * utab: everything the unwinder needs of one ELF file, read out of it once, in a compact form
 * that can cross the privilege boundary: the file's CFI as a table of rows (each address range
 * with its rule, cfi.h), where frame-pointer walks can be trusted (frames.h spans, Go's
 * windows) and what Go's windows are mended with (its functions' extents and calls), its
 * segments and entry point.
 *
 * The sandboxed worker builds it from the file (utab__build, reading a dso) and sends it
 * encoded (utab__encode); the privileged side decodes it (utab__decode), checking every count,
 * offset and field as input from an adversary, and unwinds with it without ever parsing the
 * file. A table is immutable once made.
 */
#ifndef UNWIND_UTAB_H
#define UNWIND_UTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "dso/segs.h"
#include "unwind/cfi.h"
#include "unwind/frames.h"

struct dso;

/* A row's rule index that is no rule: no FDE covers the range, or its CFI cannot be followed
 * (UTAB_UNSUP: libunwind's turn, where there is one). */
#define UTAB_NONE	UINT32_MAX
#define UTAB_UNSUP	(UINT32_MAX - 1)
/* No FDE either, but code that keeps a frame record wherever it calls: V8's builtins (node's
 * embedded blob, whose own stack walker goes by those records). To userspace's unwinder a
 * stretch without CFI like any other (utab__rule: -ENOENT); the walk in BPF follows the
 * record at rbp from a return address there (collect/bpftabs.c: UROW_RECORD). */
#define UTAB_RECORD	(UINT32_MAX - 2)

/* [start, next row's start) of link-time addresses base + start, and its rule. */
struct utab_row {
	uint32_t start;
	uint32_t rule;		/* index into rules, or UTAB_NONE / UTAB_UNSUP / UTAB_RECORD */
};

/* A Go function's extent (its .debug_frame FDE), base-relative. */
struct utab_range {
	uint32_t start, end;
	uint32_t ok;		/* its code decodes to its end: its calls are all known */
};

/* A call instruction of Go code: where it returns to, and where a direct call goes
 * (UTAB_INDIRECT: through a register or memory), base-relative. */
#define UTAB_INDIRECT	UINT32_MAX
struct utab_call {
	uint32_t ret;
	uint32_t target;
};

/*
 * Functions where a thread's stack begins. The C library's: __libc_start_call_main for the
 * main thread, start_thread for the others; glibc leaves a non-zero rbp in them (it uses rbp
 * as a general register), so a frame-pointer walk never ends at rbp == 0 on Debian. Go's:
 * runtime.goexit under every goroutine, runtime.mstart and runtime.rt0_go under the system
 * stacks. musl's: libc_start_main_stage2 under main. glibc's __start_context under a
 * coroutine of makecontext (which "returns" into its first instruction). FRAME_BOTTOM in the
 * spans of the files that can be run (programs, static or not, and the C library).
 */
extern const char *const utab_stack_bottoms[];
#define UTAB_NR_STACK_BOTTOMS 10

/* Bounds on what a table holds (a decoded one is refused past them). */
#define UTAB_SEGS_MAX	64
#define UTAB_RULES_MAX	(1u << 20)
#define UTAB_ROWS_MAX	(1u << 23)
#define UTAB_SPANS_MAX	(1u << 20)
#define UTAB_CALLS_MAX	(1u << 23)
#define UTAB_BUILD_ID_MAX	128	/* hex digits */

struct utab {
	uint64_t base;			/* link-time address row starts are relative to */
	uint64_t min_vaddr, max_vaddr;	/* the PT_LOAD segments' extent in memory */
	uint64_t entry;			/* e_entry (0: none) */
	uint64_t file_size;		/* bytes of the file */
	uint64_t py_runtime;		/* CPython's _PyRuntime (link-time; 0: none), in a file
					 * named *python* */
	uint64_t rb_vm_ptr;		/* CRuby's ruby_current_vm_ptr (link-time; 0: none), in
					 * a file named *ruby* */
	char *build_id;			/* lowercase hex, NULL: none */
	bool is_go;
	bool has_cfi;			/* some FDE was found */
	struct dso_seg *segs;
	uint32_t nr_segs;
	struct cfi_rule *rules;		/* distinct rules */
	uint32_t nr_rules;
	struct utab_row *rows;		/* sorted by start, the last one UTAB_NONE */
	uint32_t nr_rows;
	struct frame_spans spans;	/* where frame records can be trusted (link-time) */
	struct frame_spans lost;	/* Go's windows (enum frame_lost), link-time */
	struct utab_range *funcs;	/* Go's functions, sorted */
	uint32_t nr_funcs;
	struct utab_call *calls;	/* Go's calls, sorted by ret */
	uint32_t nr_calls;
	size_t bytes;			/* memory held, as charged to base/limits */
};

/*
 * Build the table of DSO (reading its segments, CFI and, for the spans, the symbols named in
 * BOTTOMS: NR_BOTTOMS functions that begin a thread's stack). Returns a table the caller frees
 * with utab__free, or NULL when out of memory (or past the memory budget).
 */
struct utab *utab__build(struct dso *dso, const char *const *bottoms, size_t nr_bottoms);

void utab__free(struct utab *t);

/* The rule at link-time address VADDR. Returns 0 and fills *R, -ENOENT when no FDE covers it,
 * -ENOTSUP when its CFI cannot be said by a rule. O(log rows). */
int utab__rule(const struct utab *t, uint64_t vaddr, struct cfi_rule *r);

/* Whether link-time address VADDR is in a stretch of UTAB_RECORD (V8's builtins: no FDE, a
 * frame record wherever they call). */
bool utab__keeps_records(const struct utab *t, uint64_t vaddr);

/* [*START, *END) (link-time) of the Go function holding VADDR. Returns 0 or -ENOENT. */
int utab__go_function(const struct utab *t, uint64_t vaddr, uint64_t *start, uint64_t *end);

/*
 * The stretch of code around VADDR that no FDE describes, into [*START, *END): between the
 * FDEs before and after it, within the segment that holds VADDR (a side without an FDE ends
 * at the segment's). Returns 0; -EEXIST when an FDE describes VADDR; -ENOENT when no
 * segment holds it.
 */
int utab__gap(const struct utab *t, uint64_t vaddr, uint64_t *start, uint64_t *end);

/* The target (link-time) of the direct call that returns to link-time RET, or 0 when no call
 * known returns there or it is indirect. */
uint64_t utab__called_before(const struct utab *t, uint64_t ret);

/* Where the one call in [START, END) that may go to TARGET returns to (a direct call of
 * TARGET, or an indirect call), link-time; 0 when there is none or more than one. */
uint64_t utab__only_call(const struct utab *t, uint64_t start, uint64_t end, uint64_t target);

struct map;

/* *BIAS such that runtime address = link-time address + bias, for the segment holding runtime
 * address ADDR of mapping M of the file (dso__bias). Returns 0 or -ENOENT. */
int utab__bias(const struct utab *t, const struct map *m, uint64_t addr, uint64_t *bias);

/* Link-time address VADDR -> its runtime address in mapping M (dso__vaddr_to_runtime).
 * Returns 0 or -ENOENT. */
int utab__vaddr_to_runtime(const struct utab *t, const struct map *m, uint64_t vaddr,
			   uint64_t *addr);

/* Encode T into a new buffer *BUF of *LEN bytes (the caller frees it). Returns 0 or -ENOMEM. */
int utab__encode(const struct utab *t, unsigned char **buf, size_t *len);

/* Decode the LEN bytes BUF into a new table (*OUT). Returns 0, -EBADMSG when they are not a
 * valid table (any count, order, index or field out of bounds), or -ENOMEM. */
int utab__decode(const unsigned char *buf, size_t len, struct utab **out);

#endif

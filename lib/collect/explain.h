/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * explain: the stack-truth report of --explain. Per file, the samples whose user stacks were
 * cut there (and why), whose frame-pointer walks could not be trusted there (and how many of
 * those DWARF then unwound whole), and whose frames there were left unnamed (and what would
 * name them). The model's builder (model.c) adds to it once per distinct stack; the command
 * line writes it. Pure: no BPF, no /proc, no symbolizer; unit tests call it directly.
 */
#ifndef COLLECT_EXPLAIN_H
#define COLLECT_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "unwind/unwind.h"

/* What happened to a stack in a file. The order is the order of equal shares. */
enum explain_reason {
	EXPLAIN_CUT_NO_INFO,		/* DWARF: no unwind info for an address there */
	EXPLAIN_CUT_BAD_FRAME,		/* DWARF: a step through the unwind info there failed */
	EXPLAIN_CUT_NO_STACK,		/* DWARF: the stack was not readable (the process exited,
					 * the memory was gone) */
	EXPLAIN_CUT_DEPTH,		/* the frame limit */
	EXPLAIN_CUT_COPY,		/* DWARF: deeper than the stack copy, the thread ran on */
	EXPLAIN_CUT_FP,			/* a frame-pointer walk broke off there (--unwind fp) */
	EXPLAIN_NOREC,			/* a frame-pointer walk reached a function there that keeps
					 * no frame record: sent to DWARF */
	EXPLAIN_SCANNED,		/* code there without CFI: its caller found by a stack scan */
	EXPLAIN_UNNAMED_NO_SYMS,	/* no symbols at all, and no debug file found */
	EXPLAIN_UNNAMED_NO_DEBUG,	/* symbols, but none for them, and no debug file found */
	EXPLAIN_UNNAMED_DEBUG,		/* a debug file, without symbols for them either */
	EXPLAIN_UNNAMED_UNREADABLE,	/* the file could not be read */
	EXPLAIN_UNNAMED_WORKER,		/* the symbolizer worker failed on the file */
	EXPLAIN_UNNAMED_JIT,		/* anonymous code, and no perf map */
	EXPLAIN_UNNAMED_JIT_MISSING,	/* anonymous code missing from the process's perf map */
	EXPLAIN_UNNAMED_VDSO,		/* the vDSO's internal functions */
	EXPLAIN_UNNAMED_SPECIAL,	/* a special mapping ([vsyscall]) without symbols */
	EXPLAIN_UNNAMED_NO_MAPPING,	/* an address in no mapping known */
	EXPLAIN_UNNAMED_REPLACED,	/* the file was rewritten in place since it was mapped */
	EXPLAIN_PY_READ,		/* CPython's loop there: the Python frames it ran were read */
	EXPLAIN_PY_MISSING,		/* CPython's loop there, and no Python frames read for it */
	EXPLAIN_RB_READ,		/* CRuby's rb_vm_exec there: the Ruby frames it ran read */
	EXPLAIN_RB_MISSING,		/* CRuby's rb_vm_exec there, and no Ruby frames read */
	EXPLAIN__MAX,
};

/* The file names used for memory that is not a file. */
#define EXPLAIN_ANON_CODE	"[anonymous code]"
#define EXPLAIN_NO_MAPPING	"[no mapping]"
#define EXPLAIN_NO_USER		"[no user frames]"

struct explain;

/* One (file, reason) with its samples, for the report. */
struct explain_line {
	const char *file;		/* owned by the explain */
	enum explain_reason reason;
	uint64_t count;			/* samples */
	uint64_t whole;			/* of those, whole in the end (EXPLAIN_NOREC) */
};

/* An empty report; NULL on ENOMEM. Free with explain__free (NULL is fine). */
struct explain *explain__new(void);
void explain__free(struct explain *ex);

/* The id of file PATH (a mapping's path, or one of the EXPLAIN_* names above), added at the
 * first call (the path is copied). Returns the id (>= 0) or -ENOMEM. */
int explain__file(struct explain *ex, const char *path);

/* COUNT samples of one stack for REASON in file FILE (an id of explain__file), WHOLE of them
 * not truncated in the end. Returns 0, or -EINVAL for an unknown file or reason. */
int explain__add(struct explain *ex, int file, enum explain_reason reason, uint64_t count,
		 uint64_t whole);

/* Why a stack was cut: nothing readable at sp (NO_STACK), else how its DWARF unwind stopped
 * (STOP), else (UNWIND_STOP_END: no DWARF unwind) its frame-pointer walk broke off. */
enum explain_reason explain__cut_reason(bool no_stack, enum unwind_stop stop);

/* Every (file, reason) with samples, most samples first (then by reason, then by file), into
 * a malloc'd array *OUT (NULL when none). Returns how many, or -ENOMEM. */
int explain__lines(const struct explain *ex, struct explain_line **out);

/* Line L as the report writes it, its share of SAMPLES aligned, the file's control
 * characters and backslashes escaped (\xNN, \\), one sentence, no newline. Returns the
 * length it needed (snprintf's). */
int explain__format(const struct explain_line *l, uint64_t samples, char *buf, size_t len);

/* The report on F: a header naming SAMPLES (NS: nanoseconds, the weights of off-CPU or
 * wall-clock time), then at most MAX lines largest first, then how many more there were.
 * Returns 0 or -ENOMEM. */
int explain__write(const struct explain *ex, FILE *f, uint64_t samples, bool ns, size_t max);

/* PATH into BUF (LEN bytes, NUL-terminated, cut when too short) with control characters
 * (C0, DEL, C1) and bytes that are not UTF-8 as \xNN, backslashes doubled (log_escape_buf). */
void explain__escape(const char *path, char *buf, size_t len);

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * frames: where in a file a frame-pointer walk can be trusted, from its CFI (frames.c). A
 * walk from a return address reads the frame record at rbp, which is the record of the
 * function it returns to only where that function keeps one (CFA = rbp + 16) at that address.
 * The file's code is cut into spans of one kind each, sorted, in link-time addresses.
 */
#ifndef UNWIND_FRAMES_H
#define UNWIND_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "unwind/cfi.h"

/* What a frame-pointer walk may do at an address. */
enum frame_kind {
	FRAME_NONE = 0,		/* no code known here */
	FRAME_TRUSTED,		/* a frame record is kept here, or no call can return here,
				 * or nothing says otherwise (code without CFI) */
	FRAME_THIN,		/* no record, the return address at [rsp + 8]: a leaf sampled
				 * here is fixed up from the words at sp, a walk cannot go on */
	FRAME_NOREC,		/* no record: a walk cannot go on, nor start from a leaf here */
	FRAME_BOTTOM,		/* a thread's first frame: a walk that reaches it is whole */
	FRAME__MAX,
};

/* Spans of code in link-time addresses: [start, end) of one kind, sorted, not overlapping. */
struct frame_span {
	uint64_t start, end;
	uint8_t kind;		/* enum frame_kind */
};

struct frame_spans {
	struct frame_span *v;
	size_t nr, cap;
	/* Of a file's FDEs (frames__build): those that may call (a row other than CFA =
	 * rsp + 8; not a thread's first frame), and those of them that keep a frame record:
	 * how much of the file was built with frame pointers. */
	uint32_t nr_calling, nr_record;
	/* unwinder__map_spans: the mapping's file has Go's windows (frames__kind's
	 * FRAME_LOST_*), where a walk's leaf needs the words at sp to the frame's size. */
	bool windows;
};

/* Whether S (from frames__build) is the code of a file built with frame pointers: a good
 * part of its functions that may call keep a record (leaves that push registers count as
 * calling; without frame pointers only functions with variable-size frames keep one, 0-9%
 * in Debian's libc, libstdc++, ld.so, python3 and perl). */
static inline bool frames__fp_built(const struct frame_spans *s)
{
	return s->nr_record * 4 > s->nr_calling;
}

/* One row of an FDE's CFA table (cfi__rows). */
struct frame_row {
	uint64_t start, end;
	int32_t sp_off;		/* K of CFA = rsp + K for the CFI_FRAME_SP* kinds */
	uint8_t kind;		/* enum cfi_frame */
};

/* Spans a file may have at most; past this it is judged as a whole by the caller. */
#define FRAMES_MAX_SPANS	(1u << 20)

/*
 * The spans of the code that the FDEs of table T (records read through M) cover.
 * Code between FDEs is FRAME_NOREC, or takes the kind before it when it is shorter than
 * alignment padding; an FDE that cannot be read is FRAME_NOREC up to the next one. Fills OUT
 * (freed with frames__free). Returns 0, -ENOMEM or -E2BIG (more than FRAMES_MAX_SPANS).
 */
int frames__build(const struct cfi_mem *m, const struct fde_table *t, struct frame_spans *out);

/*
 * Judge the file without building its spans: its nr_calling and nr_record (the rest of OUT
 * untouched) from at most SAMPLE of the FDEs of T, spread over the table, enough for
 * frames__fp_built. Returns 0 or -ENOMEM.
 */
int frames__judge(const struct cfi_mem *m, const struct fde_table *t, uint32_t sample,
		  struct frame_spans *out);

/*
 * Paint into OUT, as FRAME_BOTTOM, the rows of the FDEs of T that are a thread's first frame
 * (the return address undefined), running only the FDEs that may have one
 * (cfi__may_end_stack): what is kept of a file built without frame pointers. Returns 0 or
 * -ENOMEM.
 */
int frames__bottoms(const struct cfi_mem *m, const struct fde_table *t, struct frame_spans *out);

/*
 * Add [START, END) of KIND to S after what it holds (spans added in order of address): code
 * between them shorter than alignment padding takes the kind before it, a longer stretch is
 * FRAME_NOREC, an overlap goes to the span added first, and neighbours of one kind merge.
 * Returns 0, -E2BIG (FRAMES_MAX_SPANS) or -ENOMEM.
 */
int frames__append(struct frame_spans *s, uint64_t start, uint64_t end, uint8_t kind);

/* Free what S holds and empty it. */
void frames__free(struct frame_spans *s);

/* The kind at VADDR (FRAME_NONE outside every span). O(log n). */
enum frame_kind frames__kind(const struct frame_spans *s, uint64_t vaddr);

/* Room for N more spans in S. Returns 0 or -ENOMEM. */
int frames__reserve(struct frame_spans *s, size_t n);

/*
 * Give [START, END) the kind KIND in S (sorted, not overlapping, any addresses): the spans it
 * overlaps are cut or dropped. Returns 0 or -ENOMEM.
 */
int frames__paint(struct frame_spans *s, uint64_t start, uint64_t end, uint8_t kind);

/*
 * Merge neighbours among the N spans V (contiguous, sorted) until at most MAX are left, where
 * that costs least: a merged span has the worse kind of the two (a walk through it goes to
 * DWARF more often, never wrong), and the cheapest merges make the fewest bytes worse.
 * FRAME_BOTTOM spans are never merged. Returns the new number of spans (more than MAX when
 * only bottoms are left to merge, or when out of memory).
 */
size_t frames__reduce(struct frame_span *v, size_t n, size_t max);

/* --- Go (frames_go.c) ----------------------------------------------------------------------- */

/* What a frame-pointer walk from a leaf in one of Go's windows gets wrong: the kind of a
 * span of frames__go_function's LOST. */
enum frame_lost {
	FRAME_LOST_CALLER = 1,	/* rbp is still (or again) the caller's record, the return
				 * address deeper than sp + 8: the walk skips the leaf's caller */
	FRAME_LOST_EXTRA,	/* rbp is a record made for a call of duffzero or duffcopy: the
				 * walk's first return address is that call's (stale) or garbage,
				 * the rest is the leaf's callers */
};

/*
 * Whether one Go function [START, START + LEN), whose code is CODE and whose CFA table is ROWS
 * (NR rows in order, from cfi__rows), keeps frame records by Go's convention at every
 * instruction: rbp saved at CFA - 16 and pointing there wherever the frame is more than the
 * return address, save in its prologue and epilogue; rbp written nowhere else; no call made
 * without a record but the stack check's, to one of CHECKS (NR_CHECKS addresses: where
 * runtime.morestack and runtime.morestack_noctxt start). LOST is emptied, then gets the
 * windows (spans of an enum frame_lost, in order) where a frame-pointer walk from a leaf goes
 * wrong. Returns 1 (it keeps them), 0 (not, or not
 * shown: no walk may trust it) or -ENOMEM.
 */
int frames__go_function(const unsigned char *code, uint64_t start, uint64_t len,
			const struct frame_row *rows, int nr, const uint64_t *checks,
			size_t nr_checks, struct frame_spans *lost);

/*
 * The spans of the Go code that the FDEs of T (records read through M) cover, judged by Go's
 * convention (frames__go_function; the code read through CODE): FRAME_TRUSTED for a function
 * that keeps it, FRAME_NOREC for the others, FRAME_BOTTOM for outermost rows. Fills OUT, and
 * LOST with the lost windows of the trusted functions (both freed with frames__free; OUT's
 * nr_calling counts the functions with a frame, nr_record the trusted ones). Returns 0,
 * -ENOMEM or -E2BIG.
 */
int frames__build_go(const struct cfi_mem *m, const struct fde_table *t,
		     const struct cfi_mem *code, const uint64_t *checks, size_t nr_checks,
		     struct frame_spans *out, struct frame_spans *lost);

/* --- V8's builtins and other code without CFI (frames_follow.c) ------------------------------- */

/* The frame at one instruction of a builtin, as its code says. */
enum follow_kind {
	FOLLOW_NONE = 0,		/* no instruction followed begins here */
	FOLLOW_RSP,			/* CFA = rsp + k */
	FOLLOW_RBP,			/* CFA = rbp + 16: the builtin's frame record */
	FOLLOW_UNKNOWN,		/* an instruction, its frame not known */
	FOLLOW_REG,			/* CFA = general register reg + d (rsp aligned or moved
				 * away after its value was kept there) */
};

/* Where the caller's rbp is (FOLLOW_RBP: FOLLOW_BP_SAVED at CFA - 16). */
enum follow_bp {
	FOLLOW_BP_SAME = 0,		/* in rbp */
	FOLLOW_BP_PUSHED,		/* in rbp, and at CFA + bpo */
	FOLLOW_BP_SAVED,		/* at CFA + bpo only */
	FOLLOW_BP_LOST,		/* not known */
};

#define FOLLOW_MAX_K	(1 << 20)	/* a CFA further from rsp is not followed */
#define FOLLOW_D_UNKNOWN	INT32_MIN

struct follow_frame {
	uint8_t kind;		/* enum follow_kind */
	uint8_t bp;		/* enum follow_bp */
	uint8_t reg;		/* FOLLOW_RSP, FOLLOW_REG: a general register (x86's number)
				 * that holds CFA - d, or X86_NO_REG */
	uint8_t pad;
	int32_t k;		/* FOLLOW_RSP: CFA = rsp + k; FOLLOW_RBP: 16 */
	int32_t d;		/* FOLLOW_RBP: rsp = rbp + d, or FOLLOW_D_UNKNOWN;
				 * FOLLOW_RSP, FOLLOW_REG: CFA = reg + d */
	int32_t ra;		/* the return address at CFA + ra (-8, or a copy of it lower) */
	int32_t bpo;		/* FOLLOW_BP_PUSHED, FOLLOW_BP_SAVED: the caller's rbp at
				 * CFA + bpo */
};

/*
 * The frame at each byte of one of V8's builtins, its code CODE of LEN bytes entered at 0 with
 * its return address at rsp, into AT (LEN entries): followed along every path (see
 * frames_follow.c). Returns 1; 0 when the builtin cannot be followed whole (AT then means
 * nothing); -ENOMEM. Pure.
 */
int frames__follow(const unsigned char *code, size_t len, struct follow_frame *at);

/* Whether the N bytes of code at P hold no call: each an instruction dso/x86.c decodes, none
 * a call, a system call or ud2 (what it cannot decode counts as a call). A prologue's or an
 * epilogue's row with what GCC schedules into it (mov $1, eax; shl $5, rdx) passes. Pure. */
bool frames__no_call(const unsigned char *p, size_t n);

#endif

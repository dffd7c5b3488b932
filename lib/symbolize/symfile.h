/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * symfile: the names of addresses in one ELF file (a dso): the function symbol (demangled),
 * then the functions DWARF says were inlined there, FILE+0xSTART for a function without a
 * symbol, [FILE] for code outside every function. This is what the symbolizer worker
 * (lib/sandbox) does per file; nothing here opens a file by path when the dso came from a
 * descriptor (dso__open_fd): DWARF is read through the dso's descriptors.
 */
#ifndef SYMBOLIZE_SYMFILE_H
#define SYMBOLIZE_SYMFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dso;
struct symfile;

#define SYMBOLIZE_INLINE	1	/* inline chains from DWARF */
#define SYMBOLIZE_DEMANGLE	2	/* C++ and Rust names demangled */
#define SYMBOLIZE_LINES		4	/* each frame's source file and line from DWARF */

/* What a frame of an address is: its kind travels beside its name, from here through the
 * worker's answers (sandbox/proto) and the symbolizer's entries to the profile model; only
 * the writers of folded stacks spell it ("_[i]", "_[j]"). */
enum sym_kind {
	SYM_FUNC = 0,		/* a function, named by its symbol */
	SYM_INLINE,		/* a function inlined into the frame before it (DWARF) */
	SYM_JIT,		/* JIT code, named by a perf map */
	SYM_UNNAMED,		/* no name: FILE+0xSTART, [FILE], FILE+0xOFFSET, [unknown] */
	SYM_KIND__MAX
};

/* One frame of an address. The strings are owned by whoever filled it in. */
struct sym_frame {
	const char *name;
	const char *file;	/* its source file (SYMBOLIZE_LINES), or NULL */
	uint32_t line;		/* its line there, 0: unknown */
	uint8_t kind;		/* enum sym_kind */
};

/* Frames one address may have: the function and the functions inlined into it. */
#define SYMFILE_MAX_FRAMES	33

/* Names of frames longer than this are cut (and end in "..."). */
#define SYMFILE_NAME_MAX	16384

/*
 * A new symfile over DSO (borrowed: it must outlive the symfile; NULL for a file that could
 * not be read, whose addresses are all "[FILE]"), named PATH (as its process sees it: the
 * base name is in the names given), with FLAGS (SYMBOLIZE_*). NULL on ENOMEM. Free with
 * symfile__free (NULL is fine).
 */
struct symfile *symfile__new(struct dso *dso, const char *path, unsigned int flags);
void symfile__free(struct symfile *f);

/*
 * The frames at file offset OFF, root first: the function (demangled, SYM_FUNC), then the
 * functions inlined into it there down to the innermost (SYM_INLINE); no symbol: one
 * SYM_UNNAMED frame, "FILE+0xSTART" (START the link-time start of the function's FDE) or
 * "[FILE]". A return address (IS_RETURN: OFF is already that of the byte before it, inside
 * the call) at a function's very first byte is named after that function (a signal
 * trampoline). With SYMBOLIZE_LINES each frame has its source file and line where DWARF
 * says. Fills at most MAX (>= 1) frames into OUT, their strings valid until the next call or
 * symfile__free, and returns how many (at least 1).
 */
int symfile__frames(struct symfile *f, uint64_t off, bool is_return, struct sym_frame *out,
		    int max);

/*
 * FN(CTX, NAME, BUILD_ID) is called before DWARF that refers to a common file by path (dwz's
 * .gnu_debugaltlink: NAME as written there, BUILD_ID in hex) is read, so that whoever opens
 * files for this process can make it readable there; it returns 0 when it did. Without it,
 * or when it fails, BFD looks for the file itself.
 */
typedef int (*symfile_alt_fn)(void *ctx, const char *name, const char *build_id);
void symfile__set_alt(struct symfile *f, symfile_alt_fn fn, void *ctx);

/* Read now what the first lookup would: the symbols, the debug file, the DWARF index. */
void symfile__prepare(struct symfile *f);

/* The number of function symbols (*NR_SYMS) and whether they came from a debug file
 * (*DEBUG); reads the symbols when needed. */
void symfile__info(struct symfile *f, size_t *nr_syms, bool *debug);

#endif

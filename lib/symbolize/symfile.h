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
#define SYMBOLIZE_LINES		4	/* each frame's source line from DWARF, after its name:
					 * NAME SYMFILE_SRC_SEP LINE:FILE (symfile__split) */

/* Between a name and its source line (SYMBOLIZE_LINES): a control character no name has. */
#define SYMFILE_SRC_SEP		'\x1f'

/*
 * NAME as symfile__frames gives it with SYMBOLIZE_LINES: the length of the name itself
 * (returned), its source FILE (*FILE, NUL-terminated, or NULL) and LINE (*LINE, 0: none). A
 * name without a well-formed source part is all name. Pure.
 */
size_t symfile__split(const char *name, const char **file, unsigned int *line);

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
 * The frames at file offset OFF, root first: the function (demangled), then the functions
 * inlined into it there down to the innermost, each of those ending in "_[i]"; no symbol:
 * "FILE+0xSTART" (START the link-time start of the function's FDE) or "[FILE]". A return
 * address (IS_RETURN: OFF is already that of the byte before it, inside the call) at a
 * function's very first byte is named after that function (a signal trampoline). Fills at
 * most MAX (>= 1) names into OUT, valid until the next call or symfile__free, and returns how
 * many (at least 1).
 */
int symfile__frames(struct symfile *f, uint64_t off, bool is_return, const char **out, int max);

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

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * inlines: inline chains from DWARF debug info through GNU BFD, and demangling. BFD is used
 * only here; it is not thread-safe, and this module is called from one thread.
 */
#ifndef INLINES_H
#define INLINES_H

#include <stdint.h>

struct inlines;

#define INLINES_MAX 32

/*
 * Open the file open as FD (an ELF file, or a separate debug file; FD is not taken: BFD reads
 * a duplicate of it, and opens no path) for DWARF lookups, named NAME in BFD's messages.
 * Returns NULL when it cannot be read or has no .debug_info. Free with inlines__free (NULL is
 * fine).
 */
struct inlines *inlines__open_fd(int fd, const char *name);
void inlines__free(struct inlines *d);

/* Where in the source a frame is: FILE (as DWARF names it; NULL: unknown) and LINE (0:
 * unknown). */
struct inline_src {
	const char *file;
	unsigned int line;
};

/*
 * The functions at link-time address VADDR, innermost first: NAMES[0] is the function whose
 * code is at VADDR (possibly inlined), each next one the function it was inlined into, the
 * last the function that holds the code in the symbol table. Returns how many (at most MAX;
 * 0 when DWARF knows nothing of VADDR). Names are as DWARF gives them (linkage names
 * where present, mangled); they stay valid until inlines__free. SRCS (room for MAX, or NULL)
 * gets the line in each function: SRCS[0] VADDR's, each next one the call of the function
 * before it (addr2line -i's lines).
 */
int inlines__at(struct inlines *d, uint64_t vaddr, const char **names, struct inline_src *srcs,
		int max);

/* Read what the first lookup would (BFD inflates and indexes .debug_info then), so that it
 * happens now rather than at the first real lookup. */
void inlines__warm(struct inlines *d);

/* The demangled form of a C++ or Rust symbol NAME in a malloc'd string, or NULL when NAME is
 * not mangled or cannot be demangled. Parameters are printed as the demangler does. */
char *demangle(const char *name);

#endif

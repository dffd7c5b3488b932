/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * dwarf: inline chains from DWARF debug info through GNU BFD, and demangling. BFD is used
 * only here; it is not thread-safe, and this module is called from one thread.
 */
#ifndef DWARF_H
#define DWARF_H

#include <stdint.h>

struct dwarf;

#define DWARF_MAX_INLINE 32

/*
 * Open PATH (an ELF file, or a separate debug file) for DWARF lookups. Returns NULL when it
 * cannot be read or has no .debug_info. Free with dwarf__free (NULL is fine).
 */
struct dwarf *dwarf__open(const char *path);
void dwarf__free(struct dwarf *d);

/*
 * The functions at link-time address VADDR, innermost first: NAMES[0] is the function whose
 * code is at VADDR (possibly inlined), each next one the function it was inlined into, the
 * last the function that holds the code in the symbol table. Returns how many (at most MAX;
 * 0 when DWARF knows nothing of VADDR). Names are as DWARF gives them (linkage names
 * where present, mangled); they stay valid until dwarf__free.
 */
int dwarf__inlines(struct dwarf *d, uint64_t vaddr, const char **names, int max);

/* Read what the first lookup would (BFD inflates and indexes .debug_info then), so that it
 * happens now rather than at the first real lookup. */
void dwarf__warm(struct dwarf *d);

/* The demangled form of a C++ or Rust symbol NAME in a malloc'd string, or NULL when NAME is
 * not mangled or cannot be demangled. Parameters are printed as the demangler does. */
char *dwarf__demangle(const char *name);

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * symtab: the function symbols of an ELF file, sorted, for address -> name (internal to
 * lib/dso: dso.c fills one from the file and its debug file).
 */
#ifndef DSO_SYMTAB_H
#define DSO_SYMTAB_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "dso/segs.h"

struct symtab_sym {
	uint64_t start;
	uint64_t size;
	const char *name;	/* into the ELF data while loading, into symtab.names after */
	unsigned int len;	/* name length, version suffix dropped, at most SYM_NAME_MAX */
	unsigned int rank;	/* binding preference: 2 global, 1 weak, 0 local */
	uint64_t limit;		/* a symbol of size 0 covers nothing from here: the end of its
				 * section (UINT64_MAX when unknown) */
};

struct symtab {
	struct symtab_sym *syms;
	size_t nr, cap;
	char *names;		/* every name, NUL-terminated, after symtab__finalize */
	size_t names_len;
	bool cut;		/* symbols past LIMIT_SYMS_MAX were left out */
};

/* The data of section SCN (header SHDR), decompressed first when SHF_COMPRESSED (to at most
 * LIMIT_SECTION_MAX bytes, and never more than its file bytes may hold: a larger claim is
 * refused and counted); NULL for SHT_NOBITS or on failure. */
Elf_Data *elf_scn__data(Elf_Scn *scn, const GElf_Shdr *shdr);

/* Append SYM (its name not copied until symtab__finalize). Returns 0 or -ENOMEM. */
int symtab__push(struct symtab *st, const struct symtab_sym *sym);

/* Whether ELF has a SHT_SYMTAB section. */
bool elf__has_symtab(Elf *elf);

/* Whether ELF has DWARF of its own: a .debug_info (or .zdebug_info) section with bytes. */
bool elf__has_debug_info(Elf *elf);

/* Add the function symbols of every SHT_SYMTAB (and, when there is none, SHT_DYNSYM) section
 * of ELF to ST, up to LIMIT_SYMS_MAX (then ST->cut). Names point into ELF's data until
 * symtab__finalize, which must run before ELF is closed. Returns 0, -ENOEXEC for malformed
 * tables, or -ENOMEM. */
int symtab__add_elf(struct symtab *st, Elf *elf);

/* Sort, keep one symbol per address (the preferred one), and copy the names into ST's own
 * arena. Returns 0 or -ENOMEM. */
int symtab__finalize(struct symtab *st);

/* Bytes symtab__add_elf and symtab__finalize may take for ELF's symbols at most (from the
 * sizes of the tables it would read). */
uint64_t symtab__estimate(Elf *elf);

/* Bytes ST holds. */
uint64_t symtab__bytes(const struct symtab *st);

/* Free what ST holds (not ST itself); it is empty afterwards. */
void symtab__free(struct symtab *st);

/* The symbol covering VADDR (see dso__lookup; SEGS bound the last unsized symbol), or NULL. */
const struct symtab_sym *symtab__lookup(const struct symtab *st, const struct dso_seg *segs,
					size_t nr_segs, uint64_t vaddr);

/* The first symbol named NAME, with *END its end (a size-0 symbol ends at the next one),
 * or NULL. A linear scan. */
const struct symtab_sym *symtab__find(const struct symtab *st, const char *name,
				      uint64_t *end);

/* The value of the defined data object NAME in ELF's symbol tables: 0, or -ENOENT. */
int symtab__find_object(Elf *elf, const char *name, uint64_t *vaddr);

#endif

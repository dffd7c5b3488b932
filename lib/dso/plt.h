/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * plt: names for the PLT stubs of an ELF file ("memcpy@plt"), made when an address falls in
 * one (internal to lib/dso). Reads only section headers at init; a lookup decodes that one
 * stub's jump and finds its GOT slot's relocation.
 */
#ifndef DSO_PLT_H
#define DSO_PLT_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PLT_MAX_SECS	3		/* .plt, .plt.sec, .plt.got */
#define PLT_MAX_STUBS	(1u << 20)	/* a section with more is not a PLT */
#define PLT_MAX_RELOCS	(1u << 22)	/* relocations searched per section */

struct plt_sec {
	Elf_Scn *scn;
	uint64_t addr, size;		/* sh_addr, sh_size */
	uint32_t first, entsize;	/* where stubs start in it, and their size */
	size_t nr_stubs;
	char **names;			/* by stub, once tried; NULL until the first lookup */
	bool *tried;
};

struct plt {
	Elf *elf;			/* not owned: the dso's */
	struct plt_sec secs[PLT_MAX_SECS];
	int nr;
};

/* Find ELF's PLT sections (none unless x86-64). ELF must outlive P. */
void plt__init(struct plt *p, Elf *elf);

/* Free the names made; P is empty afterwards. */
void plt__free(struct plt *p);

/* The name of the stub holding link-time address VADDR ("NAME@plt"), with its extent
 * [*START, *END); NULL when VADDR is in no stub or the stub cannot be named. Owned by P. */
const char *plt__lookup(struct plt *p, uint64_t vaddr, uint64_t *start, uint64_t *end);

/* Whether VADDR is in one of the PLT sections (a stub or PLT0). */
bool plt__contains(const struct plt *p, uint64_t vaddr);

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * fdes: FDE search tables a dso builds itself, for files that have no .eh_frame_hdr: from
 * the records of .eh_frame (gcc -static links none), and from .debug_frame (Go writes no
 * .eh_frame at all), whose records are converted to .eh_frame's format on the way so that
 * one reader (cfirec.h, the unwinder's rules, libunwind) reads them all. Pure functions over
 * a section's bytes; every read is bounded by them. Internal to lib/dso (and its tests).
 */
#ifndef DSO_FDES_H
#define DSO_FDES_H

#include <stddef.h>
#include <stdint.h>
#include "dso/segs.h"

#define FDES_MAX	(1u << 22)	/* FDEs a table holds at most (8 bytes each) */

/* A table built here, and for .debug_frame the records it converted. */
struct fde_index {
	unsigned char *pairs;	/* COUNT pairs in fde_table's layout, owned */
	uint32_t count;
	uint64_t base;
	unsigned char *recs;	/* .debug_frame: its CIEs, then its FDEs, in .eh_frame's format
				 * (owned; NULL for .eh_frame, whose records stay in the file) */
	size_t recs_len;
	uint64_t recs_vaddr;	/* the link-time address RECS are read at */
	uint32_t skipped;	/* FDEs left out (unreadable, unsupported, over FDES_MAX) */
};

/* IX as a search table (valid while IX is). */
static inline struct fde_table fde_index__table(const struct fde_index *ix)
{
	return (struct fde_table){ ix->pairs, ix->count, ix->base };
}

/*
 * Index the FDEs of the .eh_frame section whose LEN bytes SEC are loaded at link-time
 * address VADDR: each FDE's function start (in its CIE's encoding) and its address, relative
 * to BASE, sorted by start, one per start. Left out: FDEs of no code (range 0) or of code
 * below BASE, FDEs whose CIE cannot be read, entries that do not fit in 32 bits, FDEs past
 * the first FDES_MAX. The walk ends at the terminator (a length of 0), a 64-bit record, or
 * a record longer than what is left. Returns 0 and fills *IX (free it with
 * fde_index__free), -ENOENT when no FDE was kept, or -ENOMEM.
 */
int fde_index__eh_frame(const unsigned char *sec, size_t len, uint64_t vaddr, uint64_t base,
			struct fde_index *ix);

/*
 * Read the .debug_frame section SEC (LEN bytes, decompressed) into *IX: its CIEs (id
 * 0xffffffff; version 1, 3 or 4 with 8-byte addresses; no augmentation) and the FDEs that
 * point to them (CIE pointers are section offsets, addresses absolute) rewritten in
 * .eh_frame's format (CIE id 0, version 1 or 3, CIE pointers relative, 8-byte absolute
 * addresses), placed at link-time address RECS_VADDR, and indexed as fde_index__eh_frame
 * does, relative to BASE. 64-bit records and CIEs of another form are skipped with their
 * FDEs. Returns 0, -ENOENT when no FDE was kept, or -ENOMEM.
 */
int fde_index__debug_frame(const unsigned char *sec, size_t len, uint64_t recs_vaddr,
			   uint64_t base, struct fde_index *ix);

/* Free what IX holds (not IX). */
void fde_index__free(struct fde_index *ix);

#endif

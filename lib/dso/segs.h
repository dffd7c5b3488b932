/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * segs: the arithmetic between an ELF file's offsets and its link-time addresses, through
 * its PT_LOAD segments, and the .eh_frame_hdr search table's format. Pure functions: the one place
 * lib/ translates addresses (the unwinder, the CFI reader and the symbolizer all call here).
 */
#ifndef DSO_SEGS_H
#define DSO_SEGS_H

#include <stddef.h>
#include <stdint.h>

/* One PT_LOAD program header. */
struct dso_seg {
	uint64_t offset;	/* p_offset */
	uint64_t vaddr;		/* p_vaddr */
	uint64_t filesz;	/* p_filesz */
	uint64_t memsz;		/* p_memsz */
};

/*
 * File offset OFF -> link-time address, through the segment with offset <= OFF <
 * offset + filesz: *VADDR = OFF - offset + vaddr. Returns 0, or -ENOENT when no segment
 * holds OFF.
 */
int dso_segs__off_to_vaddr(const struct dso_seg *segs, size_t n, uint64_t off,
			   uint64_t *vaddr);

/*
 * Link-time address VADDR -> file offset, when the LEN bytes from VADDR are all file bytes
 * of one segment (not its zero-filled tail) and lie within a file of FILE_SIZE bytes.
 * Returns 0 and sets *OFF, or -ENOENT.
 */
int dso_segs__vaddr_to_off(const struct dso_seg *segs, size_t n, uint64_t vaddr, uint64_t len,
			   uint64_t file_size, uint64_t *off);

/* End (exclusive) of the segment holding VADDR in memory, or VADDR + 1 when none does. */
uint64_t dso_segs__end(const struct dso_seg *segs, size_t n, uint64_t vaddr);

/*
 * Check an .eh_frame_hdr section of LEN bytes at H: version 1, a 4-byte eh_frame pointer,
 * the FDE count as udata4 and a search table of (datarel sdata4) pairs that fits in LEN, the
 * only layout a binary-search table lookup can use. Returns 0 and sets *COUNT (the table's
 * entries start at H + EH_FRAME_HDR_TABLE, 8 bytes each), -ENOTSUP for another layout, or
 * -EINVAL when it is cut short or empty.
 */
#define EH_FRAME_HDR_TABLE 12
int eh_frame_hdr__parse(const unsigned char *h, size_t len, uint32_t *count);

/*
 * A search table of FDEs in .eh_frame_hdr's layout: COUNT pairs of little-endian sdata4
 * (function start - BASE, FDE address - BASE), sorted by start. The file's own .eh_frame_hdr
 * table (BASE its header's address) or one the dso built (BASE the file's lowest address).
 * PAIRS is not owned.
 */
struct fde_table {
	const unsigned char *pairs;
	uint32_t count;
	uint64_t base;
};

/* The last function of T starting at or before VADDR: sets *START and *FDE (either may be
 * NULL) and returns 0, or -ENOENT when VADDR is before the first one or T is empty. */
int fde_table__find(const struct fde_table *t, uint64_t vaddr, uint64_t *start, uint64_t *fde);

/* Entry I of T (sorted by start): *START and *FDE. Returns 0, or -ENOENT past the end. */
int fde_table__entry(const struct fde_table *t, uint32_t i, uint64_t *start, uint64_t *fde);

#endif

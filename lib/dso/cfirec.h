/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cfirec: DWARF call frame records in .eh_frame's format (CIEs, FDEs, their pointer
 * encodings), read from a file's bytes by link-time address. Shared by dso/ (which indexes
 * the FDEs of files that have no .eh_frame_hdr, and converts .debug_frame into this format)
 * and unwind/ (which runs the CFA programs). Every read is bounded: the bytes are other
 * users' files.
 */
#ifndef DSO_CFIREC_H
#define DSO_CFIREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "dso/segs.h"

/* An ELF file's bytes and where its segments are, to read CFI by link-time address (or any
 * buffer and one segment that places it). */
struct cfi_mem {
	const unsigned char *image;
	size_t size;
	const struct dso_seg *segs;
	int nr_segs;
};

/* LEN bytes at link-time address VADDR, or NULL when they are not all in one segment's
 * file bytes. */
const unsigned char *cfi_mem__ptr(const struct cfi_mem *m, uint64_t vaddr, uint64_t len);

/* DW_EH_PE_* pointer encodings: the format in the low nibble, the base in bits 4-6. */
#define PE_OMIT		0xff
#define PE_FORMAT	0x0f
#define PE_APPLY	0x70
#define PE_PCREL	0x10

/* --- reading ------------------------------------------------------------------------------- */

struct cfi_rd {
	const unsigned char *p, *start, *end;
	uint64_t start_vaddr;	/* link-time address of START */
	bool bad;		/* read past the end, or an encoding we cannot read */
};

static inline uint64_t rd_vaddr(const struct cfi_rd *r)
{
	return r->start_vaddr + (uint64_t)(r->p - r->start);
}

static inline uint64_t rd_u(struct cfi_rd *r, int n)
{
	uint64_t v = 0;

	if (r->end - r->p < n) {
		r->bad = true;
		r->p = r->end;
		return 0;
	}
	for (int i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

/* A LEB128 number's bits, and in *SHIFT how many it had (for the sign of SLEB128). */
static inline uint64_t rd_leb(struct cfi_rd *r, int *shift, unsigned char *last)
{
	uint64_t v = 0;

	*shift = 0;
	while (r->p < r->end) {
		unsigned char b = *r->p++;

		if (*shift < 64)
			v |= (uint64_t)(b & 0x7f) << *shift;
		*shift += 7;
		if (!(b & 0x80)) {
			*last = b;
			return v;
		}
	}
	r->bad = true;
	*last = 0;
	return 0;
}

static inline uint64_t rd_uleb(struct cfi_rd *r)
{
	unsigned char last;
	int shift;

	return rd_leb(r, &shift, &last);
}

static inline int64_t rd_sleb(struct cfi_rd *r)
{
	unsigned char last;
	int shift;
	uint64_t v = rd_leb(r, &shift, &last);

	if (shift < 64 && (last & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* A pointer in encoding ENC; APPLY adds its base (only pc-relative is known here). */
static inline uint64_t rd_enc(struct cfi_rd *r, uint8_t enc, bool apply)
{
	uint64_t at = rd_vaddr(r), v;

	if (enc == PE_OMIT)
		return 0;
	switch (enc & PE_FORMAT) {
	case 0x00: v = rd_u(r, 8); break;			/* absptr */
	case 0x01: v = rd_uleb(r); break;
	case 0x02: v = rd_u(r, 2); break;
	case 0x03: v = rd_u(r, 4); break;
	case 0x04: v = rd_u(r, 8); break;
	case 0x09: v = (uint64_t)rd_sleb(r); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_u(r, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_u(r, 4); break;
	case 0x0c: v = rd_u(r, 8); break;
	default: r->bad = true; return 0;
	}
	if (!apply)
		return v;
	switch (enc & PE_APPLY) {
	case 0: return v;
	case PE_PCREL: return v + at;
	default: r->bad = true; return 0;	/* datarel, textrel, funcrel: not in .eh_frame */
	}
}

/* --- records ------------------------------------------------------------------------------- */

/* A CIE as far as readers of this format need it. */
struct cie {
	uint8_t version;	/* 1 or 3 */
	uint64_t ra;		/* return address column */
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc;	/* how its FDEs' addresses are encoded (absptr without 'R') */
	bool has_z;		/* FDEs carry augmentation data ("z...") */
	bool signal;		/* 'S': its FDEs describe signal frames */
	struct cfi_rd insns;	/* its initial instructions */
};

/*
 * The record (CIE or FDE) at VADDR: sets R to its contents after the length and *ID to the
 * CIE id / CIE pointer field's value, *ID_VADDR to that field's address. Returns 0, -EINVAL
 * (malformed, or the terminator) or -ENOTSUP (64-bit DWARF).
 */
int cfi_record__open(const struct cfi_mem *m, uint64_t vaddr, struct cfi_rd *r, uint64_t *id,
		     uint64_t *id_vaddr);

/* The CIE at VADDR into *C (its fields as they are: the caller judges the return address
 * column and signal frames). Returns 0, -EINVAL (malformed, not a CIE) or -ENOTSUP (another
 * version, an augmentation that does not start with 'z'). */
int cfi_cie__parse(const struct cfi_mem *m, uint64_t vaddr, struct cie *c);

/*
 * The FDE at FDE_VADDR: *CIE its CIE, *START and *RANGE the code it covers, and R positioned
 * at its instructions (past the augmentation data). Returns 0, -EINVAL (malformed, a CIE) or
 * -ENOTSUP (its CIE's version or augmentation).
 */
int cfi_fde__parse(const struct cfi_mem *m, uint64_t fde_vaddr, struct cie *cie,
		   uint64_t *start, uint64_t *range, struct cfi_rd *r);

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * cfi_read: .eh_frame records (CIEs, FDEs and their pointer encodings, after the LSB's
 * .eh_frame description) and the FDE search in .eh_frame_hdr, read from a file's bytes.
 */
#include <errno.h>
#include <string.h>
#include "unwind/cfi_int.h"

const unsigned char *cfi_mem__ptr(const struct cfi_mem *m, uint64_t vaddr, uint64_t len)
{
	uint64_t off;

	if (dso_segs__vaddr_to_off(m->segs, m->nr_segs, vaddr, len, m->size, &off))
		return NULL;
	return m->image + off;
}

/* --- records --------------------------------------------------------------------------- */

int cfi_record_open(const struct cfi_mem *m, uint64_t vaddr, struct rd *r, uint64_t *id,
		    uint64_t *id_vaddr)
{
	const unsigned char *p = cfi_mem__ptr(m, vaddr, 4);
	uint64_t len, hdr = 4;

	if (!p)
		return -EINVAL;
	len = (uint32_t)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24);
	if (len == 0)
		return -EINVAL;		/* the terminator */
	if (len == 0xffffffff)
		return -ENOTSUP;	/* 64-bit DWARF: not produced for x86-64 .eh_frame */
	p = cfi_mem__ptr(m, vaddr, hdr + len);
	if (!p || len < 4)
		return -EINVAL;
	*r = (struct rd){ .p = p + hdr, .start = p + hdr, .end = p + hdr + len,
			  .start_vaddr = vaddr + hdr };
	*id_vaddr = vaddr + hdr;
	*id = rd_u(r, 4);
	return 0;
}

int cfi_cie_parse(const struct cfi_mem *m, uint64_t vaddr, struct cie *c)
{
	uint64_t id, id_vaddr, ra;
	const char *aug;
	size_t aug_len;
	const unsigned char *aug_end = NULL;
	uint8_t version;
	struct rd r;
	int err;

	err = cfi_record_open(m, vaddr, &r, &id, &id_vaddr);
	if (err)
		return err;
	if (id != 0)
		return -EINVAL;		/* not a CIE */
	version = (uint8_t)rd_u(&r, 1);
	if (version != 1 && version != 3)
		return -ENOTSUP;
	aug = (const char *)r.p;
	aug_len = strnlen(aug, (size_t)(r.end - r.p));
	if (aug_len == (size_t)(r.end - r.p))
		return -EINVAL;
	r.p += aug_len + 1;
	memset(c, 0, sizeof(*c));
	c->fde_enc = 0;			/* absptr without 'R' */
	c->code_align = rd_uleb(&r);
	c->data_align = rd_sleb(&r);
	ra = version == 1 ? rd_u(&r, 1) : rd_uleb(&r);
	if (r.bad)
		return -EINVAL;
	if (ra != CFI_REG_RA)
		return -ENOTSUP;
	if (aug_len && aug[0] != 'z')
		return -ENOTSUP;	/* "eh" and other pre-'z' forms */
	if (aug_len) {
		uint64_t n = rd_uleb(&r);

		if (r.bad || n > (uint64_t)(r.end - r.p))
			return -EINVAL;
		aug_end = r.p + n;
		c->has_z = true;
	}
	for (size_t i = 1; i < aug_len; i++) {
		switch (aug[i]) {
		case 'R':
			c->fde_enc = (uint8_t)rd_u(&r, 1);
			break;
		case 'P': {
			uint8_t enc = (uint8_t)rd_u(&r, 1);

			rd_enc(&r, enc & 0x7f, false);	/* the personality routine: skipped */
			break;
		}
		case 'L':
			rd_u(&r, 1);
			break;
		case 'S':
			c->signal = true;	/* a rule cannot say it: libunwind knows sigreturn */
			break;
		default:
			i = aug_len;		/* the rest is skipped with the 'z' length */
			break;
		}
		if (r.bad || r.p > aug_end)
			return -EINVAL;
	}
	if (aug_end)
		r.p = aug_end;
	c->insns = r;
	return 0;
}

int cfi__find_fde(const struct cfi_mem *m, uint64_t hdr_vaddr, uint32_t count, uint64_t pc,
		  uint64_t *fde_vaddr)
{
	const unsigned char *t = cfi_mem__ptr(m, hdr_vaddr + EH_FRAME_HDR_TABLE, (uint64_t)count * 8);
	size_t lo = 0, hi = count;
	int32_t v;

	if (!t || !count)
		return -ENOENT;
	/* Entries: (initial location, FDE address), both sdata4 from the header, sorted. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		memcpy(&v, t + mid * 8, 4);
		if (hdr_vaddr + (int64_t)v <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -ENOENT;
	memcpy(&v, t + (lo - 1) * 8 + 4, 4);
	*fde_vaddr = hdr_vaddr + (int64_t)v;
	return 0;
}


int cfi__fde_entry(const struct cfi_mem *m, uint64_t hdr_vaddr, uint32_t count, uint32_t i,
		   uint64_t *start, uint64_t *fde_vaddr)
{
	const unsigned char *t;
	int32_t v[2];

	if (i >= count)
		return -ENOENT;
	t = cfi_mem__ptr(m, hdr_vaddr + EH_FRAME_HDR_TABLE + (uint64_t)i * 8, 8);
	if (!t)
		return -ENOENT;
	memcpy(v, t, 8);
	*start = hdr_vaddr + (int64_t)v[0];
	*fde_vaddr = hdr_vaddr + (int64_t)v[1];
	return 0;
}

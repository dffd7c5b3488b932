// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * cfirec: .eh_frame records (CIEs, FDEs and their pointer encodings, after the LSB's
 * .eh_frame description), read from a file's bytes by link-time address.
 */
#include <errno.h>
#include <string.h>
#include "dso/cfirec.h"

#define AUG_MAX		16	/* characters of a CIE's augmentation string */

const unsigned char *cfi_mem__ptr(const struct cfi_mem *m, uint64_t vaddr, uint64_t len)
{
	uint64_t off;

	if (dso_segs__vaddr_to_off(m->segs, m->nr_segs, vaddr, len, m->size, &off))
		return NULL;
	return m->image + off;
}

int cfi_record__open(const struct cfi_mem *m, uint64_t vaddr, struct cfi_rd *r, uint64_t *id,
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
	*r = (struct cfi_rd){ .p = p + hdr, .start = p + hdr, .end = p + hdr + len,
			  .start_vaddr = vaddr + hdr };
	*id_vaddr = vaddr + hdr;
	*id = rd_u(r, 4);
	return 0;
}

int cfi_cie__parse(const struct cfi_mem *m, uint64_t vaddr, struct cie *c)
{
	uint64_t id, id_vaddr;
	const char *aug;
	size_t aug_len, room;
	const unsigned char *aug_end = NULL;
	struct cfi_rd r;
	int err;

	err = cfi_record__open(m, vaddr, &r, &id, &id_vaddr);
	if (err)
		return err;
	if (id != 0)
		return -EINVAL;		/* not a CIE */
	memset(c, 0, sizeof(*c));
	c->version = (uint8_t)rd_u(&r, 1);
	if (c->version != 1 && c->version != 3)
		return -ENOTSUP;
	aug = (const char *)r.p;
	room = (size_t)(r.end - r.p);
	aug_len = strnlen(aug, room < AUG_MAX + 1 ? room : AUG_MAX + 1);
	if (aug_len == room)
		return -EINVAL;		/* no end in the record */
	if (aug_len > AUG_MAX)
		return -ENOTSUP;	/* no known augmentation is this long */
	r.p += aug_len + 1;
	c->fde_enc = 0;			/* absptr without 'R' */
	c->code_align = rd_uleb(&r);
	c->data_align = rd_sleb(&r);
	c->ra = c->version == 1 ? rd_u(&r, 1) : rd_uleb(&r);
	if (r.bad)
		return -EINVAL;
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
			c->signal = true;
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

int cfi_fde__parse(const struct cfi_mem *m, uint64_t fde_vaddr, struct cie *cie,
		   uint64_t *start, uint64_t *range, struct cfi_rd *r)
{
	uint64_t id, id_vaddr;
	int err;

	err = cfi_record__open(m, fde_vaddr, r, &id, &id_vaddr);
	if (err)
		return err;
	if (id == 0 || id > id_vaddr)
		return -EINVAL;		/* a CIE, or a pointer before the start of memory */
	err = cfi_cie__parse(m, id_vaddr - id, cie);
	if (err)
		return err;
	*start = rd_enc(r, cie->fde_enc, true);
	*range = rd_enc(r, cie->fde_enc & PE_FORMAT, false);
	if (r->bad)
		return -EINVAL;
	if (cie->has_z) {
		uint64_t n = rd_uleb(r);

		if (r->bad || n > (uint64_t)(r->end - r->p))
			return -EINVAL;
		r->p += n;
	}
	return 0;
}

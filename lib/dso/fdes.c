// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * fdes: FDE search tables built from .eh_frame's records, and .debug_frame converted to
 * .eh_frame's format (see fdes.h). Each walk visits every record once; a CIE is parsed once
 * per run of FDEs that use it (a few CIEs serve thousands of FDEs).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "base/grow.h"
#include "dso/cfirec.h"
#include "dso/fdes.h"

#define CIE_CACHE	16		/* CIEs remembered while indexing .eh_frame */
#define DEBUG_CIE_ID	0xffffffffu	/* a CIE's id in 32-bit .debug_frame */
#define NO_CIE		UINT32_MAX

/* One table entry, as .eh_frame_hdr lays it out (little-endian, like the host). */
struct pair {
	int32_t start, fde;
};
_Static_assert(sizeof(struct pair) == 8, "a search table entry is two sdata4");

struct pairs {
	struct pair *v;
	uint32_t n, cap;
	uint32_t skipped;
};

static bool fits32(uint64_t v, uint64_t base)
{
	int64_t d = (int64_t)(v - base);

	return d >= INT32_MIN && d <= INT32_MAX;
}

/* Add the FDE at FDE for [START, START + RANGE), relative to BASE. Returns 1 when added, 0
 * when left out (counted), -ENOMEM. */
static int pairs__add(struct pairs *ps, uint64_t start, uint64_t range, uint64_t fde,
		      uint64_t base)
{
	if (!range || start < base || !fits32(start, base) || !fits32(fde, base) ||
	    ps->n == FDES_MAX) {
		ps->skipped++;
		return 0;
	}
	if (array_grow(&ps->v, &ps->cap, sizeof(*ps->v), ps->n))
		return -ENOMEM;
	ps->v[ps->n++] = (struct pair){ (int32_t)(start - base), (int32_t)(fde - base) };
	return 1;
}

static int pair_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->fde > y->fde) - (x->fde < y->fde);
}

/* Sort PS, keep the first entry of each start, and give it to IX as its table. */
static int pairs__finish(struct pairs *ps, uint64_t base, struct fde_index *ix)
{
	uint32_t n = 0;

	if (!ps->n) {
		free(ps->v);
		ix->skipped = ps->skipped;
		return -ENOENT;
	}
	qsort(ps->v, ps->n, sizeof(*ps->v), pair_cmp);
	for (uint32_t i = 0; i < ps->n; i++) {
		if (n && ps->v[i].start == ps->v[n - 1].start)
			ps->skipped++;
		else
			ps->v[n++] = ps->v[i];
	}
	ix->pairs = (unsigned char *)ps->v;
	ix->count = n;
	ix->base = base;
	ix->skipped = ps->skipped;
	return 0;
}

void fde_index__free(struct fde_index *ix)
{
	free(ix->pairs);
	free(ix->recs);
	memset(ix, 0, sizeof(*ix));
}

/* --- .eh_frame ------------------------------------------------------------------------------ */

struct cie_slot {
	bool used;
	uint8_t enc;
	int err;
	uint64_t vaddr;
};

/* The FDE pointer encoding of the CIE at VADDR of M (CACHE remembers CIE_CACHE of them).
 * Returns 0 or cfi_cie__parse's error. */
static int cie_enc(const struct cfi_mem *m, struct cie_slot *cache, uint64_t vaddr,
		   uint8_t *enc)
{
	struct cie_slot *s = &cache[(vaddr >> 3) % CIE_CACHE];
	struct cie c;

	if (!s->used || s->vaddr != vaddr) {
		s->used = true;
		s->vaddr = vaddr;
		s->err = cfi_cie__parse(m, vaddr, &c);
		s->enc = s->err ? 0 : c.fde_enc;
	}
	*enc = s->enc;
	return s->err;
}

int fde_index__eh_frame(const unsigned char *sec, size_t len, uint64_t vaddr, uint64_t base,
			struct fde_index *ix)
{
	struct dso_seg seg = { .offset = 0, .vaddr = vaddr, .filesz = len, .memsz = len };
	struct cfi_mem m = { sec, len, &seg, 1 };
	struct cie_slot cache[CIE_CACHE] = { { 0 } };
	struct pairs ps = { 0 };
	size_t off = 0;

	memset(ix, 0, sizeof(*ix));
	while (len - off >= 8) {
		uint64_t at = vaddr + off, start, range;
		uint32_t rlen, id;
		uint8_t enc;
		struct cfi_rd r;

		memcpy(&rlen, sec + off, 4);
		if (rlen < 4 || rlen == 0xffffffff || rlen > len - off - 4)
			break;		/* the terminator, 64-bit DWARF, or cut short */
		memcpy(&id, sec + off + 4, 4);
		if (id) {		/* an FDE; its CIE is ID bytes before the field */
			r = (struct cfi_rd){ .p = sec + off + 8, .start = sec + off + 8,
					 .end = sec + off + 4 + rlen, .start_vaddr = at + 8 };
			if (id > off + 4 || cie_enc(&m, cache, at + 4 - id, &enc)) {
				ps.skipped++;
			} else {
				start = rd_enc(&r, enc, true);
				range = rd_enc(&r, enc & PE_FORMAT, false);
				if (r.bad)
					ps.skipped++;
				else if (pairs__add(&ps, start, range, at, base) < 0)
					goto nomem;
			}
		}
		off += 4 + (size_t)rlen;
	}
	return pairs__finish(&ps, base, ix);
nomem:
	free(ps.v);
	return -ENOMEM;
}

/* --- .debug_frame ------------------------------------------------------------------------ */

/* Where a CIE of .debug_frame went in the converted records. */
struct cie_map {
	uint32_t orig;		/* its offset in the section */
	uint32_t conv;		/* its offset in the converted records, or NO_CIE */
};

struct conv {
	const unsigned char *sec;
	size_t len;
	unsigned char *out;	/* LEN bytes: no record grows */
	size_t out_len;
	struct cie_map *cies;
	uint32_t nr_cies, cap_cies;
};

/*
 * The record at *OFF of a .debug_frame of LEN bytes: sets *RLEN (its length after the length
 * field, at least 4) and *ID and moves *OFF past it. Returns 1 for a 32-bit record, 0 for
 * one skipped (a 64-bit record, a length of 0), -1 at the end or at a record cut short.
 */
static int dbg_next(const unsigned char *sec, size_t len, size_t *off, uint32_t *rlen,
		    uint32_t *id)
{
	size_t at = *off;
	uint64_t l64;
	uint32_t l;

	if (len - at < 4)
		return -1;
	memcpy(&l, sec + at, 4);
	if (l == 0) {
		*off = at + 4;
		return 0;
	}
	if (l == 0xffffffff) {
		if (len - at < 12)
			return -1;
		memcpy(&l64, sec + at + 4, 8);
		if (l64 > len - at - 12)
			return -1;
		*off = at + 12 + (size_t)l64;
		return 0;
	}
	if (l < 4 || l > len - at - 4)
		return -1;
	memcpy(id, sec + at + 4, 4);
	*rlen = l;
	*off = at + 4 + l;
	return 1;
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* Convert the CIE at AT (RLEN bytes after its length) to the end of CV->out. Returns its
 * offset there, or NO_CIE when it is of a form we do not convert. */
static uint32_t cie_convert(struct conv *cv, size_t at, uint32_t rlen)
{
	const unsigned char *body = cv->sec + at + 8, *fields;
	struct cfi_rd r = { .p = body, .start = body, .end = cv->sec + at + 4 + rlen };
	uint8_t version = (uint8_t)rd_u(&r, 1);
	size_t pos = cv->out_len, n;

	if (version != 1 && version != 3 && version != 4)
		return NO_CIE;
	if (rd_u(&r, 1) != 0)
		return NO_CIE;		/* an augmentation string */
	if (version == 4 && (rd_u(&r, 1) != 8 || rd_u(&r, 1) != 0))
		return NO_CIE;		/* address size 8, no segment selector */
	fields = r.p;
	rd_uleb(&r);			/* code alignment */
	rd_sleb(&r);			/* data alignment */
	if (version == 1)
		rd_u(&r, 1);		/* return address column */
	else
		rd_uleb(&r);
	if (r.bad || pos > UINT32_MAX - 16)
		return NO_CIE;
	/* length, id 0, version, "" and then the fields and instructions as they were */
	n = 10 + (size_t)(r.end - fields);
	if (n > cv->len - pos)
		return NO_CIE;
	put32(cv->out + pos, (uint32_t)(n - 4));
	put32(cv->out + pos + 4, 0);
	cv->out[pos + 8] = version == 1 ? 1 : 3;
	cv->out[pos + 9] = 0;
	memcpy(cv->out + pos + 10, fields, (size_t)(r.end - fields));
	cv->out_len += n;
	return (uint32_t)pos;
}

/* Where the CIE at section offset ORIG went (CV->cies is sorted), or NO_CIE. */
static uint32_t cie_lookup(const struct conv *cv, uint32_t orig)
{
	uint32_t lo = 0, hi = cv->nr_cies;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (cv->cies[mid].orig == orig)
			return cv->cies[mid].conv;
		if (cv->cies[mid].orig < orig)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NO_CIE;
}

/* Pass 1: every CIE, converted to the start of CV->out. Returns 0 or -ENOMEM. */
static int convert_cies(struct conv *cv)
{
	size_t off = 0, at;
	uint32_t rlen, id;
	int k;

	while (at = off, (k = dbg_next(cv->sec, cv->len, &off, &rlen, &id)) >= 0) {
		if (!k || id != DEBUG_CIE_ID || at > UINT32_MAX)
			continue;
		if (array_grow(&cv->cies, &cv->cap_cies, sizeof(*cv->cies), cv->nr_cies))
			return -ENOMEM;
		cv->cies[cv->nr_cies++] = (struct cie_map){ (uint32_t)at, cie_convert(cv, at, rlen) };
	}
	return 0;
}

/* Pass 2: every FDE whose CIE was converted, after the CIEs, and into PS. */
static int convert_fdes(struct conv *cv, struct pairs *ps, uint64_t recs_vaddr, uint64_t base)
{
	size_t off = 0, at, pos;
	uint32_t rlen, id, cie;
	uint64_t start, range;
	int k, added;

	while (at = off, (k = dbg_next(cv->sec, cv->len, &off, &rlen, &id)) >= 0) {
		if (!k || id == DEBUG_CIE_ID)
			continue;
		cie = cie_lookup(cv, id);
		pos = cv->out_len;
		if (cie == NO_CIE || rlen < 20 || 4 + (size_t)rlen > cv->len - pos ||
		    pos > UINT32_MAX - 8) {
			ps->skipped++;
			continue;
		}
		memcpy(&start, cv->sec + at + 8, 8);
		memcpy(&range, cv->sec + at + 16, 8);
		/* The same record but for the CIE pointer: relative to the field, backwards. */
		memcpy(cv->out + pos, cv->sec + at, 4 + (size_t)rlen);
		put32(cv->out + pos + 4, (uint32_t)(pos + 4 - cie));
		added = pairs__add(ps, start, range, recs_vaddr + pos, base);
		if (added < 0)
			return added;
		if (added)
			cv->out_len += 4 + (size_t)rlen;
	}
	return 0;
}

int fde_index__debug_frame(const unsigned char *sec, size_t len, uint64_t recs_vaddr,
			   uint64_t base, struct fde_index *ix)
{
	struct conv cv = { .sec = sec, .len = len };
	struct pairs ps = { 0 };
	int err;

	memset(ix, 0, sizeof(*ix));
	if (len < 8)
		return -ENOENT;
	cv.out = malloc(len);
	if (!cv.out)
		return -ENOMEM;
	err = convert_cies(&cv);
	if (!err)
		err = convert_fdes(&cv, &ps, recs_vaddr, base);
	free(cv.cies);
	if (!err)
		err = pairs__finish(&ps, base, ix);
	else
		free(ps.v);
	if (err) {
		free(cv.out);
		return err;
	}
	ix->recs = cv.out;
	ix->recs_len = cv.out_len;
	ix->recs_vaddr = recs_vaddr;
	return 0;
}

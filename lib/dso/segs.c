// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <string.h>
#include "base/bsearch.h"
#include "dso/segs.h"

int dso_segs__off_to_vaddr(const struct dso_seg *segs, size_t n, uint64_t off,
			   uint64_t *vaddr)
{
	for (size_t i = 0; i < n; i++) {
		const struct dso_seg *s = &segs[i];

		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = off - s->offset + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

int dso_segs__vaddr_to_off(const struct dso_seg *segs, size_t n, uint64_t vaddr, uint64_t len,
			   uint64_t file_size, uint64_t *off)
{
	for (size_t i = 0; i < n; i++) {
		const struct dso_seg *s = &segs[i];
		uint64_t rel = vaddr - s->vaddr;

		if (vaddr < s->vaddr || rel >= s->filesz || len > s->filesz - rel)
			continue;
		if (s->offset > file_size || rel + len > file_size - s->offset)
			return -ENOENT;
		*off = s->offset + rel;
		return 0;
	}
	return -ENOENT;
}

uint64_t dso_segs__end(const struct dso_seg *segs, size_t n, uint64_t vaddr)
{
	for (size_t i = 0; i < n; i++) {
		const struct dso_seg *s = &segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->memsz)
			return s->vaddr + s->memsz;
	}
	return vaddr + 1;
}

int eh_frame_hdr__parse(const unsigned char *h, size_t len, uint32_t *count)
{
	if (len < EH_FRAME_HDR_TABLE)
		return -EINVAL;
	/* version, eh_frame_ptr_enc (4 bytes), fde_count_enc (udata4), table_enc (datarel|sdata4) */
	if (h[0] != 1 || h[2] != 0x03 || h[3] != 0x3b ||
	    ((h[1] & 0x0f) != 0x0b && (h[1] & 0x0f) != 0x03))
		return -ENOTSUP;
	memcpy(count, h + 8, 4);
	if (!*count || EH_FRAME_HDR_TABLE + (uint64_t)*count * 8 > len)
		return -EINVAL;
	return 0;
}

int fde_table__find(const struct fde_table *t, uint64_t vaddr, uint64_t *start, uint64_t *fde)
{
	int32_t v[2];
	size_t lo = BSEARCH_PREFIX(t->count, mid, (memcpy(v, t->pairs + mid * 8, 4),
						  t->base + (int64_t)v[0] <= vaddr));

	if (!lo)
		return -ENOENT;
	memcpy(v, t->pairs + (lo - 1) * 8, 8);
	if (start)
		*start = t->base + (int64_t)v[0];
	if (fde)
		*fde = t->base + (int64_t)v[1];
	return 0;
}

int fde_table__entry(const struct fde_table *t, uint32_t i, uint64_t *start, uint64_t *fde)
{
	int32_t v[2];

	if (i >= t->count)
		return -ENOENT;
	memcpy(v, t->pairs + (size_t)i * 8, 8);
	*start = t->base + (int64_t)v[0];
	*fde = t->base + (int64_t)v[1];
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * libFuzzer: CFI read from a file's bytes, one rule at a time and as a whole file's frame
 * spans. Input: an address (8 bytes, little endian), then
 * one segment loaded at 0x2000 that starts with an .eh_frame_hdr (seeds: the two sections
 * of a small gcc-built program, from .eh_frame_hdr on).
 */
#include <stdint.h>
#include <string.h>
#include "unwind/cfi.h"
#include "unwind/frames.h"

#define SEG_VADDR	0x2000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dso_seg seg;
	struct cfi_mem m;
	struct cfi_rule r;
	struct frame_spans spans;
	uint64_t pc, fde;
	uint32_t count = 0;

	if (size < 8)
		return 0;
	memcpy(&pc, data, 8);
	data += 8;
	size -= 8;
	if (size >= 12)
		memcpy(&count, data + 8, 4);
	seg = (struct dso_seg){ .vaddr = SEG_VADDR, .offset = 0, .filesz = size };
	m = (struct cfi_mem){ data, size, &seg, 1 };
	cfi__lookup(&m, SEG_VADDR, count, pc, &r);
	cfi__lookup(&m, SEG_VADDR, count, SEG_VADDR + (pc & 0xfff), &r);
	/* Any offset as an FDE: what the table points to is not trusted either. */
	fde = SEG_VADDR + (pc >> 48) % (size + 1);
	cfi__rule_at(&m, fde, pc & 0xffff, &r);
	if (cfi__find_fde(&m, SEG_VADDR, count, pc, &fde) == 0)
		cfi__rule_at(&m, fde, pc, &r);
	/* The whole table, bounded by what fits in the segment. */
	if (count <= size / 8 && frames__build(&m, SEG_VADDR, count, &spans) == 0) {
		spans.nr = frames__reduce(spans.v, spans.nr, 64);
		frames__kind(&spans, pc);
		frames__free(&spans);
	}
	return 0;
}

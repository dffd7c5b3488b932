// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * libFuzzer: CFI read from a file's bytes, one rule at a time and as a whole file's frame
 * spans. Input: an address (8 bytes, little endian), then
 * one segment loaded at 0x2000 that starts with an .eh_frame_hdr (seeds: the two sections
 * of a small gcc-built program, from .eh_frame_hdr on). The same bytes are also indexed as
 * an .eh_frame section and converted as a .debug_frame section (dso/fdes.h), and rules are
 * looked up through the tables built; both tables are judged by Go's convention too, the
 * same bytes read as their code (frames_go.c, x86.c), and they are decoded as instructions
 * and followed as one of V8's builtins (frames_follow.c).
 */
#include <stdint.h>
#include <string.h>
#include "dso/fdes.h"
#include "unwind/cfi.h"
#include "unwind/frames.h"
#include "dso/x86.h"

#define SEG_VADDR	0x2000
#define RECS_VADDR	0x100000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Rules at a few addresses the table T knows, read through M. */
static void lookups(const struct cfi_mem *m, const struct fde_table *t, uint64_t pc)
{
	struct cfi_rule r;

	for (uint32_t i = 0; i < t->count && i < 8; i++) {
		int32_t start;

		memcpy(&start, t->pairs + (size_t)i * 8, 4);
		cfi__lookup(m, t, t->base + (int64_t)start + (pc & 0xff), &r);
	}
	cfi__lookup(m, t, pc, &r);
}

/* T's functions judged by Go's convention, their code read through CODE. */
static void go_spans(const struct cfi_mem *m, const struct fde_table *t,
		     const struct cfi_mem *code, uint64_t pc)
{
	struct frame_spans spans, lost;
	uint64_t checks[1] = { pc };

	if (frames__build_go(m, t, code, checks, 1, &spans, &lost) == 0) {
		frames__kind(&lost, pc);
		frames__free(&spans);
		frames__free(&lost);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dso_seg seg, recs_seg;
	struct fde_index ix;
	struct fde_table t;
	struct cfi_mem m, code;
	struct cfi_rule r;
	struct frame_spans spans;
	uint64_t pc, fde;
	uint32_t count = 0;

	if (size < 8)
		return 0;
	memcpy(&pc, data, 8);
	data += 8;
	size -= 8;
	/* As one of V8's builtins, followed along its paths (frames_follow.c). */
	if (size && size <= 4096) {
		static struct follow_frame at[4096];

		frames__follow(data, size, at);
	}
	/* As instructions, one after another. */
	for (size_t off = 0, n; off < size; off += n ? n : 1) {
		struct x86_insn in;
		int64_t delta;

		n = x86__decode(data + off, size - off, &in);
		if (n) {
			x86__writes_gpr(&in, X86_RBP);
			x86__sp_delta(&in, &delta);
		}
	}
	if (size >= 12)
		memcpy(&count, data + 8, 4);
	seg = (struct dso_seg){ .vaddr = SEG_VADDR, .offset = 0, .filesz = size, .memsz = size };
	m = (struct cfi_mem){ data, size, &seg, 1 };
	/* As an .eh_frame_hdr table: only as many entries as the bytes hold. */
	if (size >= 12 && count <= (size - 12) / 8) {
		t = (struct fde_table){ data + 12, count, SEG_VADDR };
		cfi__lookup(&m, &t, pc, &r);
		cfi__lookup(&m, &t, SEG_VADDR + (pc & 0xfff), &r);
		if (fde_table__find(&t, pc, NULL, &fde) == 0)
			cfi__rule_at(&m, fde, pc, &r);
		/* The whole table as frame spans. */
		if (frames__build(&m, &t, &spans) == 0) {
			spans.nr = frames__reduce(spans.v, spans.nr, 64);
			frames__kind(&spans, pc);
			frames__free(&spans);
		}
		go_spans(&m, &t, &m, pc);
	}
	/* Any offset as an FDE: what the table points to is not trusted either. */
	fde = SEG_VADDR + (pc >> 48) % (size + 1);
	cfi__rule_at(&m, fde, pc & 0xffff, &r);
	/* As .eh_frame, indexed. */
	if (fde_index__eh_frame(data, size, SEG_VADDR, 0, &ix) == 0) {
		t = fde_index__table(&ix);
		lookups(&m, &t, pc);
		fde_index__free(&ix);
	}
	/* As .debug_frame, converted. */
	if (fde_index__debug_frame(data, size, RECS_VADDR, 0, &ix) == 0) {
		recs_seg = (struct dso_seg){ .vaddr = RECS_VADDR, .filesz = ix.recs_len,
					     .memsz = ix.recs_len };
		code = m;
		m = (struct cfi_mem){ ix.recs, ix.recs_len, &recs_seg, 1 };
		t = fde_index__table(&ix);
		lookups(&m, &t, pc);
		go_spans(&m, &t, &code, pc);
		fde_index__free(&ix);
	}
	return 0;
}

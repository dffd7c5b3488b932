// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * dso_cfi: a file's tables of FDEs (dso.h, dso__fdes): its .eh_frame_hdr, else one built from
 * .eh_frame's records; .debug_frame decompressed and converted. Sections are found by their
 * headers; every byte read is bounded by the file, and a compressed section by what its
 * header claims only after that claim is checked against DSO_DEBUG_FRAME_MAX and the
 * compressed size.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "base/bsearch.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/grow.h"
#include "dso/dso_int.h"
#include "dso/x86.h"

#define ZLIB_MAX_RATIO	1032	/* deflate never expands data more than this */

/* The section named NAME: its header into *SH. Returns 0 or -ENOENT. */
static int dso__section(const struct dso *d, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(d->elf, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(d->elf, scn))) {
		if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(d->elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return 0;
	}
	return -ENOENT;
}

/* The file bytes of section SH, or NULL when they are not all in the file. */
static const unsigned char *dso__section_bytes(const struct dso *d, const GElf_Shdr *sh)
{
	if (sh->sh_offset > d->size || sh->sh_size > d->size - sh->sh_offset)
		return NULL;
	return d->image + sh->sh_offset;
}

/* Inflate the zlib stream of LEN bytes at SRC into a new buffer of exactly OUT_LEN bytes.
 * Returns it (the caller frees it), or NULL: malformed, another size, too large, no memory. */
static unsigned char *inflate_exact(const unsigned char *src, size_t len, uint64_t out_len)
{
	z_stream z = { 0 };
	unsigned char *out;
	int ret;

	if (!out_len || out_len > DSO_DEBUG_FRAME_MAX || out_len / ZLIB_MAX_RATIO > len ||
	    len > UINT32_MAX) {
		limits__hit(LIMIT_SECTION_SIZE, 1);
		return NULL;
	}
	out = malloc(out_len);
	if (!out || inflateInit(&z) != Z_OK) {
		free(out);
		return NULL;
	}
	z.next_in = (unsigned char *)src;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)out_len;
	ret = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	if (ret != Z_STREAM_END || z.total_out != out_len) {
		free(out);
		return NULL;
	}
	return out;
}

/* Reserve SIZE bytes of the budget for an inflated copy (none when SIZE is past what
 * inflate_exact takes: it refuses). Returns false, D refused, when they do not fit. */
static bool inflate__reserve(struct dso *d, uint64_t size)
{
	if (size > DSO_DEBUG_FRAME_MAX)
		return true;
	if (limits__reserve(size))
		return true;
	dso__refuse(d);
	return false;
}

/* .debug_frame's bytes: *BUF set when they were decompressed into a buffer the caller frees
 * (SHF_COMPRESSED with zlib, or the older .zdebug_frame), its *LEN bytes reserved in the
 * budget. Returns them, or NULL. */
static const unsigned char *dso__debug_frame(struct dso *d, size_t *len,
					     unsigned char **buf)
{
	const unsigned char *p;
	GElf_Shdr sh;
	Elf64_Chdr ch;
	uint64_t size = 0;

	*buf = NULL;
	if (!dso__section(d, ".debug_frame", &sh) && (p = dso__section_bytes(d, &sh))) {
		if (!(sh.sh_flags & SHF_COMPRESSED)) {
			*len = sh.sh_size;
			return p;
		}
		if (sh.sh_size < sizeof(ch))
			return NULL;
		memcpy(&ch, p, sizeof(ch));
		if (ch.ch_type != ELFCOMPRESS_ZLIB)
			return NULL;
		size = ch.ch_size;
		if (!inflate__reserve(d, size))
			return NULL;
		*buf = inflate_exact(p + sizeof(ch), sh.sh_size - sizeof(ch), size);
	} else if (!dso__section(d, ".zdebug_frame", &sh) && (p = dso__section_bytes(d, &sh))) {
		/* "ZLIB", the size in 8 big-endian bytes, the stream */
		if (sh.sh_size < 12 || memcmp(p, "ZLIB", 4))
			return NULL;
		for (int i = 4; i < 12; i++)
			size = size << 8 | p[i];
		if (!inflate__reserve(d, size))
			return NULL;
		*buf = inflate_exact(p + 12, sh.sh_size - 12, size);
	} else {
		return NULL;
	}
	if (*buf)
		*len = (size_t)size;
	else if (size <= DSO_DEBUG_FRAME_MAX)
		limits__release(size);
	return *buf;
}

/* The search table of the file's .eh_frame_hdr, when it has one that fits its segment. */
static int dso__hdr_fdes(struct dso *d, struct dso_fdes *f)
{
	uint64_t off;

	if (!d->fde_count ||
	    dso_segs__vaddr_to_off(d->segs, d->nr_segs, d->hdr_vaddr + EH_FRAME_HDR_TABLE,
				   (uint64_t)d->fde_count * 8, d->size, &off))
		return -ENOENT;
	f->table = (struct fde_table){ d->image + off, d->fde_count, d->hdr_vaddr };
	f->hdr = true;
	return 0;
}

/* A table built from .eh_frame's records, read where the file loads them. */
static int dso__build_eh(struct dso *d, struct dso_fdes *f)
{
	const unsigned char *p;
	GElf_Shdr sh;
	uint64_t off;
	int err;

	if (dso__section(d, ".eh_frame", &sh) ||
	    (sh.sh_type != SHT_PROGBITS && sh.sh_type != SHT_X86_64_UNWIND) ||
	    !(sh.sh_flags & SHF_ALLOC) ||
	    dso_segs__vaddr_to_off(d->segs, d->nr_segs, sh.sh_addr, sh.sh_size, d->size, &off))
		return -ENOENT;
	p = d->image + off;
	/* A table entry of 8 bytes per record of 16 at least, in an array grown twice. */
	if (!limits__reserve(sh.sh_size)) {
		dso__refuse(d);
		return -ENOMEM;
	}
	err = fde_index__eh_frame(p, sh.sh_size, sh.sh_addr, d->min_vaddr, &d->built[DSO_CFI_EH]);
	limits__release(sh.sh_size);
	if (err)
		return err;
	d->cfi_charged += (uint64_t)d->built[DSO_CFI_EH].count * 8;
	limits__charge((uint64_t)d->built[DSO_CFI_EH].count * 8);
	f->table = fde_index__table(&d->built[DSO_CFI_EH]);
	pr_debug("%s: no .eh_frame_hdr; %u FDEs indexed from .eh_frame (%u left out)", d->path,
		 f->table.count, d->built[DSO_CFI_EH].skipped);
	return 0;
}

/* .debug_frame converted, at an address past the file's extent: the file's own, else its
 * separate debug file's (a program stripped of the CFI its compiler put only there). */
static int dso__build_debug(struct dso *d, struct dso_fdes *f)
{
	struct fde_index *ix = &d->built[DSO_CFI_DEBUG];
	struct dso *dbg = NULL;
	unsigned char *buf;
	const unsigned char *p;
	size_t len = 0;
	int err;

	p = dso__debug_frame(d, &len, &buf);
	if (!p && (dbg = d->find_debug ? d->find_debug(d->find_debug_ctx, d) :
				       dso__open_debug_cfi(d))) {
		p = dso__debug_frame(dbg, &len, &buf);
		if (p)
			pr_debug("%s: .debug_frame from %s", d->path, dbg->path);
	}
	if (!p) {
		dso__free(dbg);
		return -ENOENT;
	}
	/* The converted records (as long as the section) and their table, in an array grown
	 * twice; the inflated copy was reserved by dso__debug_frame. */
	if (!limits__reserve(2 * (uint64_t)len)) {
		dso__refuse(d);
		err = -ENOMEM;
	} else {
		err = fde_index__debug_frame(p, len, (d->max_vaddr + 0xfff) & ~(uint64_t)0xfff,
					     d->min_vaddr, ix);
		limits__release(2 * (uint64_t)len);
	}
	if (buf)
		limits__release(len);
	free(buf);
	/* Converted into IX: the debug file's bytes are no longer read. */
	if (dbg && dso__faulted(dbg))
		err = -ENOENT;		/* truncated while converted: zeros were read */
	dso__free(dbg);
	if (err)
		return err;
	d->cfi_charged += (uint64_t)ix->count * 8 + len;
	limits__charge((uint64_t)ix->count * 8 + len);
	d->recs_seg = (struct dso_seg){ .offset = 0, .vaddr = ix->recs_vaddr,
					.filesz = ix->recs_len, .memsz = ix->recs_len };
	f->table = fde_index__table(ix);
	f->mem = (struct cfi_mem){ ix->recs, ix->recs_len, &d->recs_seg, 1 };
	f->in_file = false;
	pr_debug("%s: %u FDEs from .debug_frame (%u left out)", d->path, f->table.count,
		 ix->skipped);
	return 0;
}

int dso__fdes(struct dso *d, enum dso_cfi which, struct dso_fdes *f)
{
	struct dso_fdes *c = &d->cfi[which];

	if (dso__faulted(d))
		return -ENOENT;		/* its bytes are zeros now */
	if (!d->cfi_read[which]) {
		d->cfi_read[which] = true;
		*c = (struct dso_fdes){ .mem = { d->image, d->size, d->segs, (int)d->nr_segs },
					.in_file = true };
		if (which == DSO_CFI_EH)
			d->cfi_err[which] = dso__hdr_fdes(d, c) ? dso__build_eh(d, c) : 0;
		else
			d->cfi_err[which] = dso__build_debug(d, c);
		if (dso__faulted(d))
			return -ENOENT;
	}
	if (d->cfi_err[which])
		return -ENOENT;
	*f = *c;
	return 0;
}

void dso__free_fdes(struct dso *d)
{
	for (int i = 0; i < DSO_CFI__MAX; i++)
		fde_index__free(&d->built[i]);
}

/* Whether the FDE at FDE (read through M) covers VADDR. */
static bool fde_covers(const struct cfi_mem *m, uint64_t fde, uint64_t vaddr)
{
	uint64_t start, range;
	struct cie cie;
	struct cfi_rd r;

	return !cfi_fde__parse(m, fde, &cie, &start, &range, &r) && vaddr >= start &&
	       vaddr - start < range;
}

uint64_t dso__fde_start(struct dso *d, uint64_t vaddr)
{
	uint64_t best = UINT64_MAX, start, fde;
	struct dso_fdes f;

	/* The nearer start of the two: a file may describe some functions in each. Past the
	 * end of the FDE before it, an address is in code no FDE describes. */
	for (int i = 0; i < DSO_CFI__MAX; i++)
		if (!dso__fdes(d, i, &f) && !fde_table__find(&f.table, vaddr, &start, &fde) &&
		    (best == UINT64_MAX || start > best) && fde_covers(&f.mem, fde, vaddr))
			best = start;
	return best;
}

/* --- entries of code no FDE covers --------------------------------------------------------- */

/* Whether link-time VADDR lies in an executable PT_LOAD of D. */
static bool in_exec(struct dso *d, uint64_t vaddr)
{
	size_t n;
	GElf_Phdr ph;

	if (!d->elf || elf_getphdrnum(d->elf, &n))
		return false;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(d->elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X) && vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz)
			return true;
	return false;
}

/* The targets of the calls, jumps and rip-relative lea of the function [START, START + LEN)
 * of D that land in its code where no FDE does, into *V (N of them, room CAP). */
static int entries_of(struct dso *d, uint64_t start, uint64_t len, uint64_t **v, size_t *n,
		      size_t *cap)
{
	uint64_t off, at = 0;

	if (len > (1u << 20) || dso_segs__vaddr_to_off(d->segs, d->nr_segs, start, len, d->size,
						       &off))
		return 0;
	while (at < len) {
		struct x86_insn in;
		size_t got = x86__decode(d->image + off + at, len - at < 15 ? len - at : 15, &in);
		uint64_t target = 0;

		if (!got)
			return 0;	/* not code this decoder follows: nothing more of it */
		if (!in.vex && in.map == X86_MAP_1B && (in.op == 0xe8 || in.op == 0xe9))
			target = start + at + got + (uint64_t)in.imm;
		else if (!in.vex && in.map == X86_MAP_1B && in.op == 0x8d && in.base == 16)
			target = start + at + got + (uint64_t)(int64_t)in.disp;
		at += got;
		if (!target || (target >= start && target < start + len) || !in_exec(d, target) ||
		    dso__fde_start(d, target) != UINT64_MAX)
			continue;
		if (array_grow(v, cap, sizeof(**v), *n))
			return -ENOMEM;
		(*v)[(*n)++] = target;
	}
	return 0;
}

/* Pointers the dynamic linker writes (R_X86_64_RELATIVE) to code of D no FDE covers: a
 * table of functions, a function pointer initialized in data. Into *V (as entries_of). */
static int entries_of_relocs(struct dso *d, uint64_t **v, size_t *n, size_t *cap)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while (d->elf && (scn = elf_nextscn(d->elf, scn))) {
		Elf_Data *data;
		GElf_Rela rela;
		size_t nr;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
		    sh.sh_offset > d->size || sh.sh_size > d->size - sh.sh_offset)
			continue;
		data = elf_getdata(scn, NULL);
		nr = data ? data->d_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < nr && i < (1u << 22); i++) {
			uint64_t target;

			if (!gelf_getrela(data, (int)i, &rela) ||
			    GELF_R_TYPE(rela.r_info) != R_X86_64_RELATIVE)
				continue;
			target = (uint64_t)rela.r_addend;
			if (!in_exec(d, target) || dso__fde_start(d, target) != UINT64_MAX)
				continue;
			if (array_grow(v, cap, sizeof(**v), *n))
				return -ENOMEM;
			(*v)[(*n)++] = target;
		}
	}
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void build_entries(struct dso *d)
{
	uint64_t *v = NULL, start, fde, range;
	size_t n = 0, cap = 0, k = 0;
	struct dso_fdes f;
	struct cie cie;
	struct cfi_rd r;

	d->entries_built = true;
	for (int w = 0; w < DSO_CFI__MAX; w++) {
		if (dso__fdes(d, w, &f) || !f.in_file)
			continue;
		for (uint32_t i = 0; !fde_table__entry(&f.table, i, &start, &fde); i++)
			if (!cfi_fde__parse(&f.mem, fde, &cie, &start, &range, &r) &&
			    entries_of(d, start, range, &v, &n, &cap)) {
				free(v);
				return;
			}
	}
	if (entries_of_relocs(d, &v, &n, &cap) || !n) {
		free(v);
		return;
	}
	qsort(v, n, sizeof(*v), u64_cmp);
	for (size_t i = 0; i < n; i++)
		if (!k || v[k - 1] != v[i])
			v[k++] = v[i];
	d->entries = v;
	d->nr_entries = k;
}

/* The greatest FDE start at or before VADDR, of either source (covering it or not), or 0. */
static uint64_t fde_before(struct dso *d, uint64_t vaddr)
{
	uint64_t best = 0, start, fde;
	struct dso_fdes f;

	for (int i = 0; i < DSO_CFI__MAX; i++)
		if (!dso__fdes(d, i, &f) && !fde_table__find(&f.table, vaddr, &start, &fde) &&
		    start <= vaddr && start > best)
			best = start;
	return best;
}

/* The number of D's code entries at or before VADDR (the last of them, entries[n - 1]). */
static size_t entries_upto(struct dso *d, uint64_t vaddr)
{
	if (!d->entries_built && !dso__faulted(d))
		build_entries(d);
	return BSEARCH_PREFIX(d->nr_entries, mid, d->entries[mid] <= vaddr);
}

bool dso__function_between(struct dso *d, uint64_t from, uint64_t vaddr)
{
	size_t n;

	if (fde_before(d, vaddr) > from)
		return true;
	n = entries_upto(d, vaddr);
	return n && d->entries[n - 1] > from;
}

uint64_t dso__code_entry(struct dso *d, uint64_t vaddr)
{
	size_t lo = entries_upto(d, vaddr);

	if (!lo)
		return UINT64_MAX;
	/* (An FDE after it: the entry is of code before that function, not VADDR's.) */
	return fde_before(d, vaddr) > d->entries[lo - 1] ? UINT64_MAX : d->entries[lo - 1];
}

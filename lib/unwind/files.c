// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * The unwinder's files and processes: per file (by dso id) the CFI rules found so far, per
 * process the files loaded and their load bias, and reads of the sampled stack.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "base/limits.h"
#include "base/log.h"
#include "base/grow.h"
#include "dso/dso.h"
#include "dso/dsos.h"
#include "proc/procmaps.h"
#include "unwind/unwind_int.h"
#include "unwind/utab.h"

/* File offset holding link-time address VADDR (the whole file bounds a read from there, not
 * its segment: libunwind reads aligned words that may run past a segment's end), or -1. */
int64_t ufile__vaddr_to_off(const struct ufile *f, uint64_t vaddr)
{
	uint64_t off;

	if (dso_segs__vaddr_to_off(f->mem.segs, f->mem.nr_segs, vaddr, 1, f->size, &off))
		return -1;
	return (int64_t)off;
}

const struct dso_fdes *ufile__fdes(struct ufile *f, enum dso_cfi which)
{
	struct usrc *s = &f->src[which];

	if (!f->loaded || (f->dso && dso__faulted(f->dso)))
		return NULL;		/* not read here, or truncated under us */
	if (!s->tried) {
		s->tried = true;
		s->ok = f->dso && dso__fdes(f->dso, which, &s->fdes) == 0;
	}
	return s->ok ? &s->fdes : NULL;
}

/* F's file from DSO. It has unwind info when it has .eh_frame's FDEs; else .debug_frame's
 * are read now (for a file with both, at the first address .eh_frame has no FDE for). */
static void ufile__load(struct ufile *f, struct dso *dso)
{
	size_t nsegs;

	f->dso = dso;
	f->loaded = true;
	f->image = dso__image(dso, &f->size);
	f->mem = (struct cfi_mem){ f->image, f->size, dso__segs(dso, &nsegs), 0 };
	f->mem.nr_segs = (int)nsegs;
	dso__extent(dso, &f->min_vaddr, &f->max_vaddr);
	f->ok = nsegs && (ufile__fdes(f, DSO_CFI_EH) || ufile__fdes(f, DSO_CFI_DEBUG));
	if (!f->ok)
		pr_debug("unwind: no FDEs in %s (.eh_frame_hdr, .eh_frame, .debug_frame)",
			 dso__path(dso));
}

int ufile__rule(struct ufile *f, uint64_t vaddr, struct cfi_rule *out)
{
	return f->tab ? utab__rule(f->tab, vaddr, out) : -ENOENT;
}

bool ufile__small_gap(const struct ufile *f, uint64_t vaddr, uint64_t *start)
{
	uint64_t end;

	return f->tab && f->tab->has_cfi && !utab__gap(f->tab, vaddr, start, &end) &&
	       end - *start < UNWIND_GUESS_GAP_MIN;
}

/* F's table from the unwinder's table source, unless it is still being made (F->later). */
static void ufile__take_table(struct unwinder *u, struct ufile *f, pid_t pid,
			      const struct map *m)
{
	bool later = false;

	f->tab = (struct utab *)u->table_fn(u->table_ctx, pid, m, &later);
	f->tab_borrowed = true;
	f->later = !f->tab && later;
	if (f->tab) {
		f->min_vaddr = f->tab->min_vaddr;
		f->max_vaddr = f->tab->max_vaddr;
	}
	f->ok = f->tab && f->tab->has_cfi && f->tab->nr_segs;
}

struct ufile *unwinder__file(struct unwinder *u, pid_t pid, const struct map *m)
{
	uint32_t id;
	struct dso *dso = dsos__get(u->dsos, pid, m, &id);
	struct ufile *f;

	if (id == UINT32_MAX)
		return NULL;
	if (array_grow(&u->files, &u->cap_files, sizeof(*u->files), id))
		return NULL;
	if (u->files[id]) {
		f = u->files[id];
		if (f->later)
			ufile__take_table(u, f, pid, m);
		return f;
	}
	f = u->files[id] = calloc(1, sizeof(*f));
	if (f)
		f->id = id;
	if (f && dso) {
		f->dso = dso;
		if (u->table_fn) {
			/* Read by the worker; here only what libunwind's check reads. */
			if (u->check)
				ufile__load(f, dso);
			ufile__take_table(u, f, pid, m);
			return f;
		}
		ufile__load(f, dso);
		if (f->ok)
			f->tab = utab__build(dso, u->bottoms, u->nr_bottoms);
		if (f->ok && !f->tab)
			pr_debug("unwind: no unwind table of %s (out of memory)", dso__path(dso));
		if (f->tab) {
			f->min_vaddr = f->tab->min_vaddr;
			f->max_vaddr = f->tab->max_vaddr;
		}
		f->ok = f->tab && f->tab->has_cfi && f->tab->nr_segs;
	}
	return f;
}

int unwinder__map_spans(struct unwinder *u, pid_t pid, const struct map *m, size_t max,
			struct frame_spans *out)
{
	struct ufile *f = map__is_dso(m) ? unwinder__file(u, pid, m) : NULL;
	const struct frame_spans *fs = f && f->tab && f->tab->spans.nr ? &f->tab->spans : NULL;
	uint64_t at = m->start;

	*out = (struct frame_spans){ 0 };
	if (f && f->later) {
		int err = frames__paint(out, m->start, m->end, FRAME_NOREC);

		return err ? err : 1;
	}
	if (!fs)
		return frames__paint(out, m->start, m->end, FRAME_TRUSTED);
	if (frames__reserve(out, 2 * fs->nr + 1))
		return -ENOMEM;
	for (size_t i = 0; i < fs->nr; i++) {
		uint64_t rt, end;

		if (utab__vaddr_to_runtime(f->tab, m, fs->v[i].start, &rt))
			continue;
		end = rt + (fs->v[i].end - fs->v[i].start);
		if (rt < at)
			rt = at;
		if (end > m->end)
			end = m->end;
		if (end <= rt)
			continue;
		/* Code without CFI between spans. */
		if (rt > at)
			out->v[out->nr++] = (struct frame_span){ at, rt, FRAME_NOREC };
		out->v[out->nr++] = (struct frame_span){ rt, end, fs->v[i].kind };
		at = end;
	}
	if (at < m->end)
		out->v[out->nr++] = (struct frame_span){ at, m->end, FRAME_NOREC };
	out->nr = frames__reduce(out->v, out->nr, max);
	out->windows = f->tab->lost.nr != 0;
	return 0;
}

const struct utab *unwinder__map_table(struct unwinder *u, pid_t pid, const struct map *m,
				       uint32_t *id, uint64_t *bias)
{
	struct ufile *f = map__is_dso(m) ? unwinder__file(u, pid, m) : NULL;
	uint64_t b;

	if (!f || !f->ok || !f->tab || f->later || utab__bias(f->tab, m, m->start, &b))
		return NULL;
	*id = f->id;
	*bias = b + f->tab->base;
	return f->tab;
}

/* What fake address slot SLOT of F holds: *LEN bytes, or NULL. */
static const unsigned char *ufile__fake(struct ufile *f, int slot, uint64_t *len)
{
	const struct usrc *s = &f->src[slot == FAKE_TABLE_EH ? DSO_CFI_EH : DSO_CFI_DEBUG];

	if (!s->ok)
		return NULL;
	if (slot == FAKE_RECS_DEBUG) {
		*len = s->fdes.mem.size;
		return s->fdes.mem.image;
	}
	*len = (uint64_t)s->fdes.table.count * 8;
	return s->fdes.table.pairs;
}

int unwinder__read_fake(struct unwinder *u, uint64_t addr, uint64_t *val)
{
	uint64_t rel = addr - FAKE_BASE, id = rel >> FAKE_ID_SHIFT, off = rel & 0xffffffff, len;
	int slot = (int)(rel >> 32 & ((1u << (FAKE_ID_SHIFT - 32)) - 1));
	const unsigned char *p;

	if (id >= u->cap_files || !u->files[id] || slot >= FAKE__SLOTS)
		return -1;
	p = ufile__fake(u->files[id], slot, &len);
	if (!p || off >= len)
		return -1;
	*val = 0;
	memcpy(val, p + off, len - off < sizeof(*val) ? len - off : sizeof(*val));
	return 0;
}

struct uproc *unwinder__proc(struct unwinder *u, pid_t pid)
{
	unsigned int b = (unsigned int)pid % PROC_BUCKETS;
	struct uproc *p;

	for (p = u->procs[b]; p; p = p->next) {
		if (p->pid != pid)
			continue;
		/* A mapping put over another since: what was learnt by address may be another
		 * file's now (a plugin dlopen'ed where another was). */
		if (p->replaced != procmaps__replaced(u->pm, pid)) {
			p->replaced = procmaps__replaced(u->pm, pid);
			p->nr_loaded = 0;
			unw_flush_cache(p->as, 0, 0);
		}
		return p;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->replaced = procmaps__replaced(u->pm, pid);
	p->as = unw_create_addr_space(&u->acc, 0);
	if (!p->as) {
		free(p);
		return NULL;
	}
	/* Off by default in remote address spaces; one space per process keeps it right. */
	unw_set_caching_policy(p->as, UNW_CACHE_GLOBAL);
	p->next = u->procs[b];
	u->procs[b] = p;
	return p;
}

/* The file loaded in P at runtime address ADDR, from what is known already. */
struct loaded *uproc__find_loaded(struct uproc *p, uint64_t addr)
{
	for (size_t i = 0; i < p->nr_loaded; i++) {
		struct loaded *l = &p->loaded[i];

		if (addr >= l->f->min_vaddr + l->bias && addr < l->f->max_vaddr + l->bias)
			return l;
	}
	return NULL;
}

/* The file holding code address IP in P, learned from the process's mappings. */
struct loaded *uproc__loaded_for_ip(struct uctx *c, uint64_t ip)
{
	struct uproc *p = c->p;
	struct loaded *l = uproc__find_loaded(p, ip);
	const struct map *m;
	struct ufile *f;
	uint64_t bias;

	if (l)
		return l->f->ok ? l : NULL;
	m = procmaps__find(c->u->pm, p->pid, ip);
	if (!m || !map__is_dso(m))
		return NULL;
	f = unwinder__file(c->u, p->pid, m);
	if (f && f->later && !c->u->met_later) {
		c->u->met_later = true;
		c->u->later_id = f->id;
	}
	if (!f || !f->tab || utab__bias(f->tab, m, ip, &bias))
		return NULL;
	if (array_grow(&p->loaded, &p->cap_loaded, sizeof(*p->loaded), p->nr_loaded))
		return NULL;
	l = &p->loaded[p->nr_loaded++];
	l->f = f;
	l->bias = bias;
	return f->ok ? l : NULL;
}

void uproc__free(struct uproc *p)
{
	unw_destroy_addr_space(p->as);
	free(p->loaded);
	free(p);
}

/* --- stack reads ---------------------------------------------------------------------- */

static int read_live(struct uctx *c, uint64_t addr, unw_word_t *val)
{
	uint64_t page = addr & ~(uint64_t)(PAGE - 1);
	struct iovec local, remote;
	int slot = -1;

	/* (A process gone, or a page not readable, once: the scans of code without CFI ask
	 * for many words, 390k failed reads for node's samples drained after it exited.) */
	if (c->gone)
		return -1;
	if ((addr & (PAGE - 1)) > PAGE - sizeof(*val)) {
		/* Straddles two pages: read it directly. */
		local = (struct iovec){ val, sizeof(*val) };
		remote = (struct iovec){ (void *)addr, sizeof(*val) };
		if (process_vm_readv(c->s->pid, &local, 1, &remote, 1, 0) == sizeof(*val))
			return 0;
		c->gone = errno == ESRCH;
		return -1;
	}
	for (int i = 0; i < PAGE_CACHE; i++)
		if (c->pages[i].valid && c->pages[i].addr == page)
			slot = i;
	if (slot < 0) {
		slot = c->next_page;
		c->next_page = (c->next_page + 1) % PAGE_CACHE;
		local = (struct iovec){ c->pages[slot].data, PAGE };
		remote = (struct iovec){ (void *)page, PAGE };
		c->pages[slot].valid = true;
		c->pages[slot].addr = page;
		c->pages[slot].bad = process_vm_readv(c->s->pid, &local, 1, &remote, 1, 0) != PAGE;
		if (c->pages[slot].bad && errno == ESRCH)
			c->gone = true;
	}
	if (c->pages[slot].bad)
		return -1;
	memcpy(val, c->pages[slot].data + (addr - page), sizeof(*val));
	return 0;
}

bool uctx__at_entry(struct uctx *c, uint64_t pc)
{
	struct loaded *l = uproc__loaded_for_ip(c, pc);
	uint64_t entry = l ? l->f->tab->entry : 0;

	return entry && pc - l->bias >= entry && pc - l->bias < entry + ENTRY_SPAN;
}

bool uctx__return_mapped(struct uctx *c, uint64_t ra)
{
	return ra && procmaps__find(c->u->pm, c->s->pid, ra - 1) != NULL;
}

int read_code(struct uctx *c, uint64_t addr, uint64_t *val)
{
	return c->no_code ? -1 : read_live(c, addr, val);
}

/* Whether byte OFF of S's copy is in a page that was not readable when it was copied. */
static bool in_hole(const struct unwind_sample *s, uint64_t off)
{
	uint64_t first = PAGE - (s->sp & (PAGE - 1));
	uint64_t page = off < first ? 0 : 1 + (off - first) / PAGE;

	return page < 32 && (s->holes >> page & 1);
}

/* Whether ADDR is in C's list of deep words (its first USED or all): its index, or -1. */
static int deep_index(const struct uctx *c, uint64_t addr, int n)
{
	for (int i = 0; i < n; i++)
		if (c->deep[i] == addr)
			return i;
	return -1;
}

/* The word at ADDR past the copy, as the sample's deep words have it: into *VAL, noted as
 * used (kept in the list ahead of those asked for). */
static bool deep_word(struct uctx *c, uint64_t addr, uint64_t *val)
{
	const struct unwind_sample *s = c->s;
	int at;

	for (uint32_t i = 0; i < s->nr_deep && i < UNWIND_DEEP_WORDS; i++) {
		if (s->deep_addr[i] != addr || !(s->deep_ok >> i & 1))
			continue;
		*val = s->deep_val[i];
		if (deep_index(c, addr, c->nr_deep_used) >= 0 ||
		    c->nr_deep_used == UNWIND_DEEP_WORDS)
			return true;
		/* Used: after the used ones, ahead of those asked for (one may be it). */
		at = deep_index(c, addr, c->nr_deep);
		if (at >= 0) {
			memmove(c->deep + c->nr_deep_used + 1, c->deep + c->nr_deep_used,
				(size_t)(at - c->nr_deep_used) * sizeof(*c->deep));
		} else {
			if (c->nr_deep == UNWIND_DEEP_WORDS)
				c->nr_deep--;
			memmove(c->deep + c->nr_deep_used + 1, c->deep + c->nr_deep_used,
				(size_t)(c->nr_deep - c->nr_deep_used) * sizeof(*c->deep));
			c->nr_deep++;
		}
		c->deep[c->nr_deep_used++] = addr;
		return true;
	}
	return false;
}

/* ADDR past the copy was needed and not there: one for the next samples to read. */
static void want_deep(struct uctx *c, uint64_t addr)
{
	if (c->nr_deep < UNWIND_DEEP_WORDS && deep_index(c, addr, c->nr_deep) < 0)
		c->deep[c->nr_deep++] = addr;
}

/* The word at ADDR of the sampled thread's stack: from the copy, else (unless copy_only) still
 * in place in the live process. Returns 0 or -1; keeps stack_used. */
int read_stack(struct uctx *c, uint64_t addr, uint64_t *val)
{
	const struct unwind_sample *s = c->s;

	if (addr >= s->sp && addr - s->sp + sizeof(*val) <= s->stack_len &&
	    !in_hole(s, addr - s->sp) && !in_hole(s, addr - s->sp + sizeof(*val) - 1)) {
		memcpy(val, (const char *)s->stack + (addr - s->sp), sizeof(*val));
		if (addr - s->sp + sizeof(*val) > c->stack_used)
			c->stack_used = addr - s->sp + sizeof(*val);
		return 0;
	}
	/* Below sp, in the red zone (a register an epilogue popped while its CFI still says
	 * it is saved there): as it was at the sample, not as the process has it since. */
	if (s->below && addr < s->sp && addr >= s->sp - UNWIND_RED_ZONE &&
	    addr + sizeof(*val) <= s->sp) {
		memcpy(val, (const char *)s->below + (addr - (s->sp - UNWIND_RED_ZONE)),
		       sizeof(*val));
		return 0;
	}
	/* Past the copy: a word read at the sample (the deep words its thread's last unwinds
	 * asked for), else one to ask for (unwinder__deep_words). */
	if (addr >= s->sp + s->stack_len && deep_word(c, addr, val))
		return 0;
	if (c->copy_only) {
		if (addr >= s->sp + s->stack_len && !c->no_want)
			want_deep(c, addr);
		c->past_copy = true;
		return -1;
	}
	if (read_live(c, addr, val))
		return -1;
	c->live_read = true;
	if (addr >= s->sp && addr - s->sp < STACK_SPAN &&
	    addr - s->sp + sizeof(*val) > c->stack_used)
		c->stack_used = addr - s->sp + sizeof(*val);
	return 0;
}


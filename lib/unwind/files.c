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
#include "dso/dso.h"
#include "dso/dsos.h"
#include "proc/procmaps.h"
#include "unwind/unwind_int.h"
#include "unwind/x86.h"

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

	if (f->dso && dso__faulted(f->dso))
		return NULL;		/* truncated under us: its bytes are zeros now */
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
	f->image = dso__image(dso, &f->size);
	f->mem = (struct cfi_mem){ f->image, f->size, dso__segs(dso, &nsegs), 0 };
	f->mem.nr_segs = (int)nsegs;
	dso__extent(dso, &f->min_vaddr, &f->max_vaddr);
	f->ok = nsegs && (ufile__fdes(f, DSO_CFI_EH) || ufile__fdes(f, DSO_CFI_DEBUG));
	if (!f->ok)
		pr_debug("unwind: no FDEs in %s (.eh_frame_hdr, .eh_frame, .debug_frame)",
			 dso__path(dso));
}

static uint64_t rule_hash(uint64_t vaddr)
{
	return hash_u64(0, vaddr);
}

/*
 * The CFI rule at link-time address VADDR of F, worked out once and kept; NULL when there is
 * none a rule can express (libunwind's turn). OUT holds it when the cache is full.
 */
const struct cfi_rule *ufile__rule(struct ufile *f, uint64_t vaddr, struct cfi_rule *out)
{
	uint64_t h = rule_hash(vaddr);
	struct rule_ent *e;
	uint32_t pos, id;
	int err;

	for (id = htab__first(&f->rules_index, h, &pos); id != HTAB_NONE;
	     id = htab__next(&f->rules_index, h, &pos)) {
		e = &f->rules[id];
		if (e->vaddr == vaddr)
			return e->err ? NULL : &e->rule;
	}
	err = -ENOENT;
	for (int i = 0; i < DSO_CFI__MAX && err == -ENOENT; i++) {
		const struct dso_fdes *src = ufile__fdes(f, i);

		if (src)
			err = cfi__lookup(&src->mem, &src->table, vaddr, out);
	}
	if (f->nr_rules == f->cap_rules && f->cap_rules < RULES_MAX) {
		uint32_t cap = f->cap_rules ? 2 * f->cap_rules : RULES_MIN;
		uint64_t more = (uint64_t)(cap - f->cap_rules) * sizeof(*e);

		if (limits__reserve(more)) {
			e = realloc(f->rules, cap * sizeof(*e));
			if (e) {
				f->rules = e;
				f->cap_rules = cap;
			} else {
				limits__release(more);
			}
		}
	}
	/* Full at RULES_MAX (or out of memory, or past the memory budget): not kept. */
	if (f->nr_rules < f->cap_rules && !htab__insert(&f->rules_index, h, f->nr_rules))
		f->rules[f->nr_rules++] = (struct rule_ent){ vaddr, *out, err };
	return err ? NULL : out;
}

struct ufile *unwinder__file(struct unwinder *u, pid_t pid, const struct map *m)
{
	uint32_t id;
	struct dso *dso = dsos__get(u->dsos, pid, m, &id);
	struct ufile *f;

	if (id == UINT32_MAX)
		return NULL;
	if (id >= u->cap_files) {
		uint32_t cap = u->cap_files ? u->cap_files : 64;
		struct ufile **files;

		while (cap <= id)
			cap *= 2;
		files = realloc(u->files, cap * sizeof(*files));
		if (!files)
			return NULL;
		memset(files + u->cap_files, 0, (cap - u->cap_files) * sizeof(*files));
		u->files = files;
		u->cap_files = cap;
	}
	if (u->files[id])
		return u->files[id];
	f = u->files[id] = calloc(1, sizeof(*f));
	if (f)
		f->id = id;
	if (f && dso)
		ufile__load(f, dso);
	return f;
}

/* Spans a file keeps (merged where that costs least): what one mapping is made from. */
#define FILE_SPANS_MAX	1024
/* FDEs whose rows say whether a file was built with frame pointers. */
#define JUDGE_SAMPLE	512

/*
 * Functions of Go's runtime that call or switch stacks without a frame record of their own
 * (the records of their callees skip them: systemstack, mcall, morestack, asmcgocall, gogo),
 * or that are entered with a return address no call pushed (asyncPreempt, sigpanic: the
 * instruction a signal interrupted): "no record" by name, whatever their code shows. The
 * first GO_CHECKS are what the stack check calls before a function's frame is made, whose
 * return addresses therefore no walk meets. Each is looked up as NAME, then as NAME.abi0
 * (Go's symbol for an assembly function of the stack-based ABI).
 */
static const char *const go_norec[] = {
	"runtime.morestack", "runtime.morestack_noctxt", "runtime.morestackc",
	"runtime.systemstack", "runtime.systemstack_switch", "runtime.mcall", "runtime.gogo",
	"gogo", "runtime.asmcgocall", "runtime.asyncPreempt", "runtime.sigpanic",
	"runtime.sigpanic0", "runtime.sigtramp", "runtime.sigreturn",
	"runtime.sigreturn__sigaction", "runtime.debugCallV2",
};
#define GO_CHECKS	3

/* [*START, *END) of the function named NAME in D, or NAME.abi0 when ABI0. Returns 0 or
 * -ENOENT. */
static int go_find(struct dso *d, const char *name, bool abi0, uint64_t *start, uint64_t *end)
{
	char buf[64];

	if (!abi0)
		return dso__find_range(d, name, start, end);
	snprintf(buf, sizeof(buf), "%s.abi0", name);
	return dso__find_range(d, buf, start, end);
}

/*
 * The frame spans (link-time) of Go file F into S, by Go's convention (frames__build_go) from
 * its .debug_frame, and its lost windows into F->lost; the runtime's functions go_norec
 * FRAME_NOREC, and so the functions of .eh_frame (the C code of a cgo program). Returns 0,
 * -ENOMEM or -E2BIG.
 */
static int ufile__go_spans(struct ufile *f, struct frame_spans *s)
{
	const struct dso_fdes *src = ufile__fdes(f, DSO_CFI_DEBUG);
	const struct dso_fdes *eh = ufile__fdes(f, DSO_CFI_EH);
	uint64_t checks[2 * GO_CHECKS], start, end, fde;
	size_t nr_checks = 0;
	int err;

	for (size_t i = 0; i < 2 * GO_CHECKS; i++)
		if (!go_find(f->dso, go_norec[i / 2], i & 1, &start, &end))
			checks[nr_checks++] = start;
	err = frames__build_go(&src->mem, &src->table, &f->mem, checks, nr_checks, s, &f->lost);
	for (size_t i = 0; !err && i < 2 * sizeof(go_norec) / sizeof(*go_norec); i++)
		if (!go_find(f->dso, go_norec[i / 2], i & 1, &start, &end))
			err = frames__paint(s, start, end, FRAME_NOREC);
	for (uint32_t i = 0; !err && eh && i < eh->table.count; i++)
		if (!fde_table__entry(&eh->table, i, &start, &fde) &&
		    !cfi__fde_range(&eh->mem, fde, &start, &end))
			err = frames__paint(s, start, end, FRAME_NOREC);
	pr_debug("unwind: %s: Go's frame records kept by %u of %u functions with a frame; %zu "
		 "windows where a walk from a leaf goes wrong", dso__path(f->dso), s->nr_record,
		 s->nr_calling, f->lost.nr);
	return err;
}

/*
 * F's frame spans (link-time), built at the first call: from its CFI, with the functions
 * named in BOTTOMS (NR of them) as FRAME_BOTTOM in a file that can be run (an entry point).
 * A file built without frame pointers may keep records in a few functions (those with
 * variable-size frames): the walks that reach them go to DWARF all the same, and describing
 * them would leave no room for the files built with frame pointers, so such a file is all
 * FRAME_NOREC but its bottoms. NULL when the file has no CFI.
 */
/*
 * musl's main thread begins in libc_start_main_stage2, a static function a stripped libc.so
 * (Debian's, Alpine's) does not name: its exported __libc_start_main loads its address with a
 * rip-relative lea and jumps to it through that register. Paint it in S as a bottom (its
 * FDE's extent, else up to __libc_start_main) where F's code says so; glibc (which has
 * __libc_start_call_main) and a musl with symbols (named by fixup's list) are left alone.
 */
static int paint_musl_start(struct ufile *f, struct frame_spans *s)
{
	uint64_t start, end, s2, e2, target = 0, fstart, fde;
	const struct dso_fdes *src = ufile__fdes(f, DSO_CFI_EH);
	const unsigned char *code;
	struct x86_insn in;
	int reg = -1;

	if (dso__find_range(f->dso, "__libc_start_main", &start, &end) ||
	    !dso__find_range(f->dso, "__libc_start_call_main", &s2, &e2) ||
	    !dso__find_range(f->dso, "libc_start_main_stage2", &s2, &e2) || end - start > 4096)
		return 0;
	code = cfi_mem__ptr(&f->mem, start, end - start);
	for (uint64_t at = 0; code && at < end - start; at += in.len) {
		if (!x86__decode(code + at, end - start - at, &in))
			return 0;
		if (in.map == X86_MAP_1B && in.op == 0x8d && in.base == 16) {
			target = start + at + in.len + (uint64_t)(int64_t)in.disp;
			reg = in.reg;
		} else if (in.map == X86_MAP_1B && in.op == 0xff && in.mod == 3 && (in.reg & 7) == 4 &&
			   in.rm == reg && target) {
			e2 = target < start ? start : target + 64;
			if (src && !fde_table__find(&src->table, target, &fstart, &fde) &&
			    fstart == target)
				cfi__fde_range(&src->mem, fde, &s2, &e2);
			return frames__paint(s, target, e2 > target ? e2 : target + 1, FRAME_BOTTOM);
		} else if (x86__ends_block(&in)) {
			return 0;
		}
	}
	return 0;
}

static const struct frame_spans *ufile__spans(struct ufile *f, const char *const *bottoms,
					      size_t nr)
{
	struct frame_spans *s = &f->spans;
	const struct dso_fdes *src;
	uint64_t start, end;
	int err;

	if (f->spans_done)
		return s->nr ? s : NULL;
	f->spans_done = true;
	src = ufile__fdes(f, DSO_CFI_EH);
	if (dso__is_go(f->dso) && ufile__fdes(f, DSO_CFI_DEBUG)) {
		err = ufile__go_spans(f, s);
		if (err == -E2BIG)
			err = frames__paint(s, f->min_vaddr, f->max_vaddr, FRAME_NOREC);
		goto bottoms;
	}
	if (!src)
		src = ufile__fdes(f, DSO_CFI_DEBUG);
	if (!src)
		return NULL;
	/* Most files are one or the other: a sample of their functions says which. */
	err = frames__judge(&src->mem, &src->table, JUDGE_SAMPLE, s);
	if (!err && frames__fp_built(s)) {
		err = frames__build(&src->mem, &src->table, s);
		if (err == -E2BIG)
			err = frames__paint(s, f->min_vaddr, f->max_vaddr, FRAME_NOREC);
	} else if (!err && src->table.count) {
		/* The CFI's outermost frames, the rest of the code one FRAME_NOREC span. */
		err = frames__paint(s, f->min_vaddr, f->max_vaddr, FRAME_NOREC);
		if (!err)
			err = frames__bottoms(&src->mem, &src->table, s);
	}
bottoms:
	for (size_t i = 0; i < nr && !err && s->nr && dso__entry(f->dso); i++)
		if (!dso__find_range(f->dso, bottoms[i], &start, &end))
			err = frames__paint(s, start, end, FRAME_BOTTOM);
	if (!err && s->nr && dso__entry(f->dso))
		err = paint_musl_start(f, s);
	if (err) {
		pr_debug("unwind: frame spans of %s: %s", dso__path(f->dso), strerror(-err));
		frames__free(s);
		frames__free(&f->lost);
		return NULL;
	}
	s->nr = frames__reduce(s->v, s->nr, FILE_SPANS_MAX);
	return s->nr ? s : NULL;
}

int unwinder__map_spans(struct unwinder *u, pid_t pid, const struct map *m,
			const char *const *bottoms, size_t nr_bottoms, size_t max,
			struct frame_spans *out)
{
	struct ufile *f = map__is_dso(m) ? unwinder__file(u, pid, m) : NULL;
	const struct frame_spans *fs = f && f->ok ? ufile__spans(f, bottoms, nr_bottoms) : NULL;
	uint64_t at = m->start;

	*out = (struct frame_spans){ 0 };
	if (!fs)
		return frames__paint(out, m->start, m->end, FRAME_TRUSTED);
	if (frames__reserve(out, 2 * fs->nr + 1))
		return -ENOMEM;
	for (size_t i = 0; i < fs->nr; i++) {
		uint64_t rt, end;

		if (dso__vaddr_to_runtime(f->dso, m, fs->v[i].start, &rt))
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
	return 0;
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

	for (p = u->procs[b]; p; p = p->next)
		if (p->pid == pid)
			return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
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
	if (!f || !f->image)
		return NULL;
	if (dso__bias(f->dso, m, ip, &bias))
		return NULL;
	if (p->nr_loaded == p->cap_loaded) {
		size_t cap = p->cap_loaded ? p->cap_loaded * 2 : 8;
		struct loaded *n = realloc(p->loaded, cap * sizeof(*n));

		if (!n)
			return NULL;
		p->loaded = n;
		p->cap_loaded = cap;
	}
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

	if ((addr & (PAGE - 1)) > PAGE - sizeof(*val)) {
		/* Straddles two pages: read it directly. */
		local = (struct iovec){ val, sizeof(*val) };
		remote = (struct iovec){ (void *)addr, sizeof(*val) };
		return process_vm_readv(c->s->pid, &local, 1, &remote, 1, 0) == sizeof(*val) ? 0 : -1;
	}
	for (int i = 0; i < PAGE_CACHE; i++)
		if (c->pages[i].valid && c->pages[i].addr == page)
			slot = i;
	if (slot < 0) {
		slot = c->next_page;
		c->next_page = (c->next_page + 1) % PAGE_CACHE;
		local = (struct iovec){ c->pages[slot].data, PAGE };
		remote = (struct iovec){ (void *)page, PAGE };
		c->pages[slot].valid = false;
		if (process_vm_readv(c->s->pid, &local, 1, &remote, 1, 0) != PAGE)
			return -1;
		c->pages[slot].valid = true;
		c->pages[slot].addr = page;
	}
	memcpy(val, c->pages[slot].data + (addr - page), sizeof(*val));
	return 0;
}

bool uctx__at_entry(struct uctx *c, uint64_t pc)
{
	struct loaded *l = uproc__loaded_for_ip(c, pc);
	uint64_t entry = l ? dso__entry(l->f->dso) : 0;

	return entry && pc - l->bias >= entry && pc - l->bias < entry + ENTRY_SPAN;
}

bool uctx__return_mapped(struct uctx *c, uint64_t ra)
{
	return ra && procmaps__find(c->u->pm, c->s->pid, ra - 1) != NULL;
}

/* Whether byte OFF of S's copy is in a page that was not readable when it was copied. */
static bool in_hole(const struct unwind_sample *s, uint64_t off)
{
	uint64_t first = PAGE - (s->sp & (PAGE - 1));
	uint64_t page = off < first ? 0 : 1 + (off - first) / PAGE;

	return page < 32 && (s->holes >> page & 1);
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
	if (c->copy_only || read_live(c, addr, val))
		return -1;
	if (addr >= s->sp && addr - s->sp < STACK_SPAN &&
	    addr - s->sp + sizeof(*val) > c->stack_used)
		c->stack_used = addr - s->sp + sizeof(*val);
	return 0;
}


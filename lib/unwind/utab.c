// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * utab: a file's unwind table, built from its dso (in the sandboxed worker), encoded, and
 * decoded on the privileged side as untrusted input.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/htab.h"
#include "base/limits.h"
#include "base/log.h"
#include "dso/dso.h"
#include "proc/procmaps.h"
#include "unwind/utab.h"
#include "unwind/x86.h"

const char *const utab_stack_bottoms[UTAB_NR_STACK_BOTTOMS] = {
	"__libc_start_call_main", "start_thread",
	/* ".abi0" is the symbol of Go's assembly functions since Go 1.17. */
	"runtime.goexit.abi0", "runtime.mstart.abi0", "runtime.rt0_go.abi0",
	"runtime.goexit", "runtime.mstart", "runtime.rt0_go",
	/* musl's main thread (its libc.so has no symbols: only static programs name it). */
	"libc_start_main_stage2",
};

/* --- rows ----------------------------------------------------------------------------------- */

/* A rule's range while the table is built (link-time). */
struct ival {
	uint64_t start, end;
	uint32_t rule;
};

struct ivals {
	struct ival *v;
	size_t nr, cap;
	bool nomem;
};

static void ivals__add(struct ivals *iv, uint64_t start, uint64_t end, uint32_t rule)
{
	if (end <= start || iv->nomem)
		return;
	if (iv->nr && iv->v[iv->nr - 1].end == start && iv->v[iv->nr - 1].rule == rule) {
		iv->v[iv->nr - 1].end = end;
		return;
	}
	if (iv->nr == iv->cap) {
		size_t cap = iv->cap ? 2 * iv->cap : 1024;
		struct ival *v = cap <= UTAB_ROWS_MAX ? realloc(iv->v, cap * sizeof(*v)) : NULL;

		if (!v) {
			iv->nomem = true;
			return;
		}
		iv->v = v;
		iv->cap = cap;
	}
	iv->v[iv->nr++] = (struct ival){ start, end, rule };
}

/* What the rows of one source are gathered with. */
struct gather {
	struct utab *t;
	struct htab index;		/* rule -> its index */
	size_t cap_rules;
	struct ivals *iv;
	uint64_t lo, hi;		/* rows are kept within [lo, hi) */
	uint64_t floor;			/* the end of the last FDE's rows: overlaps are cut */
	bool nomem;
};

static uint64_t rule_hash(const struct cfi_rule *r)
{
	uint64_t h = 0, w[(sizeof(*r) + 7) / 8] = { 0 };

	memcpy(w, r, sizeof(*r));
	for (size_t i = 0; i < sizeof(w) / 8; i++)
		h = hash_u64(h, w[i]);
	return h;
}

/* The index of rule R in G's table, added when new; UTAB_UNSUP when out of room. */
static uint32_t rule_id(struct gather *g, const struct cfi_rule *r)
{
	uint64_t h = rule_hash(r);
	struct utab *t = g->t;
	uint32_t pos, id;

	for (id = htab__first(&g->index, h, &pos); id != HTAB_NONE;
	     id = htab__next(&g->index, h, &pos))
		if (!memcmp(&t->rules[id], r, sizeof(*r)))
			return id;
	if (t->nr_rules == g->cap_rules) {
		size_t cap = g->cap_rules ? 2 * g->cap_rules : 64;
		struct cfi_rule *v = cap <= UTAB_RULES_MAX ?
				     realloc(t->rules, cap * sizeof(*v)) : NULL;

		if (!v) {
			g->nomem = true;
			return UTAB_UNSUP;
		}
		t->rules = v;
		g->cap_rules = cap;
	}
	if (htab__insert(&g->index, h, t->nr_rules)) {
		g->nomem = true;
		return UTAB_UNSUP;
	}
	t->rules[t->nr_rules] = *r;
	return t->nr_rules++;
}

static void on_rule_row(void *arg, uint64_t start, uint64_t end, int err,
			const struct cfi_rule *r)
{
	struct gather *g = arg;

	if (start < g->floor)
		start = g->floor;
	if (start < g->lo)
		start = g->lo;
	if (end > g->hi)
		end = g->hi;
	ivals__add(g->iv, start, end, err ? UTAB_UNSUP : rule_id(g, r));
}

/* The rows of the FDEs of F into G->iv, in order (each FDE's cut where it overlaps the one
 * before). */
static void gather_source(struct gather *g, const struct dso_fdes *f)
{
	g->floor = 0;
	for (uint32_t i = 0; i < f->table.count && !g->nomem && !g->iv->nomem; i++) {
		uint64_t first, fde, start, end;
		size_t before = g->iv->nr;
		int err;

		if (fde_table__entry(&f->table, i, &first, &fde))
			continue;
		start = end = 0;
		err = cfi__rule_rows(&f->mem, fde, on_rule_row, g, &start, &end);
		if (err && start < end) {
			/* Malformed past some row: none of it is to be trusted. */
			g->iv->nr = before;
			on_rule_row(g, start, end, -ENOTSUP, NULL);
		}
		if (end > g->floor && end <= g->hi)
			g->floor = end;
	}
}

static int ival_cmp(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* EH's rows, and DEBUG's where EH has none, into T->rows. Returns 0 or -ENOMEM. */
static int make_rows(struct utab *t, struct ivals *eh, struct ivals *dbg)
{
	struct ivals all = { 0 };
	size_t j = 0;
	uint64_t end = 0;

	for (size_t i = 0; i < eh->nr; i++)
		ivals__add(&all, eh->v[i].start, eh->v[i].end, eh->v[i].rule);
	for (size_t i = 0; i < dbg->nr; i++) {
		uint64_t cur = dbg->v[i].start, stop = dbg->v[i].end;

		while (j < eh->nr && eh->v[j].end <= cur)
			j++;
		while (cur < stop) {
			if (j < eh->nr && eh->v[j].start <= cur) {
				cur = eh->v[j++].end;
				continue;
			}
			uint64_t next = j < eh->nr && eh->v[j].start < stop ? eh->v[j].start : stop;

			ivals__add(&all, cur, next, dbg->v[i].rule);
			cur = next;
		}
	}
	if (all.nomem) {
		free(all.v);
		return -ENOMEM;
	}
	if (!all.nr) {
		free(all.v);
		return 0;		/* no rows: every lookup finds none */
	}
	qsort(all.v, all.nr, sizeof(*all.v), ival_cmp);
	t->rows = malloc((2 * all.nr + 1) * sizeof(*t->rows));
	if (!t->rows) {
		free(all.v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < all.nr; i++) {
		struct ival *v = &all.v[i];

		if (v->start < end)		/* EH's and DEBUG's kept apart above */
			continue;
		if (v->start > end && t->nr_rows)
			t->rows[t->nr_rows++] = (struct utab_row){ (uint32_t)(end - t->base), UTAB_NONE };
		if (!t->nr_rows || t->rows[t->nr_rows - 1].rule != v->rule || v->start > end)
			t->rows[t->nr_rows++] = (struct utab_row){ (uint32_t)(v->start - t->base),
								   v->rule };
		end = v->end;
	}
	t->rows[t->nr_rows++] = (struct utab_row){ (uint32_t)(end - t->base), UTAB_NONE };
	free(all.v);
	return 0;
}

/* --- spans (where frame-pointer walks can be trusted) -------------------------------------- */

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

/* What the spans are built from. */
struct src {
	struct dso *dso;
	struct cfi_mem mem;		/* the file's bytes by link-time address */
	const struct dso_fdes *eh, *dbg;
};

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

/* The frame spans of Go file S into T, by Go's convention (frames__build_go) from its
 * .debug_frame, with its lost windows; the runtime's functions go_norec FRAME_NOREC, and so
 * the functions of .eh_frame (the C code of a cgo program). Returns 0, -ENOMEM or -E2BIG. */
static int go_spans(const struct src *s, struct utab *t)
{
	uint64_t checks[2 * GO_CHECKS], start, end, fde;
	size_t nr_checks = 0;
	struct frame_spans *sp = &t->spans;
	int err;

	for (size_t i = 0; i < 2 * GO_CHECKS; i++)
		if (!go_find(s->dso, go_norec[i / 2], i & 1, &start, &end))
			checks[nr_checks++] = start;
	err = frames__build_go(&s->dbg->mem, &s->dbg->table, &s->mem, checks, nr_checks, sp,
			       &t->lost);
	for (size_t i = 0; !err && i < 2 * sizeof(go_norec) / sizeof(*go_norec); i++)
		if (!go_find(s->dso, go_norec[i / 2], i & 1, &start, &end))
			err = frames__paint(sp, start, end, FRAME_NOREC);
	for (uint32_t i = 0; !err && s->eh && i < s->eh->table.count; i++)
		if (!fde_table__entry(&s->eh->table, i, &start, &fde) &&
		    !cfi__fde_range(&s->eh->mem, fde, &start, &end))
			err = frames__paint(sp, start, end, FRAME_NOREC);
	pr_debug("unwind: %s: Go's frame records kept by %u of %u functions with a frame; %zu "
		 "windows where a walk from a leaf goes wrong", dso__path(s->dso), sp->nr_record,
		 sp->nr_calling, t->lost.nr);
	return err;
}

/*
 * musl's main thread begins in libc_start_main_stage2, a static function a stripped libc.so
 * (Debian's, Alpine's) does not name: its exported __libc_start_main loads its address with a
 * rip-relative lea and jumps to it through that register. Paint it in SP as a bottom (its
 * FDE's extent, else up to __libc_start_main) where the code says so; glibc (which has
 * __libc_start_call_main) and a musl with symbols (named by the bottoms) are left alone.
 */
static int paint_musl_start(const struct src *s, struct frame_spans *sp)
{
	uint64_t start, end, s2, e2, target = 0, fstart, fde;
	const unsigned char *code;
	struct x86_insn in;
	int reg = -1;

	if (dso__find_range(s->dso, "__libc_start_main", &start, &end) ||
	    !dso__find_range(s->dso, "__libc_start_call_main", &s2, &e2) ||
	    !dso__find_range(s->dso, "libc_start_main_stage2", &s2, &e2) || end - start > 4096)
		return 0;
	code = cfi_mem__ptr(&s->mem, start, end - start);
	for (uint64_t at = 0; code && at < end - start; at += in.len) {
		if (!x86__decode(code + at, end - start - at, &in))
			return 0;
		if (in.map == X86_MAP_1B && in.op == 0x8d && in.base == 16) {
			target = start + at + in.len + (uint64_t)(int64_t)in.disp;
			reg = in.reg;
		} else if (in.map == X86_MAP_1B && in.op == 0xff && in.mod == 3 && (in.reg & 7) == 4 &&
			   in.rm == reg && target) {
			e2 = target < start ? start : target + 64;
			if (s->eh && !fde_table__find(&s->eh->table, target, &fstart, &fde) &&
			    fstart == target)
				cfi__fde_range(&s->eh->mem, fde, &s2, &e2);
			return frames__paint(sp, target, e2 > target ? e2 : target + 1, FRAME_BOTTOM);
		} else if (x86__ends_block(&in)) {
			return 0;
		}
	}
	return 0;
}

/*
 * T's frame spans (link-time) from the CFI of S, with the functions named in BOTTOMS (NR of
 * them) as FRAME_BOTTOM in a file that can be run (an entry point). A file built without
 * frame pointers may keep records in a few functions (those with variable-size frames): the
 * walks that reach them go to DWARF all the same, and describing them would leave no room for
 * the files built with frame pointers, so such a file is all FRAME_NOREC but its bottoms.
 * Empty when the file has no CFI.
 */
static void make_spans(const struct src *s, struct utab *t, const char *const *bottoms,
		       size_t nr)
{
	struct frame_spans *sp = &t->spans;
	const struct dso_fdes *src = s->eh ? s->eh : s->dbg;
	uint64_t start, end;
	int err = 0;

	if (t->is_go && s->dbg) {
		err = go_spans(s, t);
		if (err == -E2BIG)
			err = frames__paint(sp, t->min_vaddr, t->max_vaddr, FRAME_NOREC);
	} else if (src) {
		/* Most files are one or the other: a sample of their functions says which. */
		err = frames__judge(&src->mem, &src->table, JUDGE_SAMPLE, sp);
		if (!err && frames__fp_built(sp)) {
			err = frames__build(&src->mem, &src->table, sp);
			if (err == -E2BIG)
				err = frames__paint(sp, t->min_vaddr, t->max_vaddr, FRAME_NOREC);
		} else if (!err && src->table.count) {
			/* The CFI's outermost frames, the rest of the code one FRAME_NOREC span. */
			err = frames__paint(sp, t->min_vaddr, t->max_vaddr, FRAME_NOREC);
			if (!err)
				err = frames__bottoms(&src->mem, &src->table, sp);
		}
	} else {
		return;
	}
	for (size_t i = 0; i < nr && !err && sp->nr && t->entry; i++)
		if (!dso__find_range(s->dso, bottoms[i], &start, &end))
			err = frames__paint(sp, start, end, FRAME_BOTTOM);
	if (!err && sp->nr && t->entry)
		err = paint_musl_start(s, sp);
	if (err) {
		pr_debug("unwind: frame spans of %s: %s", dso__path(s->dso), strerror(-err));
		frames__free(sp);
		frames__free(&t->lost);
		return;
	}
	sp->nr = frames__reduce(sp->v, sp->nr, FILE_SPANS_MAX);
}

/* --- Go's functions and calls -------------------------------------------------------------- */

static int range_cmp(const void *a, const void *b)
{
	const struct utab_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int call_cmp(const void *a, const void *b)
{
	const struct utab_call *x = a, *y = b;

	return x->ret < y->ret ? -1 : x->ret > y->ret;
}

/* Whether link-time [START, END) can be held base-relative. */
static bool in_reach(const struct utab *t, uint64_t start, uint64_t end)
{
	return start >= t->base && end >= start && end - t->base <= UINT32_MAX;
}

/*
 * The extent of each Go function (.debug_frame FDE) and the calls in it, decoded instruction
 * by instruction: what Go's windows are mended with (gowalk.c). A function whose code does
 * not decode to its end keeps no calls and is left out: no call can be vouched for in it.
 * Returns 0 or -ENOMEM.
 */
static int make_go_calls(const struct src *s, struct utab *t)
{
	size_t cap_funcs = 0, cap_calls = 0;

	for (uint32_t i = 0; s->dbg && i < s->dbg->table.count; i++) {
		uint64_t first, fde, start, end, off = 0;
		const unsigned char *code;
		uint32_t calls_before = t->nr_calls;
		bool ok = true;

		if (fde_table__entry(&s->dbg->table, i, &first, &fde) ||
		    cfi__fde_range(&s->dbg->mem, fde, &start, &end) || !in_reach(t, start, end) ||
		    end == start || !(code = cfi_mem__ptr(&s->mem, start, end - start)))
			continue;
		while (off < end - start) {
			struct x86_insn in;
			size_t n = x86__decode(code + off, end - start - off, &in);
			uint64_t ret, target;

			if (!n) {
				ok = false;
				break;
			}
			off += n;
			if (!x86__is_call(&in))
				continue;
			ret = start + off;
			target = in.op == 0xe8 && in.map == X86_MAP_1B ? ret + (uint64_t)in.imm : 0;
			if (t->nr_calls == cap_calls) {
				size_t cap = cap_calls ? 2 * cap_calls : 1024;
				struct utab_call *v = cap <= UTAB_CALLS_MAX ?
						      realloc(t->calls, cap * sizeof(*v)) : NULL;

				if (!v)
					return -ENOMEM;
				t->calls = v;
				cap_calls = cap;
			}
			t->calls[t->nr_calls++] = (struct utab_call){
				(uint32_t)(ret - t->base),
				target && in_reach(t, target, target) ? (uint32_t)(target - t->base) :
									UTAB_INDIRECT,
			};
		}
		if (!ok)
			t->nr_calls = calls_before;
		if (t->nr_funcs == cap_funcs) {
			size_t cap = cap_funcs ? 2 * cap_funcs : 1024;
			struct utab_range *v = cap <= UTAB_SPANS_MAX ?
					       realloc(t->funcs, cap * sizeof(*v)) : NULL;

			if (!v)
				return -ENOMEM;
			t->funcs = v;
			cap_funcs = cap;
		}
		t->funcs[t->nr_funcs++] = (struct utab_range){ (uint32_t)(start - t->base),
							       (uint32_t)(end - t->base), ok };
	}
	if (t->funcs)
		qsort(t->funcs, t->nr_funcs, sizeof(*t->funcs), range_cmp);
	if (t->calls)
		qsort(t->calls, t->nr_calls, sizeof(*t->calls), call_cmp);
	return 0;
}

/* --- the table ------------------------------------------------------------------------------ */

static size_t utab_bytes(const struct utab *t)
{
	return sizeof(*t) + (t->build_id ? strlen(t->build_id) + 1 : 0) +
	       t->nr_segs * sizeof(*t->segs) + t->nr_rules * sizeof(*t->rules) +
	       t->nr_rows * sizeof(*t->rows) + t->spans.nr * sizeof(*t->spans.v) +
	       t->lost.nr * sizeof(*t->lost.v) + t->nr_funcs * sizeof(*t->funcs) +
	       t->nr_calls * sizeof(*t->calls);
}

/* Charge T's memory to the budget; false when past it (T is not charged then). */
static bool utab_charge(struct utab *t)
{
	t->bytes = utab_bytes(t);
	if (limits__reserve(t->bytes))
		return true;
	t->bytes = 0;
	return false;
}

void utab__free(struct utab *t)
{
	if (!t)
		return;
	limits__release(t->bytes);
	free(t->build_id);
	free(t->segs);
	free(t->rules);
	free(t->rows);
	frames__free(&t->spans);
	frames__free(&t->lost);
	free(t->funcs);
	free(t->calls);
	free(t);
}

struct utab *utab__build(struct dso *dso, const char *const *bottoms, size_t nr_bottoms)
{
	struct utab *t = calloc(1, sizeof(*t));
	struct ivals eh = { 0 }, dbg = { 0 };
	struct dso_fdes feh, fdbg;
	const struct dso_seg *segs;
	struct gather g = { 0 };
	struct src s = { .dso = dso };
	size_t nsegs, size;

	if (!t)
		return NULL;
	segs = dso__segs(dso, &nsegs);
	if (nsegs > UTAB_SEGS_MAX)
		nsegs = UTAB_SEGS_MAX;
	dso__extent(dso, &t->min_vaddr, &t->max_vaddr);
	t->base = t->min_vaddr;
	t->entry = dso__entry(dso);
	dso__image(dso, &size);
	t->file_size = size;
	if (dso__build_id(dso) && strlen(dso__build_id(dso)) <= UTAB_BUILD_ID_MAX &&
	    !(t->build_id = strdup(dso__build_id(dso))))
		goto fail;
	t->is_go = dso__is_go(dso);
	if (nsegs) {
		t->segs = malloc(nsegs * sizeof(*t->segs));
		if (!t->segs)
			goto fail;
		memcpy(t->segs, segs, nsegs * sizeof(*t->segs));
		t->nr_segs = (uint32_t)nsegs;
	}
	s.mem = (struct cfi_mem){ dso__image(dso, &size), 0, segs, (int)nsegs };
	s.mem.size = size;
	if (nsegs && dso__usable(dso)) {
		s.eh = dso__fdes(dso, DSO_CFI_EH, &feh) ? NULL : &feh;
		s.dbg = dso__fdes(dso, DSO_CFI_DEBUG, &fdbg) ? NULL : &fdbg;
	}
	t->has_cfi = s.eh || s.dbg;
	g.t = t;
	g.lo = t->base;
	g.hi = t->max_vaddr - t->base > UINT32_MAX ? t->base + UINT32_MAX : t->max_vaddr;
	if (s.eh) {
		g.iv = &eh;
		gather_source(&g, s.eh);
	}
	if (s.dbg) {
		g.iv = &dbg;
		gather_source(&g, s.dbg);
	}
	htab__free(&g.index);
	if (g.nomem || eh.nomem || dbg.nomem || make_rows(t, &eh, &dbg))
		goto fail;
	free(eh.v);
	free(dbg.v);
	eh.v = dbg.v = NULL;
	make_spans(&s, t, bottoms, nr_bottoms);
	if (t->is_go && make_go_calls(&s, t))
		goto fail;
	if (!utab_charge(t))
		goto fail;
	return t;
fail:
	free(eh.v);
	free(dbg.v);
	utab__free(t);
	return NULL;
}

/* --- lookups -------------------------------------------------------------------------------- */

/* The last row whose start <= OFF (row 0 when none is: the caller checks), of a table with
 * rows. */
static uint32_t row_index(const struct utab *t, uint32_t off)
{
	uint32_t lo = 0, hi = t->nr_rows;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].start <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

int utab__rule(const struct utab *t, uint64_t vaddr, struct cfi_rule *r)
{
	uint32_t lo, off;

	if (!t->nr_rows || vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return -ENOENT;
	off = (uint32_t)(vaddr - t->base);
	lo = row_index(t, off);
	if (t->rows[lo].start > off || t->rows[lo].rule == UTAB_NONE)
		return -ENOENT;
	if (t->rows[lo].rule == UTAB_UNSUP)
		return -ENOTSUP;
	*r = t->rules[t->rows[lo].rule];
	return 0;
}

int utab__gap(const struct utab *t, uint64_t vaddr, uint64_t *start, uint64_t *end)
{
	uint64_t lo = 0, hi = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < t->nr_segs; i++)
		if (vaddr >= t->segs[i].vaddr && vaddr - t->segs[i].vaddr < t->segs[i].memsz)
			break;
	if (i == t->nr_segs)
		return -ENOENT;
	*start = t->segs[i].vaddr;
	*end = t->segs[i].vaddr + t->segs[i].memsz;
	if (t->nr_rows && vaddr >= t->base && vaddr - t->base <= UINT32_MAX) {
		uint32_t off = (uint32_t)(vaddr - t->base), a = row_index(t, off);

		if (t->rows[a].start <= off) {
			if (t->rows[a].rule != UTAB_NONE)
				return -EEXIST;
			lo = t->base + t->rows[a].start;
			if (a + 1 < t->nr_rows)
				hi = t->base + t->rows[a + 1].start;
		} else {
			hi = t->base + t->rows[0].start;
		}
	} else if (t->nr_rows && vaddr < t->base) {
		hi = t->base + t->rows[0].start;
	}
	if (lo > *start)
		*start = lo;
	if (hi < *end)
		*end = hi;
	return 0;
}

/* The index of the Go function holding VADDR, or -1. */
static int64_t func_index(const struct utab *t, uint64_t vaddr)
{
	uint32_t lo = 0, hi = t->nr_funcs, off;

	if (!t->nr_funcs || vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return -1;
	off = (uint32_t)(vaddr - t->base);
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->funcs[mid].start <= off)
			lo = mid;
		else
			hi = mid;
	}
	if (off < t->funcs[lo].start || off >= t->funcs[lo].end)
		return -1;
	return lo;
}

int utab__go_function(const struct utab *t, uint64_t vaddr, uint64_t *start, uint64_t *end)
{
	int64_t i = func_index(t, vaddr);

	if (i < 0)
		return -ENOENT;
	*start = t->base + t->funcs[i].start;
	*end = t->base + t->funcs[i].end;
	return 0;
}

/* The index of the first call whose ret >= OFF. */
static uint32_t first_call(const struct utab *t, uint32_t off)
{
	uint32_t lo = 0, hi = t->nr_calls;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->calls[mid].ret < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t utab__called_before(const struct utab *t, uint64_t ret)
{
	uint32_t i;

	if (ret < t->base || ret - t->base > UINT32_MAX)
		return 0;
	i = first_call(t, (uint32_t)(ret - t->base));
	if (i == t->nr_calls || t->calls[i].ret != ret - t->base ||
	    t->calls[i].target == UTAB_INDIRECT)
		return 0;
	return t->base + t->calls[i].target;
}

uint64_t utab__only_call(const struct utab *t, uint64_t start, uint64_t end, uint64_t target)
{
	int64_t fi = func_index(t, start);
	uint64_t found = 0;

	if (start < t->base || end < start || end - t->base > UINT32_MAX)
		return 0;
	/* Code that does not decode to its end: no call there can be vouched for. */
	if (fi < 0 || !t->funcs[fi].ok)
		return 0;
	/* A call returns after its own bytes: into (start, end]. */
	for (uint32_t i = first_call(t, (uint32_t)(start - t->base) + 1);
	     i < t->nr_calls && t->calls[i].ret <= end - t->base; i++) {
		const struct utab_call *c = &t->calls[i];

		if (c->target != UTAB_INDIRECT && t->base + c->target != target)
			continue;
		if (found)
			return 0;
		found = t->base + c->ret;
	}
	return found;
}

int utab__bias(const struct utab *t, const struct map *m, uint64_t addr, uint64_t *bias)
{
	uint64_t vaddr;

	if (dso_segs__off_to_vaddr(t->segs, t->nr_segs, map__file_offset(m, addr), &vaddr))
		return -ENOENT;
	*bias = addr - vaddr;
	return 0;
}

int utab__vaddr_to_runtime(const struct utab *t, const struct map *m, uint64_t vaddr,
			   uint64_t *addr)
{
	uint64_t off, first = map__file_offset(m, m->start);

	if (dso_segs__vaddr_to_off(t->segs, t->nr_segs, vaddr, 1, t->file_size, &off) ||
	    off < first || off - first >= m->end - m->start)
		return -ENOENT;
	*addr = m->start + (off - first);
	return 0;
}

/* --- encoding ------------------------------------------------------------------------------- */

/*
 * Layout (little-endian, the host's: both sides are one program on one machine):
 *   u32 magic "UTB1", u32 flags (1 is_go, 2 has_cfi)
 *   u64 base, min_vaddr, max_vaddr, entry, file_size
 *   u32 nr_segs, nr_rules, nr_rows, nr_spans, nr_lost, nr_funcs, nr_calls,
 *       spans' nr_calling, nr_record, 0
 *   then the arrays in that order: segs (4 x u64), rules (struct cfi_rule), rows (2 x u32),
 *   spans and lost (u64 start, u64 end, u8 kind, 7 zero bytes), funcs (3 x u32),
 *   calls (2 x u32); then u32 n, the build id's n hex digits (0: none)
 */
#define UTAB_MAGIC	0x31425455u	/* "UTB1" */
#define HDR_LEN		(8 + 5 * 8 + 10 * 4)
#define FUNC_LEN	12
#define SPAN_LEN	24

struct wr {
	unsigned char *p;
	size_t off;
};

static void put(struct wr *w, const void *v, size_t n)
{
	memcpy(w->p + w->off, v, n);
	w->off += n;
}

static void put32(struct wr *w, uint32_t v)
{
	put(w, &v, 4);
}

static void put64(struct wr *w, uint64_t v)
{
	put(w, &v, 8);
}

static void put_spans(struct wr *w, const struct frame_spans *s)
{
	for (size_t i = 0; i < s->nr; i++) {
		unsigned char kind[8] = { s->v[i].kind };

		put64(w, s->v[i].start);
		put64(w, s->v[i].end);
		put(w, kind, 8);
	}
}

int utab__encode(const struct utab *t, unsigned char **buf, size_t *len)
{
	size_t n = HDR_LEN + t->nr_segs * 32 + t->nr_rules * sizeof(struct cfi_rule) +
		   t->nr_rows * 8 + (t->spans.nr + t->lost.nr) * SPAN_LEN + t->nr_funcs * FUNC_LEN +
		   t->nr_calls * 8 + 4 + (t->build_id ? strlen(t->build_id) : 0);
	struct wr w = { malloc(n), 0 };

	if (!w.p)
		return -ENOMEM;
	put32(&w, UTAB_MAGIC);
	put32(&w, (t->is_go ? 1u : 0u) | (t->has_cfi ? 2u : 0u));
	put64(&w, t->base);
	put64(&w, t->min_vaddr);
	put64(&w, t->max_vaddr);
	put64(&w, t->entry);
	put64(&w, t->file_size);
	put32(&w, t->nr_segs);
	put32(&w, t->nr_rules);
	put32(&w, t->nr_rows);
	put32(&w, (uint32_t)t->spans.nr);
	put32(&w, (uint32_t)t->lost.nr);
	put32(&w, t->nr_funcs);
	put32(&w, t->nr_calls);
	put32(&w, t->spans.nr_calling);
	put32(&w, t->spans.nr_record);
	put32(&w, 0);
	for (uint32_t i = 0; i < t->nr_segs; i++) {
		put64(&w, t->segs[i].offset);
		put64(&w, t->segs[i].vaddr);
		put64(&w, t->segs[i].filesz);
		put64(&w, t->segs[i].memsz);
	}
	if (t->nr_rules)
		put(&w, t->rules, t->nr_rules * sizeof(*t->rules));
	for (uint32_t i = 0; i < t->nr_rows; i++) {
		put32(&w, t->rows[i].start);
		put32(&w, t->rows[i].rule);
	}
	put_spans(&w, &t->spans);
	put_spans(&w, &t->lost);
	for (uint32_t i = 0; i < t->nr_funcs; i++) {
		put32(&w, t->funcs[i].start);
		put32(&w, t->funcs[i].end);
		put32(&w, t->funcs[i].ok);
	}
	for (uint32_t i = 0; i < t->nr_calls; i++) {
		put32(&w, t->calls[i].ret);
		put32(&w, t->calls[i].target);
	}
	put32(&w, t->build_id ? (uint32_t)strlen(t->build_id) : 0);
	if (t->build_id)
		put(&w, t->build_id, strlen(t->build_id));
	*buf = w.p;
	*len = w.off;
	return 0;
}

/* --- decoding (untrusted) ------------------------------------------------------------------- */

struct rdr {
	const unsigned char *p;
	size_t len, off;
};

static uint32_t get32(struct rdr *r)
{
	uint32_t v;

	memcpy(&v, r->p + r->off, 4);
	r->off += 4;
	return v;
}

static uint64_t get64(struct rdr *r)
{
	uint64_t v;

	memcpy(&v, r->p + r->off, 8);
	r->off += 8;
	return v;
}

static bool rule_valid(const struct cfi_rule *r)
{
	for (int i = 0; i < CFI_NR_CS; i++)
		if (r->cs[i] > CFI_AT_SP || (r->cs[i] != CFI_AT_CFA && r->cs[i] != CFI_AT_SP &&
					     r->cs_off[i]))
			return false;
	/* (A register's number for CFI_IN_REG: below 16, not rsp.) */
	if ((r->ra == CFI_IN_REG && (r->ra_off < 0 || r->ra_off >= 16 ||
				     r->ra_off == CFI_REG_RSP)) ||
	    (r->bp == CFI_IN_REG && (r->bp_off < 0 || r->bp_off >= 16 ||
				     r->bp_off == CFI_REG_RSP)))
		return false;
	return r->cfa_reg < CFI_REG_RA && r->cfa_deref <= CFI_CFA_PLT && r->ra <= CFI_IN_REG &&
	       r->bp <= CFI_IN_REG && r->plt_cut < 16 && r->signal <= 1 && !r->pad &&
	       !r->pad2[0] && !r->pad2[1] && !r->pad2[2];
}

/* N spans of the sorted, non-overlapping kind below KIND_MAX into S. */
static int get_spans(struct rdr *r, uint32_t n, uint8_t kind_max, struct frame_spans *s)
{
	if (!n)
		return 0;
	s->v = malloc(n * sizeof(*s->v));
	if (!s->v)
		return -ENOMEM;
	s->cap = n;
	for (uint32_t i = 0; i < n; i++) {
		struct frame_span *v = &s->v[i];

		v->start = get64(r);
		v->end = get64(r);
		v->kind = r->p[r->off];
		for (int k = 1; k < 8; k++)
			if (r->p[r->off + k])
				return -EBADMSG;
		r->off += 8;
		if (v->end <= v->start || !v->kind || v->kind >= kind_max ||
		    (i && v->start < s->v[i - 1].end))
			return -EBADMSG;
		s->nr++;
	}
	return 0;
}

int utab__decode(const unsigned char *buf, size_t len, struct utab **out)
{
	struct rdr r = { buf, len, 0 };
	uint32_t flags, nr_spans, nr_lost, nr_calling, nr_record, idlen;
	struct utab *t;
	uint64_t need;
	int err = -EBADMSG;

	*out = NULL;
	if (len < HDR_LEN)
		return -EBADMSG;
	if (get32(&r) != UTAB_MAGIC)
		return -EBADMSG;
	flags = get32(&r);
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->base = get64(&r);
	t->min_vaddr = get64(&r);
	t->max_vaddr = get64(&r);
	t->entry = get64(&r);
	t->file_size = get64(&r);
	t->nr_segs = get32(&r);
	t->nr_rules = get32(&r);
	t->nr_rows = get32(&r);
	nr_spans = get32(&r);
	nr_lost = get32(&r);
	t->nr_funcs = get32(&r);
	t->nr_calls = get32(&r);
	nr_calling = get32(&r);
	nr_record = get32(&r);
	if (get32(&r) || flags & ~3u || t->nr_segs > UTAB_SEGS_MAX ||
	    t->nr_rules > UTAB_RULES_MAX || t->nr_rows > UTAB_ROWS_MAX ||
	    nr_spans > UTAB_SPANS_MAX || nr_lost > UTAB_SPANS_MAX ||
	    t->nr_funcs > UTAB_SPANS_MAX || t->nr_calls > UTAB_CALLS_MAX ||
	    t->max_vaddr < t->min_vaddr || t->base != t->min_vaddr ||
	    t->base > UINT64_MAX - 2 * (uint64_t)UINT32_MAX)
		goto fail;
	t->is_go = flags & 1;
	t->has_cfi = flags & 2;
	need = HDR_LEN + (uint64_t)t->nr_segs * 32 + (uint64_t)t->nr_rules * sizeof(struct cfi_rule) +
	       (uint64_t)t->nr_rows * 8 + ((uint64_t)nr_spans + nr_lost) * SPAN_LEN +
	       (uint64_t)t->nr_funcs * FUNC_LEN + (uint64_t)t->nr_calls * 8 + 4;
	if (need > len || len - need > UTAB_BUILD_ID_MAX)
		goto fail;
	err = -ENOMEM;
	if ((t->nr_segs && !(t->segs = malloc(t->nr_segs * sizeof(*t->segs)))) ||
	    (t->nr_rules && !(t->rules = malloc(t->nr_rules * sizeof(*t->rules)))) ||
	    (t->nr_rows && !(t->rows = malloc(t->nr_rows * sizeof(*t->rows)))) ||
	    (t->nr_funcs && !(t->funcs = malloc(t->nr_funcs * sizeof(*t->funcs)))) ||
	    (t->nr_calls && !(t->calls = malloc(t->nr_calls * sizeof(*t->calls)))))
		goto fail;
	err = -EBADMSG;
	for (uint32_t i = 0; i < t->nr_segs; i++) {
		struct dso_seg *s = &t->segs[i];

		s->offset = get64(&r);
		s->vaddr = get64(&r);
		s->filesz = get64(&r);
		s->memsz = get64(&r);
		if (s->filesz > s->memsz || s->vaddr + s->memsz < s->vaddr ||
		    s->offset + s->filesz < s->offset)
			goto fail;
	}
	if (t->nr_rules)
		memcpy(t->rules, r.p + r.off, t->nr_rules * sizeof(*t->rules));
	r.off += t->nr_rules * sizeof(*t->rules);
	for (uint32_t i = 0; i < t->nr_rules; i++)
		if (!rule_valid(&t->rules[i]))
			goto fail;
	for (uint32_t i = 0; i < t->nr_rows; i++) {
		t->rows[i].start = get32(&r);
		t->rows[i].rule = get32(&r);
		if ((i && t->rows[i].start <= t->rows[i - 1].start) ||
		    (t->rows[i].rule >= t->nr_rules && t->rows[i].rule < UTAB_UNSUP))
			goto fail;
	}
	if (t->nr_rows && t->rows[t->nr_rows - 1].rule != UTAB_NONE)
		goto fail;
	err = get_spans(&r, nr_spans, FRAME__MAX, &t->spans);
	if (!err)
		err = get_spans(&r, nr_lost, FRAME_LOST_EXTRA + 1, &t->lost);
	if (err)
		goto fail;
	err = -EBADMSG;
	t->spans.nr_calling = nr_calling;
	t->spans.nr_record = nr_record;
	for (uint32_t i = 0; i < t->nr_funcs; i++) {
		t->funcs[i].start = get32(&r);
		t->funcs[i].end = get32(&r);
		t->funcs[i].ok = get32(&r);
		if (t->funcs[i].end <= t->funcs[i].start || t->funcs[i].ok > 1 ||
		    (i && t->funcs[i].start < t->funcs[i - 1].end))
			goto fail;
	}
	for (uint32_t i = 0; i < t->nr_calls; i++) {
		t->calls[i].ret = get32(&r);
		t->calls[i].target = get32(&r);
		if (i && t->calls[i].ret <= t->calls[i - 1].ret)
			goto fail;
	}
	idlen = get32(&r);
	if (idlen != len - need)
		goto fail;
	if (idlen) {
		for (uint32_t i = 0; i < idlen; i++) {
			unsigned char c = r.p[r.off + i];

			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
				goto fail;
		}
		err = -ENOMEM;
		t->build_id = strndup((const char *)r.p + r.off, idlen);
		if (!t->build_id)
			goto fail;
		err = -EBADMSG;
		r.off += idlen;
	}
	err = -ENOMEM;
	if (!utab_charge(t))
		goto fail;
	*out = t;
	return 0;
fail:
	utab__free(t);
	return err;
}

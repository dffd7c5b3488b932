// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * utab_build: a file's unwind table made from its dso, in the sandboxed worker: the CFI as
 * rows of deduplicated rules, the frame spans, Go's functions and calls.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/htab.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/grow.h"
#include "dso/dso.h"
#include "proc/procmaps.h"
#include "unwind/utab.h"
#include "dso/x86.h"
#include "unwind/utab_int.h"

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
	if (iv->nr >= UTAB_ROWS_MAX || array_grow(&iv->v, &iv->cap, sizeof(*iv->v), iv->nr)) {
		iv->nomem = true;
		return;
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
	if (t->nr_rules >= UTAB_RULES_MAX ||
	    array_grow(&t->rules, &g->cap_rules, sizeof(*t->rules), t->nr_rules)) {
		g->nomem = true;
		return UTAB_UNSUP;
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
			if (t->nr_calls >= UTAB_CALLS_MAX ||
			    array_grow(&t->calls, &cap_calls, sizeof(*t->calls), t->nr_calls))
				return -ENOMEM;
			t->calls[t->nr_calls++] = (struct utab_call){
				(uint32_t)(ret - t->base),
				target && in_reach(t, target, target) ? (uint32_t)(target - t->base) :
									UTAB_INDIRECT,
			};
		}
		if (!ok)
			t->nr_calls = calls_before;
		if (t->nr_funcs >= UTAB_SPANS_MAX ||
		    array_grow(&t->funcs, &cap_funcs, sizeof(*t->funcs), t->nr_funcs))
			return -ENOMEM;
		t->funcs[t->nr_funcs++] = (struct utab_range){ (uint32_t)(start - t->base),
							       (uint32_t)(end - t->base), ok };
	}
	if (t->funcs)
		qsort(t->funcs, t->nr_funcs, sizeof(*t->funcs), range_cmp);
	if (t->calls)
		qsort(t->calls, t->nr_calls, sizeof(*t->calls), call_cmp);
	return 0;
}

/* The rule of a followed frame F (frames_follow.c): its return address where F says (CFA - 8,
 * or a copy of it lower), the caller's rbp where F says, the callee-saved registers not known
 * (V8's code keeps none of them). */
static struct cfi_rule follow_rule(const struct follow_frame *f)
{
	struct cfi_rule r = { .cfa_reg = CFI_REG_RSP, .cfa_deref = CFI_CFA_REG, .ra = CFI_AT_CFA,
			      .ra_off = f->ra, .cfa_off = f->k };

	/* (x86's register numbers as DWARF's.) */
	static const uint8_t dwarf[16] = { 0, 2, 1, 3, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15 };

	if (f->kind == FOLLOW_RBP) {
		r.cfa_reg = CFI_REG_RBP;
		r.cfa_off = 16;
	} else if (f->kind == FOLLOW_REG) {
		r.cfa_reg = dwarf[f->reg & 15];
		r.cfa_off = f->d;
	}
	r.bp = f->kind == FOLLOW_RBP || f->bp == FOLLOW_BP_SAVED ? CFI_AT_CFA :
	       f->bp == FOLLOW_BP_LOST ? CFI_UNDEFINED : CFI_SAME;
	r.bp_off = r.bp == CFI_AT_CFA ? f->bpo : 0;
	for (int i = 0; i < CFI_NR_CS; i++)
		r.cs[i] = CFI_UNDEFINED;
	return r;
}

/* Bytes without a symbol between two builtins, at most. */
#define FOLLOW_MAX_PAD	4096

/* What follow_rows makes: the table's rows, the functions followed. */
struct follow_out {
	struct utab_row *rows;
	size_t nr, cap;
	size_t functions, followed;
	bool nomem;
};

static void follow_row(struct follow_out *o, uint32_t start, uint32_t rule)
{
	if (o->nr && o->rows[o->nr - 1].rule == rule)
		return;
	if (o->nr && o->rows[o->nr - 1].start == start) {
		o->rows[o->nr - 1].rule = rule;
		if (o->nr > 1 && o->rows[o->nr - 2].rule == rule)
			o->nr--;
		return;
	}
	if (array_grow(&o->rows, &o->cap, sizeof(*o->rows), o->nr)) {
		o->nomem = true;
		return;
	}
	o->rows[o->nr++] = (struct utab_row){ start, rule };
}

/*
 * The rows of the functions in [START, END) (link-time: a stretch without FDEs) into O,
 * UNKNOWN (UTAB_RECORD, UTAB_NONE) where their code does not say: each function (a symbol
 * there) followed from its code (frames__follow), its instructions with a known frame
 * given its rule. *AT, *CAP_AT: the followed frames' buffer. Sets O->nomem when out of memory.
 */
static void follow_stretch(struct src *src, struct gather *g, struct dso *dso, uint64_t start,
			   uint64_t end, uint32_t unknown, struct follow_out *o,
			   struct follow_frame **at, size_t *cap_at)
{
	struct utab *t = g->t;
	uint64_t a = start, unnamed = 0;

	follow_row(o, (uint32_t)(start - t->base), unknown);
	while (a < end && !o->nomem) {
		const struct follow_frame *last = NULL;
		uint32_t rule = unknown;
		const unsigned char *code;
		const char *name;
		uint64_t fs, fe;
		int good;

		/* (Functions lie end to end, a few bytes of padding apart: a stretch of more
		 * without a symbol ends the search, as a file's size would not.) */
		name = dso__lookup_range(dso, a, &fs, &fe);
		if (!name || fs > a || fe <= a) {
			if (++unnamed > FOLLOW_MAX_PAD)
				break;
			a++;
			continue;
		}
		unnamed = 0;
		/* (Not the program's entry, whose first word at rsp is argc, not a return
		 * address; not a PLT's stubs; not the cold part of a function, GCC's, which
		 * is jumped to within its frame.) */
		if (fs < start || fe > end || fe - fs > (1u << 20) || fs == t->entry ||
		    strstr(name, "@plt") || strstr(name, ".cold") ||
		    !(code = cfi_mem__ptr(&src->mem, fs, fe - fs))) {
			a = fe;
			continue;
		}
		o->functions++;
		if (array_grow(at, cap_at, sizeof(**at), fe - fs - 1)) {
			o->nomem = true;
			break;
		}
		good = frames__follow(code, fe - fs, *at);
		if (good < 0) {
			o->nomem = true;
			break;
		}
		for (uint64_t b = 0; good && b < fe - fs; b++) {
			const struct follow_frame *f = &(*at)[b];
			struct cfi_rule r;

			if (f->kind == FOLLOW_NONE)
				continue;
			if (!last || last->kind != f->kind || last->k != f->k ||
			    last->bp != f->bp || last->ra != f->ra || last->bpo != f->bpo ||
			    last->reg != f->reg || (f->kind == FOLLOW_REG && last->d != f->d)) {
				r = follow_rule(f);
				rule = f->kind == FOLLOW_RSP || f->kind == FOLLOW_RBP ||
				       f->kind == FOLLOW_REG ? rule_id(g, &r) : unknown;
			}
			last = f;
			follow_row(o, (uint32_t)(fs + b - t->base), rule);
		}
		o->followed += good;
		/* (The stretch's next row, past its end, is the table's: two rows of one
		 * start would not decode.) */
		if (fe < end)
			follow_row(o, (uint32_t)(fe - t->base), unknown);
		a = fe;
	}
}

/* Bytes of code without FDEs followed by their symbols, at most, per file; the fewest in a
 * stretch between two FDEs. */
#define FOLLOW_MAX_BYTES	(64u << 20)
#define FOLLOW_MIN_BYTES	16

/*
 * The functions of T's stretches without FDEs followed from their code: V8's builtins in
 * node (its UTAB_RECORD stretch: what is not known stays a stretch of records), and in any
 * file but Go's (their own convention, frames_go.c) the functions between two FDEs' rows
 * (UTAB_NONE: assembly, OpenBLAS's kernels; what is not known stays without a rule). The
 * rows made in place of the stretches', in one pass. Returns 0 or -ENOMEM (T as it was).
 */
static int follow_rows(struct src *src, struct gather *g, struct dso *dso)
{
	struct utab *t = g->t;
	struct follow_out o = { 0 };
	struct follow_frame *at = NULL;
	size_t cap_at = 0, stretches = 0;
	uint64_t done = 0;
	bool any = false;

	if (!dso__usable(dso) || t->nr_rows < 2)
		return 0;
	for (uint32_t i = 0; i + 1 < t->nr_rows && !o.nomem; i++) {
		uint64_t start = t->base + t->rows[i].start, end = t->base + t->rows[i + 1].start;
		uint32_t rule = t->rows[i].rule;
		/* (A stretch of less than FOLLOW_MIN_BYTES is the padding between two
		 * functions, as good as always.) */
		bool follow = rule == UTAB_RECORD ||
			      (rule == UTAB_NONE && !t->is_go && end - start >= FOLLOW_MIN_BYTES &&
			       done + (end - start) <= FOLLOW_MAX_BYTES);

		if (!follow) {
			/* (Merged with the row before when a stretch's last rule is its.) */
			follow_row(&o, t->rows[i].start, rule);
			continue;
		}
		any = true;
		stretches++;
		if (rule == UTAB_NONE)
			done += end - start;
		follow_stretch(src, g, dso, start, end, rule, &o, &at, &cap_at);
	}
	free(at);
	follow_row(&o, t->rows[t->nr_rows - 1].start, t->rows[t->nr_rows - 1].rule);
	if (o.nomem || g->nomem || o.nr > UTAB_ROWS_MAX) {
		free(o.rows);
		return any ? -ENOMEM : 0;
	}
	if (!any) {
		free(o.rows);
		return 0;
	}
	free(t->rows);
	t->rows = o.rows;
	t->nr_rows = (uint32_t)o.nr;
	pr_debug("utab: %s: %zu of %zu functions without CFI followed from their code, in %zu "
		 "stretches", dso__path(dso), o.followed, o.functions, stretches);
	return 0;
}

/*
 * V8's builtins in a file named *node* (node's embedded blob: the stretch without FDEs that
 * holds Builtins_JSEntry) as code that keeps a frame record wherever it calls (UTAB_RECORD):
 * V8 walks its own stacks by those records. Where a builtin's code says what its frame is
 * (follow_rows), its rows say so instead.
 */
static void mark_v8_builtins(struct dso *dso, struct utab *t)
{
	uint64_t start, end;
	uint32_t i;

	if (!t->nr_rows || !dso__path(dso) || !strstr(dso__path(dso), "node") ||
	    !dso__usable(dso) || dso__find_range(dso, "Builtins_JSEntry", &start, &end) ||
	    start < t->base || start - t->base > UINT32_MAX)
		return;
	i = utab__row_index(t, (uint32_t)(start - t->base));
	/* (The last row, past every FDE, is no stretch between two.) */
	if (t->rows[i].start <= start - t->base && i + 1 < t->nr_rows &&
	    t->rows[i].rule == UTAB_NONE)
		t->rows[i].rule = UTAB_RECORD;
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
	/* Where CPython's state begins: its frames are read from there (collect/python.c). */
	if (dso__path(dso) && strstr(dso__path(dso), "python") && dso__usable(dso) &&
	    (dso__find_object(dso, "_PyRuntime", &t->py_runtime) ||
	     t->py_runtime < t->min_vaddr || t->py_runtime >= t->max_vaddr))
		t->py_runtime = 0;
	if (dso__path(dso) && strstr(dso__path(dso), "ruby") && dso__usable(dso) &&
	    (dso__find_object(dso, "ruby_current_vm_ptr", &t->rb_vm_ptr) ||
	     t->rb_vm_ptr < t->min_vaddr || t->rb_vm_ptr >= t->max_vaddr))
		t->rb_vm_ptr = 0;
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
	if (g.nomem || eh.nomem || dbg.nomem || make_rows(t, &eh, &dbg))
		goto fail;
	free(eh.v);
	free(dbg.v);
	eh.v = dbg.v = NULL;
	make_spans(&s, t, bottoms, nr_bottoms);
	mark_v8_builtins(dso, t);
	if (follow_rows(&s, &g, dso))
		goto fail;
	htab__free(&g.index);
	if (t->is_go && make_go_calls(&s, t))
		goto fail;
	if (!utab__charge(t))
		goto fail;
	return t;
fail:
	htab__free(&g.index);
	free(eh.v);
	free(dbg.v);
	utab__free(t);
	return NULL;
}

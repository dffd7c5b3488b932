// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * utab_codec: a file's unwind table encoded for the worker to send, and decoded on the
 * privileged side as untrusted input (every count, offset and rule checked).
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
#include "dso/x86.h"
#include "base/rd.h"
#include "unwind/utab_int.h"


/* --- encoding ------------------------------------------------------------------------------- */

/*
 * Layout (little-endian, the host's: both sides are one program on one machine):
 *   u32 magic "UTB1", u32 flags (1 is_go, 2 has_cfi)
 *   u64 base, min_vaddr, max_vaddr, entry, file_size, py_runtime, rb_vm_ptr
 *   u32 nr_segs, nr_rules, nr_rows, nr_spans, nr_lost, nr_funcs, nr_calls,
 *       spans' nr_calling, nr_record, 0
 *   then the arrays in that order: segs (4 x u64), rules (struct cfi_rule), rows (2 x u32),
 *   spans and lost (u64 start, u64 end, u8 kind, 7 zero bytes), funcs (3 x u32),
 *   calls (2 x u32); then u32 n, the build id's n hex digits (0: none)
 */
#define UTAB_MAGIC	0x31425455u	/* "UTB1" */
#define HDR_LEN		(8 + 7 * 8 + 10 * 4)
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
	put64(&w, t->py_runtime);
	put64(&w, t->rb_vm_ptr);
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

/* (Read with base/rd.h: the lengths are checked first against the counts, and every read
 * is bounded all the same.) */

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
static int get_spans(struct rd *r, uint32_t n, uint8_t kind_max, struct frame_spans *s)
{
	if (!n)
		return 0;
	s->v = malloc(n * sizeof(*s->v));
	if (!s->v)
		return -ENOMEM;
	s->cap = n;
	for (uint32_t i = 0; i < n; i++) {
		struct frame_span *v = &s->v[i];

		v->start = rd__u64(r);
		v->end = rd__u64(r);
		v->kind = rd__u8(r);
		for (int k = 1; k < 8; k++)
			if (rd__u8(r))
				return -EBADMSG;
		if (v->end <= v->start || !v->kind || v->kind >= kind_max ||
		    (i && v->start < s->v[i - 1].end))
			return -EBADMSG;
		s->nr++;
	}
	return 0;
}

int utab__decode(const unsigned char *buf, size_t len, struct utab **out)
{
	struct rd r = rd__init(buf, len);
	const unsigned char *p;
	uint32_t flags, nr_spans, nr_lost, nr_calling, nr_record, idlen;
	struct utab *t;
	uint64_t need;
	int err = -EBADMSG;

	*out = NULL;
	if (len < HDR_LEN)
		return -EBADMSG;
	if (rd__u32(&r) != UTAB_MAGIC)
		return -EBADMSG;
	flags = rd__u32(&r);
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->base = rd__u64(&r);
	t->min_vaddr = rd__u64(&r);
	t->max_vaddr = rd__u64(&r);
	t->entry = rd__u64(&r);
	t->file_size = rd__u64(&r);
	t->py_runtime = rd__u64(&r);
	t->rb_vm_ptr = rd__u64(&r);
	t->nr_segs = rd__u32(&r);
	t->nr_rules = rd__u32(&r);
	t->nr_rows = rd__u32(&r);
	nr_spans = rd__u32(&r);
	nr_lost = rd__u32(&r);
	t->nr_funcs = rd__u32(&r);
	t->nr_calls = rd__u32(&r);
	nr_calling = rd__u32(&r);
	nr_record = rd__u32(&r);
	if (rd__u32(&r) || flags & ~3u || t->nr_segs > UTAB_SEGS_MAX ||
	    t->nr_rules > UTAB_RULES_MAX || t->nr_rows > UTAB_ROWS_MAX ||
	    nr_spans > UTAB_SPANS_MAX || nr_lost > UTAB_SPANS_MAX ||
	    t->nr_funcs > UTAB_SPANS_MAX || t->nr_calls > UTAB_CALLS_MAX ||
	    t->max_vaddr < t->min_vaddr || t->base != t->min_vaddr ||
	    (t->py_runtime && (t->py_runtime < t->min_vaddr || t->py_runtime >= t->max_vaddr)) ||
	    (t->rb_vm_ptr && (t->rb_vm_ptr < t->min_vaddr || t->rb_vm_ptr >= t->max_vaddr)) ||
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

		s->offset = rd__u64(&r);
		s->vaddr = rd__u64(&r);
		s->filesz = rd__u64(&r);
		s->memsz = rd__u64(&r);
		if (s->filesz > s->memsz || s->vaddr + s->memsz < s->vaddr ||
		    s->offset + s->filesz < s->offset)
			goto fail;
	}
	p = rd__bytes(&r, t->nr_rules * sizeof(*t->rules));
	if (!p)
		goto fail;
	if (t->nr_rules)
		memcpy(t->rules, p, t->nr_rules * sizeof(*t->rules));
	for (uint32_t i = 0; i < t->nr_rules; i++)
		if (!rule_valid(&t->rules[i]))
			goto fail;
	for (uint32_t i = 0; i < t->nr_rows; i++) {
		t->rows[i].start = rd__u32(&r);
		t->rows[i].rule = rd__u32(&r);
		if ((i && t->rows[i].start <= t->rows[i - 1].start) ||
		    (t->rows[i].rule >= t->nr_rules && t->rows[i].rule < UTAB_RECORD))
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
		t->funcs[i].start = rd__u32(&r);
		t->funcs[i].end = rd__u32(&r);
		t->funcs[i].ok = rd__u32(&r);
		if (t->funcs[i].end <= t->funcs[i].start || t->funcs[i].ok > 1 ||
		    (i && t->funcs[i].start < t->funcs[i - 1].end))
			goto fail;
	}
	for (uint32_t i = 0; i < t->nr_calls; i++) {
		t->calls[i].ret = rd__u32(&r);
		t->calls[i].target = rd__u32(&r);
		if (i && t->calls[i].ret <= t->calls[i - 1].ret)
			goto fail;
	}
	idlen = rd__u32(&r);
	if (idlen != len - need)
		goto fail;
	p = rd__bytes(&r, idlen);
	if (!p || r.bad)
		goto fail;
	if (idlen) {
		for (uint32_t i = 0; i < idlen; i++)
			if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
				goto fail;
		err = -ENOMEM;
		t->build_id = strndup((const char *)p, idlen);
		if (!t->build_id)
			goto fail;
		err = -EBADMSG;
	}
	err = -ENOMEM;
	if (!utab__charge(t))
		goto fail;
	*out = t;
	return 0;
fail:
	utab__free(t);
	return err;
}

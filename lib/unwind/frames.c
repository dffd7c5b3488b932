// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * frames: where in a file a frame-pointer walk can be trusted, read from its CFI once.
 *
 * A walk goes from a return address to the frame record at rbp. That is the record of the
 * function the return address is in only where that function keeps one at that address (its
 * CFA is rbp + 16): elsewhere rbp is still its caller's, or any value, and the walk skips
 * frames or reads garbage while it seems to end well. Each row of each FDE's CFA table is
 * judged (cfi__rows), and the file's code becomes a few spans of one kind each.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base/bsearch.h"
#include "base/grow.h"
#include "unwind/frames.h"
#include "dso/x86.h"

/* Code between FDEs shorter than this is alignment padding: it takes the kind before it. */
#define PAD		64
/* Rows of one FDE kept while it is judged; an FDE with more is judged by its first ones. */
#define MAX_ROWS	4096

struct rows {
	struct frame_row r[MAX_ROWS];
	int nr;
	bool record;		/* some row keeps a frame record */
	bool calling;		/* some row is not CFA = rsp + 8 */
	bool outermost;		/* some row is a thread's first frame */
	bool full;
};

static void on_row(void *arg, uint64_t start, uint64_t end, enum cfi_frame kind,
		   int32_t sp_off)
{
	struct rows *rows = arg;

	if (kind == CFI_FRAME_RECORD)
		rows->record = true;
	if (kind != CFI_FRAME_SP8)
		rows->calling = true;
	if (kind == CFI_FRAME_OUTERMOST)
		rows->outermost = true;
	if (rows->nr == MAX_ROWS) {
		rows->full = true;
		return;
	}
	rows->r[rows->nr].start = start;
	rows->r[rows->nr].end = end;
	rows->r[rows->nr].kind = kind;
	rows->r[rows->nr].sp_off = sp_off;
	rows->nr++;
}

bool frames__no_call(const unsigned char *p, size_t n)
{
	struct x86_insn in;

	while (n) {
		size_t len = x86__decode(p, n, &in);

		/* (A system call or ud2 is no prologue's either.) */
		if (!len || x86__is_call(&in) ||
		    (!in.vex && in.map == X86_MAP_0F && (in.op == 0x05 || in.op == 0x0b)))
			return false;
		p += len;
		n -= len;
	}
	return true;
}

int frames__append(struct frame_spans *s, uint64_t start, uint64_t end, uint8_t kind)
{
	struct frame_span *last = s->nr ? &s->v[s->nr - 1] : NULL;

	if (last && start < last->end)
		start = last->end;		/* overlapping FDEs: the first one says */
	if (end <= start)
		return 0;
	if (last && start - last->end < PAD) {
		last->end = start;
	} else if (last) {
		int err = frames__append(s, last->end, start, FRAME_NOREC);

		if (err)
			return err;
	}
	last = s->nr ? &s->v[s->nr - 1] : NULL;
	if (last && last->kind == kind && last->end == start) {
		last->end = end;
		return 0;
	}
	if (s->nr == FRAMES_MAX_SPANS)
		return -E2BIG;
	if (array_grow(&s->v, &s->cap, sizeof(*s->v), s->nr))
		return -ENOMEM;
	s->v[s->nr++] = (struct frame_span){ start, end, kind };
	return 0;
}

/* The kind of row I of ROWS, the rows of one FDE of M. */
static enum frame_kind row_kind(const struct cfi_mem *m, const struct rows *rows, int i)
{
	const unsigned char *code;
	uint64_t start = rows->r[i].start, len = rows->r[i].end - start;

	switch (rows->r[i].kind) {
	case CFI_FRAME_RECORD:
		return FRAME_TRUSTED;
	case CFI_FRAME_SP8:
		/* rsp is not 16-byte aligned here: no call (of the ABI) returns here, and a leaf's
		 * return address is the word at sp. */
		return FRAME_TRUSTED;
	case CFI_FRAME_SP16:
		/* A prologue or an epilogue (or a leaf that pushed one register): no return
		 * address is here when no call is, and a leaf here is fixed up from the words
		 * at sp whatever the span's kind. */
		code = cfi_mem__ptr(m, start, len);
		return code && frames__no_call(code, len) ? FRAME_TRUSTED : FRAME_THIN;
	case CFI_FRAME_OUTERMOST:
		return FRAME_BOTTOM;
	case CFI_FRAME_SPN:
	case CFI_FRAME_OTHER:
		break;
	}
	return FRAME_NOREC;
}

/* Run the rows of the FDE at FDE into ROWS, with what they say of the function. Returns
 * cfi__rows's result. */
static int fde_rows(const struct cfi_mem *m, uint64_t fde, struct rows *rows, uint64_t *start,
		    uint64_t *end)
{
	rows->nr = 0;
	rows->record = rows->calling = rows->outermost = rows->full = false;
	return cfi__rows(m, fde, on_row, rows, start, end);
}

int frames__judge(const struct cfi_mem *m, const struct fde_table *t, uint32_t sample,
		  struct frame_spans *out)
{
	struct rows *rows = malloc(sizeof(*rows));
	uint32_t count = t->count, n = count < sample ? count : sample;

	out->nr_calling = out->nr_record = 0;
	if (!rows)
		return -ENOMEM;
	for (uint32_t k = 0; k < n; k++) {
		uint64_t start, fde, fstart, fend;
		uint32_t i = (uint32_t)((uint64_t)k * count / n);

		if (fde_table__entry(t, i, &start, &fde) || fde_rows(m, fde, rows, &fstart, &fend))
			continue;
		out->nr_calling += rows->calling && !rows->outermost;
		out->nr_record += rows->record;
	}
	free(rows);
	return 0;
}

int frames__bottoms(const struct cfi_mem *m, const struct fde_table *t, struct frame_spans *out)
{
	struct rows *rows = malloc(sizeof(*rows));
	int err = 0;

	if (!rows)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->count && !err; i++) {
		uint64_t start, fde, fstart, fend;

		if (fde_table__entry(t, i, &start, &fde))
			break;
		if (!cfi__may_end_stack(m, fde) || fde_rows(m, fde, rows, &fstart, &fend))
			continue;
		for (int r = 0; r < rows->nr && !err; r++)
			if (rows->r[r].kind == CFI_FRAME_OUTERMOST)
				err = frames__paint(out, rows->r[r].start, rows->r[r].end,
						    FRAME_BOTTOM);
	}
	free(rows);
	return err;
}

int frames__build(const struct cfi_mem *m, const struct fde_table *t, struct frame_spans *out)
{
	struct rows *rows = malloc(sizeof(*rows));
	int err = 0;

	*out = (struct frame_spans){ 0 };
	if (!rows)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->count && !err; i++) {
		uint64_t start, fde, fstart, fend;

		if (fde_table__entry(t, i, &start, &fde))
			break;
		if (fde_rows(m, fde, rows, &fstart, &fend)) {
			/* Malformed or not for us: nothing said of this function can be
			 * trusted. Its extent is the table's. */
			uint64_t next, nfde;

			if (fde_table__entry(t, i + 1, &next, &nfde))
				next = start + 1;
			err = frames__append(out, start, next, FRAME_NOREC);
			continue;
		}
		out->nr_calling += rows->calling && !rows->outermost;
		out->nr_record += rows->record;
		for (int r = 0; r < rows->nr && !err; r++)
			err = frames__append(out, rows->r[r].start, rows->r[r].end, row_kind(m, rows, r));
		if (!err && rows->full && rows->nr)
			err = frames__append(out, rows->r[rows->nr - 1].end, fend, FRAME_NOREC);
	}
	free(rows);
	if (err) {
		frames__free(out);
		return err;
	}
	return 0;
}

void frames__free(struct frame_spans *s)
{
	free(s->v);
	*s = (struct frame_spans){ 0 };
}

enum frame_kind frames__kind(const struct frame_spans *s, uint64_t vaddr)
{
	size_t lo = BSEARCH_PREFIX(s->nr, mid, s->v[mid].start <= vaddr);

	if (!lo || vaddr >= s->v[lo - 1].end)
		return FRAME_NONE;
	return s->v[lo - 1].kind;
}

/* --- composing and reducing -------------------------------------------------------------- */

/* Room for N more spans in S. Returns 0 or -ENOMEM. */
int frames__reserve(struct frame_spans *s, size_t n)
{
	if (!n)
		return 0;
	return array_grow(&s->v, &s->cap, sizeof(*s->v), s->nr + n - 1);
}

int frames__paint(struct frame_spans *s, uint64_t start, uint64_t end, uint8_t kind)
{
	size_t first = 0, last, keep_tail;
	struct frame_span head, tail;
	bool has_head, has_tail;

	if (end <= start)
		return 0;
	if (frames__reserve(s, 2))
		return -ENOMEM;
	while (first < s->nr && s->v[first].end <= start)
		first++;
	for (last = first; last < s->nr && s->v[last].start < end; last++)
		;
	/* Spans [first, last) overlap [start, end): the part of the first before START and the
	 * part of the last after END stay. */
	has_head = first < last && s->v[first].start < start;
	has_tail = first < last && s->v[last - 1].end > end;
	head = has_head ? s->v[first] : (struct frame_span){ 0 };
	tail = has_tail ? s->v[last - 1] : (struct frame_span){ 0 };
	head.end = start;
	tail.start = end;
	keep_tail = s->nr - last;
	memmove(&s->v[first + has_head + 1 + has_tail], &s->v[last], keep_tail * sizeof(*s->v));
	if (has_head)
		s->v[first] = head;
	s->v[first + has_head] = (struct frame_span){ start, end, kind };
	if (has_tail)
		s->v[first + has_head + 1] = tail;
	s->nr = first + has_head + 1 + has_tail + keep_tail;
	return 0;
}

/* How much worse than trusted each kind is for a walk; BOTTOM spans never merge. */
static int badness(uint8_t kind)
{
	switch (kind) {
	case FRAME_TRUSTED: return 0;
	case FRAME_THIN: return 1;
	default: return 2;
	}
}

/* The kind of A and B as one span: the worse one (NONE and NOREC: NOREC, both stop a walk). */
static uint8_t merged_kind(uint8_t a, uint8_t b)
{
	if (badness(a) != badness(b))
		return badness(a) > badness(b) ? a : b;
	return a == b ? a : FRAME_NOREC;
}

/* Bytes whose kind gets worse when A and B become one span; UINT64_MAX for a BOTTOM. */
static uint64_t merge_cost(const struct frame_span *a, const struct frame_span *b)
{
	uint8_t k;
	uint64_t cost = 0;

	if (a->kind == FRAME_BOTTOM || b->kind == FRAME_BOTTOM)
		return UINT64_MAX;
	k = merged_kind(a->kind, b->kind);
	if (badness(a->kind) < badness(k))
		cost += a->end - a->start;
	if (badness(b->kind) < badness(k))
		cost += b->end - b->start;
	return cost;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

size_t frames__reduce(struct frame_span *v, size_t n, size_t max)
{
	uint64_t *costs;
	size_t out = 0;

	/* Neighbours of one kind first: they cost nothing. */
	for (size_t i = 1; i < n; i++) {
		if (v[i].kind == v[out].kind && v[i].start == v[out].end)
			v[out].end = v[i].end;
		else
			v[++out] = v[i];
	}
	if (n)
		n = out + 1;
	if (n <= max || n < 2)
		return n;
	costs = malloc((n - 1) * sizeof(*costs));
	if (!costs)
		return n;
	while (n > max) {
		size_t k = n - max, merges = 0;
		uint64_t thr;

		for (size_t i = 0; i + 1 < n; i++)
			costs[i] = merge_cost(&v[i], &v[i + 1]);
		qsort(costs, n - 1, sizeof(*costs), cmp_u64);
		thr = costs[k - 1 < n - 2 ? k - 1 : n - 2];
		if (thr == UINT64_MAX)
			break;			/* only BOTTOM spans are left to merge */
		out = 0;
		for (size_t i = 1; i < n; i++) {
			if (merges < k && merge_cost(&v[out], &v[i]) <= thr) {
				v[out].kind = merged_kind(v[out].kind, v[i].kind);
				v[out].end = v[i].end;
				merges++;
			} else {
				v[++out] = v[i];
			}
		}
		if (!merges)
			break;
		n = out + 1;
	}
	free(costs);
	return n;
}

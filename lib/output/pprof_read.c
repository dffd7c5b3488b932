// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * output/pprof_read: profile.proto read back into folded stacks (see pprof_read.h). Two
 * passes over the message: strings, functions, locations and mappings first (fields may come
 * in any order), then the samples.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "base/rd.h"
#include "base/grow.h"
#include "output/folded.h"
#include "output/pprof_read.h"

#define MAX_DEPTH	4096	/* locations of a sample kept (the rest, the outermost, dropped) */
#define MAX_LINES	256	/* lines of a location kept */

/* --- reading the wire format ------------------------------------------------------------- */

/* (The bounded reader is base/rd.h's; a varint is its rd__varint.) */

struct fld {
	uint32_t num;
	int wire;
	uint64_t v;		/* varint */
	struct rd sub;		/* length-delimited */
};

/* The next field of R into F; false at the end or on malformed input (R->bad). */
static bool rd_field(struct rd *r, struct fld *f)
{
	uint64_t key, n;

	if (r->bad || r->p >= r->end)
		return false;
	key = rd__varint(r);
	f->num = (uint32_t)(key >> 3);
	f->wire = (int)(key & 7);
	switch (f->wire) {
	case 0:
		f->v = rd__varint(r);
		break;
	case 1:
	case 5:
		rd__bytes(r, f->wire == 1 ? 8 : 4);
		break;
	case 2:
		n = rd__varint(r);
		if (!r->bad && n <= rd__left(r))
			f->sub = rd__init(rd__bytes(r, n), n);
		else
			r->bad = true;
		break;
	default:
		r->bad = true;
	}
	return !r->bad;
}

/* Each value of a repeated varint field F (packed or not) to FN; false when malformed. */
static bool each_varint(const struct fld *f, void (*fn)(void *ctx, uint64_t v), void *ctx)
{
	struct rd r = f->sub;

	if (f->wire == 0) {
		fn(ctx, f->v);
		return true;
	}
	if (f->wire != 2)
		return false;
	while (r.p < r.end && !r.bad)
		fn(ctx, rd__varint(&r));
	return !r.bad;
}

/* --- the tables ----------------------------------------------------------------------------- */

struct slice {
	const unsigned char *p;
	size_t len;
};

struct idval {
	uint64_t id;
	uint64_t a, b, c;	/* function: name; location: mapping, first line, lines;
				 * mapping: filename */
};

struct tables {
	struct slice *strs;
	size_t nr_strs, cap_strs;
	struct idval *funcs, *locs, *maps;
	size_t nr_funcs, nr_locs, nr_maps, cap_funcs, cap_locs, cap_maps;
	uint64_t *lines;		/* function ids of all locations' lines */
	size_t nr_lines, cap_lines;
	uint64_t kernel_str;		/* string index of "[kernel.kallsyms]", or 0 */
	uint64_t process_str;		/* ... of "process", or 0 */
	uint64_t event_str, cgroup_str;	/* ... of "event", "cgroup" (profile's labels), or 0 */
	uint64_t unit;			/* ... of the first sample type's unit, or 0 */
	uint64_t type;			/* ... of its type, or 0 */
	bool have_unit;
	bool ns;			/* that unit is nanoseconds: values are written in
					 * microseconds, as profile's folded output has them */
	bool nomem;
};

/* Room for one more of *N elements of SIZE at *V (capacity *CAP). */
static bool grow(void **v, size_t *cap, size_t n, size_t size, bool *nomem)
{
	if (array_grow(v, cap, size, n)) {
		*nomem = true;
		return false;
	}
	return true;
}

static void add_idval(struct idval **v, size_t *n, size_t *cap, struct idval x, bool *nomem)
{
	if (grow((void **)v, cap, *n, sizeof(**v), nomem))
		(*v)[(*n)++] = x;
}

static bool read_location(struct tables *t, struct rd r)
{
	struct idval x = { .b = t->nr_lines };
	struct fld f, g;

	while (rd_field(&r, &f)) {
		if (f.num == 1 && f.wire == 0)
			x.id = f.v;
		else if (f.num == 2 && f.wire == 0)
			x.a = f.v;
		else if (f.num == 4 && f.wire == 2 && x.c < MAX_LINES) {
			uint64_t func = 0;

			while (rd_field(&f.sub, &g))
				if (g.num == 1 && g.wire == 0)
					func = g.v;
			if (f.sub.bad)
				return false;
			if (grow((void **)&t->lines, &t->cap_lines, t->nr_lines, sizeof(*t->lines),
				 &t->nomem)) {
				t->lines[t->nr_lines++] = func;
				x.c++;
			}
		}
	}
	add_idval(&t->locs, &t->nr_locs, &t->cap_locs, x, &t->nomem);
	return !r.bad;
}

/* Fields 1 (id) and N (a varint) of message R as an idval with A = that field. */
static bool read_pair(struct rd r, uint32_t n, struct idval *x)
{
	struct fld f;

	*x = (struct idval){ 0 };
	while (rd_field(&r, &f)) {
		if (f.num == 1 && f.wire == 0)
			x->id = f.v;
		else if (f.num == n && f.wire == 0)
			x->a = f.v;
	}
	return !r.bad;
}

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = ((const struct idval *)a)->id, y = ((const struct idval *)b)->id;

	return x < y ? -1 : x > y;
}

static const struct idval *find_id(const struct idval *v, size_t n, uint64_t id)
{
	struct idval key = { .id = id };

	return n ? bsearch(&key, v, n, sizeof(*v), cmp_id) : NULL;
}

static bool str_is(const struct tables *t, uint64_t i, const char *s)
{
	size_t n = strlen(s);

	return i < t->nr_strs && t->strs[i].len == n && !memcmp(t->strs[i].p, s, n);
}

/* Pass one: the tables. */
static bool read_tables(struct tables *t, struct rd r)
{
	struct fld f;
	struct idval x;

	while (rd_field(&r, &f) && !t->nomem) {
		if (f.wire != 2)
			continue;
		switch (f.num) {
		case 1:					/* sample_type: unit */
			if (!read_pair(f.sub, 2, &x))
				return false;
			if (!t->have_unit) {
				t->unit = x.a;
				t->type = x.id;
				t->have_unit = true;
			}
			break;
		case 3:					/* mapping: filename */
			if (!read_pair(f.sub, 5, &x))
				return false;
			add_idval(&t->maps, &t->nr_maps, &t->cap_maps, x, &t->nomem);
			break;
		case 4:
			if (!read_location(t, f.sub))
				return false;
			break;
		case 5:					/* function: name */
			if (!read_pair(f.sub, 2, &x))
				return false;
			add_idval(&t->funcs, &t->nr_funcs, &t->cap_funcs, x, &t->nomem);
			break;
		case 6:
			if (grow((void **)&t->strs, &t->cap_strs, t->nr_strs, sizeof(*t->strs),
				 &t->nomem))
				t->strs[t->nr_strs++] = (struct slice){ f.sub.p,
									(size_t)(f.sub.end - f.sub.p) };
			break;
		}
	}
	if (r.bad)
		return false;
	if (t->nr_funcs)
		qsort(t->funcs, t->nr_funcs, sizeof(*t->funcs), cmp_id);
	if (t->nr_locs)
		qsort(t->locs, t->nr_locs, sizeof(*t->locs), cmp_id);
	if (t->nr_maps)
		qsort(t->maps, t->nr_maps, sizeof(*t->maps), cmp_id);
	for (size_t i = 0; i < t->nr_strs; i++) {
		if (str_is(t, i, "[kernel.kallsyms]"))
			t->kernel_str = i;
		if (str_is(t, i, "process"))
			t->process_str = i;
		if (str_is(t, i, "event"))
			t->event_str = i;
		if (str_is(t, i, "cgroup"))
			t->cgroup_str = i;
	}
	t->ns = t->have_unit && str_is(t, t->unit, "nanoseconds");
	return true;
}

/* --- pass two: the samples --------------------------------------------------------------- */

struct sample {
	uint64_t locs[MAX_DEPTH];
	size_t nr_locs;
	uint64_t value, nonzero;
	bool has_value;
	uint64_t process;	/* string index of the "process" label's value, 0: none */
	uint64_t event, cgroup;	/* ... of "event" and "cgroup" (root frames, as profile's
				 * folded output has them) */
};

static void push_loc(void *ctx, uint64_t v)
{
	struct sample *s = ctx;

	if (s->nr_locs < MAX_DEPTH)
		s->locs[s->nr_locs++] = v;
}

/* The first value, and the first that is not 0 (in a profile of several events, profile
 * -e a,b, a sample's own event's: the only one set). */
static void first_value(void *ctx, uint64_t v)
{
	struct sample *s = ctx;

	if (!s->has_value) {
		s->value = v;
		s->has_value = true;
	}
	if (!s->nonzero)
		s->nonzero = v;
}

/* Append string I of T (or "[unknown]") to the stack in *BUF with SUFFIX. */
static int push_str(const struct tables *t, uint64_t i, const char *suffix, char **buf,
		    size_t *len, size_t *cap)
{
	char name[4096];
	size_t n;

	if (!i || i >= t->nr_strs)
		return folded__push_frame(buf, len, cap, "[unknown]", suffix);
	n = t->strs[i].len < sizeof(name) - 1 ? t->strs[i].len : sizeof(name) - 1;
	memcpy(name, t->strs[i].p, n);
	name[n] = '\0';
	return folded__push_frame(buf, len, cap, name, suffix);
}

static int add_sample(const struct tables *t, const struct sample *s, struct folded *f,
		      char **buf, size_t *cap)
{
	size_t len = 0;
	int err = 0;

	if (s->event)
		err = push_str(t, s->event, NULL, buf, &len, cap);
	if (!err && s->cgroup)
		err = push_str(t, s->cgroup, NULL, buf, &len, cap);
	if (!err && s->process)
		err = push_str(t, s->process, NULL, buf, &len, cap);
	for (size_t i = s->nr_locs; i-- > 0 && !err;) {
		const struct idval *loc = find_id(t->locs, t->nr_locs, s->locs[i]);
		const struct idval *map = loc ? find_id(t->maps, t->nr_maps, loc->a) : NULL;
		bool kernel = map && t->kernel_str && map->a == t->kernel_str;

		if (!loc || !loc->c) {
			err = folded__push_frame(buf, &len, cap, "[unknown]", kernel ? "_[k]" : NULL);
			continue;
		}
		/* Lines innermost first: the caller they were inlined into is the last. */
		for (uint64_t l = loc->c; l-- > 0 && !err;) {
			const struct idval *fn = find_id(t->funcs, t->nr_funcs,
							  t->lines[loc->b + l]);

			err = push_str(t, fn ? fn->a : 0,
				       kernel ? "_[k]" : l + 1 < loc->c ? "_[i]" : NULL,
				       buf, &len, cap);
		}
	}
	if (!err && *buf && (!t->ns || (s->value + 500) / 1000))
		err = folded__add(f, *buf, t->ns ? (s->value + 500) / 1000 : s->value);
	return err;
}

static int read_samples(const struct tables *t, struct rd r, struct folded *f)
{
	struct sample *s = malloc(sizeof(*s));
	char *buf = NULL;
	size_t cap = 0;
	struct fld g, h, l;
	int err = 0;

	if (!s)
		return -ENOMEM;
	while (!err && rd_field(&r, &g)) {
		if (g.num != 2 || g.wire != 2)
			continue;
		s->nr_locs = 0;
		s->has_value = false;
		s->process = s->event = s->cgroup = s->nonzero = 0;
		while (rd_field(&g.sub, &h)) {
			if (h.num == 1 && !each_varint(&h, push_loc, s))
				g.sub.bad = true;
			else if (h.num == 2 && !each_varint(&h, first_value, s))
				g.sub.bad = true;
			else if (h.num == 3 && h.wire == 2) {
				uint64_t key = 0, str = 0;

				while (rd_field(&h.sub, &l)) {
					if (l.num == 1 && l.wire == 0)
						key = l.v;
					if (l.num == 2 && l.wire == 0)
						str = l.v;
				}
				if (key && key == t->process_str)
					s->process = str;
				else if (key && key == t->event_str)
					s->event = str;
				else if (key && key == t->cgroup_str)
					s->cgroup = str;
			}
		}
		if (s->event)
			s->value = s->nonzero;
		if (g.sub.bad)
			err = -EINVAL;
		else if (s->has_value && s->value)
			err = add_sample(t, s, f, &buf, &cap);
	}
	if (!err && r.bad)
		err = -EINVAL;
	free(buf);
	free(s);
	return err;
}

/* --- the file -------------------------------------------------------------------------------- */

bool pprof__is_gzip(const unsigned char *data, size_t len)
{
	return len >= 2 && data[0] == 0x1f && data[1] == 0x8b;
}

/* Inflate the gzip stream DATA into *OUT (malloc'd), at most PPROF_READ_MAX bytes. */
static int gunzip(const unsigned char *data, size_t len, unsigned char **out, size_t *olen)
{
	z_stream z = { 0 };
	size_t cap = len * 4 + 4096, n = 0;
	unsigned char *buf = NULL, *p;
	int zr = Z_OK, err = 0;

	if (len > UINT32_MAX || inflateInit2(&z, 15 + 32) != Z_OK)
		return -EINVAL;
	z.next_in = (unsigned char *)data;
	z.avail_in = (uInt)len;
	while (zr != Z_STREAM_END) {
		if (n == cap || !buf) {
			cap = buf ? 2 * cap : cap;
			if (cap > PPROF_READ_MAX)
				cap = PPROF_READ_MAX;
			if (buf && n == cap) {
				err = -E2BIG;
				break;
			}
			p = realloc(buf, cap);
			if (!p) {
				err = -ENOMEM;
				break;
			}
			buf = p;
		}
		z.next_out = buf + n;
		z.avail_out = (uInt)(cap - n);
		zr = inflate(&z, Z_NO_FLUSH);
		n = cap - z.avail_out;
		if (zr != Z_OK && zr != Z_STREAM_END) {
			err = zr == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
			break;
		}
		if (zr == Z_OK && !z.avail_in && z.avail_out) {
			err = -EINVAL;		/* cut short */
			break;
		}
	}
	inflateEnd(&z);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*olen = n;
	return 0;
}

static void set_err(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errsz, fmt, ap);
	va_end(ap);
}

/* String I of T into OUT (SZ bytes, cut there; "" when there is none). */
static void str_copy(const struct tables *t, uint64_t i, char *out, size_t sz)
{
	size_t n = i < t->nr_strs ? t->strs[i].len : 0;

	if (n >= sz)
		n = sz - 1;
	if (n)
		memcpy(out, t->strs[i].p, n);
	out[n] = '\0';
}

int pprof__read(const unsigned char *data, size_t len, struct folded *f, char *err,
		size_t errsz, struct pprof_info *info)
{
	unsigned char *raw = NULL;
	struct tables t = { 0 };
	struct rd r;
	int e = 0;

	if (pprof__is_gzip(data, len)) {
		e = gunzip(data, len, &raw, &len);
		if (e) {
			set_err(err, errsz, e == -E2BIG ? "more than %u MiB once decompressed" :
				"not a valid gzip stream", PPROF_READ_MAX >> 20);
			return e;
		}
		data = raw;
	}
	r = rd__init(data, len);
	if (!read_tables(&t, r)) {
		e = t.nomem ? -ENOMEM : -EINVAL;
		set_err(err, errsz, "%s", t.nomem ? "out of memory" :
			"not a pprof profile (malformed profile.proto)");
	} else {
		e = read_samples(&t, r, f);
		if (info) {
			char type[32], unit[32];

			info->process = t.process_str != 0;
			str_copy(&t, t.type, type, sizeof(type));
			str_copy(&t, t.unit, unit, sizeof(unit));
			snprintf(info->type, sizeof(info->type), "%s%s%s", type,
				 t.have_unit ? "/" : "", unit);
		}
		if (e)
			set_err(err, errsz, "%s", e == -ENOMEM ? "out of memory" :
				"not a pprof profile (malformed sample)");
	}
	free(t.strs);
	free(t.funcs);
	free(t.locs);
	free(t.maps);
	free(t.lines);
	free(raw);
	return e;
}

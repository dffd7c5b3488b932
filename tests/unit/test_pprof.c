// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * pprof: a small model encoded as profile.proto and read back field by field with a decoder
 * written here from the wire format: 1-based ids, "" first in the string table, the inline
 * chain innermost first as a location's lines, the truncated mark, the two sample values.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output/folded.h"
#include "output/pprof.h"
#include "output/pprof_read.h"
#include "profile/profile.h"
#include "suites.h"

/* --- a decoder of what the tests need ------------------------------------------------------ */

struct field {
	uint32_t num;
	int wire;
	uint64_t v;			/* varint */
	const unsigned char *p;		/* length-delimited */
	size_t len;
};

static uint64_t varint(const unsigned char **p, const unsigned char *end)
{
	uint64_t v = 0;

	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		unsigned char c = *(*p)++;

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			break;
	}
	return v;
}

/* The next field of [*P, END) into F; 0 at the end. */
static int next_field(const unsigned char **p, const unsigned char *end, struct field *f)
{
	uint64_t key;

	if (*p >= end)
		return 0;
	key = varint(p, end);
	f->num = (uint32_t)(key >> 3);
	f->wire = (int)(key & 7);
	if (f->wire == 0) {
		f->v = varint(p, end);
	} else {
		f->len = varint(p, end);
		f->p = *p;
		*p += f->len;
	}
	return 1;
}

struct decoded {
	char *strings[64];
	int nr_strings;
	int nr_samples, nr_locations, nr_mappings, nr_functions;
	uint64_t values[8][2];		/* per sample */
	uint64_t locs[8][8];		/* per sample, location ids */
	int nr_locs[8];
	uint64_t lines[16][4];		/* per location id: function ids */
	int nr_lines[16];
	uint64_t func_name[16];		/* per function id: string index */
	uint64_t period;
};

static void decode(const unsigned char *buf, size_t len, struct decoded *d)
{
	const unsigned char *p = buf, *end = buf + len;
	struct field f, g, h;

	memset(d, 0, sizeof(*d));
	while (next_field(&p, end, &f)) {
		const unsigned char *q = f.p, *qe = f.p + f.len;

		switch (f.num) {
		case 2: {			/* sample */
			int s = d->nr_samples++;

			while (s < 8 && next_field(&q, qe, &g)) {
				const unsigned char *r = g.p, *re = g.p + g.len;

				if (g.num == 1)
					while (r < re && d->nr_locs[s] < 8)
						d->locs[s][d->nr_locs[s]++] = varint(&r, re);
				if (g.num == 2)
					for (int i = 0; r < re && i < 2; i++)
						d->values[s][i] = varint(&r, re);
			}
			break;
		}
		case 3:
			d->nr_mappings++;
			break;
		case 4: {			/* location: id, lines */
			uint64_t id = 0;

			d->nr_locations++;
			while (next_field(&q, qe, &g)) {
				if (g.num == 1)
					id = g.v;
				if (g.num == 4 && id < 16) {
					const unsigned char *r = g.p;

					while (next_field(&r, g.p + g.len, &h))
						if (h.num == 1 && d->nr_lines[id] < 4)
							d->lines[id][d->nr_lines[id]++] = h.v;
				}
			}
			break;
		}
		case 5: {			/* function: id, name */
			uint64_t id = 0;

			d->nr_functions++;
			while (next_field(&q, qe, &g)) {
				if (g.num == 1)
					id = g.v;
				if (g.num == 2 && id < 16)
					d->func_name[id] = g.v;
			}
			break;
		}
		case 6:
			if (d->nr_strings < 64)
				d->strings[d->nr_strings++] = strndup((const char *)f.p, f.len);
			break;
		case 12:
			d->period = f.v;
			break;
		}
	}
}

static void free_decoded(struct decoded *d)
{
	for (int i = 0; i < d->nr_strings; i++)
		free(d->strings[i]);
}

/* --- the test ------------------------------------------------------------------------------ */

static void test_encode_model(void)
{
	struct profile *p = profile__new();
	struct profile_meta meta = { "samples", "count", "cpu", "nanoseconds", 10000000, 100 };
	struct profile_frame fr[3];
	struct profile_location loc = { .kind = PROFILE_LOC_USER, .frames = fr };
	struct profile_mapping m = { 0x1000, 0x2000, 0, 0, PROFILE_NONE };
	struct profile_labels lab = { .pid = 42, .tid = 0, .comm = 0, .thread_comm = PROFILE_NONE };
	uint32_t ids[2];
	unsigned char *buf;
	size_t len;
	struct decoded d;
	struct pprof_opts o = { 1, 2 };
	int outer, inl, main_, stack;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(profile__set_meta(p, &meta), 0);
	lab.comm = profile__intern(p, "app", 3);
	m.path = profile__intern(p, "/bin/app", 8);
	outer = profile__intern(p, "outer", 5);
	inl = profile__intern(p, "inner", 5);
	main_ = profile__intern(p, "main", 4);
	loc.mapping = profile__add_mapping(p, &m);
	/* A location of outer with inner inlined into it, and a caller main. */
	fr[0] = (struct profile_frame){ .name = outer, .kind = PROFILE_FRAME_USER };
	fr[1] = (struct profile_frame){ .name = inl, .kind = PROFILE_FRAME_INLINE };
	loc.address = 0x1100;
	loc.nr_frames = 2;
	ids[0] = profile__add_location(p, &loc);
	fr[0] = (struct profile_frame){ .name = main_, .kind = PROFILE_FRAME_USER };
	loc.address = 0x1200;
	loc.nr_frames = 1;
	ids[1] = profile__add_location(p, &loc);
	stack = profile__add_stack(p, ids, 2);
	CU_ASSERT(profile__add_sample(p, stack, 7, &lab) >= 0);
	lab.truncated = true;
	CU_ASSERT(profile__add_sample(p, stack, 3, &lab) >= 0);

	CU_ASSERT_EQUAL_FATAL(pprof__encode(p, &o, &buf, &len), 0);
	decode(buf, len, &d);
	CU_ASSERT_STRING_EQUAL(d.strings[0], "");
	CU_ASSERT_EQUAL(d.nr_samples, 2);
	CU_ASSERT_EQUAL(d.nr_mappings, 1);
	CU_ASSERT_EQUAL(d.nr_locations, 3);		/* two, and "[truncated]" */
	CU_ASSERT_EQUAL(d.period, 10000000);
	/* Values: the count, and the count times the period. */
	CU_ASSERT(d.values[0][0] == 7 && d.values[0][1] == 70000000);
	CU_ASSERT(d.values[1][0] == 3 && d.values[1][1] == 30000000);
	/* Leaf first, ids 1-based; the truncated sample ends in the extra location. */
	CU_ASSERT(d.nr_locs[0] == 2 && d.locs[0][0] == 1 && d.locs[0][1] == 2);
	CU_ASSERT(d.nr_locs[1] == 3 && d.locs[1][2] == 3);
	/* The inline chain innermost first: inner, then outer. */
	CU_ASSERT_EQUAL_FATAL(d.nr_lines[1], 2);
	CU_ASSERT_STRING_EQUAL(d.strings[d.func_name[d.lines[1][0]]], "inner");
	CU_ASSERT_STRING_EQUAL(d.strings[d.func_name[d.lines[1][1]]], "outer");
	CU_ASSERT_STRING_EQUAL(d.strings[d.func_name[d.lines[3][0]]], "[truncated]");
	free_decoded(&d);
	free(buf);
	profile__free(p);
}

/* Each stack of F as "STACK COUNT\n", sorted, in one string (the caller frees it). */
static char *folded_text(const struct folded *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (out) {
		folded__write(f, out);
		fclose(out);
	}
	return buf;
}

/* Written as pprof and read back, a model folds as it does directly (the writer's truncated
 * location included); gzip'd and raw alike; malformed input is refused with a sentence. */
static void test_read_back(void)
{
	struct profile *p = profile__new();
	struct profile_frame fr[2];
	struct profile_location loc = { .kind = PROFILE_LOC_USER, .mapping = PROFILE_NONE,
					.frames = fr };
	struct profile_labels lab = { .pid = 1, .thread_comm = PROFILE_NONE };
	struct pprof_opts o = { 0 };
	struct folded *direct = folded__new(), *back = folded__new(), *raw = folded__new();
	uint32_t ids[3];
	unsigned char *buf, *gz = NULL;
	size_t len, gzlen = 0;
	char err[128], *a, *b, *c;
	struct pprof_info info = { 0 };
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	lab.comm = profile__intern(p, "app", 3);
	fr[0] = (struct profile_frame){ .name = profile__intern(p, "outer", 5), .kind = PROFILE_FRAME_USER };
	fr[1] = (struct profile_frame){ .name = profile__intern(p, "inner", 5), .kind = PROFILE_FRAME_INLINE };
	loc.address = 0x10;
	loc.nr_frames = 2;
	ids[0] = profile__add_location(p, &loc);
	fr[0] = (struct profile_frame){ .name = profile__intern(p, "main", 4), .kind = PROFILE_FRAME_USER };
	loc.address = 0x20;
	loc.nr_frames = 1;
	ids[1] = profile__add_location(p, &loc);
	fr[0] = (struct profile_frame){ .name = profile__intern(p, "vfs_read", 8), .kind = PROFILE_FRAME_KERNEL };
	loc.kind = PROFILE_LOC_KERNEL;
	loc.address = 0xffffffff81000000;
	ids[2] = profile__add_location(p, &loc);
	CU_ASSERT(profile__add_sample(p, profile__add_stack(p, ids + 1, 1), 5, &lab) >= 0);
	CU_ASSERT(profile__add_sample(p, profile__add_stack(p, ids, 2), 2, &lab) >= 0);
	lab.truncated = true;
	CU_ASSERT(profile__add_sample(p, profile__add_stack(p, (uint32_t[]){ ids[2], ids[0],
									  ids[1] }, 3), 4, &lab) >= 0);
	CU_ASSERT_EQUAL_FATAL(folded__add_profile(direct, p, 0), 0);
	CU_ASSERT_EQUAL_FATAL(pprof__encode(p, &o, &buf, &len), 0);
	CU_ASSERT_EQUAL(pprof__read(buf, len, raw, err, sizeof(err), NULL), 0);
	f = open_memstream((char **)&gz, &gzlen);
	CU_ASSERT_EQUAL(pprof__write(p, &o, f), 0);
	fclose(f);
	CU_ASSERT_TRUE(pprof__is_gzip(gz, gzlen));
	CU_ASSERT_EQUAL(pprof__read(gz, gzlen, back, err, sizeof(err), &info), 0);
	CU_ASSERT_TRUE(info.process);	/* our stacks begin with the process */
	CU_ASSERT_STRING_EQUAL(info.type, "samples/count");
	a = folded_text(direct);
	b = folded_text(back);
	c = folded_text(raw);
	CU_ASSERT_STRING_EQUAL(a, b);
	CU_ASSERT_STRING_EQUAL(a, c);
	CU_ASSERT_PTR_NOT_NULL(strstr(a, "app;[truncated];main;outer;inner_[i];vfs_read_[k] 4"));
	/* Cut short, and not a profile at all. */
	CU_ASSERT_EQUAL(pprof__read(gz, gzlen / 2, raw, err, sizeof(err), NULL), -EINVAL);
	CU_ASSERT_EQUAL(pprof__read((const unsigned char *)"\x0a\xff", 2, raw, err,
				    sizeof(err), NULL), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a pprof profile"));
	free(a);
	free(b);
	free(c);
	free(buf);
	free(gz);
	folded__free(direct);
	folded__free(back);
	folded__free(raw);
	profile__free(p);
}

/* A wall profile (nanoseconds, off-CPU samples marked): encoded, the off-CPU samples lead
 * with an [off-cpu] location and carry off_cpu=true; read back, folded alike: microseconds,
 * [off-cpu] their leaf. */
static void test_wall(void)
{
	struct profile *p = profile__new();
	struct profile_frame fr = { .kind = PROFILE_FRAME_USER };
	struct profile_location loc = { .kind = PROFILE_LOC_USER, .mapping = PROFILE_NONE,
					.frames = &fr, .nr_frames = 1, .address = 0x10 };
	struct profile_labels lab = { .pid = 1, .thread_comm = PROFILE_NONE };
	struct profile_meta m = { .weight_type = "wall", .weight_unit = "nanoseconds" };
	struct pprof_opts o = { 0 };
	struct folded *direct = folded__new(), *back = folded__new();
	unsigned char *buf;
	size_t len;
	char err[128], *a, *b;
	int st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_FATAL(profile__set_meta(p, &m) == 0);
	lab.comm = profile__intern(p, "app", 3);
	fr.name = profile__intern(p, "main", 4);
	st = profile__add_stack(p, (uint32_t[]){ (uint32_t)profile__add_location(p, &loc) }, 1);
	CU_ASSERT(profile__add_sample(p, st, 3000000, &lab) >= 0);
	lab.off_cpu = true;
	CU_ASSERT(profile__add_sample(p, st, 5000000, &lab) >= 0);
	CU_ASSERT_EQUAL_FATAL(folded__add_profile(direct, p, 0), 0);
	CU_ASSERT_EQUAL_FATAL(pprof__encode(p, &o, &buf, &len), 0);
	CU_ASSERT_PTR_NOT_NULL(memmem(buf, len, "[off-cpu]", 9));
	CU_ASSERT_PTR_NOT_NULL(memmem(buf, len, "off_cpu", 7));
	CU_ASSERT_PTR_NOT_NULL(memmem(buf, len, "nanoseconds", 11));
	CU_ASSERT_EQUAL(pprof__read(buf, len, back, err, sizeof(err), NULL), 0);
	a = folded_text(direct);
	b = folded_text(back);
	CU_ASSERT_STRING_EQUAL(a, "app;main 3000\napp;main;[off-cpu] 5000\n");
	CU_ASSERT_STRING_EQUAL(a, b);
	free(a);
	free(b);
	free(buf);
	folded__free(direct);
	folded__free(back);
	profile__free(p);
}

/* Several events: a sample type per event, in the order their names were interned, each
 * sample's weight in its own event's value (the others 0), the first event the default;
 * read back, folded alike: each under its event's name, the cgroup after it. */
static void test_events(void)
{
	struct profile *p = profile__new();
	struct profile_frame fr = { .kind = PROFILE_FRAME_USER };
	struct profile_location loc = { .kind = PROFILE_LOC_USER, .mapping = PROFILE_NONE,
					.frames = &fr, .nr_frames = 1, .address = 0x10 };
	struct profile_labels lab = { .pid = 1, .thread_comm = PROFILE_NONE };
	struct profile_meta m = { .weight_type = "events" };
	struct pprof_opts o = { 0 };
	struct folded *direct = folded__new(), *back = folded__new();
	struct decoded d;
	unsigned char *buf;
	size_t len;
	char err[128], *a, *b;
	int st, faults, cs;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_FATAL(profile__set_meta(p, &m) == 0);
	faults = profile__intern(p, "page-faults", 11);
	cs = profile__intern(p, "context-switches", 16);
	lab.comm = profile__intern(p, "app", 3);
	lab.cgroup = (uint32_t)profile__intern(p, "/web", 4) + 1;
	fr.name = profile__intern(p, "main", 4);
	st = profile__add_stack(p, (uint32_t[]){ (uint32_t)profile__add_location(p, &loc) }, 1);
	lab.event = (uint32_t)cs + 1;
	CU_ASSERT(profile__add_sample(p, st, 7, &lab) >= 0);
	lab.event = (uint32_t)faults + 1;
	CU_ASSERT(profile__add_sample(p, st, 300, &lab) >= 0);
	CU_ASSERT_EQUAL_FATAL(folded__add_profile(direct, p, 0), 0);
	CU_ASSERT_EQUAL_FATAL(pprof__encode(p, &o, &buf, &len), 0);
	decode(buf, len, &d);
	CU_ASSERT_EQUAL(d.nr_samples, 2);
	/* The context switch first (added first): [0, 7]; the faults [300, 0]. */
	CU_ASSERT(d.values[0][0] == 0 && d.values[0][1] == 7);
	CU_ASSERT(d.values[1][0] == 300 && d.values[1][1] == 0);
	CU_ASSERT_PTR_NOT_NULL(memmem(buf, len, "page-faults", 11));
	CU_ASSERT_EQUAL(pprof__read(buf, len, back, err, sizeof(err), NULL), 0);
	a = folded_text(direct);
	b = folded_text(back);
	CU_ASSERT_STRING_EQUAL(a, "context-switches;/web;app;main 7\npage-faults;/web;app;main 300\n");
	CU_ASSERT_STRING_EQUAL(a, b);
	free(a);
	free(b);
	free(buf);
	free_decoded(&d);
	folded__free(direct);
	folded__free(back);
	profile__free(p);
}

int register_pprof_suite(void)
{
	CU_pSuite s = CU_add_suite("pprof", NULL, NULL);

	if (!s || !CU_add_test(s, "a model encoded and read back", test_encode_model) ||
	    !CU_add_test(s, "folded alike through pprof", test_read_back) ||
	    !CU_add_test(s, "a wall profile: [off-cpu], microseconds read back", test_wall) ||
	    !CU_add_test(s, "several events: a sample type each", test_events))
		return -1;
	return 0;
}

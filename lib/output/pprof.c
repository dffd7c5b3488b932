// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * output/pprof: the model as profile.proto (see pprof.h). Field numbers from google/pprof's
 * proto/profile.proto; ids there are 1-based (0: none), string_table[0] is "".
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "base/grow.h"
#include "output/pprof.h"
#include "profile/profile.h"

/* --- protobuf encoding ------------------------------------------------------------------- */

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

struct pb {
	unsigned char *p;
	size_t len, cap;
	bool err;		/* out of memory or too large: everything after is dropped */
};

static void pb_reserve(struct pb *b, size_t n)
{
	if (b->err || b->len + n <= b->cap)
		return;
	/* At most 2 GiB. */
	if (b->len + n > ((size_t)2 << 30) || array_grow(&b->p, &b->cap, 1, b->len + n - 1))
		b->err = true;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	pb_reserve(b, 10);
	if (b->err)
		return;
	do {
		unsigned char c = v & 0x7f;

		v >>= 7;
		b->p[b->len++] = c | (v ? 0x80 : 0);
	} while (v);
}

static void pb_key(struct pb *b, uint32_t field, int wire)
{
	pb_varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

/* A varint field; proto3 leaves out zeros. */
static void pb_uint(struct pb *b, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	pb_key(b, field, WIRE_VARINT);
	pb_varint(b, v);
}

static void pb_bytes(struct pb *b, uint32_t field, const void *data, size_t n)
{
	pb_key(b, field, WIRE_LEN);
	pb_varint(b, n);
	pb_reserve(b, n);
	if (b->err)
		return;
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

/* Message SUB as field FIELD of B; SUB is emptied for the next one. */
static void pb_sub(struct pb *b, uint32_t field, struct pb *sub)
{
	if (sub->err)
		b->err = true;
	else
		pb_bytes(b, field, sub->p ? sub->p : (unsigned char *)"", sub->len);
	sub->len = 0;
	sub->err = false;
}

/* --- the message ------------------------------------------------------------------------- */

/* profile.proto's field numbers. */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
};

#define EVENTS_MAX	16	/* sample types of a profile of several events */

/* Strings the writer adds after the model's (index = model's + 1 for the model's): fixed
 * ones, then the meta's types and units. */
enum extra_str {
	S_PID, S_TID, S_PROCESS, S_THREAD, S_TRUNCATED, S_TRUE, S_TRUNCATED_FRAME, S_KERNEL,
	S_OFF_CPU, S_OFF_CPU_FRAME, S_CGROUP, S_EVENT, S_RUNTIME, S_PYTHON, S_RUBY, S_WEIGHT_TYPE, S_WEIGHT_UNIT, S_PERIOD_TYPE, S_PERIOD_UNIT, S__MAX,
};
static const char *const fixed_strs[S_WEIGHT_TYPE] = {
	"pid", "tid", "process", "thread", "truncated", "true", "[truncated]",
	"[kernel.kallsyms]", "off_cpu", "[off-cpu]", "cgroup", "event", "runtime", "python",
	"ruby",
};

struct writer {
	const struct profile *p;
	const char *extra[S__MAX];
	struct pb out, sub, sub2;
	uint32_t nr_strings;		/* the model's */
	uint32_t *func_of_name;		/* model string id -> function id (0: none yet) */
	uint32_t *file_of_name;		/* model string id -> the function's source file + 1 (0:
					 * none): the file of its first frame with a line */
	uint32_t nr_funcs;
	uint32_t kernel_mapping;	/* pprof id, 0 when there are no kernel locations */
	uint32_t truncated_loc;		/* pprof id of the "[truncated]" location */
	uint32_t off_cpu_loc;		/* ... of "[off-cpu]", the leaf of off-CPU samples in a
					 * profile of both (weight_type "wall"); 0: none */
	uint32_t events[EVENTS_MAX];	/* several events (labels.event): their names' string
					 * ids + 1, a sample type each, in this order */
	uint32_t nr_events;
};

static uint64_t str_model(uint32_t id)
{
	return id == PROFILE_NONE ? 0 : (uint64_t)id + 1;
}

static uint64_t str_extra(const struct writer *w, enum extra_str s)
{
	return (uint64_t)w->nr_strings + 1 + s;
}

/* A value type {type, unit} as field FIELD, strings given as indices. */
static void value_type(struct writer *w, uint32_t field, uint64_t type, uint64_t unit)
{
	pb_uint(&w->sub, 1, type);
	pb_uint(&w->sub, 2, unit);
	pb_sub(&w->out, field, &w->sub);
}

static void write_strings(struct writer *w)
{
	pb_bytes(&w->out, PROFILE_STRING_TABLE, "", 0);
	for (uint32_t i = 0; i < w->nr_strings; i++) {
		const char *s = profile__string(w->p, i);

		pb_bytes(&w->out, PROFILE_STRING_TABLE, s, strlen(s));
	}
	for (int i = 0; i < S__MAX; i++)
		pb_bytes(&w->out, PROFILE_STRING_TABLE, w->extra[i], strlen(w->extra[i]));
}

/* Whether PATH names a shared library ("x.so", "x.so.6") or a special mapping. */
static bool library_like(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return base[0] == '[' || strstr(base, ".so") != NULL;
}

/* The mapping pprof should show as the program (it takes the first one): of those that are
 * not libraries, the one whose code the most samples ended in; 0 when none is. */
static uint32_t main_mapping(const struct writer *w)
{
	size_t n = profile__nr_mappings(w->p), ns = profile__nr_samples(w->p);
	uint64_t *weight = calloc(n + 1, sizeof(*weight)), best = 0;
	uint32_t main = 0;

	for (uint32_t i = 0; weight && i < ns; i++) {
		const struct profile_sample *s = profile__sample(w->p, i);
		const uint32_t *locs;
		uint32_t nl;

		locs = profile__stack(w->p, s->stack, &nl);
		for (uint32_t l = 0; l < nl; l++) {
			struct profile_location loc;

			profile__location(w->p, locs[l], &loc);
			if (loc.mapping != PROFILE_NONE && loc.mapping < n) {
				weight[loc.mapping] += s->weight;
				break;
			}
		}
	}
	for (uint32_t i = 0; weight && i < n; i++)
		if (weight[i] > best &&
		    !library_like(profile__string(w->p, profile__mapping(w->p, i)->path))) {
			best = weight[i];
			main = i;
		}
	free(weight);
	return main;
}

static void write_mappings(struct writer *w, const bool *inlines, const bool *lines)
{
	size_t n = profile__nr_mappings(w->p), nl = profile__nr_locations(w->p);
	uint64_t kmin = UINT64_MAX, kmax = 0;
	uint32_t main = n ? main_mapping(w) : 0;

	/* Ids stay the model's + 1; only the order changes, the program first. */
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = k == 0 ? main : k <= main ? k - 1 : k;
		const struct profile_mapping *m = profile__mapping(w->p, i);

		pb_uint(&w->sub, 1, i + 1);
		pb_uint(&w->sub, 2, m->start);
		pb_uint(&w->sub, 3, m->end);
		pb_uint(&w->sub, 4, m->pgoff);
		pb_uint(&w->sub, 5, str_model(m->path));
		pb_uint(&w->sub, 6, str_model(m->build_id));
		pb_uint(&w->sub, 7, 1);			/* has_functions */
		pb_uint(&w->sub, 8, lines[i]);		/* has_filenames */
		pb_uint(&w->sub, 9, lines[i]);		/* has_line_numbers */
		pb_uint(&w->sub, 10, inlines[i]);	/* has_inline_frames */
		pb_sub(&w->out, PROFILE_MAPPING, &w->sub);
	}
	for (uint32_t i = 0; i < nl; i++) {
		struct profile_location loc;

		profile__location(w->p, i, &loc);
		if (loc.kind != PROFILE_LOC_KERNEL)
			continue;
		kmin = loc.address < kmin ? loc.address : kmin;
		kmax = loc.address > kmax ? loc.address : kmax;
	}
	if (kmin > kmax)
		return;
	w->kernel_mapping = (uint32_t)n + 1;
	pb_uint(&w->sub, 1, w->kernel_mapping);
	pb_uint(&w->sub, 2, kmin);
	pb_uint(&w->sub, 3, kmax + 1);
	pb_uint(&w->sub, 5, str_extra(w, S_KERNEL));
	pb_uint(&w->sub, 7, 1);
	pb_sub(&w->out, PROFILE_MAPPING, &w->sub);
}

/* The function id of the frame name NAME (a model string id), made at its first use. */
static uint64_t function_of(struct writer *w, uint32_t name)
{
	if (!w->func_of_name[name]) {
		w->func_of_name[name] = ++w->nr_funcs;
		pb_uint(&w->sub2, 1, w->nr_funcs);
		pb_uint(&w->sub2, 2, str_model(name));
		pb_uint(&w->sub2, 3, str_model(name));	/* system_name */
		if (w->file_of_name[name])
			pb_uint(&w->sub2, 4, w->file_of_name[name]);	/* filename */
		pb_sub(&w->out, PROFILE_FUNCTION, &w->sub2);
	}
	return w->func_of_name[name];
}

/* Line { function_id, line } of FUNC at source line LINE (0: unknown) as a field of the
 * location being built in w->sub. */
static void location_line(struct writer *w, uint64_t func, uint32_t line_no)
{
	struct pb line = { 0 };

	pb_uint(&line, 1, func);
	pb_uint(&line, 2, line_no);
	pb_sub(&w->sub, 4, &line);
	free(line.p);
}

/* Location ID of no mapping, one line: a function of its own named NAME ("[truncated]"). */
static void pseudo_location(struct writer *w, uint32_t id, enum extra_str name)
{
	pb_uint(&w->sub, 1, id);
	location_line(w, ++w->nr_funcs, 0);
	pb_sub(&w->out, PROFILE_LOCATION, &w->sub);
	pb_uint(&w->sub2, 1, w->nr_funcs);
	pb_uint(&w->sub2, 2, str_extra(w, name));
	pb_sub(&w->out, PROFILE_FUNCTION, &w->sub2);
}

static void write_locations(struct writer *w)
{
	size_t n = profile__nr_locations(w->p);

	for (uint32_t i = 0; i < n; i++) {
		struct profile_location loc;
		uint64_t funcs[64];
		uint32_t nf;

		profile__location(w->p, i, &loc);
		/* Functions first (they are messages of their own), then the location. */
		nf = loc.nr_frames < 64 ? loc.nr_frames : 64;
		for (uint32_t f = 0; f < nf; f++)
			funcs[f] = function_of(w, loc.frames[f].name);
		pb_uint(&w->sub, 1, i + 1);
		if (loc.mapping != PROFILE_NONE)
			pb_uint(&w->sub, 2, loc.mapping + 1);
		else if (loc.kind == PROFILE_LOC_KERNEL)
			pb_uint(&w->sub, 2, w->kernel_mapping);
		pb_uint(&w->sub, 3, loc.address);
		/* The model: outermost function first, then what was inlined into it; pprof:
		 * innermost first, the caller they were inlined into last. */
		for (uint32_t f = nf; f-- > 0;)
			location_line(w, funcs[f], loc.frames[f].line);
		pb_sub(&w->out, PROFILE_LOCATION, &w->sub);
	}
	w->truncated_loc = (uint32_t)n + 1;
	pseudo_location(w, w->truncated_loc, S_TRUNCATED_FRAME);
	if (!w->off_cpu_loc)
		return;
	w->off_cpu_loc = (uint32_t)n + 2;
	pseudo_location(w, w->off_cpu_loc, S_OFF_CPU_FRAME);
}

/* A label {key, str or num} as a field of the sample being built in w->sub. */
static void sample_label(struct writer *w, enum extra_str key, uint64_t str, uint64_t num)
{
	pb_uint(&w->sub2, 1, str_extra(w, key));
	pb_uint(&w->sub2, 2, str);
	pb_uint(&w->sub2, 3, num);
	pb_sub(&w->sub, 3, &w->sub2);
}

/* The events of a profile of several (labels.event): a sample type each, in the order of
 * their names' string ids (the model interns them in the order they were given). */
static void find_events(struct writer *w)
{
	size_t n = profile__nr_samples(w->p);

	for (uint32_t i = 0; i < n; i++) {
		uint32_t ev = profile__sample(w->p, i)->labels.event, k;

		for (k = 0; k < w->nr_events && w->events[k] != ev; k++)
			;
		if (!ev || k < w->nr_events || w->nr_events == EVENTS_MAX)
			continue;
		for (k = w->nr_events++; k > 0 && w->events[k - 1] > ev; k--)
			w->events[k] = w->events[k - 1];
		w->events[k] = ev;
	}
}

/* The interpreter (S_PYTHON, S_RUBY) whose function is a frame of the NL locations LOCS of
 * W's profile, or -1. */
static int runtime_of(const struct writer *w, const uint32_t *locs, uint32_t nl)
{
	for (uint32_t l = 0; l < nl; l++) {
		struct profile_location loc;

		profile__location(w->p, locs[l], &loc);
		for (uint32_t f = 0; f < loc.nr_frames; f++)
			if (loc.frames[f].kind == PROFILE_FRAME_PYTHON ||
			    loc.frames[f].kind == PROFILE_FRAME_RUBY)
				return loc.frames[f].kind == PROFILE_FRAME_PYTHON ? S_PYTHON : S_RUBY;
	}
	return -1;
}

static void write_samples(struct writer *w, uint64_t period)
{
	size_t n = profile__nr_samples(w->p);
	struct pb packed = { 0 };

	for (uint32_t i = 0; i < n; i++) {
		const struct profile_sample *s = profile__sample(w->p, i);
		const uint32_t *locs;
		uint32_t nl;
		int rt;

		locs = profile__stack(w->p, s->stack, &nl);
		if (s->labels.off_cpu && w->off_cpu_loc)
			pb_varint(&packed, w->off_cpu_loc);
		for (uint32_t l = 0; l < nl; l++)
			pb_varint(&packed, (uint64_t)locs[l] + 1);
		if (s->labels.truncated)
			pb_varint(&packed, w->truncated_loc);
		pb_sub(&w->sub, 1, &packed);
		/* Several events: a value per event, the sample's own in its event's. */
		for (uint32_t k = 0; k < w->nr_events; k++)
			pb_varint(&packed, w->events[k] == s->labels.event ? s->weight : 0);
		if (!w->nr_events)
			pb_varint(&packed, s->weight);
		if (period)
			pb_varint(&packed, s->weight * period);
		pb_sub(&w->sub, 2, &packed);
		sample_label(w, S_PID, 0, s->labels.pid);
		if (s->labels.tid)
			sample_label(w, S_TID, 0, s->labels.tid);
		if (s->labels.comm != PROFILE_NONE)
			sample_label(w, S_PROCESS, str_model(s->labels.comm), 0);
		if (s->labels.thread_comm != PROFILE_NONE)
			sample_label(w, S_THREAD, str_model(s->labels.thread_comm), 0);
		if (s->labels.truncated)
			sample_label(w, S_TRUNCATED, str_extra(w, S_TRUE), 0);
		if (s->labels.off_cpu)
			sample_label(w, S_OFF_CPU, str_extra(w, S_TRUE), 0);
		if (s->labels.cgroup)
			sample_label(w, S_CGROUP, str_model(s->labels.cgroup - 1), 0);
		if (s->labels.event)
			sample_label(w, S_EVENT, str_model(s->labels.event - 1), 0);
		/* The interpreter whose functions the stack holds (as the OpenTelemetry
		 * profiler's frame types say it). */
		if ((rt = runtime_of(w, locs, nl)) >= 0)
			sample_label(w, S_RUNTIME, str_extra(w, rt), 0);
		pb_sub(&w->out, PROFILE_SAMPLE, &w->sub);
	}
	free(packed.p);
}

int pprof__encode(const struct profile *p, const struct pprof_opts *o, unsigned char **buf,
		  size_t *len)
{
	const struct profile_meta *m = profile__meta(p);
	size_t nl = profile__nr_locations(p), nm = profile__nr_mappings(p);
	struct writer w = { .p = p, .nr_strings = (uint32_t)profile__nr_strings(p) };
	bool *inlines = calloc(nm + 1, sizeof(*inlines)), *lines = calloc(nm + 1, sizeof(*lines));
	uint64_t period = m->period_type && m->period ? m->period : 0;
	int err = 0;

	w.func_of_name = calloc(w.nr_strings + 1, sizeof(*w.func_of_name));
	w.file_of_name = calloc(w.nr_strings + 1, sizeof(*w.file_of_name));
	if (!w.func_of_name || !w.file_of_name || !inlines || !lines) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < nl; i++) {
		struct profile_location loc;

		profile__location(p, i, &loc);
		if (loc.mapping != PROFILE_NONE && loc.mapping < nm && loc.nr_frames > 1)
			inlines[loc.mapping] = true;
		for (uint32_t f = 0; f < loc.nr_frames; f++) {
			const struct profile_frame *fr = &loc.frames[f];

			if (!fr->line || fr->file >= w.nr_strings || fr->name >= w.nr_strings)
				continue;
			if (loc.mapping != PROFILE_NONE && loc.mapping < nm)
				lines[loc.mapping] = true;
			if (!w.file_of_name[fr->name])
				w.file_of_name[fr->name] = fr->file + 1;
		}
	}
	memcpy(w.extra, fixed_strs, sizeof(fixed_strs));
	/* Any non-zero: write_locations gives it its id. */
	w.off_cpu_loc = m->weight_type && !strcmp(m->weight_type, "wall");
	w.extra[S_WEIGHT_TYPE] = m->weight_type ? m->weight_type : "samples";
	w.extra[S_WEIGHT_UNIT] = m->weight_unit ? m->weight_unit : "count";
	w.extra[S_PERIOD_TYPE] = period ? m->period_type : "";
	w.extra[S_PERIOD_UNIT] = period && m->period_unit ? m->period_unit : "";
	find_events(&w);
	for (uint32_t k = 0; k < w.nr_events; k++)
		value_type(&w, PROFILE_SAMPLE_TYPE, str_model(w.events[k] - 1),
			   str_extra(&w, S_WEIGHT_UNIT));
	if (!w.nr_events)
		value_type(&w, PROFILE_SAMPLE_TYPE, str_extra(&w, S_WEIGHT_TYPE),
			   str_extra(&w, S_WEIGHT_UNIT));
	else
		pb_uint(&w.out, PROFILE_DEFAULT_SAMPLE_TYPE, str_model(w.events[0] - 1));
	if (period)
		value_type(&w, PROFILE_SAMPLE_TYPE, str_extra(&w, S_PERIOD_TYPE),
			   str_extra(&w, S_PERIOD_UNIT));
	write_mappings(&w, inlines, lines);
	write_locations(&w);
	write_samples(&w, period);
	write_strings(&w);
	pb_uint(&w.out, PROFILE_TIME_NANOS, (uint64_t)o->time_nanos);
	pb_uint(&w.out, PROFILE_DURATION_NANOS, (uint64_t)o->duration_nanos);
	if (period) {
		value_type(&w, PROFILE_PERIOD_TYPE, str_extra(&w, S_PERIOD_TYPE),
			   str_extra(&w, S_PERIOD_UNIT));
		pb_uint(&w.out, PROFILE_PERIOD, period);
	}
	if (w.out.err || w.sub.err || w.sub2.err)
		err = w.out.cap >= ((size_t)2 << 30) ? -E2BIG : -ENOMEM;
out:
	free(w.func_of_name);
	free(w.file_of_name);
	free(inlines);
	free(lines);
	free(w.sub.p);
	free(w.sub2.p);
	if (err) {
		free(w.out.p);
		return err;
	}
	*buf = w.out.p;
	*len = w.out.len;
	return 0;
}

int pprof__write(const struct profile *p, const struct pprof_opts *o, FILE *out)
{
	unsigned char *msg, chunk[16384];
	size_t len;
	z_stream z = { 0 };
	int err = pprof__encode(p, o, &msg, &len), zr;

	if (err)
		return err;
	/* windowBits 15 + 16: a gzip header and trailer, as .pb.gz files have. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(msg);
		return -ENOMEM;
	}
	z.next_in = msg;
	z.avail_in = (uInt)len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			err = -EINVAL;
			break;
		}
		if (fwrite(chunk, 1, sizeof(chunk) - z.avail_out, out) !=
		    sizeof(chunk) - z.avail_out) {
			err = -EIO;
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	free(msg);
	return err;
}

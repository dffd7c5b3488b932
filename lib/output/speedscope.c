// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * output/speedscope: the profile model's timeline as speedscope's JSON (see speedscope.h).
 * Weights are nanoseconds when the profile's samples stand for time (a clock's samples:
 * each its period; off-CPU and wall-clock profiles' weights are nanoseconds already), else
 * the samples' own weights (-e's events, unit "none"). In a wall-clock profile, a wait's
 * stack ends in an [off-cpu] frame, as folded output has it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/grow.h"
#include "base/htab.h"
#include "output/speedscope.h"
#include "profile/profile.h"

static const char *const kind_suffix[] = {
	[PROFILE_FRAME_USER] = "", [PROFILE_FRAME_KERNEL] = "_[k]",
	[PROFILE_FRAME_INLINE] = "_[i]", [PROFILE_FRAME_JIT] = "_[j]",
	[PROFILE_FRAME_PYTHON] = "", [PROFILE_FRAME_RUBY] = "",
};

/* A frame of the file: a profile frame's name, kind and line (as folded names it). */
struct ss_frame {
	uint32_t name, file, line;
	enum profile_frame_kind kind;
};

/* A thread's profile: its timed entries (indices into the timeline). */
struct ss_thread {
	uint32_t pid, tid;
	uint32_t comm, thread_comm;
	uint32_t *ents;
	size_t nr, cap;
};

struct ss {
	const struct profile *p;
	const struct profile_timed *tl;
	struct ss_frame *frames;
	size_t nr_frames, cap_frames;
	struct htab frame_index;
	struct ss_thread *threads;
	size_t nr_threads, cap_threads;
	struct htab thread_index;
	uint32_t *stack;		/* the frames of the stack being written */
	size_t nr_stack, cap_stack;
	bool mark_off;			/* a frame [off-cpu] on off-CPU samples' stacks */
	uint64_t gap_min;		/* ns without a sample that are drawn as such */
};

/* S written as a JSON string (with its quotes) to OUT. */
static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(out, "\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			fprintf(out, "\\u%04x", *c);
		else
			fputc(*c, out);
	}
	fputc('"', out);
}

static uint64_t frame_hash(const struct ss_frame *f)
{
	uint64_t h = hash_u64(HASH_SEED, (uint64_t)f->name << 32 | f->file);

	return hash_u64(h, (uint64_t)f->line << 8 | f->kind);
}

/* The index of frame F among the file's frames, added when new; -ENOMEM. */
static int64_t frame_id(struct ss *ss, const struct ss_frame *f)
{
	uint64_t h = frame_hash(f);
	uint32_t pos, id;

	for (id = htab__first(&ss->frame_index, h, &pos); id != HTAB_NONE;
	     id = htab__next(&ss->frame_index, h, &pos)) {
		const struct ss_frame *g = &ss->frames[id];

		if (g->name == f->name && g->file == f->file && g->line == f->line &&
		    g->kind == f->kind)
			return id;
	}
	if (array_grow(&ss->frames, &ss->cap_frames, sizeof(*ss->frames), ss->nr_frames) ||
	    htab__insert(&ss->frame_index, h, (uint32_t)ss->nr_frames))
		return -ENOMEM;
	ss->frames[ss->nr_frames] = *f;
	return (int64_t)ss->nr_frames++;
}

/* The thread of (PID, TID) (its names COMM, THREAD_COMM), added when new; NULL on ENOMEM. */
static struct ss_thread *thread_of(struct ss *ss, uint32_t pid, uint32_t tid, uint32_t comm,
				   uint32_t thread_comm)
{
	uint64_t h = hash_u64(HASH_SEED, (uint64_t)pid << 32 | tid);
	uint32_t pos, id;

	for (id = htab__first(&ss->thread_index, h, &pos); id != HTAB_NONE;
	     id = htab__next(&ss->thread_index, h, &pos))
		if (ss->threads[id].pid == pid && ss->threads[id].tid == tid)
			return &ss->threads[id];
	if (array_grow(&ss->threads, &ss->cap_threads, sizeof(*ss->threads), ss->nr_threads) ||
	    htab__insert(&ss->thread_index, h, (uint32_t)ss->nr_threads))
		return NULL;
	ss->threads[ss->nr_threads] = (struct ss_thread){ .pid = pid, .tid = tid, .comm = comm,
							  .thread_comm = thread_comm };
	return &ss->threads[ss->nr_threads++];
}

/* The frames of sample SAMPLE into ss->stack, root first ([truncated] at the root when its
 * user stack is cut). Returns 0 or -ENOMEM. */
static int stack_of(struct ss *ss, uint32_t sample)
{
	const struct profile_sample *s = profile__sample(ss->p, sample);
	const uint32_t *locs;
	uint32_t n;

	ss->nr_stack = 0;
	locs = profile__stack(ss->p, s->stack, &n);
	if (s->labels.truncated) {
		struct ss_frame f = { .name = PROFILE_NONE, .file = PROFILE_NONE };
		int64_t id = frame_id(ss, &f);

		if (id < 0 || array_grow(&ss->stack, &ss->cap_stack, sizeof(*ss->stack), 0))
			return -ENOMEM;
		ss->stack[ss->nr_stack++] = (uint32_t)id;
	}
	for (uint32_t i = n; i-- > 0;) {
		struct profile_location loc;

		profile__location(ss->p, locs[i], &loc);
		for (uint32_t j = 0; j < loc.nr_frames; j++) {
			const struct profile_frame *fr = &loc.frames[j];
			struct ss_frame f = { .name = fr->name, .kind = fr->kind,
					      .line = fr->line,
					      .file = fr->line ? fr->file : PROFILE_NONE };
			int64_t id = frame_id(ss, &f);

			if (id < 0 || array_grow(&ss->stack, &ss->cap_stack, sizeof(*ss->stack),
						 ss->nr_stack))
				return -ENOMEM;
			ss->stack[ss->nr_stack++] = (uint32_t)id;
		}
	}
	if (s->labels.off_cpu && ss->mark_off) {
		struct ss_frame f = { .name = PROFILE_NONE, .file = PROFILE_NONE, .line = 1 };
		int64_t id = frame_id(ss, &f);

		if (id < 0 || array_grow(&ss->stack, &ss->cap_stack, sizeof(*ss->stack),
					 ss->nr_stack))
			return -ENOMEM;
		ss->stack[ss->nr_stack++] = (uint32_t)id;
	}
	return 0;
}

/* qsort_r's order of timeline indices (TL: the timeline) by time. */
static int by_time(const void *a, const void *b, void *tl)
{
	const struct profile_timed *t = tl;
	uint64_t x = t[*(const uint32_t *)a].time, y = t[*(const uint32_t *)b].time;

	return x < y ? -1 : x > y;
}

static const char *name_or(const struct profile *p, uint32_t id, const char *none)
{
	return id == PROFILE_NONE ? none : profile__string(p, id);
}

/* Thread T's profile: its samples in time order from START, their weights (NS_PER: ns a
 * sample's weight stands for; 0: weights as they are, no gaps), to END. */
static int write_thread(struct ss *ss, struct ss_thread *t, FILE *out, uint64_t start,
			uint64_t end, uint64_t ns_per)
{
	const struct profile *p = ss->p;
	uint64_t at = start, sum = 0;
	char name[512];
	bool first = true;
	int err = 0;

	/* (Weights that are no time: the profile ends where they add up to.) */
	for (size_t i = 0; !ns_per && i < t->nr; i++)
		sum += ss->tl[t->ents[i]].weight;
	snprintf(name, sizeof(name), "%s (%u) / %s (%u)", name_or(p, t->comm, "[unknown]"),
		 t->pid, name_or(p, t->thread_comm, "[unknown]"), t->tid);
	fputs("{\"type\":\"sampled\",\"name\":", out);
	json_string(out, name);
	fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%llu,\"samples\":[",
		ns_per ? "nanoseconds" : "none",
		(unsigned long long)(ns_per ? end - start : sum));
	/* The weights follow the samples: written to a second pass over the same order. */
	for (int pass = 0; pass < 2 && !err; pass++) {
		at = start;
		first = true;
		if (pass)
			fputs("],\"weights\":[", out);
		for (size_t i = 0; i < t->nr && !err; i++) {
			const struct profile_timed *e = &ss->tl[t->ents[i]];
			uint64_t w = ns_per ? e->weight * ns_per : e->weight;

			/* Time the thread was not sampled: an empty stack, as long. */
			if (ns_per && e->time > at + ss->gap_min) {
				if (pass)
					fprintf(out, "%s%llu", first ? "" : ",",
						(unsigned long long)(e->time - at));
				else
					fprintf(out, "%s[]", first ? "" : ",");
				first = false;
			}
			if (pass) {
				fprintf(out, "%s%llu", first ? "" : ",", (unsigned long long)w);
			} else {
				err = stack_of(ss, e->sample);
				fprintf(out, "%s[", first ? "" : ",");
				for (size_t k = 0; k < ss->nr_stack; k++)
					fprintf(out, "%s%u", k ? "," : "", ss->stack[k]);
				fputc(']', out);
			}
			first = false;
			if (ns_per)
				at = (e->time > at ? e->time : at) + w;
		}
		if (ns_per && end > at) {
			if (pass)
				fprintf(out, "%s%llu", first ? "" : ",", (unsigned long long)(end - at));
			else
				fprintf(out, "%s[]", first ? "" : ",");
		}
	}
	fputs("]}", out);
	return err;
}

int speedscope__write(const struct profile *p, const struct speedscope_opts *o, FILE *out)
{
	const struct profile_meta *m = profile__meta(p);
	struct ss ss = { .p = p };
	uint64_t start = UINT64_MAX, end = 0, ns_per = 0;
	size_t n, best = 0;
	int err = 0;

	ss.tl = profile__timed(p, &n);
	/* A clock's samples stand for their period of time; time off the CPU is time. */
	if (m->weight_type && !strcmp(m->weight_type, "samples") && m->period_unit &&
	    !strcmp(m->period_unit, "nanoseconds"))
		ns_per = m->period;
	else if (m->weight_unit && !strcmp(m->weight_unit, "nanoseconds"))
		ns_per = 1;
	ss.mark_off = m->weight_type && !strcmp(m->weight_type, "wall");
	/* Half a sample's period; 1 ms where there is none (off-CPU time alone). */
	ss.gap_min = m->frequency ? 500000000ull / m->frequency : ns_per > 1 ? ns_per / 2 :
		     1000000;
	for (size_t i = 0; i < n && !err; i++) {
		const struct profile_timed *e = &ss.tl[i];
		const struct profile_sample *s = profile__sample(p, e->sample);
		struct ss_thread *t = thread_of(&ss, s->labels.pid, e->tid, s->labels.comm,
						e->thread_comm);

		if (!t || array_grow(&t->ents, &t->cap, sizeof(*t->ents), t->nr)) {
			err = -ENOMEM;
			break;
		}
		t->ents[t->nr++] = (uint32_t)i;
		if (e->time < start)
			start = e->time;
		if (e->time + (ns_per ? e->weight * ns_per : 0) > end)
			end = e->time + (ns_per ? e->weight * ns_per : 0);
	}
	for (size_t i = 0; i < ss.nr_threads && !err; i++) {
		struct ss_thread *t = &ss.threads[i];
		const struct profile_timed *last;

		qsort_r(t->ents, t->nr, sizeof(uint32_t), by_time, (void *)ss.tl);
		/* Named as it was last (a command's first samples may be before its exec). */
		last = &ss.tl[t->ents[t->nr - 1]];
		t->comm = profile__sample(p, last->sample)->labels.comm;
		t->thread_comm = last->thread_comm;
		if (t->nr > ss.threads[best].nr)
			best = i;
	}
	if (!err) {
		fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
		      "\"exporter\":\"profile\",\"name\":", out);
		json_string(out, o && o->name ? o->name : "profile");
		fprintf(out, ",\"activeProfileIndex\":%zu,\"profiles\":[", best);
		for (size_t i = 0; i < ss.nr_threads && !err; i++) {
			if (i)
				fputc(',', out);
			err = write_thread(&ss, &ss.threads[i], out, start == UINT64_MAX ? 0 : start,
					   end, ns_per);
		}
		/* The frames, now that every stack has been seen. */
		fputs("],\"shared\":{\"frames\":[", out);
		for (size_t i = 0; i < ss.nr_frames && !err; i++) {
			const struct ss_frame *f = &ss.frames[i];
			char *nm = NULL;

			if (f->name == PROFILE_NONE)
				nm = strdup(f->line ? "[off-cpu]" : "[truncated]");
			else if (asprintf(&nm, "%s%s", profile__string(p, f->name),
					  kind_suffix[f->kind]) < 0)
				nm = NULL;
			if (!nm) {
				err = -ENOMEM;
				break;
			}
			fputs(i ? ",{\"name\":" : "{\"name\":", out);
			json_string(out, nm);
			free(nm);
			if (f->line && f->name != PROFILE_NONE) {
				fputs(",\"file\":", out);
				json_string(out, profile__string(p, f->file));
				fprintf(out, ",\"line\":%u", f->line);
			}
			fputc('}', out);
		}
		fputs("]}}\n", out);
	}
	for (size_t i = 0; i < ss.nr_threads; i++)
		free(ss.threads[i].ents);
	free(ss.threads);
	free(ss.frames);
	free(ss.stack);
	htab__free(&ss.frame_index);
	htab__free(&ss.thread_index);
	if (!err && (fflush(out) || ferror(out)))
		err = -(errno ? errno : EIO);
	return err;
}

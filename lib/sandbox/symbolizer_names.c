// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * symbolizer_names: addresses to (file, offset) or (perf map, address) entries, named by
 * the worker (resolve.c); the kernel's names from kallsyms, read by a thread of their own.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include "base/grow.h"
#include "base/limits.h"
#include "base/log.h"
#include "dso/dso.h"
#include "dso/dsos.h"
#include "proc/procmaps.h"
#include "sandbox/symbolizer_int.h"
#include "unwind/utab.h"
#include "symbolize/kallsyms.h"
#include "symbolize/perfmap.h"
#include "sandbox/debuginfod.h"

#define UNKNOWN "[unknown]"

/* --- entries ------------------------------------------------------------------------------ */

int sym_ent__set(struct symbolizer *s, uint32_t id, const struct sym_frame *fr, int nr)
{
	struct sym_ent *e = s->ents[id];
	size_t len = nr * sizeof(*fr);
	char *p, *blob;

	for (int i = 0; i < nr; i++)
		len += strlen(fr[i].name) + 1 + (fr[i].file ? strlen(fr[i].file) + 1 : 0);
	blob = malloc(len);
	if (!blob)
		return -ENOMEM;
	free(e->blob);
	e->blob = blob;
	e->frames = (struct sym_frame *)blob;
	p = blob + nr * sizeof(*fr);
	for (int i = 0; i < nr; i++) {
		e->frames[i] = fr[i];
		e->frames[i].name = p;
		p = stpcpy(p, fr[i].name) + 1;
		if (fr[i].file) {
			e->frames[i].file = p;
			p = stpcpy(p, fr[i].file) + 1;
		}
	}
	e->nr = nr;
	return 0;
}

void sym_ent__set_failed(struct symbolizer *s, uint32_t id)
{
	struct sym_ent *e = s->ents[id];
	struct sym_src *src = sym_src__of(s, e->src);
	char name[4096 + 32];
	struct sym_frame fr = { .name = name, .kind = SYM_UNNAMED };

	if (src->is_map)
		snprintf(name, sizeof(name), "%s", UNKNOWN);
	else
		snprintf(name, sizeof(name), "%s+0x%" PRIx64, src->base, e->off);
	if (sym_ent__set(s, id, &fr, 1)) {
		static const struct sym_frame unknown = { .name = UNKNOWN, .kind = SYM_UNNAMED };

		e->frames = (struct sym_frame *)&unknown;
		e->nr = 1;
	}
}

/* The entry of (SRC, OFF, IS_RETURN), made waiting (and noted in its source) at the first
 * call. Returns its id, or -ENOMEM. */
static int64_t symbolizer__entry(struct symbolizer *s, struct sym_src *src, uint64_t off,
				 bool is_return)
{
	uint32_t key = src->id | (src->is_map ? SRC_MAP : 0);
	uint64_t h = sym_ent_hash(key, off, is_return);
	struct sym_ent *e;
	uint32_t pos, id;

	for (id = htab__first(&s->ent_index, h, &pos); id != HTAB_NONE;
	     id = htab__next(&s->ent_index, h, &pos)) {
		e = s->ents[id];
		if (e->src == key && e->off == off && e->is_return == is_return) {
			e->used = s->epoch;
			return id;
		}
	}
	if (array_grow(&s->ents, &s->cap_ents, sizeof(*s->ents), s->nr_ents) ||
	    array_grow(&src->wait, &src->cap_wait, sizeof(*src->wait), src->nr_wait))
		return -ENOMEM;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	*e = (struct sym_ent){ .src = key, .off = off, .is_return = is_return, .used = s->epoch };
	id = s->nr_ents;
	if (htab__insert(&s->ent_index, h, id)) {
		free(e);
		return -ENOMEM;
	}
	s->ents[s->nr_ents++] = e;
	src->wait[src->nr_wait++] = id;
	return id;
}

/*
 * The entry of user address ADDR of PID (IS_RETURN: a return address), made at the first
 * call; -ENOENT when it needs none (*NAME then says what it is: outside every mapping, a file
 * that cannot be read, anonymous memory without a perf map), -ENOMEM.
 */
static int64_t symbolizer__addr(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return,
				const char **name)
{
	const struct map *m;
	struct sym_src *src;

	*name = UNKNOWN;
	if (is_return && addr)
		addr--;
	m = procmaps__find(s->pm, pid, addr);
	/* "", "//anon" (mmap records), [anon:...], [heap]: JIT code, if anything */
	if (!m || !map__is_dso(m) || !strcmp(m->path, "//anon")) {
		const struct sym_src *own;

		src = symbolizer__map(s, pid);
		own = src ? symbolizer__map_owner(s, src) : NULL;
		if (!own)
			return -ENOMEM;
		if (own->map_fd < 0)
			return -ENOENT;
		return symbolizer__entry(s, src, addr, false);
	}
	src = symbolizer__file(s, pid, m);
	if (!src)
		return -ENOMEM;
	if (!src->dso) {
		*name = src->label;
		return -ENOENT;
	}
	/* A version of a file rewritten in place: its names are not the new content's. */
	if (dsos__replaced(s->dsos, src->id)) {
		*name = sym_src__replaced_label(src);
		return -ENOENT;
	}
	return symbolizer__entry(s, src, map__file_offset(m, addr), is_return);
}

void symbolizer__want(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return)
{
	const char *name;

	symbolizer__addr(s, pid, addr, is_return, &name);
}

int symbolizer__user_frames(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return,
			    struct sym_frame *out, int max)
{
	const char *name;
	int64_t id;
	struct sym_ent *e;
	int nr;

	if (max < 1)
		return 0;
	id = symbolizer__addr(s, pid, addr, is_return, &name);
	if (id < 0) {
		out[0] = (struct sym_frame){ .name = name, .kind = SYM_UNNAMED };
		return 1;
	}
	e = s->ents[id];
	if (!e->nr) {	/* not wanted before: named alone */
		symbolizer__resolve(s);
		if (!e->nr)
			sym_ent__set_failed(s, (uint32_t)id);
	}
	nr = e->nr < max ? e->nr : max;
	memcpy(out, e->frames, nr * sizeof(*out));
	return nr;
}

const char *symbolizer__user(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return)
{
	struct sym_frame frames[SYMFILE_MAX_FRAMES];

	symbolizer__user_frames(s, pid, addr, is_return, frames, SYMFILE_MAX_FRAMES);
	return frames[0].name;
}

/* Name every entry waiting; counts into *ADDRS, *SRCS. Returns 0 or -ENOMEM. */
static int symbolizer__resolve_all(struct symbolizer *s, uint32_t *addrs, uint32_t *srcs)
{
	int err = 0;

	for (uint32_t i = 0; !err && i < s->cap_files + s->nr_maps; i++) {
		struct sym_src *src = i < s->cap_files ? s->files[i] : s->maps[i - s->cap_files];

		if (!src || !src->nr_wait)
			continue;
		*addrs += src->nr_wait;
		(*srcs)++;
		err = resolve__src(s, src);
	}
	return err;
}

/* The debug files still being fetched waited for, within their time: the files that get
 * theirs named again. */
static int symbolizer__await_fetches(struct symbolizer *s, uint32_t *addrs, uint32_t *srcs)
{
	unsigned int pending, fetched, failed;
	double due;

	if (!s->fetch)
		return 0;
	dfetch__poll(s->fetch, 0, symbolizer__fetched, s);
	if (s->fetch_nowait)
		return symbolizer__resolve_all(s, addrs, srcs);
	due = dfetch__due(s->fetch);
	dfetch__counts(s->fetch, &fetched, &failed, &pending);
	if (pending && due) {
		double t0 = sb_client__now();

		/* Fetches queued behind others are due later: the end waits for all of them
		 * at most one fetch's time. */
		if (due > t0 + dfetch__timeout(s->fetch))
			due = t0 + dfetch__timeout(s->fetch);
		pr_warn("waiting for debuginfod: %u file%s (at most %.0f s)", pending,
			  pending == 1 ? "" : "s", due - t0 > 0 ? due - t0 : 0);
		dfetch__poll(s->fetch, due, symbolizer__fetched, s);
		pr_info("debuginfod: waited %.1f s", sb_client__now() - t0);
	}
	dfetch__report(s->fetch);
	return symbolizer__resolve_all(s, addrs, srcs);
}

int symbolizer__resolve(struct symbolizer *s)
{
	double t0 = sb_client__now(), waited = s->c.waited;
	uint32_t addrs = 0, srcs = 0;
	int err = 0;

	/* Sampling is over: the worker's work is wanted now. */
	s->over = true;
	sb_client__set_idle(&s->c, false);
	err = symbolizer__resolve_all(s, &addrs, &srcs);
	if (!err)
		err = symbolizer__await_fetches(s, &addrs, &srcs);
	if (srcs)
		pr_info("symbolizer: %u addresses of %u files named by the worker in %.1f ms "
			"(%.1f ms waiting for it)", addrs, srcs, (sb_client__now() - t0) * 1e3,
			(s->c.waited - waited) * 1e3);
	return err;
}

int symbolizer__file_info(struct symbolizer *s, pid_t pid, const struct map *m,
			  size_t *nr_syms, bool *debug)
{
	uint32_t id;
	struct dso *dso = dsos__get(s->dsos, pid, m, &id);
	struct sym_src *src = id < s->cap_files ? s->files[id] : NULL;

	if (!dso)
		return -ENOENT;
	if (dsos__replaced(s->dsos, id))
		return -ESTALE;
	if (src && src->bad)
		return -EIO;
	if (!src || !src->info)
		return -EAGAIN;
	*nr_syms = src->nr_syms;
	*debug = src->debug;
	return 0;
}

void symbolizer__poll(struct symbolizer *s)
{
	resolve__poll(s);
	if (s->fetch)
		dfetch__poll(s->fetch, 0, symbolizer__fetched, s);
	/* Raised for a table: back to idle once none is asked for. */
	if (s->want_idle && !s->c.idle)
		symbolizer__set_priority(s);
}

/* --- the kernel --------------------------------------------------------------------------- */

static void symbolizer__load_ksyms(struct symbolizer *s)
{
	if (s->ksyms_tried)
		return;
	s->ksyms_tried = true;
	s->ksyms = ksyms__load("/proc/kallsyms");
	if (!s->ksyms)
		pr_warn("cannot read kernel symbols from /proc/kallsyms: %s", strerror(errno));
}

/* kallsyms read at idle priority: only CPU the profiled programs leave. (Named: `top -H`
 * and bench/ tell it from sampling.) */
static void *ksyms_thread(void *arg)
{
	struct symbolizer *s = arg;
	struct sched_param sp = { 0 };

	prctl(PR_SET_NAME, "profile-ksyms", 0, 0, 0);
	sched_setscheduler(0, SCHED_IDLE, &sp);
	s->ktid_os = gettid();
	symbolizer__load_ksyms(s);
	return NULL;
}

/* The kallsyms thread joined, at normal priority first: sampling is over, and on a busy
 * machine an idle thread may wait seconds for a CPU. */
void symbolizer__wait_ksyms(struct symbolizer *s)
{
	struct sched_param sp = { 0 };

	if (s->kthread) {
		if (s->ktid_os)
			sched_setscheduler(s->ktid_os, SCHED_OTHER, &sp);
		pthread_join(s->ktid, NULL);
		s->kthread = false;
	}
}

void symbolizer__prepare(struct symbolizer *s, bool kernel)
{
	if (s->preparing)
		return;
	s->preparing = true;
	/* From now on only CPU the profiled programs leave, but for the tables asked. */
	s->want_idle = true;
	symbolizer__set_priority(s);
	if (kernel && !s->ksyms_tried)
		s->kthread = pthread_create(&s->ktid, NULL, ksyms_thread, s) == 0;
	resolve__poll(s);
}

const char *symbolizer__kernel(struct symbolizer *s, uint64_t addr, bool is_return)
{
	const char *name;

	if (is_return && addr)
		addr--;
	symbolizer__wait_ksyms(s);
	symbolizer__load_ksyms(s);
	if (!s->ksyms)
		return UNKNOWN;
	name = ksyms__lookup(s->ksyms, addr, NULL, NULL);
	return name ? name : UNKNOWN;
}

int symbolizer__python(struct symbolizer *s, const struct sym_pycode *c, const uint32_t *units,
		       uint32_t n, struct sym_pyname *out)
{
	/* Sampling is over: the worker's work is wanted now. */
	s->over = true;
	sb_client__set_idle(&s->c, false);
	return resolve__python(s, c, units, n, out);
}

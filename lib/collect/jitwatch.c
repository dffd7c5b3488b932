// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * jitwatch: JIT code rewritten in place, seen as it happens. A process that maps anonymous
 * code may name it in /tmp/perf-PID.map, and a runtime that compiles code again where other
 * code was appends a line for the same address. Names are given at the end, from the whole
 * file: the samples taken before that line was written would get its name. So the maps of the
 * processes with anonymous code are read as they grow (inotify wakes the loop; sizes are also
 * checked every JITWATCH_ALL_S), for the start address of each line only
 * (symbolizer__perfmap_starts: the worker parses the names, out of this privileged process). A line for an address a line named before begins
 * an epoch of the process: its samples from then on carry a new gen (BPF's `incarns`), and
 * those before it name its JIT code by the lines written before (procmaps__jit_epoch, then
 * perfmap__lookup_at in the worker). Samples between the write and the moment it is read here
 * (a wakeup) still get the earlier name. A map written anew from its start (HotSpot's, at each
 * Compiler.perfmap: jvmattach.c) is told by its size or by its first and last bytes read, and
 * read anew: its lines begin no epoch against the old map's (the worker keeps the old lines it
 * read that the new text dropped: perfmap__follow).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "base/clock.h"
#include "base/grow.h"
#include "base/htab.h"
#include "base/limits.h"
#include "base/log.h"
#include "collect/session_int.h"
#include "proc/procmaps.h"
#include "sandbox/symbolizer.h"
#include "profile.skel.h"

#define JITWATCH_PROCS_MAX	256		/* processes whose perf maps are followed */
#define JITWATCH_READ_MAX	(4u << 20)	/* bytes read of one map per call */
#define JITWATCH_STARTS_MAX	(1u << 20)	/* addresses remembered per map */
#define JITWATCH_RETRY_S	0.25		/* a map not there yet: looked for again */
#define JITWATCH_ALL_S		0.25		/* every map's size checked this often */
#define JITWATCH_MARK		64		/* bytes of its first and last lines read kept */

struct jitw {
	pid_t pid;
	int fd, wd;		/* the perf map (-1: not found yet), its inotify watch */
	uint64_t off;		/* bytes read, whole lines */
	uint64_t had;		/* its size when first read: lines before begin no epoch */
	double next_try;
	bool changed;		/* inotify said so */
	bool full;		/* JITWATCH_STARTS_MAX addresses: no more rewrites seen */
	bool handed;		/* to the worker (symbolizer__perfmap_early) */
	uint64_t *starts;	/* line start addresses seen */
	size_t nr, cap;
	struct htab index;
	/* The first and the last bytes read (up to JITWATCH_MARK of each, the last ones ending
	 * at off): a map written anew that is already as long as what was read is told by them. */
	char head[JITWATCH_MARK], tail[JITWATCH_MARK];
	uint32_t head_len, tail_len;
};

struct jitwatch {
	int ifd;
	struct jitw *v;
	size_t nr, cap;
	double next_all;
	char *buf;
};

int session__jitwatch_open(struct session *s)
{
	struct jitwatch *jw = calloc(1, sizeof(*jw));
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 2 };

	if (!jw)
		return -ENOMEM;
	jw->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	/* Without inotify, sizes are checked every JITWATCH_ALL_S only. */
	if (jw->ifd >= 0 && s->epfd >= 0 && epoll_ctl(s->epfd, EPOLL_CTL_ADD, jw->ifd, &ev)) {
		close(jw->ifd);
		jw->ifd = -1;
	}
	s->jw = jw;
	return 0;
}

void session__jitwatch_free(struct session *s)
{
	struct jitwatch *jw = s->jw;

	if (!jw)
		return;
	for (size_t i = 0; i < jw->nr; i++) {
		if (jw->v[i].fd >= 0)
			close(jw->v[i].fd);
		limits__release(jw->v[i].cap * sizeof(uint64_t));
		free(jw->v[i].starts);
		htab__free(&jw->v[i].index);
	}
	if (jw->ifd >= 0)
		close(jw->ifd);
	free(jw->v);
	free(jw->buf);
	free(jw);
	s->jw = NULL;
}

void session__jitwatch_want(struct session *s, pid_t pid)
{
	struct jitwatch *jw = s->jw;

	if (!jw || pid <= 0 || pid >= PROCMAPS_ARCHIVED_PID)
		return;
	for (size_t i = 0; i < jw->nr; i++)
		if (jw->v[i].pid == pid)
			return;
	if (jw->nr >= JITWATCH_PROCS_MAX ||
	    array_grow(&jw->v, &jw->cap, sizeof(*jw->v), jw->nr))
		return;
	jw->v[jw->nr++] = (struct jitw){ .pid = pid, .fd = -1, .wd = -1 };
}

/* Whether W's map named START before; remembered from now on. */
static bool seen_before(struct jitw *w, uint64_t start)
{
	uint64_t h = hash_u64(HASH_SEED, start);
	uint32_t pos, id;

	for (id = htab__first(&w->index, h, &pos); id != HTAB_NONE;
	     id = htab__next(&w->index, h, &pos))
		if (w->starts[id] == start)
			return true;
	if (w->nr >= JITWATCH_STARTS_MAX) {
		w->full = true;
		return false;
	}
	size_t cap = w->cap;

	if (array_grow(&w->starts, &w->cap, sizeof(*w->starts), w->nr)) {
		w->full = true;
		return false;
	}
	limits__charge((w->cap - cap) * sizeof(uint64_t));
	w->starts[w->nr] = start;
	if (htab__insert(&w->index, h, (uint32_t)w->nr))
		w->full = true;
	else
		w->nr++;
	return false;
}

/* A new gen for PID's samples from TIME on, in BPF (its `incarns` flags kept). */
static void new_gen(struct session *s, pid_t pid, uint64_t time)
{
	int fd = bpf_map__fd(s->skel->maps.incarns);
	__u32 key = (__u32)pid;
	__u64 v = 0;

	bpf_map_lookup_elem(fd, &key, &v);
	v = incarn_new_gen(v, time);
	bpf_map_update_elem(fd, &key, &v, BPF_ANY);
	session__bpf_changed(s);
}

struct scan {
	struct jitw *w;
	uint64_t rewrite;	/* the file offset of the first line for an address named before */
};

static void on_line(void *ctx, uint64_t start, size_t offset)
{
	struct scan *sc = ctx;
	struct jitw *w = sc->w;

	if (!w->full && seen_before(w, start) && w->off + offset >= w->had &&
	    sc->rewrite == UINT64_MAX)
		sc->rewrite = w->off + offset;
}

/* Whether W's file still holds, where they were, the bytes kept of what was read: false
 * when it was written anew, even as long as before or longer. */
static bool jitw__same(const struct jitw *w, uint64_t size)
{
	char buf[JITWATCH_MARK];

	if (size < w->off)
		return false;
	if (w->head_len && (pread(w->fd, buf, w->head_len, 0) != (ssize_t)w->head_len ||
			    memcmp(buf, w->head, w->head_len)))
		return false;
	if (w->tail_len && (pread(w->fd, buf, w->tail_len, (off_t)(w->off - w->tail_len)) !=
			    (ssize_t)w->tail_len || memcmp(buf, w->tail, w->tail_len)))
		return false;
	return true;
}

/* The bytes kept of what was read, now that the N bytes at BUF were (the file up to off). */
static void jitw__mark(struct jitw *w, const char *buf, size_t n)
{
	size_t keep;

	if (w->head_len < JITWATCH_MARK) {
		size_t more = JITWATCH_MARK - w->head_len < n ? JITWATCH_MARK - w->head_len : n;

		/* (The head is the file's first bytes: read from 0 on, as it grew.) */
		if (w->off - n == w->head_len) {
			memcpy(w->head + w->head_len, buf, more);
			w->head_len += (uint32_t)more;
		}
	}
	if (n >= JITWATCH_MARK) {
		memcpy(w->tail, buf + n - JITWATCH_MARK, JITWATCH_MARK);
		w->tail_len = JITWATCH_MARK;
		return;
	}
	keep = w->tail_len + n > JITWATCH_MARK ? JITWATCH_MARK - n : w->tail_len;
	memmove(w->tail, w->tail + w->tail_len - keep, keep);
	memcpy(w->tail + keep, buf, n);
	w->tail_len = (uint32_t)(keep + n);
}

/* Read what W's map has past what was read; an epoch when a line names an address again. */
static void jitw__read(struct session *s, struct jitw *w)
{
	struct jitwatch *jw = s->jw;
	struct scan sc = { w, UINT64_MAX };
	struct stat st;
	size_t used;
	ssize_t n;

	if (fstat(w->fd, &st))
		return;
	/* Written again from its start (jcmd Compiler.perfmap, a runtime restarting its map),
	 * shorter than what was read or not (HotSpot's next map, with the code compiled since,
	 * is often longer by the time it is read: then its bytes where the last ones read were
	 * differ): read anew, the addresses named before forgotten, so that the new map's lines
	 * are not taken for rewrites of the old one's (nor read from the middle of one). */
	if (w->off && !jitw__same(w, (uint64_t)st.st_size)) {
		pr_debug("jitwatch: pid %d: its perf map written anew (%llu bytes, %llu read before)",
			 w->pid, (unsigned long long)st.st_size, (unsigned long long)w->off);
		w->off = 0;
		w->had = 0;
		w->nr = 0;
		w->full = false;
		w->head_len = w->tail_len = 0;
		htab__free(&w->index);
	}
	if ((uint64_t)st.st_size <= w->off)
		return;
	if (!jw->buf && !(jw->buf = malloc(JITWATCH_READ_MAX)))
		return;
	n = pread(w->fd, jw->buf, JITWATCH_READ_MAX, (off_t)w->off);
	if (n <= 0)
		return;
	/* Whole lines only (the rest is read with what follows); one longer than a read,
	 * passed over. */
	if (n < (ssize_t)JITWATCH_READ_MAX && !memchr(jw->buf, '\n', (size_t)n))
		return;
	used = symbolizer__perfmap_starts(jw->buf, (size_t)n, on_line, &sc);
	w->off += used;
	jitw__mark(w, jw->buf, used);
	if (sc.rewrite != UINT64_MAX) {
		/* As BPF keeps it: the low bits of an `incarns` value are flags. */
		uint64_t now = clock_mono_ns() & ~INCARN_FLAGS;

		if (procmaps__jit_epoch(s->maps, w->pid, now, sc.rewrite) == 0) {
			new_gen(s, w->pid, now);
			s->stats.jit_epochs++;
			pr_debug("jitwatch: pid %d: JIT code rewritten in place (the line at byte %llu "
				 "of its perf map)", w->pid, (unsigned long long)sc.rewrite);
		}
	}
}

void session__jitwatch_poll(struct session *s)
{
	struct jitwatch *jw = s->jw;
	double now;
	bool all;

	if (!jw || !jw->nr)
		return;
	/* What inotify says changed. */
	if (jw->ifd >= 0) {
		char ev[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
		ssize_t n;

		while ((n = read(jw->ifd, ev, sizeof(ev))) > 0) {
			for (char *p = ev; p < ev + n;) {
				const struct inotify_event *e = (const struct inotify_event *)p;

				for (size_t i = 0; i < jw->nr; i++)
					if (jw->v[i].wd == e->wd)
						jw->v[i].changed = true;
				p += sizeof(*e) + e->len;
			}
		}
	}
	now = clock_mono_seconds();
	all = now >= jw->next_all;
	if (all)
		jw->next_all = now + JITWATCH_ALL_S;
	for (size_t i = 0; i < jw->nr; i++) {
		struct jitw *w = &jw->v[i];

		if (w->fd < 0 && now >= w->next_try) {
			int fd = symbolizer__open_perfmap(w->pid);
			struct stat st;

			w->next_try = now + JITWATCH_RETRY_S;
			if (fd < 0)
				continue;
			w->fd = fd;
			s->stats.perf_maps++;
			w->had = fstat(fd, &st) ? 0 : (uint64_t)st.st_size;
			if (jw->ifd >= 0) {
				char path[64];

				snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
				w->wd = inotify_add_watch(jw->ifd, path, IN_MODIFY);
			}
			w->changed = true;
		}
		if (w->fd >= 0 && (w->changed || all)) {
			w->changed = false;
			jitw__read(s, w);
			/* The worker reads it now, and again when it changed: a map written
			 * anew later keeps the names of the code freed meanwhile. */
			if (!w->handed && !symbolizer__perfmap_early(s->sym, w->pid))
				w->handed = true;
		}
	}
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * wfiles: the files the worker cannot open itself: a file's debug file and dwz's common file
 * are asked for by what they are known by, the candidates the privileged side hands over
 * checked; BFD, which opens dwz's common file by path, gets it from its descriptor.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/log.h"
#include "base/grow.h"
#include "dso/dso.h"
#include "sandbox/worker_int.h"

/* --- debug files: asked for, handed over, checked --------------------------------------- */

int worker__defer(struct worker *w, const void *buf, long len, int *fds, unsigned int nfds)
{
	struct wmsg *m;

	if (w->nr == w->cap) {
		if (w->head) {	/* room at the front first */
			memmove(w->backlog, w->backlog + w->head,
				(w->nr - w->head) * sizeof(*m));
			w->nr -= w->head;
			w->head = 0;
		} else if (array_grow(&w->backlog, &w->cap, sizeof(*m), w->nr)) {
			return -ENOMEM;
		}
	}
	m = &w->backlog[w->nr];
	m->buf = malloc((size_t)len);
	if (!m->buf)
		return -ENOMEM;
	memcpy(m->buf, buf, (size_t)len);
	m->len = len;
	m->nfds = nfds;
	memcpy(m->fds, fds, nfds * sizeof(*fds));
	w->nr++;
	return 0;
}

/*
 * Ask for the debug file of file F (ARG has_link, or SB_WANT_ALT: dwz's common file) known by
 * CRC, BUILD_ID and LINK, and wait for the candidates into *M and FDS (keeping whatever else
 * comes meanwhile). The client gone, there is nothing left to do: exit.
 */
static void worker__ask_debug(struct wfile *f, uint8_t arg, uint32_t crc, const char *build_id,
			      const char *link, struct sb_msg *m, int *fds)
{
	struct worker *w = f->w;
	unsigned int nfds;
	long len;

	sb_buf__start(&w->out, SB_WANT_DEBUG, arg, f->id);
	sb_buf__u32(&w->out, crc);
	sb_buf__str(&w->out, build_id ? build_id : "", build_id ? strlen(build_id) : 0);
	sb_buf__str(&w->out, link ? link : "", link ? strlen(link) : 0);
	if (worker__send(w))
		_exit(0);
	for (;;) {
		len = sb_recv(w->sock, w->dbuf, fds, &nfds, 0);
		if (len <= 0)
			_exit(len == 0 ? 0 : 2);
		if (sb_msg__decode(w->dbuf, (size_t)len, nfds, true, m))
			_exit(2);
		if (m->type == SB_DEBUG && m->id == f->id)
			return;
		if (worker__defer(w, w->dbuf, len, fds, nfds))
			_exit(2);
	}
}

/* dso_debug_finder of the file CTX: the first candidate handed over that is its debug file. */
struct dso *worker__find_debug(void *ctx, struct dso *d)
{
	struct wfile *f = ctx;
	struct dso_debug_want want;
	struct dso *dbg = NULL;
	int fds[SB_FDS_MAX];
	struct sb_msg m;
	int err = dso__debug_want(d, &want);

	/* A file with symbols of its own is asked about for the .debug_frame of its debug
	 * file. */
	if (err == -EEXIST)
		err = dso__debug_ids(d, &want);
	if (err)
		return NULL;
	worker__ask_debug(f, (uint8_t)(want.has_link | (dso__lacks_debug(d) ? SB_WANT_REMOTE : 0)),
			  want.crc, want.build_id,
			  want.has_link ? want.link : NULL, &m, fds);
	for (uint32_t i = 0; i < m.n; i++) {
		struct dso *c;

		if (dbg)
			break;
		c = dso__open_fd(fds[i], m.cand[i].path);
		fds[i] = -1;
		if (c && !dso__debug_check(d, c, m.cand[i].by_id, want.crc))
			dbg = c;
		else
			dso__free(c);
	}
	worker__close_fds(fds, m.n);
	return dbg;
}

/* --- dwz's common files, which BFD opens by path ------------------------------------------ */

#define ALTS_MAX	64

/* The common files handed over: BFD's fopen64 of NAME gets a stream of FD. */
static struct alt {
	char *name;
	int fd;
} alts[ALTS_MAX];
static int nr_alts;

/* The descriptor of common file PATH (as BFD names it: the name of .gnu_debugaltlink, maybe
 * after a directory), or -1. */
static int alt__find(const char *path)
{
	size_t plen = strlen(path);

	for (int i = 0; i < nr_alts; i++) {
		size_t len = strlen(alts[i].name);

		if (plen >= len && !strcmp(path + plen - len, alts[i].name) &&
		    (plen == len || alts[i].name[0] == '/' || path[plen - len - 1] == '/'))
			return alts[i].fd;
	}
	return -1;
}

/* symfile_alt_fn of the file CTX: the common file NAME with BUILD_ID asked for, the first
 * candidate with that build id kept for BFD's fopen64. */
int worker__alt(void *ctx, const char *name, const char *build_id)
{
	struct wfile *f = ctx;
	int fds[SB_FDS_MAX], found = -1;
	struct sb_msg m;

	if (alt__find(name) >= 0)
		return 0;
	if (nr_alts == ALTS_MAX)
		return -ENOSPC;
	worker__ask_debug(f, SB_WANT_ALT, 0, build_id, name, &m, fds);
	for (uint32_t i = 0; i < m.n; i++) {
		int fd = found < 0 ? fcntl(fds[i], F_DUPFD_CLOEXEC, 0) : -1;
		struct dso *c = fd >= 0 ? dso__open_fd(fd, m.cand[i].path) : NULL;

		if (c && dso__build_id(c) && !strcmp(dso__build_id(c), build_id)) {
			found = fds[i];
			fds[i] = -1;
		}
		dso__free(c);
	}
	worker__close_fds(fds, m.n);
	pr_debug("symbolizer worker: %s: dwz's common file %s (%s) %s", f->path, name, build_id,
		 found < 0 ? "not found" : "handed over");
	if (found < 0)
		return -ENOENT;
	alts[nr_alts].name = strdup(name);
	if (!alts[nr_alts].name) {
		close(found);
		return -ENOMEM;
	}
	alts[nr_alts++].fd = found;
	return 0;
}

/* Whether this process is the worker: then no file is opened by path (below). */
static bool worker_running;

void worker__opens_nothing(void)
{
	worker_running = true;
}

/*
 * BFD opens files by path where DWARF refers to another file: the common file of debug
 * files dwz compressed (.gnu_debugaltlink), a debuglink of a file without DWARF. Its only
 * way is fopen64, which this definition takes the place of (the program's own symbol wins
 * over libc's). In the worker, whose filter kills open(), a common file handed over is
 * read from its descriptor, anything else is missing; elsewhere, libc's.
 */
FILE *fopen64(const char *path, const char *mode)
{
	static FILE *(*libc_fopen64)(const char *, const char *);

	if (worker_running) {
		int fd = alt__find(path), dup_fd;
		FILE *f;

		if (fd < 0 || mode[0] != 'r' || strpbrk(mode, "+wa") ||
		    (dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
			errno = EACCES;
			return NULL;
		}
		/* Its duplicates share an offset: BFD reads one stream at a time, from a seek. */
		lseek(dup_fd, 0, SEEK_SET);
		f = fdopen(dup_fd, "r");
		if (!f)
			close(dup_fd);
		return f;
	}
	if (!libc_fopen64)
		libc_fopen64 = (FILE *(*)(const char *, const char *))dlsym(RTLD_NEXT, "fopen64");
	if (!libc_fopen64) {
		errno = ENOSYS;
		return NULL;
	}
	return libc_fopen64(path, mode);
}

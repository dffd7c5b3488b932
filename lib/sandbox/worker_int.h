/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * worker_int: what the worker's files share (worker.c: the loop, files, answers; wfiles.c:
 * debug files and dwz's common files asked for, and served to BFD). Private to lib/sandbox.
 */
#ifndef SANDBOX_WORKER_INT_H
#define SANDBOX_WORKER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/htab.h"
#include "base/limits.h"
#include "sandbox/proto.h"

struct dso;

/* A message received and kept for later. */
struct wmsg {
	unsigned char *buf;
	long len;
	int fds[SB_FDS_MAX];
	unsigned int nfds;
};

struct wfile {
	struct worker *w;
	uint32_t id;
	char *path;
	int fd;			/* handed over, until the file is opened (-1 then) */
	unsigned int flags;	/* SYMBOLIZE_* */
	struct dso *dso;	/* NULL when not a file we can read */
	struct symfile *sf;	/* once opened */
};

struct worker {
	int sock;
	unsigned char *rbuf, *dbuf;	/* requests; what comes while a debug file is awaited */
	struct wfile **files;		/* by id */
	uint32_t cap_files;
	struct perfmap **maps;		/* by id; NULL: none or unreadable */
	uint32_t cap_maps;
	struct wmsg *backlog;		/* a FIFO: [head, nr) */
	size_t head, nr, cap;
	uint32_t *prep;			/* files to prepare: [prep_head, nr_prep) */
	uint32_t prep_head, nr_prep, cap_prep;
	struct sb_buf out, strs, ents;	/* the message being sent, the part's tables */
	struct { uint32_t off, len; } *str;	/* the part's strings, in STRS */
	uint32_t nstr, cap_str;
	struct htab str_index;
	const char *test;		/* SANDBOX_TEST_ENV, done once */
	uint64_t limits_sent[LIMIT__MAX];	/* base/limits' counts last sent (SB_LIMITS) */
};

/* Close the N descriptors FDS that are not -1. */
void worker__close_fds(int *fds, unsigned int n);

/* Send the message W->out. Returns 0 or a negative errno. */
int worker__send(struct worker *w);

/* wfiles.c: keep the message LEN bytes BUF with its descriptors for after the current
 * request. Returns 0 or -ENOMEM. */
int worker__defer(struct worker *w, const void *buf, long len, int *fds, unsigned int nfds);

/* wfiles.c: dso_debug_finder of a file (CTX its struct wfile): its debug file asked for, the
 * first candidate handed over that is it. */
struct dso *worker__find_debug(void *ctx, struct dso *d);

/* wfiles.c: symfile_alt_fn of a file (CTX its struct wfile): dwz's common file NAME with
 * BUILD_ID asked for, the candidate with that build id served to BFD's fopen64. */
int worker__alt(void *ctx, const char *name, const char *build_id);

/* wfiles.c: from now on this process is the worker: no file is opened by path but the
 * common files handed over. */
void worker__opens_nothing(void);

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * resolve: the privileged side's exchanges with the worker. Files and perf maps are handed
 * over as descriptors once per worker; the addresses of a source go in batches, and each
 * batch's answer is waited for (the deadline renewed by every part that comes); what the
 * worker asks meanwhile (a debug file's candidates) is answered at once. A worker that fails
 * is ended and the source it worked on (it says which) gets FILE+0xOFFSET names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/fileio.h"
#include "base/limits.h"
#include "base/log.h"
#include "dso/dso.h"
#include "dso/dsos.h"
#include "sandbox/debuginfod.h"
#include "sandbox/symbolizer_int.h"
#include "unwind/utab.h"

static int resolve__any(struct symbolizer *s, const struct sb_msg *m);

/* The id the worker knows SRC's names by: an epoch's perf map is its process's. */
static uint32_t resolve__wire_id(struct symbolizer *s, struct sym_src *src)
{
	struct sym_src *own = src->is_map && src->jit_pid ? symbolizer__map_owner(s, src) : src;

	return own ? own->id : src->id;
}

/* Hand SRC to the worker unless it has it. Returns 0 or a negative errno. */
static int resolve__hand(struct symbolizer *s, struct sym_src *src, bool nowait)
{
	size_t len = strlen(src->name);
	int fd, err;

	if (src->is_map && src->jit_pid) {
		/* An epoch's names come from its process's map. */
		src = symbolizer__map_owner(s, src);
		if (!src)
			return -ENOMEM;
	}
	if (src->sent == s->c.gen)
		return 0;
	if (src->is_map) {
		sb_buf__start(&s->out, SB_PERFMAP, 0, src->id);
		fd = src->map_fd;
	} else {
		sb_buf__start(&s->out, SB_FILE, (uint8_t)s->flags, src->id);
		sb_buf__str(&s->out, src->name, len < SB_PATH_MAX ? len : SB_PATH_MAX);
		fd = dso__fd(src->dso);
	}
	err = sb_client__send(&s->c, &s->out, &fd, 1, nowait);
	if (!err)
		src->sent = s->c.gen;
	return err;
}

/* A build id as the worker may say it: hex digits only (it names a path). */
static bool build_id_ok(const char *id)
{
	size_t len = strlen(id);

	return len >= 3 && len == strspn(id, "0123456789abcdef");
}

/* A debuglink name as the worker may say it: a file name, no way out of its directory. */
static bool link_ok(const char *link)
{
	return link[0] && !strchr(link, '/') && strcmp(link, ".") && strcmp(link, "..");
}

/* PATH's directory is DIR (LEN bytes), or a directory below it: no "." or ".." component. */
static bool path_under(const char *path, const char *dir, size_t len)
{
	const char *last = strrchr(path, '/');

	if (strncmp(path, dir, len) || path[len] != '/' || last < path + len)
		return false;
	for (const char *p = path + len; p && *p; p = strchr(p + 1, '/'))
		if (!strncmp(p, "/./", 3) || !strncmp(p, "/../", 4))
			return false;
	return true;
}

/*
 * The places of dwz's common file NAME (.gnu_debugaltlink, as the worker read it) with
 * BUILD_ID, for the file FILE into OUT (DSO_DEBUG_PATHS entries): by build id under
 * dso_debug_dir; NAME itself when it is under dso_debug_dir, or next to FILE or in its
 * .debug/ (no link followed there). A name anywhere else is no place to open as root for
 * someone else. Returns how many, or -ENOMEM.
 */
static int alt_paths(const char *file, const char *name, const char *build_id,
		     struct dso_debug_path *out)
{
	const char *slash = strrchr(file, '/');
	size_t dirlen = slash ? (size_t)(slash - file) : 0;
	char dotdebug[4096];
	int n = 0;

	if (build_id_ok(build_id)) {
		if (asprintf(&out[n].path, "%s/.build-id/%.2s/%s.debug", dso_debug_dir, build_id,
			     build_id + 2) < 0)
			return -ENOMEM;
		out[n].by_id = true;
		out[n++].nofollow = false;
	}
	snprintf(dotdebug, sizeof(dotdebug), "%.*s/.debug", (int)dirlen, file);
	if (path_under(name, dso_debug_dir, strlen(dso_debug_dir)) ||
	    (slash && path_under(name, file, dirlen) && !strchr(name + dirlen + 1, '/')) ||
	    (slash && path_under(name, dotdebug, strlen(dotdebug)) &&
	     !strchr(name + strlen(dotdebug) + 1, '/'))) {
		out[n].path = strdup(name);
		if (!out[n].path) {
			dso_debug__free_paths(out, n);
			return -ENOMEM;
		}
		out[n].by_id = true;
		out[n++].nofollow = !path_under(name, dso_debug_dir, strlen(dso_debug_dir));
	}
	return n;
}

/* The candidates of an SB_DEBUG answer: opened, each file once. */
struct cands {
	int fds[SB_FDS_MAX];
	dev_t dev[SB_FDS_MAX];
	ino_t ino[SB_FDS_MAX];
	const char *path[SB_FDS_MAX];
	bool by_id[SB_FDS_MAX];
	int n;
};

/* Candidate FD (ST its stat, found at PATH, by build id when BY_ID) into C, unless C holds
 * that file already (by another way): then FD is closed. */
static void cands__add(struct cands *c, int fd, const struct stat *st, const char *path,
		       bool by_id)
{
	for (int j = 0; j < c->n; j++)
		if (c->dev[j] == st->st_dev && c->ino[j] == st->st_ino) {
			close(fd);
			return;
		}
	c->dev[c->n] = st->st_dev;
	c->ino[c->n] = st->st_ino;
	c->path[c->n] = path;
	c->by_id[c->n] = by_id;
	c->fds[c->n++] = fd;
}

/*
 * The debug file of the file SRC (the worker's SB_WANT_DEBUG M), or the dwz common file its
 * debug file names, in debuginfod's caches, added to the candidates C; when no candidate was
 * found at all and the file lacks what a debug file brings (or it is a common file),
 * fetched (the answer comes while sampling: symbolizer__fetched).
 */
static void resolve__fetched(struct symbolizer *s, struct sym_src *src, const struct sb_msg *m,
			     struct cands *c)
{
	static char places[2][160];
	int dirs[2], np = dfetch__places(s->fetch, m->build_id, dirs, places);
	bool alt = (m->arg & ~SB_WANT_REMOTE) == SB_WANT_ALT;
	char what[300];
	int had = c->n;

	for (int i = 0; i < np && c->n < SB_FDS_MAX; i++) {
		struct stat st;
		int fd = fileio__open_regular_how(dirs[i], places[i], DSO_FILE_MAX,
						  FILEIO_NOFOLLOW, &st);

		if (fd >= 0 && !st.st_size)	/* an empty file: libdebuginfod's "none" */
			close(fd);
		else if (fd >= 0)
			cands__add(c, fd, &st, places[i], true);
	}
	if (had || c->n > had || !((m->arg & SB_WANT_REMOTE) || alt))
		return;
	/* dwz's common file of a debug file (fetched or not) is fetched by its own build id. */
	snprintf(what, sizeof(what), "%s%s", src->base, alt ? " (dwz's common file)" : "");
	if (dfetch__ask(s->fetch, m->build_id, what) > 0 && !src->fetch_id)
		src->fetch_id = strdup(m->build_id);
}

/*
 * The worker's SB_WANT_DEBUG M: every candidate place that holds a regular file (inside the
 * root of the process that maps the file first, then ours; a link refused where the file's
 * owner writes the directory) opened and handed over, the first found first. Returns 0 or a
 * negative errno (-EBADMSG: not a file it was handed).
 */
static int resolve__debug(struct symbolizer *s, const struct sb_msg *m)
{
	struct sym_src *src = m->id < s->cap_files ? s->files[m->id] : NULL;
	uint8_t kind = m->arg & ~SB_WANT_REMOTE;
	struct dso_debug_path cand[DSO_DEBUG_PATHS];
	struct cands c = { .n = 0 };
	int nc = 0, err;
	struct stat own;

	/* A file forgotten since the worker began reading it (continuous mode: SB_FORGET on its
	 * way), or one never handed over: no candidates. */
	if (!src || !src->dso || src->sent != s->c.gen || fstat(dso__fd(src->dso), &own)) {
		sb_buf__start(&s->out, SB_DEBUG, 0, m->id);
		return sb_client__send(&s->c, &s->out, NULL, 0, false);
	}
	if (kind == SB_WANT_ALT)
		nc = alt_paths(src->name, m->link, m->build_id, cand);
	else
		nc = dso_debug__paths(src->name, build_id_ok(m->build_id) ? m->build_id : NULL,
				      kind && link_ok(m->link) ? m->link : NULL, cand);
	if (nc < 0)
		return nc;
	for (int k = dso__root(src->dso) >= 0 ? 0 : 1; k < 2; k++) {
		for (int i = 0; i < nc && c.n < SB_FDS_MAX; i++) {
			struct stat st;
			int fd = fileio__open_regular_how(k ? -1 : dso__root(src->dso),
							     cand[i].path, DSO_FILE_MAX,
							     cand[i].nofollow ? FILEIO_NOFOLLOW : 0,
							     &st);

			if (fd < 0)
				continue;
			/* Where the file's owner writes: that owner's files only (not a hard
			 * link to one it cannot read, which the worker would be handed). */
			if (cand[i].nofollow && st.st_uid != own.st_uid) {
				close(fd);
				continue;
			}
			cands__add(&c, fd, &st, cand[i].path, cand[i].by_id);
		}
	}
	if (s->fetch && build_id_ok(m->build_id))
		resolve__fetched(s, src, m, &c);
	sb_buf__start(&s->out, SB_DEBUG, (uint8_t)c.n, m->id);
	for (int i = 0; i < c.n; i++) {
		sb_buf__u8(&s->out, c.by_id[i]);
		sb_buf__str(&s->out, c.path[i], strlen(c.path[i]));
	}
	err = sb_client__send(&s->c, &s->out, c.fds, (unsigned int)c.n, false);
	for (int i = 0; i < c.n; i++)
		close(c.fds[i]);
	dso_debug__free_paths(cand, nc);
	return err;
}

/* Every table asked of the worker that ended: none will come. */
static void tables__lost(struct symbolizer *s)
{
	for (uint32_t i = 0; i < s->cap_files; i++) {
		struct sym_src *src = s->files[i];

		if (src && src->tstate == TAB_ASKED) {
			free(src->tbuf);
			limits__release(src->ttotal);
			src->tbuf = NULL;
			src->tlen = src->ttotal = 0;
			/* Asked again of the next worker, unless this one failed on it. */
			src->tstate = TAB_NONE;
			s->tables_answered++;
		}
	}
}

void resolve__recycle(struct symbolizer *s)
{
	tables__lost(s);
	sb_client__recycle(&s->c);
}

/* The worker failed with ERR while S waited on SRC (NULL: nothing): the source it said it
 * worked on (else SRC) gets no more names from workers. */
static void resolve__fail(struct symbolizer *s, struct sym_src *src, int err)
{
	struct sb_client *c = &s->c;
	struct sym_src *blamed = src;

	if (c->busy_known) {
		uint32_t id = c->busy & ~SB_BUSY_MAP;

		if (c->busy & SB_BUSY_MAP)
			blamed = id < s->nr_maps ? s->maps[id] : NULL;
		else
			blamed = id < s->cap_files ? s->files[id] : NULL;
	}
	sb_client__fail(c, err, blamed ? blamed->name : "nothing it was asked about");
	tables__lost(s);
	if (blamed) {
		blamed->bad = true;
		if (!blamed->is_map && blamed->tstate != TAB_DONE) {
			blamed->tstate = TAB_DONE;	/* no table: its frames cannot be unwound */
			s->tables_answered++;
		}
	}
}

int resolve__ask_table(struct symbolizer *s, struct sym_src *src)
{
	int err;

	if (src->tstate != TAB_NONE)
		return 0;
	if (src->bad || !src->dso || sb_client__start(&s->c)) {
		src->tstate = TAB_DONE;
		return 0;
	}
	err = resolve__hand(s, src, true);
	if (!err) {
		sb_buf__start(&s->out, SB_TABLE, 0, src->id);
		err = sb_client__send(&s->c, &s->out, NULL, 0, true);
	}
	if (!err) {
		src->tstate = TAB_ASKED;
		src->tasked = sb_client__now();
	}
	else if (err != -EAGAIN)
		resolve__fail(s, src, err);
	return err == -EAGAIN ? err : 0;
}

void resolve__await_table(struct symbolizer *s, struct sym_src *src)
{
	double deadline = sb_client__now() + s->c.timeout;
	struct sb_msg m;
	int err = 0;

	while (src->tstate == TAB_ASKED && !err) {
		err = sb_client__recv(&s->c, &m, deadline);
		if (!err)
			err = resolve__any(s, &m);
		if (!err && m.type == SB_UTAB)
			deadline = sb_client__now() + s->c.timeout;
	}
	if (err && err != -ENOMEM)
		resolve__fail(s, src, err);
}

/* The SB_UTAB part M of the unwind table asked for: appended, decoded at the last part.
 * Returns 0, -EBADMSG (not asked for, out of order, a table that does not decode) or
 * -ENOMEM. */
static int resolve__utab(struct symbolizer *s, const struct sb_msg *m)
{
	struct sym_src *src = m->id < s->cap_files ? s->files[m->id] : NULL;
	int err;

	if (!src || src->tstate != TAB_ASKED || m->offset != src->tlen ||
	    (src->tlen && m->total != src->ttotal))
		return -EBADMSG;
	if (!src->tlen && m->total) {
		if (!limits__reserve(m->total))
			return -ENOMEM;
		src->tbuf = malloc(m->total);
		if (!src->tbuf) {
			limits__release(m->total);
			return -ENOMEM;
		}
		src->ttotal = m->total;
	}
	if (m->data_len)
		memcpy(src->tbuf + src->tlen, m->data, m->data_len);
	src->tlen += (uint32_t)m->data_len;
	if (!m->arg)
		return 0;
	err = src->ttotal ? utab__decode(src->tbuf, src->ttotal, &src->tab) : 0;
	free(src->tbuf);
	limits__release(src->ttotal);
	src->tbuf = NULL;
	src->tlen = src->ttotal = 0;
	src->tstate = TAB_DONE;
	s->tables_answered++;
	pr_debug("symbolizer: unwind table of %s: %u bytes, %.1f ms after it was asked for",
		 src->name, m->total, (sb_client__now() - src->tasked) * 1e3);
	return err;
}

/* A message that may come at any time: a debug file asked for, a part of a table. */
static int resolve__any(struct symbolizer *s, const struct sb_msg *m)
{
	if (m->type == SB_WANT_DEBUG)
		return resolve__debug(s, m);
	if (m->type == SB_UTAB)
		return resolve__utab(s, m);
	return -EBADMSG;
}

/* The names in the SB_NAMES part M into the entries IDS (the request's, from M->first on).
 * Returns 0 or -ENOMEM. */
static int resolve__names(struct symbolizer *s, struct sym_src *src, const struct sb_msg *m,
			  const uint32_t *ids)
{
	const char **strs = malloc((m->nstr ? m->nstr : 1) * sizeof(*strs));
	struct sym_frame fr[SB_FRAMES_MAX];
	struct sb_frame wire[SB_FRAMES_MAX];
	size_t pos = 0;
	int err = 0;

	if (!strs)
		return -ENOMEM;
	sb_names__strings(m, strs);
	for (uint32_t i = 0; !err && i < m->n; i++) {
		int nr = sb_names__next(m, &pos, wire);

		for (int k = 0; k < nr; k++)
			fr[k] = (struct sym_frame){
				.name = strs[wire[k].name],
				.file = wire[k].file == SB_NO_STR ? NULL : strs[wire[k].file],
				.line = wire[k].line, .kind = wire[k].kind,
			};
		err = sym_ent__set(s, ids[m->first + i], fr, nr);
	}
	free(strs);
	src->info = true;
	src->nr_syms = m->nr_syms;
	src->debug = m->flags & SB_NAMES_DEBUG;
	return err;
}

/* Wait for the answer to request SEQ about SRC, whose N entries are IDS. Returns 0, -ENOMEM,
 * or how the worker failed (-ETIMEDOUT, -EPIPE, -EBADMSG). */
static int resolve__await(struct symbolizer *s, struct sym_src *src, uint32_t seq,
			  const uint32_t *ids, uint32_t n)
{
	double deadline = sb_client__now() + s->c.timeout;
	uint32_t got = 0;
	struct sb_msg m;
	int err;

	for (;;) {
		err = sb_client__recv(&s->c, &m, deadline);
		if (!err && (m.type == SB_WANT_DEBUG || m.type == SB_UTAB))
			err = resolve__any(s, &m);
		if (err)
			return err;
		if (m.type == SB_WANT_DEBUG || m.type == SB_UTAB)
			continue;
		if (m.type != SB_NAMES || m.id != resolve__wire_id(s, src) || m.seq != seq ||
		    m.first != got ||
		    m.n > n - got || (m.arg && got + m.n != n))
			return -EBADMSG;
		err = resolve__names(s, src, &m, ids);
		if (err)
			return err;
		got += m.n;
		if (m.arg)
			return 0;
		deadline = sb_client__now() + s->c.timeout;
	}
}

/* Send the first N entries SRC waits for as one request. Returns its sequence number or a
 * negative errno. */
static int64_t resolve__ask(struct symbolizer *s, struct sym_src *src, uint32_t n)
{
	uint32_t seq = ++s->seq;
	int err;

	sb_buf__start(&s->out, src->is_map ? SB_JIT : SB_LOOKUP, 0, resolve__wire_id(s, src));
	sb_buf__u32(&s->out, seq);
	sb_buf__u32(&s->out, n);
	if (src->is_map)
		sb_buf__u64(&s->out, src->jit_upto);
	for (uint32_t i = 0; i < n; i++) {
		const struct sym_ent *e = s->ents[src->wait[i]];

		sb_buf__u64(&s->out, src->is_map ? e->off : e->off << 1 | e->is_return);
	}
	err = sb_client__send(&s->c, &s->out, NULL, 0, false);
	return err ? err : (int64_t)seq;
}

int resolve__src(struct symbolizer *s, struct sym_src *src)
{
	double t0 = sb_client__now();
	uint32_t nr = src->nr_wait;

	while (src->nr_wait) {
		uint32_t n = src->nr_wait < SB_BATCH_MAX ? src->nr_wait : SB_BATCH_MAX;
		int64_t seq;
		int err;

		if (src->bad || sb_client__start(&s->c)) {
			for (uint32_t i = 0; i < src->nr_wait; i++)
				sym_ent__set_failed(s, src->wait[i]);
			src->nr_wait = 0;
			break;
		}
		err = resolve__hand(s, src, false);
		seq = err ? err : resolve__ask(s, src, n);
		err = seq < 0 ? (int)seq : resolve__await(s, src, (uint32_t)seq, src->wait, n);
		if (err == -ENOMEM)
			return err;
		if (err) {
			resolve__fail(s, src, err);
			continue;
		}
		src->nr_wait -= n;
		memmove(src->wait, src->wait + n, src->nr_wait * sizeof(*src->wait));
	}
	pr_debug("symbolizer: %s: %u addresses in %.1f ms", src->name, nr,
		 (sb_client__now() - t0) * 1e3);
	return 0;
}

int resolve__hand_early(struct symbolizer *s, struct sym_src *src)
{
	int err = sb_client__start(&s->c);

	return err ? err : resolve__hand(s, src, true);
}

int resolve__prepare(struct symbolizer *s, struct sym_src *src)
{
	int err = resolve__hand(s, src, true);

	if (!err) {
		sb_buf__start(&s->out, SB_PREPARE, 0, src->id);
		err = sb_client__send(&s->c, &s->out, NULL, 0, true);
	}
	return err;
}

/* Files opened since the last call handed to the worker to prepare, without waiting (a full
 * socket: the rest at the next call). Returns 0 or a negative errno (-EAGAIN is not one). */
static int resolve__hand_new(struct symbolizer *s)
{
	uint32_t id;

	for (; (id = dsos__added(s->dsos, s->handed)) != UINT32_MAX; s->handed++) {
		struct dso *dso = dsos__at(s->dsos, id);
		struct sym_src *src = dso ? sym_src__file_at(s, id, dso, dso__path(dso)) : NULL;
		int err;

		if (!src || src->bad)
			continue;
		err = resolve__prepare(s, src);
		if (err)
			return err == -EAGAIN ? 0 : err;
	}
	return 0;
}

void resolve__poll(struct symbolizer *s)
{
	struct sb_msg m;
	int err = 0;

	if (s->c.sock < 0)
		return;
	while (!err) {
		err = sb_client__recv(&s->c, &m, 0);
		if (!err)
			err = resolve__any(s, &m);
	}
	if (err == -EAGAIN && s->preparing)
		err = resolve__hand_new(s);
	if (err && err != -EAGAIN && err != -ENOMEM)
		resolve__fail(s, NULL, err);
}

/* --- CPython code objects ------------------------------------------------------------------ */

_Static_assert((int)SYM_PY_BLOBS == (int)SB_PY_BLOBS && (int)SYM_PY_CODE == (int)SB_PY_CODE &&
	       (int)SYM_PY_QUALNAME == (int)SB_PY_QUALNAME && (int)SYM_PY_NAME == (int)SB_PY_NAME &&
	       (int)SYM_PY_FILE == (int)SB_PY_FILE && (int)SYM_PY_TABLE == (int)SB_PY_TABLE &&
	       SYM_PY_BLOB_MAX == SB_PY_BLOB_MAX, "symbolizer.h's objects are proto.h's");

/* SRC (valid UTF-8) into DST (LEN bytes, NUL-terminated), cut before a character that would
 * not fit whole. */
static void copy_utf8(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n >= len) {
		n = len - 1;
		/* (Back over the continuation bytes of a character cut.) */
		while (n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(dst, src, n);
	dst[n] = '\0';
}

int resolve__python(struct symbolizer *s, const struct sym_pycode *c, const uint32_t *units,
		    uint32_t n, struct sym_pyname *out)
{
	uint32_t seq, got = 0;
	double deadline;
	struct sb_msg m;
	int err;

	if (!n)
		return 0;
	if (n > SB_BATCH_MAX || c->minor > 255)
		return -E2BIG;
	err = sb_client__start(&s->c);
	if (err)
		return err;
	seq = ++s->seq;
	sb_buf__start(&s->out, c->ruby ? SB_RBCODE : SB_PYCODE, (uint8_t)c->minor, 0);
	sb_buf__u32(&s->out, seq);
	for (int i = 0; i < SB_PY_BLOBS; i++) {
		uint32_t len = c->len[i] < SB_PY_BLOB_MAX ? c->len[i] : 0;

		sb_buf__u32(&s->out, len);
		sb_buf__bytes(&s->out, c->blob[i], len);
	}
	sb_buf__u32(&s->out, n);
	for (uint32_t i = 0; i < n; i++)
		sb_buf__bytes(&s->out, &units[i], 4);
	err = sb_client__send(&s->c, &s->out, NULL, 0, false);
	deadline = sb_client__now() + s->c.timeout;
	while (!err) {
		const char **strs;
		struct sb_frame fr[SB_FRAMES_MAX];
		size_t pos = 0;

		err = sb_client__recv(&s->c, &m, deadline);
		if (!err && (m.type == SB_WANT_DEBUG || m.type == SB_UTAB)) {
			err = resolve__any(s, &m);
			continue;
		}
		if (err)
			break;
		if (m.type != SB_NAMES || m.id || m.seq != seq || m.first != got ||
		    m.n > n - got || (m.arg && got + m.n != n)) {
			err = -EBADMSG;
			break;
		}
		strs = malloc((m.nstr ? m.nstr : 1) * sizeof(*strs));
		if (!strs)
			return -ENOMEM;
		sb_names__strings(&m, strs);
		for (uint32_t i = 0; i < m.n; i++) {
			struct sym_pyname *o = &out[got + i];

			/* (One frame each: more is the worker's error, the first one taken.) */
			sb_names__next(&m, &pos, fr);
			o->named = fr[0].kind != SYM_UNNAMED;
			o->line = fr[0].line;
			copy_utf8(o->name, sizeof(o->name), strs[fr[0].name]);
			copy_utf8(o->file, sizeof(o->file),
				  fr[0].file == SB_NO_STR ? "" : strs[fr[0].file]);
		}
		free(strs);
		got += m.n;
		if (m.arg)
			return 0;
		deadline = sb_client__now() + s->c.timeout;
	}
	if (err != -ENOMEM)
		resolve__fail(s, NULL, err);
	return err;
}

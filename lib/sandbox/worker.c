// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * worker: the symbolizer worker's loop (see worker.h). One request at a time, in the order
 * they come; a message that comes while the worker waits for its debug files is kept for
 * later (the backlog). Files to prepare wait in a queue that yields to every request.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <libelf.h>
#include "base/grow.h"
#include "base/htab.h"
#include "base/limits.h"
#include "base/log.h"
#include "dso/dso.h"
#include "sandbox/confine.h"
#include "sandbox/proto.h"
#include "sandbox/worker.h"
#include "python/pyline.h"
#include "python/pystr.h"
#include "ruby/rbline.h"
#include "ruby/rbstr.h"
#include "sandbox/worker_int.h"
#include "symbolize/perfmap.h"
#include "symbolize/symfile.h"
#include "unwind/utab.h"

/* --- shared with wfiles.c ------------------------------------------------------------ */

void worker__close_fds(int *fds, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

int worker__send(struct worker *w)
{
	int err = sb_buf__end(&w->out);

	return err ? err : sb_send(w->sock, w->out.p, w->out.len, NULL, 0, 0);
}

/* --- files --------------------------------------------------------------------------------- */

static void wfile__free(struct wfile *f)
{
	if (!f)
		return;
	symfile__free(f->sf);
	dso__free(f->dso);
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	free(f);
}

/* SB_FILE: a file by its descriptor FD (taken), opened at its first use. */
static int worker__file(struct worker *w, const struct sb_msg *m, int fd)
{
	struct wfile *f;

	if (array_grow(&w->files, &w->cap_files, sizeof(*w->files), m->id))
		return -ENOMEM;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(m->path))) {
		free(f);
		return -ENOMEM;
	}
	f->w = w;
	f->id = m->id;
	f->fd = fd;
	f->flags = m->arg;
	wfile__free(w->files[m->id]);
	w->files[m->id] = f;
	return 0;
}

/* File ID, opened: its dso read from the descriptor it came with. NULL when unknown. */
static struct wfile *worker__open(struct worker *w, uint32_t id)
{
	struct wfile *f = id < w->cap_files ? w->files[id] : NULL;

	if (!f || f->sf)
		return f;
	f->dso = dso__open_fd(f->fd, f->path);
	f->fd = -1;
	if (f->dso)
		dso__set_debug_finder(f->dso, worker__find_debug, f);
	else
		pr_debug("symbolizer worker: %s: %s", f->path, strerror(errno));
	f->sf = symfile__new(f->dso, f->path, f->flags);
	if (f->sf)
		symfile__set_alt(f->sf, worker__alt, f);
	return f->sf ? f : NULL;
}

/* Read one file of the queue now: its symbols, its debug file, its DWARF. */
static int worker__prepare_one(struct worker *w)
{
	uint32_t id = w->prep[w->prep_head++];
	struct wfile *f;

	if (w->prep_head == w->nr_prep)
		w->prep_head = w->nr_prep = 0;
	sb_buf__start(&w->out, SB_BUSY, 0, id);
	if (worker__send(w))
		return -EPIPE;
	f = worker__open(w, id);
	if (f)
		symfile__prepare(f->sf);
	return 0;
}

/* --- answers --------------------------------------------------------------------------- */

/* An empty part: no strings, no entries. */
static void names__reset(struct worker *w)
{
	sb_buf__clear(&w->strs);
	sb_buf__clear(&w->ents);
	w->nstr = 0;
	htab__free(&w->str_index);
}

/* The index of NAME in the part's string table, added at the first use; -ENOMEM. */
static int64_t names__intern(struct worker *w, const char *name)
{
	size_t len = strlen(name);
	uint64_t h = hash_bytes(HASH_SEED, name, len);
	uint32_t pos, id;

	for (id = htab__first(&w->str_index, h, &pos); id != HTAB_NONE;
	     id = htab__next(&w->str_index, h, &pos))
		if (w->str[id].len == len && !memcmp(w->strs.p + w->str[id].off + 4, name, len))
			return id;
	if (array_grow(&w->str, &w->cap_str, sizeof(*w->str), w->nstr))
		return -ENOMEM;
	id = w->nstr;
	w->str[id].off = (uint32_t)w->strs.len;
	w->str[id].len = (uint32_t)len;
	sb_buf__str(&w->strs, name, len);
	if (sb_buf__end(&w->strs) || htab__insert(&w->str_index, h, id))
		return -ENOMEM;
	w->nstr++;
	return id;
}

/* One entry: the NR frames FR, their names and files in the part's string table. */
static int names__add(struct worker *w, const struct sym_frame *fr, int nr)
{
	struct sb_frame out[SB_FRAMES_MAX];

	for (int i = 0; i < nr && i < SB_FRAMES_MAX; i++) {
		int64_t name = names__intern(w, fr[i].name);
		int64_t file = fr[i].file ? names__intern(w, fr[i].file) : SB_NO_STR;

		if (name < 0 || file < 0)
			return -ENOMEM;
		out[i] = (struct sb_frame){ (uint32_t)name, (uint32_t)file, fr[i].line,
					    fr[i].kind };
	}
	sb_buf__frames(&w->ents, out, nr < SB_FRAMES_MAX ? nr : SB_FRAMES_MAX);
	return sb_buf__end(&w->ents);
}

_Static_assert(LIMIT__MAX <= SB_LIMITS_MAX, "SB_LIMITS carries every bound");

/* The bounds of base/limits met here since they were last sent, as an SB_LIMITS (all the
 * counts): the profiler's summary names them as if met there. Returns 0 or -errno. */
static int limits__send(struct worker *w)
{
	bool changed = false;

	for (int i = 0; i < LIMIT__MAX; i++)
		changed = changed || limits__count((enum limit)i) != w->limits_sent[i];
	if (!changed)
		return 0;
	sb_buf__start(&w->out, SB_LIMITS, 0, 0);
	sb_buf__u32(&w->out, LIMIT__MAX);
	for (int i = 0; i < LIMIT__MAX; i++) {
		w->limits_sent[i] = limits__count((enum limit)i);
		sb_buf__u64(&w->out, w->limits_sent[i]);
	}
	return worker__send(w);
}

/* Send the part of the answer to request SEQ about ID: its entries FIRST.. (N of them). */
static int names__send(struct worker *w, uint32_t id, uint32_t seq, uint32_t first,
		       uint32_t n, bool last, struct symfile *sf)
{
	size_t nr_syms = 0;
	bool debug = false;
	int err;

	if (sf)
		symfile__info(sf, &nr_syms, &debug);
	if (last && limits__send(w))
		return -EPIPE;
	sb_buf__start(&w->out, SB_NAMES, last, id);
	sb_buf__u32(&w->out, seq);
	sb_buf__u32(&w->out, first);
	sb_buf__u32(&w->out, n);
	sb_buf__u32(&w->out, nr_syms > UINT32_MAX ? UINT32_MAX : (uint32_t)nr_syms);
	sb_buf__u32(&w->out, debug ? SB_NAMES_DEBUG : 0);
	sb_buf__u32(&w->out, w->nstr);
	sb_buf__bytes(&w->out, w->strs.p, w->strs.len);
	sb_buf__bytes(&w->out, w->ents.p, w->ents.len);
	err = worker__send(w);
	names__reset(w);
	return err;
}

/* The test hooks, at the first lookup: returns true when the request is not to be answered. */
static bool worker__test(struct worker *w)
{
	const char *t = w->test;

	w->test = NULL;
	if (t && !strcmp(t, "open")) {
		int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);	/* the filter kills us */

		if (fd >= 0)
			close(fd);
	}
	return t && !strcmp(t, "stall");
}

/* SB_LOOKUP and SB_JIT: the names of M's addresses, in parts. */
static int worker__lookup(struct worker *w, const struct sb_msg *m)
{
	struct sym_frame frames[SB_FRAMES_MAX];
	struct symfile *sf = NULL;
	const struct perfmap *pm = NULL;
	uint32_t first = 0;
	int err = 0, nr;

	sb_buf__start(&w->out, SB_BUSY, m->type == SB_JIT, m->id);
	if (worker__send(w))
		return -EPIPE;
	if (m->type == SB_LOOKUP) {
		struct wfile *f = worker__open(w, m->id);

		if (!f)
			return -EBADMSG;
		sf = f->sf;
	} else {
		pm = m->id < w->cap_maps ? w->maps[m->id] : NULL;
	}
	if (worker__test(w))
		return 0;
	names__reset(w);
	for (uint32_t i = 0; !err && i < m->n; i++) {
		uint64_t a = sb_msg__addr(m, i);

		if (sf) {
			nr = symfile__frames(sf, a >> 1, a & 1, frames, SB_FRAMES_MAX);
		} else {
			const char *name = pm ? perfmap__lookup_at(pm, a, m->upto) : NULL;

			frames[0] = (struct sym_frame){ .name = name ? name : "[unknown]",
							.kind = name ? SYM_JIT : SYM_UNNAMED };
			nr = 1;
		}
		err = names__add(w, frames, nr);
		if (!err && w->strs.len + w->ents.len > SB_PART_TARGET && i + 1 < m->n) {
			err = names__send(w, m->id, m->seq, first, i + 1 - first, false, sf);
			first = i + 1;
		}
	}
	return err ? err : names__send(w, m->id, m->seq, first, m->n - first, true, sf);
}

/* A str object's text from its bytes OBJ (LEN of them, as read from its process), or NULL. */
static const char *py_text(const struct py_layout *l, const unsigned char *obj, size_t len,
			   char *out, size_t outlen)
{
	size_t need = len ? py_str__need(l, obj, len) : 0;

	if (!need || need > len || py_str__utf8(l, obj, len, out, outlen) <= 0)
		return NULL;
	return out;
}

/*
 * SB_PYCODE: a CPython code object's names (its qualified name, else its name; its file) and
 * the line of each unit, from the bytes its process held (untrusted: parsed here, with the
 * version's layout, every read bounded). A code object that does not decode is
 * "[python: unreadable]" at every unit.
 */
static int worker__python(struct worker *w, const struct sb_msg *m)
{
	const struct py_layout *l = py_layout__for(3, m->arg);
	static char name[1024], file[1024];
	const char *nm = NULL, *fl = NULL;
	const unsigned char *table = NULL;
	size_t table_len = 0;
	int32_t first = 0;
	uint32_t at = 0;
	int err = 0;

	if (l && m->blob_len[SB_PY_CODE] >= l->code_read) {
		memcpy(&first, m->blob[SB_PY_CODE] + l->code_firstlineno, sizeof(first));
		nm = py_text(l, m->blob[SB_PY_QUALNAME], m->blob_len[SB_PY_QUALNAME], name,
			     sizeof(name));
		if (!nm)
			nm = py_text(l, m->blob[SB_PY_NAME], m->blob_len[SB_PY_NAME], name,
				     sizeof(name));
		fl = nm ? py_text(l, m->blob[SB_PY_FILE], m->blob_len[SB_PY_FILE], file,
				  sizeof(file)) : NULL;
		if (m->blob_len[SB_PY_TABLE] &&
		    py_bytes__data(l, m->blob[SB_PY_TABLE], m->blob_len[SB_PY_TABLE], &table,
				   &table_len))
			table = NULL;
	}
	names__reset(w);
	for (uint32_t i = 0; !err && i < m->n; i++) {
		uint32_t unit = sb_msg__unit(m, i);
		int line = nm && (table || unit == PY_UNIT_BEFORE) ?
			   py_line__for(l, table, table_len, first, unit) : -1;
		struct sym_frame fr = {
			.name = nm ? nm : "[python: unreadable]", .file = nm ? fl : NULL,
			.line = line > 0 ? (uint32_t)line : 0, .kind = nm ? SYM_FUNC : SYM_UNNAMED,
		};

		err = names__add(w, &fr, 1);
		if (!err && w->strs.len + w->ents.len > SB_PART_TARGET && i + 1 < m->n) {
			err = names__send(w, 0, m->seq, at, i + 1 - at, false, NULL);
			at = i + 1;
		}
	}
	return err ? err : names__send(w, 0, m->seq, at, m->n - at, true, NULL);
}

/*
 * SB_RBCODE: a CRuby iseq's label, path and the line of each unit (16 bits of a frame's pc /
 * 8) from the bytes its process held (untrusted: parsed here with the version's layout,
 * every read bounded). An iseq that does not decode is "[ruby: unreadable]" at every unit.
 */
static int worker__ruby(struct worker *w, const struct sb_msg *m)
{
	const struct rb_layout *l = rb_layout__for(3, m->arg);
	static char name[1024], file[1024];
	const unsigned char *body = m->blob[SB_PY_CODE];
	uint64_t encoded = 0;
	uint32_t size = 0, info_size = 0, at = 0;
	bool ok = false;
	int err = 0;

	if (l && m->blob_len[SB_PY_CODE] >= l->body_read && m->blob_len[SB_PY_QUALNAME]) {
		memcpy(&encoded, body + l->body_iseq_encoded, sizeof(encoded));
		memcpy(&size, body + l->body_iseq_size, sizeof(size));
		memcpy(&info_size, body + l->body_insns_size, sizeof(info_size));
		rb_str__utf8(m->blob[SB_PY_QUALNAME], m->blob_len[SB_PY_QUALNAME], name,
			     sizeof(name));
		rb_str__utf8(m->blob[SB_PY_FILE], m->blob_len[SB_PY_FILE], file, sizeof(file));
		ok = name[0] != '\0';
	}
	names__reset(w);
	for (uint32_t i = 0; !err && i < m->n; i++) {
		uint32_t pos = 0;
		uint64_t word = (uint64_t)sb_msg__unit(m, i) << RB_PC_SHIFT | 8;
		int line = ok && !rb_word__pos(word, encoded, size, &pos) ?
			   rb_line__for(l, size, info_size, m->blob[SB_PY_TABLE],
					m->blob_len[SB_PY_TABLE], m->blob[SB_PY_NAME],
					m->blob_len[SB_PY_NAME], pos) : -1;
		struct sym_frame fr = {
			.name = ok ? name : "[ruby: unreadable]", .file = ok && file[0] ? file : NULL,
			.line = line > 0 ? (uint32_t)line : 0, .kind = ok ? SYM_FUNC : SYM_UNNAMED,
		};

		err = names__add(w, &fr, 1);
		if (!err && w->strs.len + w->ents.len > SB_PART_TARGET && i + 1 < m->n) {
			err = names__send(w, 0, m->seq, at, i + 1 - at, false, NULL);
			at = i + 1;
		}
	}
	return err ? err : names__send(w, 0, m->seq, at, m->n - at, true, NULL);
}

/* SB_TABLE: file M->id's unwind table, built now and sent in parts (total 0: none). */
static int worker__table(struct worker *w, const struct sb_msg *m)
{
	struct wfile *f;
	struct utab *t;
	unsigned char *buf = NULL;
	size_t len = 0, off = 0;
	int err = 0;

	sb_buf__start(&w->out, SB_BUSY, 0, m->id);
	if (worker__send(w))
		return -EPIPE;
	f = worker__open(w, m->id);
	if (!f)
		return -EBADMSG;
	t = f->dso ? utab__build(f->dso, utab_stack_bottoms, UTAB_NR_STACK_BOTTOMS) : NULL;
	if (t && (utab__encode(t, &buf, &len) || len > SB_UTAB_MAX)) {
		free(buf);
		buf = NULL;
		len = 0;
	}
	utab__free(t);
	if (limits__send(w))
		err = -EPIPE;
	do {
		size_t n = len - off < SB_PART_TARGET ? len - off : SB_PART_TARGET;

		sb_buf__start(&w->out, SB_UTAB, off + n == len, m->id);
		sb_buf__u32(&w->out, (uint32_t)len);
		sb_buf__u32(&w->out, (uint32_t)off);
		sb_buf__bytes(&w->out, buf + off, n);
		err = err ? err : worker__send(w);
		off += n;
	} while (!err && off < len);
	free(buf);
	return err;
}

/* SB_PERFMAP: a perf map by its descriptor FD (taken), read now. */
static int worker__perfmap(struct worker *w, const struct sb_msg *m, int fd)
{
	if (array_grow(&w->maps, &w->cap_maps, sizeof(*w->maps), m->id)) {
		close(fd);
		return -ENOMEM;
	}
	perfmap__free(w->maps[m->id]);
	w->maps[m->id] = perfmap__read_fd(fd);
	return 0;
}

/* SB_FORGET: file or perf map M->id (M->arg) is mapped by no process any more; its id may
 * come again for another. */
static int worker__forget(struct worker *w, const struct sb_msg *m)
{
	if (m->arg && m->id < w->cap_maps) {
		perfmap__free(w->maps[m->id]);
		w->maps[m->id] = NULL;
	} else if (!m->arg && m->id < w->cap_files) {
		wfile__free(w->files[m->id]);
		w->files[m->id] = NULL;
	}
	return 0;
}

/* --- the loop -------------------------------------------------------------------------- */

/* One message, LEN bytes BUF with NFDS descriptors FDS (taken). Returns 0 or -errno. */
static int worker__handle(struct worker *w, const unsigned char *buf, long len, int *fds,
			  unsigned int nfds)
{
	struct sb_msg m;
	int err;

	if (sb_msg__decode(buf, (size_t)len, nfds, true, &m)) {
		worker__close_fds(fds, nfds);
		return -EBADMSG;
	}
	switch (m.type) {
	case SB_FILE:
		err = worker__file(w, &m, fds[0]);
		if (err)
			close(fds[0]);
		return err;
	case SB_PREPARE:
		if (array_grow(&w->prep, &w->cap_prep, sizeof(*w->prep), w->nr_prep))
			return -ENOMEM;
		w->prep[w->nr_prep++] = m.id;
		return 0;
	case SB_DEBUG:		/* not asked for (any more) */
		worker__close_fds(fds, nfds);
		return 0;
	case SB_PERFMAP:
		return worker__perfmap(w, &m, fds[0]);
	case SB_TABLE:
		return worker__table(w, &m);
	case SB_FORGET:
		return worker__forget(w, &m);
	case SB_PYCODE:
		return worker__python(w, &m);
	case SB_RBCODE:
		return worker__ruby(w, &m);
	default:
		return worker__lookup(w, &m);
	}
}

/* Whether a message waits on the socket. */
static bool worker__pending(struct worker *w)
{
	struct pollfd p = { w->sock, POLLIN, 0 };

	return poll(&p, 1, 0) != 0;
}

static int worker__loop(struct worker *w)
{
	int fds[SB_FDS_MAX];
	unsigned int nfds;
	long len;
	int err;

	for (;;) {
		if (w->head < w->nr) {
			struct wmsg m = w->backlog[w->head++];

			if (w->head == w->nr)
				w->head = w->nr = 0;
			err = worker__handle(w, m.buf, m.len, m.fds, m.nfds);
			free(m.buf);
		} else if (w->prep_head < w->nr_prep && !worker__pending(w)) {
			err = worker__prepare_one(w);
		} else {
			len = sb_recv(w->sock, w->rbuf, fds, &nfds, 0);
			if (len <= 0)
				return len == 0 || len == -ECONNRESET ? 0 : 2;
			err = worker__handle(w, w->rbuf, len, fds, nfds);
		}
		if (err == -EPIPE || err == -ECONNRESET)
			return 0;
		if (err) {
			pr_warn("symbolizer worker: %s", strerror(-err));
			return 2;
		}
	}
}

int sandbox_worker__main(int sock, uid_t uid, gid_t gid, pid_t parent)
{
	struct worker w = { .sock = sock, .test = getenv(SANDBOX_TEST_ENV) };
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	/* What the libraries would do at their first use, before the filter is in place. */
	elf_version(EV_CURRENT);
	w.rbuf = malloc(SB_MSG_MAX);
	w.dbuf = malloc(SB_MSG_MAX);
	/* From the filter on, what it writes may hold bytes of the files it reads (BFD's
	 * complaints quote them) or be a compromised worker's: the profiler's terminal sees it
	 * with -vv only. */
	if (!w.rbuf || !w.dbuf ||
	    confine__self(uid, gid, sock, parent, log_level < LOG_DEBUG ? null : -1))
		return 1;
	worker__opens_nothing();
	if (null >= 0)
		close(null);
	sb_buf__start(&w.out, SB_HELLO, 0, (uint32_t)getpid());
	sb_buf__u32(&w.out, (uint32_t)getuid());
	sb_buf__u32(&w.out, (uint32_t)getgid());
	if (worker__send(&w))
		return 0;
	return worker__loop(&w);
}

/* A program started as the worker (worker.h) is the worker, before its main. glibc passes
 * the arguments to constructors. */
__attribute__((constructor)) static void worker__entry(int argc, char **argv)
{
	if (argc != 7 || strcmp(argv[1], SANDBOX_WORKER_ARG))
		return;
	log_level = atoi(argv[5]);
	/* Its name in ps and in profiles (-a), rather than /proc/self/exe's "exe". */
	prctl(PR_SET_NAME, "profile-worker", 0, 0, 0);
	limits__set_budget(strtoull(argv[6], NULL, 10));
	_exit(sandbox_worker__main(SANDBOX_WORKER_FD, (uid_t)strtoul(argv[2], NULL, 10),
				   (gid_t)strtoul(argv[3], NULL, 10),
				   (pid_t)strtol(argv[4], NULL, 10)));
}

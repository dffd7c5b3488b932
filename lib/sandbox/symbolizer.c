// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * symbolizer: the privileged side's names (see symbolizer.h): the sources (files, perf maps)
 * behind addresses, the worker's tables, forgetting; the entries and their names, kernel
 * names, in symbolizer_names.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

static void symbolizer__tell_forget(struct symbolizer *s, const struct sym_src *src);

/* The workers' user: SANDBOX_UID:SANDBOX_GID, or PROFILE_SANDBOX_USER=UID[:GID]. */
static int sandbox_user(uid_t *uid, gid_t *gid)
{
	const char *env = getenv(SANDBOX_USER_ENV);
	unsigned long u, g;
	char *end;

	*uid = SANDBOX_UID;
	*gid = SANDBOX_GID;
	if (!env || !*env)
		return 0;
	errno = 0;
	u = strtoul(env, &end, 10);
	g = u;
	if (*end == ':')
		g = strtoul(end + 1, &end, 10);
	if (errno || *end || !u || !g || u > UINT32_MAX - 1 || g > UINT32_MAX - 1)
		return -EINVAL;
	*uid = (uid_t)u;
	*gid = (gid_t)g;
	return 0;
}

struct symbolizer *symbolizer__new(struct procmaps *pm, struct dsos *dsos, unsigned int flags)
{
	struct symbolizer *s;
	uid_t uid;
	gid_t gid;

	if (sandbox_user(&uid, &gid)) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->pm = pm;
	s->dsos = dsos;
	s->flags = flags;
	if (sb_client__init(&s->c, uid, gid)) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	sb_client__start(&s->c);	/* failing, it said so: names are FILE+0xOFFSET */
	return s;
}

static void sym_src__free(struct sym_src *src)
{
	if (!src)
		return;
	if (src->map_fd >= 0)
		close(src->map_fd);
	free(src->name);
	free(src->label);
	free(src->replaced_label);
	free(src->wait);
	free(src->fetch_id);
	free(src->tbuf);
	limits__release(src->ttotal);
	utab__free(src->tab);
	free(src);
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	symbolizer__wait_ksyms(s);
	sb_client__fini(&s->c);
	for (uint32_t i = 0; i < s->cap_files; i++)
		sym_src__free(s->files[i]);
	free(s->files);
	for (uint32_t i = 0; i < s->nr_maps; i++)
		sym_src__free(s->maps[i]);
	free(s->maps);
	free(s->free_maps);
	htab__free(&s->map_index);
	for (uint32_t i = 0; i < s->nr_ents; i++) {
		free(s->ents[i]->blob);
		free(s->ents[i]);
	}
	free(s->ents);
	htab__free(&s->ent_index);
	sb_buf__free(&s->out);
	ksyms__free(s->ksyms);
	dfetch__free(s->fetch);
	free(s);
}

int symbolizer__debuginfod(struct symbolizer *s, double timeout)
{
	s->fetch = dfetch__new(timeout, s->c.uid, s->c.gid);
	return s->fetch || errno == ENOENT ? 0 : -errno;
}

void symbolizer__fetched(void *ctx, const char *id)
{
	struct symbolizer *s = ctx;

	for (uint32_t i = 0; i < s->cap_files; i++) {
		struct sym_src *src = s->files[i];

		if (!src || !src->fetch_id || strcmp(src->fetch_id, id))
			continue;
		free(src->fetch_id);
		src->fetch_id = NULL;
		if (src->bad)
			continue;
		/* The worker reads it again (its debug file found in the cache now)... */
		symbolizer__tell_forget(s, src);
		src->sent = 0;
		src->info = false;
		/* ...and names again what it named already. */
		for (uint32_t k = 0; k < s->nr_ents; k++) {
			struct sym_ent *e = s->ents[k];

			if (e->src != src->id || !e->nr ||
			    array_grow(&src->wait, &src->cap_wait, sizeof(*src->wait),
				       src->nr_wait))
				continue;
			free(e->blob);
			e->blob = NULL;
			e->frames = NULL;
			e->nr = 0;
			src->wait[src->nr_wait++] = k;
		}
		/* Read again before the end, while sampling. */
		if (s->preparing && !s->over && !resolve__prepare(s, src))
			pr_debug("symbolizer: %s read again with its fetched debug file", src->name);
	}
}

void symbolizer__fetch_wait(struct symbolizer *s, bool wait)
{
	s->fetch_nowait = !wait;
}

void symbolizer__fetch_counts(const struct symbolizer *s, unsigned int *fetched,
			      unsigned int *failed, unsigned int *pending)
{
	*fetched = *failed = *pending = 0;
	if (s->fetch)
		dfetch__counts(s->fetch, fetched, failed, pending);
}

pid_t symbolizer__worker_pid(const struct symbolizer *s)
{
	return s->c.sock >= 0 ? s->c.pid : 0;
}

pid_t symbolizer__fetcher_pid(const struct symbolizer *s)
{
	return dfetch__pid(s->fetch);
}

/* --- sources: files and perf maps ----------------------------------------------------------- */

/* A source named NAME (copied); NULL on ENOMEM. */
static struct sym_src *sym_src__new(const char *name, uint32_t id, bool is_map)
{
	struct sym_src *src = calloc(1, sizeof(*src));
	const char *slash;

	if (!src || !(src->name = strdup(name))) {
		free(src);
		return NULL;
	}
	slash = strrchr(src->name, '/');
	src->base = slash ? slash + 1 : src->name;
	src->id = id;
	src->is_map = is_map;
	src->map_fd = -1;
	if (asprintf(&src->label, name[0] == '[' ? "%s" : "[%s]", src->base) < 0) {
		src->label = NULL;
		sym_src__free(src);
		return NULL;
	}
	return src;
}

const char *sym_src__replaced_label(struct sym_src *src)
{
	if (!src->replaced_label && asprintf(&src->replaced_label, "[%s (replaced)]", src->base) < 0)
		src->replaced_label = NULL;
	return src->replaced_label ? src->replaced_label : src->label;
}

struct sym_src *sym_src__of(struct symbolizer *s, uint32_t src)
{
	if (src & SRC_MAP)
		return s->maps[src & ~SRC_MAP];
	return s->files[src];
}

struct sym_src *sym_src__file_at(struct symbolizer *s, uint32_t id, struct dso *dso,
				 const char *path)
{
	if (array_grow(&s->files, &s->cap_files, sizeof(*s->files), id))
		return NULL;
	if (!s->files[id] && (s->files[id] = sym_src__new(path, id, false)))
		s->files[id]->dso = dso;
	return s->files[id];
}

/* The source of the file of mapping M of PID (its dso opened now when not yet); NULL on
 * ENOMEM. */
struct sym_src *symbolizer__file(struct symbolizer *s, pid_t pid, const struct map *m)
{
	uint32_t id;
	struct dso *dso = dsos__get(s->dsos, pid, m, &id);

	return id == UINT32_MAX ? NULL : sym_src__file_at(s, id, dso, m->path);
}

/* The perf map source of PID, its file opened at the first call (map_fd -1: none); NULL on
 * ENOMEM. */
struct sym_src *symbolizer__map(struct symbolizer *s, pid_t pid)
{
	uint64_t h = hash_u64(HASH_SEED, (uint64_t)pid);
	struct sym_src *src;
	uint32_t pos, id;
	char name[64];

	for (id = htab__first(&s->map_index, h, &pos); id != HTAB_NONE;
	     id = htab__next(&s->map_index, h, &pos))
		if (s->maps[id]->pid == pid)
			return s->maps[id];
	/* A forgotten process's id first (symbolizer__forget). */
	id = s->nr_free_maps ? s->free_maps[s->nr_free_maps - 1] : s->nr_maps;
	if (array_grow(&s->maps, &s->cap_maps, sizeof(*s->maps), id))
		return NULL;
	snprintf(name, sizeof(name), "/tmp/perf-%d.map", (int)pid);
	src = sym_src__new(name, id, true);
	if (!src || htab__insert(&s->map_index, h, id)) {
		sym_src__free(src);
		return NULL;
	}
	src->pid = pid;
	src->jit_upto = UINT64_MAX;
	if (procmaps__epoch_of(s->pm, pid, &src->jit_pid, &src->jit_upto))
		src->map_fd = -1;	/* its owner's (symbolizer__map_owner) */
	else
		src->map_fd = perfmap__open(pid);
	if (src->map_fd < 0)
		src->map_fd = -1;
	s->maps[id] = src;
	if (id == s->nr_maps)
		s->nr_maps++;
	else
		s->nr_free_maps--;
	return src;
}

struct sym_src *symbolizer__map_owner(struct symbolizer *s, struct sym_src *src)
{
	return src->jit_pid ? symbolizer__map(s, src->jit_pid) : src;
}

/* The worker's priority: idle while sampling (symbolizer__prepare) unless a table is asked
 * for; normal once sampling is over. */
void symbolizer__set_priority(struct symbolizer *s)
{
	bool asked = false;

	for (uint32_t i = 0; i < s->cap_files && !asked; i++)
		asked = s->files[i] && s->files[i]->tstate == TAB_ASKED;
	sb_client__set_idle(&s->c, s->want_idle && !s->over && !asked);
}

int symbolizer__fd(const struct symbolizer *s)
{
	return s->c.sock;
}

unsigned int symbolizer__worker_gen(const struct symbolizer *s)
{
	return s->c.gen;
}

/* A worker whose caches grew past twice what they held after its first period, and by more
 * than this, is replaced by a fresh one: what it keeps per file (symbols, FDE tables, BFD's
 * DWARF) grows with every program run beside a long profile, and a file no process maps
 * any more is never asked about again. */
#define RECYCLE_GROWTH_KIB	(32u << 10)

void symbolizer__sampling_again(struct symbolizer *s)
{
	uint64_t kib = sb_client__anon_kib(&s->c);
	bool test = s->c.test && !strcmp(s->c.test, "recycle");

	s->over = false;
	if (kib && s->base_gen != s->c.gen) {
		s->base_gen = s->c.gen;
		s->base_kib = kib;
	} else if (kib && (test || (kib > 2 * s->base_kib &&
				    kib - s->base_kib > RECYCLE_GROWTH_KIB))) {
		pr_info("symbolizer worker: %.1f MiB after its first period, %.1f MiB now: "
			"replaced by a fresh one", s->base_kib / 1024.0, kib / 1024.0);
		resolve__recycle(s);
	}
	symbolizer__set_priority(s);
}

/* Tell the worker that source SRC is forgotten, when it was handed to this one (a full socket:
 * it keeps it until the id is handed again, for another file). */
static void symbolizer__tell_forget(struct symbolizer *s, const struct sym_src *src)
{
	if (s->c.sock < 0 || src->sent != s->c.gen)
		return;
	sb_buf__start(&s->out, SB_FORGET, src->is_map, src->id);
	sb_client__send(&s->c, &s->out, NULL, 0, true);
}

/*
 * The entries of sources forgotten, and those neither this epoch nor the one before asked
 * for, freed; the rest renumbered (their ids in the wait lists too) and indexed again.
 */
static void forget_names(struct symbolizer *s)
{
	uint32_t *renum = malloc((s->nr_ents ? s->nr_ents : 1) * sizeof(*renum));
	struct htab index = { 0 };
	uint32_t kept = 0;

	if (!renum)
		return;		/* out of memory: they stay, no harm */
	for (uint32_t i = 0; i < s->nr_ents; i++) {
		struct sym_ent *e = s->ents[i];
		bool known = (e->src & SRC_MAP) ? s->maps[e->src & ~SRC_MAP] != NULL :
			     e->src < s->cap_files && s->files[e->src] != NULL;

		renum[i] = UINT32_MAX;
		/* (A waiting entry, nr 0, was asked for this epoch.) */
		if (known && (!e->nr || e->used + 1 >= s->epoch) &&
		    !htab__insert(&index, sym_ent_hash(e->src, e->off, e->is_return), kept)) {
			renum[i] = kept;
			s->ents[kept++] = e;
			continue;
		}
		free(e->blob);
		free(e);
	}
	for (uint32_t i = 0; i < s->cap_files + s->nr_maps; i++) {
		struct sym_src *src = i < s->cap_files ? s->files[i] : s->maps[i - s->cap_files];
		uint32_t n = 0;

		for (uint32_t k = 0; src && k < src->nr_wait; k++)
			if (renum[src->wait[k]] != UINT32_MAX)
				src->wait[n++] = renum[src->wait[k]];
		if (src)
			src->nr_wait = n;
	}
	free(renum);
	htab__free(&s->ent_index);
	s->ent_index = index;
	s->nr_ents = kept;
	s->epoch++;
}

void symbolizer__forget(struct symbolizer *s, const uint32_t *ids, size_t n, const pid_t *pids,
			size_t np)
{
	for (size_t k = 0; k < n; k++) {
		struct sym_src *src = ids[k] < s->cap_files ? s->files[ids[k]] : NULL;

		if (!src || symbolizer__file_busy(s, ids[k]))
			continue;	/* (the caller asked first) */
		symbolizer__tell_forget(s, src);
		sym_src__free(src);
		s->files[ids[k]] = NULL;
	}
	for (size_t k = 0; k < np; k++) {
		uint64_t h = hash_u64(HASH_SEED, (uint64_t)pids[k]);
		uint32_t pos, id;

		for (id = htab__first(&s->map_index, h, &pos); id != HTAB_NONE;
		     id = htab__next(&s->map_index, h, &pos)) {
			struct sym_src *src = s->maps[id];

			if (src->pid != pids[k] || src->nr_wait ||
			    array_grow(&s->free_maps, &s->cap_free_maps, sizeof(*s->free_maps),
				       s->nr_free_maps))
				continue;
			symbolizer__tell_forget(s, src);
			sym_src__free(src);
			s->maps[id] = NULL;
			s->free_maps[s->nr_free_maps++] = id;
			htab__remove(&s->map_index, h, id);
			break;		/* (pos is the removed slot's, moved entries past it) */
		}
	}
	forget_names(s);
}

uint64_t symbolizer__tables_answered(const struct symbolizer *s)
{
	return s->tables_answered;
}

bool symbolizer__table_pending(const struct symbolizer *s, uint32_t id)
{
	return id < s->cap_files && s->files[id] && s->files[id]->tstate == TAB_ASKED;
}

void symbolizer__sizes(const struct symbolizer *s, uint32_t *names, uint32_t *maps)
{
	*names = s->nr_ents;
	*maps = s->nr_maps;
}

bool symbolizer__file_busy(const struct symbolizer *s, uint32_t id)
{
	return symbolizer__table_pending(s, id) || (id < s->cap_files && s->files[id] &&
						     s->files[id]->nr_wait);
}

const struct utab *symbolizer__table(struct symbolizer *s, pid_t pid, const struct map *m,
				     bool wait, bool *ready)
{
	struct sym_src *src = symbolizer__file(s, pid, m);

	*ready = !src;
	if (!src)
		return NULL;
	if (src->tstate == TAB_NONE && resolve__ask_table(s, src))
		return NULL;		/* the socket is full: asked again at the next call */
	/* (While sampling the loop's symbolizer__poll reads the answers, not each unwind.) */
	if (src->tstate == TAB_ASKED && wait)
		resolve__poll(s);
	/* Waited for, now or by samples queued: at normal priority, whatever it had while
	 * sampling. */
	if (src->tstate == TAB_ASKED && s->c.idle)
		sb_client__set_idle(&s->c, false);
	if (src->tstate == TAB_ASKED && wait) {
		resolve__await_table(s, src);
		symbolizer__set_priority(s);
	}
	*ready = src->tstate == TAB_DONE;
	/* A file opened here for its descriptor only: its build id as the worker read it. */
	if (src->tab && src->dso)
		dso__set_build_id(src->dso, src->tab->build_id);
	return src->tab;
}

int symbolizer__perfmap_early(struct symbolizer *s, pid_t pid)
{
	struct sym_src *src = symbolizer__map(s, pid);

	if (!src)
		return -ENOMEM;
	if (src->map_fd < 0 || src->jit_pid)
		return 0;
	return resolve__hand_early(s, src);
}

int symbolizer__open_perfmap(pid_t pid)
{
	return perfmap__open(pid);
}

size_t symbolizer__perfmap_starts(const char *buf, size_t n,
				  void (*fn)(void *ctx, uint64_t start, size_t offset), void *ctx)
{
	return perfmap__line_starts(buf, n, fn, ctx);
}

bool symbolizer__has_perfmap(struct symbolizer *s, pid_t pid)
{
	struct sym_src *src = symbolizer__map(s, pid);

	src = src ? symbolizer__map_owner(s, src) : NULL;
	return src && src->map_fd >= 0;
}

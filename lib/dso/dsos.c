// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "base/grow.h"
#include "base/htab.h"
#include "base/log.h"
#include "dso/dso.h"
#include "dso/dso_int.h"
#include "dso/dsos.h"
#include "proc/ns.h"
#include "proc/procmaps.h"

struct dsos_ent {
	uint64_t dev, ino;
	uint64_t mtime;		/* the version of the file it stands for (its mtime), 0: any */
	char *path;		/* as the process saw it; NULL: forgotten, the id free */
	struct dso *dso;	/* NULL when it could not be read */
	bool replaced;		/* the file was rewritten in place: its content is another's */
	uint32_t checked;	/* the dsos__check round it was last checked in */
};

/* A root directory other than ours that processes were seen in (a container's). */
struct dsos_root {
	struct rootdir_id id;
	int fd;
};

struct dsos {
	struct dsos_ent *ents;
	uint32_t nr, cap;
	struct htab index;
	uint32_t *free_ids;		/* forgotten, for files added later (a stack) */
	uint32_t nr_free, cap_free;
	uint32_t *added;		/* ids in the order added, from the added_base'th */
	uint32_t nr_added, cap_added;
	uint64_t added_base;
	struct dsos_root *roots;	/* few: one per container */
	uint32_t nr_roots;
	bool closed;			/* files opened for their descriptors only */
	uint32_t check_round;		/* dsos__check's */
};

static uint64_t ent_hash(uint64_t dev, uint64_t ino, const char *path)
{
	return hash_bytes(hash_u64(hash_u64(HASH_SEED, dev), ino), path, strlen(path));
}

void dsos__set_closed(struct dsos *ds, bool closed)
{
	ds->closed = closed;
}

struct dsos *dsos__new(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	return calloc(1, sizeof(struct dsos));
}

void dsos__free(struct dsos *ds)
{
	if (!ds)
		return;
	for (uint32_t i = 0; i < ds->nr; i++) {
		dso__free(ds->ents[i].dso);
		free(ds->ents[i].path);
	}
	free(ds->ents);
	free(ds->free_ids);
	free(ds->added);
	htab__free(&ds->index);
	for (uint32_t i = 0; i < ds->nr_roots; i++)
		close(ds->roots[i].fd);
	free(ds->roots);
	free(ds);
}

/*
 * The vDSO is the kernel's, the same image in every process of this kernel: read it from
 * PID while it lives, else from our own, into a memfd that a dso can open. NULL on failure.
 */
static struct dso *vdso__open(pid_t pid, const struct map *m, bool closed)
{
	size_t len = m->end - m->start;
	unsigned long self = getauxval(AT_SYSINFO_EHDR);
	struct iovec local, remote;
	struct dso *d = NULL;
	char path[64];
	void *buf;
	int fd;

	if (len > (1 << 20) || !(buf = malloc(len)))
		return NULL;
	local = (struct iovec){ buf, len };
	remote = (struct iovec){ (void *)m->start, len };
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)len) {
		if (!self) {
			free(buf);
			return NULL;
		}
		memcpy(buf, (void *)self, len);
	}
	fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd >= 0 && write(fd, buf, len) == (ssize_t)len) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		d = dso__open_flags(-1, path, -1, "[vdso]", closed);
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return d;
}

/* PID's root directory when it is not ours (a descriptor kept in DS, one per distinct
 * directory), else -1. */
static int dsos__root(struct dsos *ds, pid_t pid)
{
	struct rootdir_id id;
	struct dsos_root *r;
	int fd = rootdir__open(pid, &id);

	if (fd < 0)
		return -1;
	for (uint32_t i = 0; i < ds->nr_roots; i++) {
		if (!memcmp(&ds->roots[i].id, &id, sizeof(id))) {
			close(fd);
			return ds->roots[i].fd;
		}
	}
	r = realloc(ds->roots, (ds->nr_roots + 1) * sizeof(*r));
	if (!r) {
		close(fd);
		return -1;
	}
	ds->roots = r;
	r[ds->nr_roots++] = (struct dsos_root){ id, fd };
	return fd;
}

/*
 * Open M's file in PID: /proc/PID/map_files/START-END while PID lives (the very file mapped,
 * even deleted or in another mount namespace); else M's path inside ROOT, PID's root when it
 * is not ours (a container's: links are resolved in there), or in ours (ROOT -1), taken only
 * when its device and inode are the mapping's: no other file stands in for it. NULL when
 * none can be read.
 */
static struct dso *mapped__open(pid_t pid, const struct map *m, int root, bool closed)
{
	char path[96];
	struct dso *d;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, m->start,
		 m->end);
	d = dso__open_flags(-1, path, -1, m->path, closed);
	if (d)
		return d;
	d = dso__open_flags(root, m->path, -1, m->path, closed);
	if (d && m->ino && (d->dev != m->dev || d->ino != m->ino)) {
		pr_debug("%s: not the file pid %d mapped (another device or inode)", m->path, pid);
		dso__free(d);
		d = NULL;
	}
	return d;
}

/* Note that file ID was added, for dsos__added's reader. Returns 0 or -ENOMEM. */
static int dsos__log_added(struct dsos *ds, uint32_t id)
{
	if (array_grow(&ds->added, &ds->cap_added, sizeof(*ds->added), ds->nr_added))
		return -ENOMEM;
	ds->added[ds->nr_added++] = id;
	return 0;
}

/* A new entry for M's file, opened now. Returns its id or UINT32_MAX (ENOMEM). */
static uint32_t dsos__add(struct dsos *ds, pid_t pid, const struct map *m, uint64_t h)
{
	uint32_t id = ds->nr_free ? ds->free_ids[ds->nr_free - 1] : ds->nr;
	struct dsos_ent *e;
	int root;

	if (array_grow(&ds->ents, &ds->cap, sizeof(*ds->ents), id))
		return UINT32_MAX;
	if (dsos__log_added(ds, id))
		return UINT32_MAX;
	e = &ds->ents[id];
	*e = (struct dsos_ent){ .dev = m->dev, .ino = m->ino, .mtime = m->mtime,
				.path = strdup(m->path) };
	if (!e->path || htab__insert(&ds->index, h, id)) {
		free(e->path);
		e->path = NULL;
		ds->nr_added--;
		return UINT32_MAX;
	}
	if (id == ds->nr)
		ds->nr++;
	else
		ds->nr_free--;
	if (map__is_vdso(m)) {
		e->dso = vdso__open(pid, m, ds->closed);
	} else {
		root = dsos__root(ds, pid);
		e->dso = mapped__open(pid, m, root, ds->closed);
		if (e->dso && root >= 0)
			dso__set_root(e->dso, root);
	}
	if (!e->dso)
		pr_debug("cannot read %s mapped by pid %d", m->path, pid);
	/* The version it stands for: the mapping's, else the one opened. One opened after it
	 * was rewritten in place holds another version's content. */
	if (e->dso && !e->mtime)
		e->mtime = dso__mtime(e->dso);
	if (e->dso && dso__mtime(e->dso) != e->mtime) {
		pr_debug("%s mapped by pid %d: rewritten in place since", m->path, pid);
		e->replaced = true;
	}
	e->checked = ds->check_round;
	return id;
}

/* The id of the entry for (DEV, INO, PATH) of hash H in its version MTIME (0, not known: the
 * earliest version; else an entry of unknown version when none has this one), or
 * HTAB_NONE. */
static uint32_t dsos__lookup(const struct dsos *ds, uint64_t dev, uint64_t ino,
			     const char *path, uint64_t mtime, uint64_t h)
{
	uint32_t pos, i, any = HTAB_NONE;

	for (i = htab__first(&ds->index, h, &pos); i != HTAB_NONE;
	     i = htab__next(&ds->index, h, &pos)) {
		const struct dsos_ent *e = &ds->ents[i];

		if (e->dev != dev || e->ino != ino || strcmp(e->path, path))
			continue;
		if (mtime && e->mtime == mtime)
			return i;
		if ((!mtime && (any == HTAB_NONE || e->mtime < ds->ents[any].mtime)) ||
		    (mtime && !e->mtime))
			any = i;
	}
	return any;
}

struct dso *dsos__get(struct dsos *ds, pid_t pid, const struct map *m, uint32_t *id)
{
	uint64_t h;
	uint32_t i;

	if (id)
		*id = UINT32_MAX;
	if (!map__is_dso(m))
		return NULL;
	h = ent_hash(m->dev, m->ino, m->path);
	i = dsos__lookup(ds, m->dev, m->ino, m->path, m->mtime, h);
	if (i == HTAB_NONE && (i = dsos__add(ds, pid, m, h)) == UINT32_MAX)
		return NULL;
	if (id)
		*id = i;
	return ds->ents[i].dso;
}

uint32_t dsos__count(const struct dsos *ds)
{
	return ds->nr;
}

struct dso *dsos__at(const struct dsos *ds, uint32_t id)
{
	return id < ds->nr ? ds->ents[id].dso : NULL;
}

uint32_t dsos__find(const struct dsos *ds, const struct map *m)
{
	uint32_t i;

	if (!map__is_dso(m))
		return UINT32_MAX;
	i = dsos__lookup(ds, m->dev, m->ino, m->path, m->mtime,
			 ent_hash(m->dev, m->ino, m->path));
	return i == HTAB_NONE ? UINT32_MAX : i;
}

uint64_t dsos__current_mtime(const struct dsos *ds, const struct map *m)
{
	struct map any = *m;
	struct stat st;
	uint32_t i;

	any.mtime = 0;
	i = dsos__find(ds, &any);
	if (i == UINT32_MAX || !ds->ents[i].dso || fstat(dso__fd(ds->ents[i].dso), &st))
		return 0;
	return (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
}

void dsos__check(struct dsos *ds)
{
	ds->check_round++;
}

bool dsos__replaced(struct dsos *ds, uint32_t id)
{
	struct dsos_ent *e = id < ds->nr ? &ds->ents[id] : NULL;
	struct stat st;

	if (!e || !e->path || !e->dso || e->replaced || e->checked == ds->check_round)
		return e && e->replaced;
	e->checked = ds->check_round;
	if (!fstat(dso__fd(e->dso), &st) &&
	    (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec != e->mtime) {
		pr_debug("%s: rewritten in place while profiled", e->path);
		e->replaced = true;
	}
	return e->replaced;
}

bool dsos__known(const struct dsos *ds, uint32_t id)
{
	return id < ds->nr && ds->ents[id].path;
}

void dsos__forget(struct dsos *ds, const uint32_t *ids, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		struct dsos_ent *e = ids[k] < ds->nr ? &ds->ents[ids[k]] : NULL;

		if (!e || !e->path)
			continue;
		/* Room for the id on the free stack first: else it is left unused. */
		if (array_grow(&ds->free_ids, &ds->cap_free, sizeof(*ds->free_ids), ds->nr_free))
			continue;
		htab__remove(&ds->index, ent_hash(e->dev, e->ino, e->path), ids[k]);
		dso__free(e->dso);
		free(e->path);
		*e = (struct dsos_ent){ 0 };
		ds->free_ids[ds->nr_free++] = ids[k];
	}
}

uint32_t dsos__added(struct dsos *ds, uint64_t seen)
{
	uint64_t done = seen > ds->added_base ? seen - ds->added_base : 0;

	/* What the reader took is dropped once it is half the log. */
	if (done > 64 && done >= ds->nr_added / 2) {
		memmove(ds->added, ds->added + done, (ds->nr_added - done) * sizeof(*ds->added));
		ds->nr_added -= (uint32_t)done;
		ds->added_base += done;
		done = 0;
	}
	return seen >= ds->added_base && done < ds->nr_added ? ds->added[done] : UINT32_MAX;
}

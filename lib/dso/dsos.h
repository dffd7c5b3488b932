/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * dsos: the table of every file the profiled processes map, one struct dso per file (told
 * apart by device, inode and path), shared by the unwinder, the symbolizer and the collector.
 * Each file gets a small id (0, 1, 2, ... in the order first asked for, also for files that
 * cannot be read), so that each user can keep its own per-file state in an array.
 */
#ifndef DSO_DSOS_H
#define DSO_DSOS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct dso;
struct dsos;
struct map;

/* An empty table; NULL on ENOMEM. Raises this process's soft limit of open files to its
 * hard limit (each dso keeps its file open). Free with dsos__free (NULL is fine), which
 * frees every dso. */
struct dsos *dsos__new(void);
void dsos__free(struct dsos *ds);

/* From now on, files are opened for their descriptors only (dso__open_closed): another
 * process reads them (the sandboxed worker, which gives back their build ids). */
void dsos__set_closed(struct dsos *ds, bool closed);

/*
 * The dso of the file that mapping M of process PID maps (M->path starts with '/'), opened at
 * the first request and kept: through /proc/PID/map_files while PID lives, else by its path
 * inside PID's root (or ours), only when that file's device and inode are M's. NULL when the
 * file cannot be read (not tried again). *ID, when ID is not NULL, gets the file's id; HTAB_NONE-like
 * UINT32_MAX when M is not a file mapping or memory ran out. Owned by DS.
 */
struct dso *dsos__get(struct dsos *ds, pid_t pid, const struct map *m, uint32_t *id);

/* Number of files known (ids are below it), and the dso of file ID (NULL if unreadable or
 * forgotten). */
uint32_t dsos__count(const struct dsos *ds);
struct dso *dsos__at(const struct dsos *ds, uint32_t id);

/* The id of the file mapping M maps, when it is known (nothing is opened): else UINT32_MAX. */
uint32_t dsos__find(const struct dsos *ds, const struct map *m);

/*
 * Whether file ID was rewritten in place (its mtime) since the version it stands for was
 * mapped: its content now is another program's, and what is read of it does not name that
 * version's addresses. Its descriptor is looked at once per round of dsos__check (one before
 * each profile is named).
 */
bool dsos__replaced(struct dsos *ds, uint32_t id);
void dsos__check(struct dsos *ds);

/* The modification time (ns) of the file mapping M maps as it is now, through the descriptor
 * of a version of it opened already (nothing opened, no lock of the process taken), or 0. */
uint64_t dsos__current_mtime(const struct dsos *ds, const struct map *m);

/* Whether file ID is known now (added, not forgotten). */
bool dsos__known(const struct dsos *ds, uint32_t id);

/*
 * Forget the N files IDS (no process maps them any more; every other user of their ids has
 * forgotten them): their dsos freed, descriptors closed. Their ids are given to files added
 * later, the most recently forgotten first.
 */
void dsos__forget(struct dsos *ds, const uint32_t *ids, size_t n);

/*
 * The files added, in order, for one reader (the symbolizer, which hands them to its
 * worker): the id of the (*SEEN)th file added, UINT32_MAX when no more were; the reader adds
 * one to *SEEN once it took it. A forgotten id may come, and an id again when it was given
 * to another file.
 */
uint32_t dsos__added(struct dsos *ds, uint64_t seen);

#endif

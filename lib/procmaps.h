/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * procmaps: the executable mappings of every process the profile has seen, from
 * /proc/PID/maps snapshots and from mmap events recorded while the processes ran, so that
 * addresses resolve after the processes have exited.
 */
#ifndef PROCMAPS_H
#define PROCMAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define PROCMAPS_PATH_MAX 4096

struct map {
	uint64_t start, end;	/* [start, end) in the process */
	uint64_t pgoff;		/* file offset of start */
	uint64_t dev;		/* makedev(major, minor) of the file, 0 if none */
	uint64_t ino;		/* inode, 0 for anonymous and special mappings */
	char *path;		/* as the process saw it: "/usr/lib/x.so", "[vdso]", "" */
};

struct procmaps;

/*
 * Parse one line of /proc/PID/maps ("start-end perms offset maj:min inode   path").
 * Fills M (M->path points into LINE, which is modified: the trailing newline and a
 * " (deleted)" suffix are cut and *deleted says so). Returns 1 for an executable mapping,
 * 0 for a mapping without x permission, -EINVAL for a malformed line. Pure.
 */
int procmaps__parse_line(char *line, struct map *m, bool *deleted);

/* Runtime address -> file offset within M's file: addr - start + pgoff. Pure. */
static inline uint64_t map__file_offset(const struct map *m, uint64_t addr)
{
	return addr - m->start + m->pgoff;
}

/* A new, empty cache; NULL on ENOMEM. Free with procmaps__free (NULL is fine). */
struct procmaps *procmaps__new(void);
void procmaps__free(struct procmaps *pm);

/*
 * Read the executable mappings of PID from /proc/PID/maps and add them (replacing any they
 * overlap). Returns 0, or negative errno (-ENOENT when the process is gone).
 */
int procmaps__load(struct procmaps *pm, pid_t pid);

/* Read /proc/PID/maps of every process now alive. Returns the number of processes read. */
int procmaps__load_all(struct procmaps *pm);

/*
 * Add one executable mapping of PID (its path is copied), dropping the known mappings it
 * overlaps, as a new mmap does. Returns 0 or -ENOMEM.
 */
int procmaps__add(struct procmaps *pm, pid_t pid, const struct map *m);

/* The mapping of PID holding ADDR, or NULL. Owned by PM; valid until the next add or load. */
const struct map *procmaps__find(const struct procmaps *pm, pid_t pid, uint64_t addr);

/* Whether any mapping of PID is known. */
bool procmaps__has(const struct procmaps *pm, pid_t pid);

#endif

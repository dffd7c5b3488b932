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
#include <string.h>
#include <sys/types.h>

#define PROCMAPS_PATH_MAX 4096

struct map {
	uint64_t start, end;	/* [start, end) in the process */
	uint64_t pgoff;		/* file offset of start */
	uint64_t dev;		/* makedev(major, minor) of the file, 0 if none */
	uint64_t ino;		/* inode, 0 for anonymous and special mappings */
	char *path;		/* as the process saw it: "/usr/lib/x.so", "[vdso]", "" */
	uint64_t time;		/* when it was mapped (the mmap record's clock), 0: before
				 * the profile began (read from /proc/PID/maps) */
	uint64_t mtime;		/* its file's modification time (ns) when it was recorded,
				 * 0: not known: which version of a file rewritten in place */
};


struct procmaps;

/*
 * Parse one line of /proc/PID/maps ("start-end perms offset maj:min inode   path").
 * Fills M (M->path points into LINE, which is modified: the trailing newline and a
 * " (deleted)" suffix are cut and *deleted says so). Returns 1 for an executable mapping,
 * 0 for a mapping without x permission, -EINVAL for a malformed line. Pure.
 */
int procmaps__parse_line(char *line, struct map *m, bool *deleted);

/* Whether M is the vDSO (whose image is read from memory, from its start). Pure. */
static inline bool map__is_vdso(const struct map *m)
{
	return !strcmp(m->path, "[vdso]");
}

/* Whether M maps something a dso can be made of: a file by its path, or the vDSO. Pure. */
static inline bool map__is_dso(const struct map *m)
{
	return m->path[0] == '/' || map__is_vdso(m);
}

/* Runtime address -> offset within M's file (or the vDSO's image): addr - start + pgoff.
 * Pure. */
static inline uint64_t map__file_offset(const struct map *m, uint64_t addr)
{
	return addr - m->start + (map__is_vdso(m) ? 0 : m->pgoff);
}

/* A new, empty cache; NULL on ENOMEM. Free with procmaps__free (NULL is fine). */
struct procmaps *procmaps__new(void);
void procmaps__free(struct procmaps *pm);

/*
 * Read the executable mappings of PID from /proc/PID/maps and add them (replacing any they
 * overlap), each with its file's version (mtime, a stat through /proc/PID/map_files that
 * waits for the process's mmap lock: for before sampling). Returns 0, or negative errno
 * (-ENOENT when the process is gone).
 */
int procmaps__load(struct procmaps *pm, pid_t pid);

/* Read /proc/PID/maps of every process now alive. Returns the number of processes read. */
int procmaps__load_all(struct procmaps *pm);

/*
 * Add one executable mapping of PID (its path is copied), dropping what it overlaps of the
 * known mappings, as a new mmap does (what is left of them outside it stays). When it maps
 * something else than what was there, at a time after the current program or epoch began,
 * an epoch begins (above); one reported late goes into the epoch it was made in. A process keeps at most LIMIT_MAPS_MAX mappings, half of
 * them of no file (base/limits.h): past that a new mapping that replaces none is left out,
 * and counted (LIMIT_MAPS). Mappings are charged to the memory budget. Returns 0 or -ENOMEM.
 */
int procmaps__add(struct procmaps *pm, pid_t pid, const struct map *m);

/* Called after every mapping added (by procmaps__add, __load, __fork), with CTX. */
typedef void (*procmaps_add_fn)(void *ctx, pid_t pid, const struct map *m);
void procmaps__set_add_hook(struct procmaps *pm, procmaps_add_fn fn, void *ctx);

/* CHILD was forked from PARENT at TIME (struct map's clock; 0: unknown): it starts with a
 * copy of PARENT's mappings, under those of its own made at or after TIME (reported before
 * the fork); what CHILD's pid mapped before TIME, in an earlier process, is kept apart (see
 * procmaps__exec), and CHILD gets PARENT's name. Nothing is done when neither is known.
 * Returns 0 or -ENOMEM. */
int procmaps__fork(struct procmaps *pm, pid_t parent, pid_t child, uint64_t time);

/*
 * Epochs: a mapping that replaces another (a library dlclose'd and another dlopen'ed where it
 * was; a file where anonymous code was) keeps the mappings as they were apart, as an earlier
 * program's are, for the samples taken before it (procmaps__incarnation). BPF begins the
 * samples' new gen when the mapping is stored, a little before the mmap record's time:
 * an epoch begins PROCMAPS_EPOCH_SLACK_NS before its record.
 */
#define PROCMAPS_EPOCH_SLACK_NS	1000000ull

/*
 * JIT code of PID rewritten in place (a perf-map line appended for an address another line
 * named): its samples from TIME on (BPF's clock; their gen is TIME, set by the caller) are of
 * a new epoch, those before name its JIT code by the first UPTO bytes of its perf map
 * (perfmap__lookup_at). Returns 0 or -ENOMEM.
 */
int procmaps__jit_epoch(struct procmaps *pm, pid_t pid, uint64_t time, uint64_t upto);

/* Whether AS (from procmaps__incarnation) is an epoch of a program kept apart: *OWNER the pid
 * whose program it was (its perf map), *JIT_UPTO the bytes of that map in force then
 * (UINT64_MAX: all). */
bool procmaps__epoch_of(const struct procmaps *pm, pid_t as, pid_t *owner, uint64_t *jit_upto);

/* Pids from here up (above any pid_max) stand for earlier programs of a pid. */
#define PROCMAPS_ARCHIVED_PID	0x40000000
#define PROCMAPS_COMM_LEN	16

/*
 * PID ran execve at TIME (struct map's clock; 0: unknown), and is now COMM: the mappings of
 * its earlier program (made before TIME) are kept apart, under a pid of their own that
 * procmaps__incarnation gives for that program's samples; as are, in procmaps__fork, those
 * of an earlier process whose pid a new one got. Returns 0 or -ENOMEM.
 */
int procmaps__exec(struct procmaps *pm, pid_t pid, uint64_t time, const char *comm);

/*
 * The pid under which the mappings of PID's program at GEN are kept: GEN is when that
 * program began (a fork or exec seen while profiling; BPF's clock, which the records share,
 * a little after the record's time), 0 for the program PID ran when profiling began. PID
 * itself for its current program.
 */
pid_t procmaps__incarnation(const struct procmaps *pm, pid_t pid, uint64_t gen);

/* PID's current program has no samples (BPF says so): when it ends (procmaps__exec, or a
 * fork that gives its pid to a new process), its mappings are dropped, not kept apart. */
void procmaps__unsampled(struct procmaps *pm, pid_t pid);

/* The name of PID's program as recorded here (procmaps__set_comm, exec, fork; an earlier
 * program's under its own pid), or NULL. */
const char *procmaps__comm(const struct procmaps *pm, pid_t pid);
void procmaps__set_comm(struct procmaps *pm, pid_t pid, const char *comm);

/* The mapping of PID holding ADDR, or NULL. Owned by PM; valid until the next add or load. */
const struct map *procmaps__find(const struct procmaps *pm, pid_t pid, uint64_t addr);

/* The executable mappings of PID known now, sorted by start; *N gets their number (0, and
 * NULL, for a process with none). Owned by PM; valid until the next add or load. */
const struct map *procmaps__maps(const struct procmaps *pm, pid_t pid, size_t *n);

/* How many times a mapping of PID was put over others it had, a file's or over a file's (a
 * library dlopen'ed where another was, a split by mprotect, a file where anonymous memory
 * was; not anonymous memory over anonymous memory): what was learnt of its addresses before
 * (the unwinder's files by address) may be another file's since. */
uint64_t procmaps__replaced(const struct procmaps *pm, pid_t pid);

/* Whether any mapping of PID is known. */
bool procmaps__has(const struct procmaps *pm, pid_t pid);

/*
 * procmaps__load(PM, PID), without the files' versions (the earliest is taken), unless PID has
 * mappings already or a load of it was tried before (successful or not): for lookups that may
 * come once per sample. Returns whether PID has mappings now.
 */
bool procmaps__ensure(struct procmaps *pm, pid_t pid);

/*
 * Forget PID (it exited and none of its samples is left to name): its mappings, name and
 * earlier programs kept apart, their memory released; their archived pids may serve again.
 * For long runs (continuous mode); a later lookup of PID reads /proc/PID/maps again.
 */
void procmaps__forget(struct procmaps *pm, pid_t pid);

/* The pids with mappings of their own (not the archived earlier programs), malloc'd (the
 * caller frees it), *N their number; NULL when none or on ENOMEM. */
pid_t *procmaps__pids(const struct procmaps *pm, size_t *n);

#endif

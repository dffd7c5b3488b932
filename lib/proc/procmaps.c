// SPDX-License-Identifier: GPL-3.0-or-later
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "base/bsearch.h"
#include "base/limits.h"
#include "base/grow.h"
#include "proc/procmaps.h"

#define NR_BUCKETS 1024

/* The mappings of one process, sorted by start, never overlapping. */
/* An earlier program of a pid, kept apart under the pid AS. */
struct incarn {
	uint64_t since;		/* when it began (the records' clock), 0: before the profile */
	pid_t as;
};

struct pmaps {
	pid_t pid;
	bool load_tried;	/* /proc/PID/maps was read, or could not be */
	bool archived;		/* an earlier program of another pid (PROCMAPS_ARCHIVED_PID) */
	bool unsampled;		/* its program has no samples: not kept apart when it ends */
	bool by_epoch;		/* began at an epoch of its program (a mapping replaced), not
				 * at a fork or exec */
	pid_t owner;		/* an epoch kept apart: the pid whose it was (0: not one) */
	uint64_t jit_upto;	/* an epoch kept apart: the bytes of its perf map in force then
				 * (UINT64_MAX: all) */
	struct map *maps;
	size_t nr, cap;
	size_t nr_anon;		/* of NR, mappings of no file (JIT code, if code) */
	uint64_t replaced;	/* mappings put over others (procmaps__replaced) */
	uint64_t since;		/* when this program began (fork, exec), 0: before the profile */
	char comm[PROCMAPS_COMM_LEN];	/* its name, "" when not known */
	struct incarn *old;	/* the pid's earlier programs, oldest first */
	uint32_t nr_old, cap_old;
	struct pmaps *next;	/* bucket chain */
};

struct procmaps {
	struct pmaps *buckets[NR_BUCKETS];
	procmaps_add_fn add_hook;
	void *add_ctx;
	pid_t next_as;		/* the next pid for an earlier program, from
				 * PROCMAPS_ARCHIVED_PID */
	uint32_t nr_archived;	/* earlier programs kept apart now */
	uint64_t nr_epochs;	/* epochs begun (procmaps__epochs) */
};

/* --- parsing ---------------------------------------------------------------------------- */

static int parse_hex(char **p, uint64_t *v, char stop)
{
	char *end;

	errno = 0;
	*v = strtoull(*p, &end, 16);
	if (errno || end == *p || *end != stop)
		return -EINVAL;
	*p = end + 1;
	return 0;
}

int procmaps__parse_line(char *line, struct map *m, bool *deleted)
{
	static const char deleted_suffix[] = " (deleted)";
	uint64_t maj, min, ino;
	char *p = line, *end, perms[5];
	size_t len;

	memset(m, 0, sizeof(*m));
	*deleted = false;
	if (parse_hex(&p, &m->start, '-') || parse_hex(&p, &m->end, ' ') || m->end <= m->start)
		return -EINVAL;
	if (strlen(p) < 5 || p[4] != ' ')
		return -EINVAL;
	memcpy(perms, p, 4);
	perms[4] = '\0';
	p += 5;
	if (parse_hex(&p, &m->pgoff, ' ') || parse_hex(&p, &maj, ':') || parse_hex(&p, &min, ' '))
		return -EINVAL;
	errno = 0;
	ino = strtoull(p, &end, 10);
	if (errno || end == p || (*end != ' ' && *end != '\n' && *end != '\0'))
		return -EINVAL;
	m->ino = ino;
	m->dev = makedev(maj, min);
	p = end;
	while (*p == ' ')
		p++;
	len = strcspn(p, "\n");
	p[len] = '\0';
	if (len >= sizeof(deleted_suffix) - 1 &&
	    !strcmp(p + len - (sizeof(deleted_suffix) - 1), deleted_suffix)) {
		p[len - (sizeof(deleted_suffix) - 1)] = '\0';
		*deleted = true;
	}
	m->path = p;
	return perms[2] == 'x' ? 1 : 0;
}

/* --- the cache -------------------------------------------------------------------------- */

/* Bytes of the memory budget mapping M holds. */
static uint64_t map__bytes(const struct map *m)
{
	return sizeof(*m) + strlen(m->path) + 1;
}

/* Take mapping M out of P's counts (its path is the caller's now). */
static void map__forget(struct pmaps *p, const struct map *m)
{
	if (m->path[0] != '/')
		p->nr_anon--;
	limits__release(map__bytes(m));
}

/* Forget mapping M of P, its path freed. */
static void map__drop(struct pmaps *p, struct map *m)
{
	map__forget(p, m);
	free(m->path);
}

struct procmaps *procmaps__new(void)
{
	return calloc(1, sizeof(struct procmaps));
}

void procmaps__free(struct procmaps *pm)
{
	if (!pm)
		return;
	for (int b = 0; b < NR_BUCKETS; b++) {
		struct pmaps *p = pm->buckets[b], *next;

		for (; p; p = next) {
			next = p->next;
			for (size_t i = 0; i < p->nr; i++)
				map__drop(p, &p->maps[i]);
			free(p->maps);
			free(p->old);
			free(p);
		}
	}
	free(pm);
}

static struct pmaps *pmaps__get(const struct procmaps *pm, pid_t pid)
{
	struct pmaps *p = pm->buckets[(uint32_t)pid % NR_BUCKETS];

	while (p && p->pid != pid)
		p = p->next;
	return p;
}

static struct pmaps *pmaps__get_or_add(struct procmaps *pm, pid_t pid)
{
	struct pmaps *p = pmaps__get(pm, pid);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->next = pm->buckets[(uint32_t)pid % NR_BUCKETS];
	pm->buckets[(uint32_t)pid % NR_BUCKETS] = p;
	return p;
}

/* Index of the first mapping whose end is above ADDR. */
static size_t pmaps__first_ending_after(const struct pmaps *p, uint64_t addr)
{
	return BSEARCH_PREFIX(p->nr, mid, p->maps[mid].end <= addr);
}

/* Whether mapping O, which M overlaps, mapped something else there: another file, or the
 * same file at another offset. Anonymous code replaced by anonymous code is not (its names
 * come from perf maps). Pure. */
static bool map__differs(const struct map *o, const struct map *m)
{
	const char *path = m->path ? m->path : "";

	if (strcmp(o->path, path) || o->dev != m->dev || o->ino != m->ino ||
	    (o->mtime && m->mtime && o->mtime != m->mtime))
		return true;
	return path[0] == '/' && o->start - o->pgoff != m->start - m->pgoff;
}

/* Whether M replaces something in P's mappings (map__differs); *NEWER whether one of those
 * it overlaps was mapped after it. */
static bool pmaps__replaced_by(const struct pmaps *p, const struct map *m, bool *newer)
{
	bool differs = false;

	*newer = false;
	for (size_t i = pmaps__first_ending_after(p, m->start);
	     i < p->nr && p->maps[i].start < m->end; i++) {
		differs |= map__differs(&p->maps[i], m);
		*newer |= p->maps[i].time > m->time;
	}
	return differs;
}

/*
 * Put M into P's mappings, as a new mmap does: the parts of those it overlaps that lie
 * outside it stay (their file offsets moved with their starts), the rest are dropped.
 * Returns 0 or -ENOMEM.
 */
static int pmaps__put(struct procmaps *pm, struct pmaps *p, const struct map *m)
{
	size_t first, last, anon = 0, nr_new;
	bool is_anon = !m->path || m->path[0] != '/';
	struct map head = { 0 }, tail = { 0 };
	char *path, *head_path = NULL, *tail_path = NULL;
	pid_t pid = p->pid;
	/* Mappings [first, last) overlap the new one: it replaces them. A process may have
	 * LIMIT_MAPS_MAX mappings, half of them without a file: past that, a new one that
	 * replaces none is left out (counted). */
	first = pmaps__first_ending_after(p, m->start);
	for (last = first; last < p->nr && p->maps[last].start < m->end; last++)
		anon += p->maps[last].path[0] != '/';
	if ((p->nr - (last - first) >= LIMIT_MAPS_MAX) ||
	    (is_anon && p->nr_anon - anon >= LIMIT_MAPS_MAX / 2)) {
		limits__hit(LIMIT_MAPS, 1);
		return 0;
	}
	/* What is left of the first and last mappings it overlaps, outside it. */
	if (first < last && p->maps[first].start < m->start) {
		head = p->maps[first];
		head.end = m->start;
		head_path = strdup(head.path);
		if (!head_path)
			return -ENOMEM;
	}
	if (first < last && p->maps[last - 1].end > m->end) {
		tail = p->maps[last - 1];
		if (tail.path[0] == '/')
			tail.pgoff += m->end - tail.start;
		tail.start = m->end;
		tail_path = strdup(tail.path);
		if (!tail_path) {
			free(head_path);
			return -ENOMEM;
		}
	}
	path = strdup(m->path ? m->path : "");
	nr_new = 1 + !!head_path + !!tail_path;
	if (!path || array_grow(&p->maps, &p->cap, sizeof(*p->maps), p->nr + nr_new)) {
		free(path);
		free(head_path);
		free(tail_path);
		return -ENOMEM;
	}
	/* (Anonymous memory over anonymous memory, a JIT's code space committed in its
	 * reservation, changes no file's place: not counted, lest each such commit have the
	 * unwinder learn the process's files again.) */
	for (size_t i = first; i < last; i++)
		if (!is_anon || p->maps[i].path[0] == '/') {
			p->replaced++;
			break;
		}
	for (size_t i = first; i < last; i++)
		map__drop(p, &p->maps[i]);
	memmove(&p->maps[first + nr_new], &p->maps[last], (p->nr - last) * sizeof(*p->maps));
	p->nr = p->nr - (last - first) + nr_new;
	if (head_path) {
		head.path = head_path;
		p->maps[first++] = head;
		p->nr_anon += head_path[0] != '/';
		limits__charge(map__bytes(&head));
	}
	p->maps[first] = *m;
	p->maps[first].path = path;
	p->nr_anon += is_anon;
	limits__charge(map__bytes(&p->maps[first]));
	if (tail_path) {
		tail.path = tail_path;
		p->maps[first + 1] = tail;
		p->nr_anon += tail_path[0] != '/';
		limits__charge(map__bytes(&tail));
	}
	if (pm->add_hook && !p->archived)
		pm->add_hook(pm->add_ctx, pid, &p->maps[first]);
	return 0;
}

static void pmaps__remove(struct procmaps *pm, pid_t pid, bool old);

/* A new archived pid not in use (procmaps__forget frees them), its entry made; NULL on
 * ENOMEM or past LIMIT_INCARNATIONS_MAX (counted). */
static struct pmaps *archive__new(struct procmaps *pm)
{
	struct pmaps *a;

	if (pm->nr_archived >= LIMIT_INCARNATIONS_MAX) {
		limits__hit(LIMIT_INCARNATIONS, 1);
		return NULL;
	}
	do {
		if (!pm->next_as || pm->next_as >= PROCMAPS_ARCHIVED_PID + LIMIT_INCARNATIONS_MAX)
			pm->next_as = PROCMAPS_ARCHIVED_PID;
	} while (pmaps__get(pm, pm->next_as) && ++pm->next_as);
	a = pmaps__get_or_add(pm, pm->next_as++);
	if (!a)
		return NULL;
	pm->nr_archived++;
	a->archived = a->load_tried = true;
	return a;
}

/* A copy of P's mappings as a new archived entry, which began at P's since; NULL on ENOMEM
 * or past the limit. P may move (the bucket chain): look it up again. */
static struct pmaps *pmaps__copy(struct procmaps *pm, const struct pmaps *p)
{
	pid_t pid = p->pid;
	struct pmaps *a = archive__new(pm);

	p = pmaps__get(pm, pid);
	if (!a || !p)
		return NULL;
	a->since = p->since;
	a->by_epoch = p->by_epoch;
	a->owner = p->archived ? p->owner : p->pid;
	a->jit_upto = p->archived ? p->jit_upto : UINT64_MAX;
	memcpy(a->comm, p->comm, sizeof(a->comm));
	a->maps = malloc((p->nr ? p->nr : 1) * sizeof(*a->maps));
	if (!a->maps)
		return NULL;
	a->cap = p->nr ? p->nr : 1;
	for (size_t i = 0; i < p->nr; i++) {
		struct map c = p->maps[i];

		c.path = strdup(c.path);
		if (!c.path)
			return NULL;
		a->maps[a->nr++] = c;
		a->nr_anon += c.path[0] != '/';
		limits__charge(map__bytes(&c));
	}
	return a;
}

/* Insert (SINCE, AS) into P's earlier programs at index AT. Returns 0 or -ENOMEM. */
static int pmaps__insert_old(struct pmaps *p, uint32_t at, uint64_t since, pid_t as)
{
	if (array_grow(&p->old, &p->cap_old, sizeof(*p->old), p->nr_old))
		return -ENOMEM;
	memmove(&p->old[at + 1], &p->old[at], (p->nr_old - at) * sizeof(*p->old));
	p->old[at] = (struct incarn){ .since = since, .as = as };
	p->nr_old++;
	return 0;
}

/* Epochs kept apart per pid: past that, the oldest epoch of a program is merged into the one
 * after it (its samples named with that one's mappings, counted). */
#define PROCMAPS_EPOCHS_MAX	256

/* Drop P's oldest epoch kept apart when it has PROCMAPS_EPOCHS_MAX of them. */
static void pmaps__bound_epochs(struct procmaps *pm, struct pmaps *p)
{
	uint32_t n = 0, oldest = UINT32_MAX;

	/* Each epoch kept apart is one of P's earlier states: fewer, nothing to count. */
	if (p->nr_old < PROCMAPS_EPOCHS_MAX)
		return;
	for (uint32_t i = 0; i + 1 < p->nr_old; i++) {
		const struct pmaps *next = pmaps__get(pm, p->old[i + 1].as);

		if (next && next->by_epoch) {
			n++;
			if (oldest == UINT32_MAX)
				oldest = i;
		}
	}
	if (p->by_epoch && p->nr_old) {
		n++;
		if (oldest == UINT32_MAX)
			oldest = p->nr_old - 1;
	}
	if (n < PROCMAPS_EPOCHS_MAX || oldest == UINT32_MAX)
		return;
	/* OLDEST's time goes to the epoch after it. */
	if (oldest + 1 < p->nr_old) {
		struct pmaps *next = pmaps__get(pm, p->old[oldest + 1].as);

		p->old[oldest + 1].since = p->old[oldest].since;
		if (next) {
			next->since = p->old[oldest].since;
			next->by_epoch = pmaps__get(pm, p->old[oldest].as) &&
					 pmaps__get(pm, p->old[oldest].as)->by_epoch;
		}
	} else {
		const struct pmaps *o = pmaps__get(pm, p->old[oldest].as);

		p->since = p->old[oldest].since;
		p->by_epoch = o && o->by_epoch;
	}
	pid_t as = p->old[oldest].as;

	memmove(&p->old[oldest], &p->old[oldest + 1], (p->nr_old - oldest - 1) * sizeof(*p->old));
	p->nr_old--;
	pmaps__remove(pm, as, false);
	limits__hit(LIMIT_EPOCHS, 1);
}

/* When an epoch begun by a mapping recorded at TIME begins: a little before. */
static uint64_t epoch_time(uint64_t time)
{
	return time > PROCMAPS_EPOCH_SLACK_NS ? time - PROCMAPS_EPOCH_SLACK_NS : 0;
}

/*
 * P's current state ends at TIME (no earlier than it began): a copy of its mappings is kept
 * apart for the samples before, which named JIT code by the first UPTO bytes of P's perf map
 * (UINT64_MAX: all); P goes on from TIME. Returns 0 or -ENOMEM (past the limit of states
 * kept apart, nothing is: counted).
 */
static int pmaps__new_epoch(struct procmaps *pm, struct pmaps *p, uint64_t time, uint64_t upto)
{
	pid_t pid = p->pid;
	struct pmaps *c = pmaps__copy(pm, p);
	int err;

	p = pmaps__get(pm, pid);
	if (!c)
		return p ? 0 : -ENOMEM;
	c->jit_upto = upto;
	if ((err = pmaps__insert_old(p, p->nr_old, p->since, c->pid)))
		return err;
	p->since = time > p->since ? time : p->since;
	p->by_epoch = true;
	pm->nr_epochs++;
	pmaps__bound_epochs(pm, p);
	return 0;
}

/*
 * M, reported late (mapped before P's current epoch or program began, its record read after
 * a later one's: another CPU's buffer first), goes where it was true: into the epoch it was
 * made in (split at its time when it replaced something there), and into the later epochs
 * of the same program where what it overlaps is older than it. Returns 0 or -ENOMEM.
 */
static int pmaps__put_late(struct procmaps *pm, struct pmaps *p, const struct map *m)
{
	pid_t pid = p->pid;
	uint32_t k = 0;
	bool newer;
	int err;

	uint64_t t = epoch_time(m->time);

	/* The state it was made in: the last that began at or before it. */
	while (k + 1 < p->nr_old && p->old[k + 1].since <= m->time)
		k++;
	if (!p->nr_old || p->old[k].since > m->time)
		return pmaps__put(pm, p, m);	/* before all that is known */
	for (uint32_t i = k; i <= p->nr_old; i++) {
		struct pmaps *s = i < p->nr_old ? pmaps__get(pm, p->old[i].as) : p;

		bool replaces;

		if (i > k && !(s && s->by_epoch))
			break;	/* another program began: not its */
		if (!s)
			continue;
		replaces = pmaps__replaced_by(s, m, &newer);
		if (newer)
			continue;	/* mapped over since */
		if (replaces && i == k) {
			/* Split S at M's time: a copy of it, with M, from then on. */
			struct pmaps *c = pmaps__copy(pm, s);

			p = pmaps__get(pm, pid);
			if (!c)
				return p ? 0 : -ENOMEM;
			c->since = t > s->since ? t : s->since;
			c->by_epoch = true;
			if ((err = pmaps__put(pm, c, m)) ||
			    (err = pmaps__insert_old(p, k + 1, c->since, c->pid)))
				return err;
			pm->nr_epochs++;
			i++;	/* the copy, done */
			continue;
		}
		if ((err = pmaps__put(pm, s, m)))
			return err;
		p = pmaps__get(pm, pid);
	}
	return 0;
}

int procmaps__add(struct procmaps *pm, pid_t pid, const struct map *m)
{
	struct pmaps *p = pmaps__get_or_add(pm, pid);
	bool newer;
	int err;

	if (!p)
		return -ENOMEM;
	/* From /proc/PID/maps, or to an earlier program: as it comes. */
	if (!m->time || p->archived)
		return pmaps__put(pm, p, m);
	if (m->time < p->since)
		return pmaps__put_late(pm, p, m);
	/* A mapping replaced by another (a library dlclose'd, another dlopen'ed where it was):
	 * the samples before are named with what was there before. A copy of the mappings as
	 * they were is kept apart as an epoch that ends now; BPF gives the samples after this
	 * a new gen (on_mmap_exec). */
	if (pmaps__replaced_by(p, m, &newer) &&
	    (err = pmaps__new_epoch(pm, p, epoch_time(m->time), UINT64_MAX)))
		return err;
	return pmaps__put(pm, p, m);
}

int procmaps__jit_epoch(struct procmaps *pm, pid_t pid, uint64_t time, uint64_t upto)
{
	struct pmaps *p = pmaps__get(pm, pid);

	if (!p || p->archived || time < p->since)
		return 0;
	return pmaps__new_epoch(pm, p, time, upto);
}

bool procmaps__epoch_of(const struct procmaps *pm, pid_t as, pid_t *owner, uint64_t *jit_upto)
{
	const struct pmaps *a = as >= PROCMAPS_ARCHIVED_PID ? pmaps__get(pm, as) : NULL;

	if (!a || !a->owner)
		return false;
	*owner = a->owner;
	*jit_upto = a->jit_upto;
	return true;
}

/*
 * P's program ends at TIME (a fork under its pid, or an exec): its mappings made before TIME
 * (all of them when TIME is 0) move to a new pid of their own (PROCMAPS_ARCHIVED_PID and
 * up), recorded in P's list of earlier programs with when it began; those made at or after
 * TIME (the next program's, reported early by another CPU's buffer) stay. Past
 * LIMIT_INCARNATIONS_MAX, nothing is kept apart (counted). Returns 0 or -ENOMEM.
 */
static int pmaps__archive(struct procmaps *pm, struct pmaps *p, uint64_t time)
{
	pid_t pid = p->pid;
	struct pmaps *a;
	size_t keep = 0;

	if (p->archived)
		return 0;
	if (p->unsampled) {
		/* Nothing to name with them: the program's mappings are only forgotten. */
		p->unsampled = false;
		for (size_t i = 0; i < p->nr; i++) {
			if (time && p->maps[i].time >= time)
				p->maps[keep++] = p->maps[i];
			else
				map__drop(p, &p->maps[i]);
		}
		p->nr = keep;
		return 0;
	}
	if (pm->nr_archived >= LIMIT_INCARNATIONS_MAX) {
		limits__hit(LIMIT_INCARNATIONS, 1);
		return 0;
	}
	/* The next archived pid not in use (procmaps__forget frees them). */
	do {
		if (!pm->next_as || pm->next_as >= PROCMAPS_ARCHIVED_PID + LIMIT_INCARNATIONS_MAX)
			pm->next_as = PROCMAPS_ARCHIVED_PID;
	} while (pmaps__get(pm, pm->next_as) && ++pm->next_as);
	if (array_grow(&p->old, &p->cap_old, sizeof(*p->old), p->nr_old))
		return -ENOMEM;
	a = pmaps__get_or_add(pm, pm->next_as);
	if (!a)
		return -ENOMEM;
	pm->nr_archived++;
	p = pmaps__get(pm, pid);	/* the bucket chain may have changed, not P itself */
	a->archived = a->load_tried = true;
	a->since = p->since;
	a->by_epoch = p->by_epoch;
	memcpy(a->comm, p->comm, sizeof(a->comm));
	a->maps = malloc((p->nr ? p->nr : 1) * sizeof(*a->maps));
	if (!a->maps)
		return -ENOMEM;
	a->cap = p->nr ? p->nr : 1;
	for (size_t i = 0; i < p->nr; i++) {
		struct map *m = &p->maps[i];

		if (time && m->time >= time) {
			p->maps[keep++] = *m;
			continue;
		}
		a->maps[a->nr++] = *m;	/* its path and its budget with it */
		if (m->path[0] != '/') {
			p->nr_anon--;
			a->nr_anon++;
		}
	}
	p->nr = keep;
	p->old[p->nr_old++] = (struct incarn){ .since = p->since, .as = pm->next_as++ };
	return 0;
}

int procmaps__exec(struct procmaps *pm, pid_t pid, uint64_t time, const char *comm)
{
	struct pmaps *p = pmaps__get_or_add(pm, pid);
	int err;

	if (!p)
		return -ENOMEM;
	if (p->archived)
		return 0;
	/* An exec reported late, after a newer fork or exec (another CPU's buffer read first):
	 * its program was already kept apart, under the name it had before; the newest
	 * incarnation begun by then takes the exec's name (its samples were named "sh" when
	 * a shell's fork of the next program under the pid came first). */
	if (time && time < p->since) {
		pid_t as = procmaps__incarnation(pm, pid, time);
		struct pmaps *a = as != pid ? pmaps__get(pm, as) : NULL;

		if (a)
			snprintf(a->comm, sizeof(a->comm), "%s", comm ? comm : "");
		return 0;
	}
	err = pmaps__archive(pm, p, time);
	p->since = time;
	p->by_epoch = false;
	snprintf(p->comm, sizeof(p->comm), "%s", comm ? comm : "");
	return err;
}

pid_t procmaps__incarnation(const struct procmaps *pm, pid_t pid, uint64_t gen)
{
	const struct pmaps *p = pmaps__get(pm, pid);
	pid_t as = pid;

	/* The program that began last at or before GEN (a sample's is taken a little after
	 * the record of its fork or exec): the current one unless an earlier one did. */
	if (!p || !p->nr_old || gen >= p->since)
		return pid;
	for (uint32_t i = 0; i < p->nr_old; i++) {
		if (p->old[i].since <= gen || i == 0)
			as = p->old[i].as;
	}
	return as;
}

void procmaps__unsampled(struct procmaps *pm, pid_t pid)
{
	struct pmaps *p = pmaps__get(pm, pid);

	if (p)
		p->unsampled = true;
}

const char *procmaps__comm(const struct procmaps *pm, pid_t pid)
{
	const struct pmaps *p = pmaps__get(pm, pid);

	return p && p->comm[0] ? p->comm : NULL;
}

void procmaps__set_comm(struct procmaps *pm, pid_t pid, const char *comm)
{
	struct pmaps *p = pmaps__get_or_add(pm, pid);

	if (p)
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
}

void procmaps__set_add_hook(struct procmaps *pm, procmaps_add_fn fn, void *ctx)
{
	pm->add_hook = fn;
	pm->add_ctx = ctx;
}

int procmaps__fork(struct procmaps *pm, pid_t parent, pid_t child, uint64_t time)
{
	const struct pmaps *p = pmaps__get(pm, parent);
	struct pmaps *c = pmaps__get(pm, child);
	struct map *newer = NULL;
	size_t nr_newer = 0;
	int err = 0;

	if (parent == child || (!p && !c))
		return 0;	/* a process nothing is known of, nor of its parent */
	/* What the child's pid mapped before the fork was an earlier process's (a pid used
	 * again): kept apart for that process's samples. What it mapped after (its exec,
	 * reported first by another CPU's buffer) is its own and goes back on top of its
	 * parent's mappings. */
	if (c) {
		err = pmaps__archive(pm, c, time);
		if (err)
			return err;
	}
	if (c && c->nr) {
		newer = malloc(c->nr * sizeof(*newer));
		if (!newer)
			return -ENOMEM;
		for (size_t i = 0; i < c->nr; i++) {
			map__forget(c, &c->maps[i]);
			newer[nr_newer++] = c->maps[i];	/* its path with it */
		}
		c->nr = 0;
	}
	if (!c)
		c = pmaps__get_or_add(pm, child);
	if (!c)
		return -ENOMEM;
	c->since = time;
	c->by_epoch = false;
	if (p)
		memcpy(c->comm, p->comm, sizeof(c->comm));
	for (size_t i = 0; p && i < p->nr && !err; i++) {
		/* procmaps__add may move the parent's array only when adding to the parent. */
		struct map m = p->maps[i];

		err = procmaps__add(pm, child, &m);
	}
	for (size_t i = 0; i < nr_newer; i++) {
		if (!err)
			err = procmaps__add(pm, child, &newer[i]);
		free(newer[i].path);
	}
	free(newer);
	return err;
}

/* The modification time (ns) of the file M of live process PID maps (through
 * /proc/PID/map_files, nothing opened), or 0 when it cannot be known. */
static uint64_t file_mtime(pid_t pid, const struct map *m)
{
	char path[96];
	struct stat st;

	if (pid <= 0 || !m->path || m->path[0] != '/')
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, m->start,
		 m->end);
	if (stat(path, &st) || (uint64_t)st.st_ino != m->ino)
		return 0;
	return (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
}

/* PID's mappings from /proc; their files' versions too when VERSIONS (a stat through
 * map_files each, which waits for the process's mmap lock: before sampling only). */
static int load(struct procmaps *pm, pid_t pid, bool versions)
{
	char path[64], line[PROCMAPS_PATH_MAX + 128];
	FILE *f;
	int err = 0;

	/* Its name now, for its samples should it exec or exit (procmaps__exec keeps it). */
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (f) {
		char comm[PROCMAPS_COMM_LEN] = "";

		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = '\0';
			procmaps__set_comm(pm, pid, comm);
		}
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct map m;
		bool deleted;

		if (!strchr(line, '\n') && !feof(f)) {
			int c;

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
			continue;
		}
		if (procmaps__parse_line(line, &m, &deleted) != 1)
			continue;
		if (versions)
			m.mtime = file_mtime(pid, &m);
		err = procmaps__add(pm, pid, &m);
		if (err)
			break;
	}
	fclose(f);
	return err;
}

int procmaps__load(struct procmaps *pm, pid_t pid)
{
	return load(pm, pid, true);
}

int procmaps__load_all(struct procmaps *pm)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		if (procmaps__load(pm, (pid_t)pid) == 0)
			n++;
	}
	closedir(d);
	return n;
}

const struct map *procmaps__find(const struct procmaps *pm, pid_t pid, uint64_t addr)
{
	const struct pmaps *p = pmaps__get(pm, pid);
	size_t i;

	if (!p)
		return NULL;
	i = pmaps__first_ending_after(p, addr);
	if (i < p->nr && p->maps[i].start <= addr)
		return &p->maps[i];
	return NULL;
}

const struct map *procmaps__maps(const struct procmaps *pm, pid_t pid, size_t *n)
{
	const struct pmaps *p = pmaps__get(pm, pid);

	*n = p ? p->nr : 0;
	return *n ? p->maps : NULL;
}

uint64_t procmaps__replaced(const struct procmaps *pm, pid_t pid)
{
	const struct pmaps *p = pmaps__get(pm, pid);

	return p ? p->replaced : 0;
}

bool procmaps__has(const struct procmaps *pm, pid_t pid)
{
	const struct pmaps *p = pmaps__get(pm, pid);

	return p && p->nr;
}

bool procmaps__ensure(struct procmaps *pm, pid_t pid)
{
	struct pmaps *p = pmaps__get_or_add(pm, pid);

	if (!p)
		return false;
	if (!p->nr && !p->load_tried) {
		p->load_tried = true;
		/* In the loop: a version not known is the earliest (as a record's is). */
		load(pm, pid, false);
	}
	return p->nr > 0;
}

/* Unlink PID's entry from its bucket and free it with its mappings; its earlier programs'
 * entries too when OLD. */
static void pmaps__remove(struct procmaps *pm, pid_t pid, bool old)
{
	struct pmaps **pp = &pm->buckets[(uint32_t)pid % NR_BUCKETS], *p;

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	p = *pp;
	if (!p)
		return;
	*pp = p->next;
	for (size_t i = 0; i < p->nr; i++)
		map__drop(p, &p->maps[i]);
	if (p->archived)
		pm->nr_archived--;
	for (uint32_t i = 0; old && i < p->nr_old; i++)
		pmaps__remove(pm, p->old[i].as, false);
	free(p->maps);
	free(p->old);
	free(p);
}

void procmaps__forget(struct procmaps *pm, pid_t pid)
{
	if (pid > 0 && pid < PROCMAPS_ARCHIVED_PID)
		pmaps__remove(pm, pid, true);
}

pid_t *procmaps__pids(const struct procmaps *pm, size_t *n)
{
	pid_t *v = NULL;
	size_t cap = 0;

	*n = 0;
	for (int b = 0; b < NR_BUCKETS; b++) {
		for (const struct pmaps *p = pm->buckets[b]; p; p = p->next) {
			if (p->archived)
				continue;
			if (array_grow(&v, &cap, sizeof(*v), *n)) {
				free(v);
				*n = 0;
				return NULL;
			}
			v[(*n)++] = p->pid;
		}
	}
	return v;
}

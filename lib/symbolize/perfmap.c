// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include "base/bsearch.h"
#include "base/clock.h"
#include "base/fileio.h"
#include "base/limits.h"
#include "proc/ns.h"
#include "symbolize/perfmap.h"

#define PERFMAP_FILE_MAX (1ULL << 30)

#define LINE_MAX_LEN	(LIMIT_PERFMAP_NAME_MAX + 64)	/* two numbers, blanks, the name */
#define CHUNK		(256u << 10)
/* A map followed is read again at most this often, or 4 times as long as it took to read
 * last: a map written all the time (node's) is not read again at every lookup. */
#define FOLLOW_MIN_NS	200000000ull

struct pm_entry {
	uint64_t start, end;
	uint64_t upto;		/* the file's bytes up to the end of its line */
	uint32_t seq;		/* line order: later entries win */
	uint32_t name;		/* offset in names */
};

struct perfmap {
	struct pm_entry *e;
	size_t nr, cap;
	struct pm_entry *old;	/* entries a later line replaced (overlapped), by start */
	size_t nr_old;
	uint64_t pos;		/* bytes of the file read so far (as add_line is called) */
	char *names;		/* every name, NUL-terminated */
	size_t names_len, names_cap;
	uint64_t bytes;		/* of the memory budget held */
	bool full;		/* an entry was left out: no more are read */
	/* perfmap__read_fd's: the file, kept open and read again when it changed (a runtime
	 * that writes its map anew, HotSpot's Compiler.perfmap: perfmap__follow); -1: none. */
	int fd;
	struct stat seen;	/* the file as it was read last */
	uint64_t next_follow;	/* CLOCK_MONOTONIC ns: not read again before */
};

static const struct pm_entry *perfmap__entry(const struct perfmap *pm, uint64_t addr);

static int entry_cmp(const void *a, const void *b)
{
	const struct pm_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A number in hex (an optional 0x, at most 16 digits) at *P, before END, followed by a
 * blank, which *P moves past. Returns 0 or -EINVAL. */
static int parse_hex(const char **p, const char *end, uint64_t *v)
{
	const char *q = *p;
	int digits = 0;

	if (end - q > 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
		q += 2;
	*v = 0;
	for (; q < end && *q != ' '; q++, digits++) {
		int c = *q, d = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' &&
			(c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;

		if (d < 0 || digits == 16)
			return -EINVAL;
		*v = *v << 4 | (uint64_t)d;
	}
	if (!digits || q == end)
		return -EINVAL;
	*p = q + 1;
	return 0;
}

/* "START SIZE NAME" of LEN bytes at LINE (no newline): its parts, or -EINVAL. */
static int parse_line(const char *line, size_t len, uint64_t *start, uint64_t *size,
		      const char **name, size_t *name_len)
{
	const char *p = line, *end = line + len;

	if (parse_hex(&p, end, start) || parse_hex(&p, end, size) || *size == 0 ||
	    *start + *size < *start || p == end)
		return -EINVAL;
	*name = p;
	*name_len = (size_t)(end - p);
	return memchr(p, '\0', *name_len) ? -EINVAL : 0;
}

/* Grow *V (*CAP of SIZE bytes each) to hold one more, charging the budget. Returns 0, or
 * -ENOSPC past the budget, -ENOMEM. */
static int grow(struct perfmap *pm, void **v, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap;
	void *p;

	if (need <= n)
		return 0;
	while (n < need)
		n = n ? 2 * n : 256;
	if (!limits__reserve((n - *cap) * size))
		return -ENOSPC;
	p = realloc(*v, n * size);
	if (!p) {
		limits__release((n - *cap) * size);
		return -ENOMEM;
	}
	pm->bytes += (n - *cap) * size;
	*v = p;
	*cap = n;
	return 0;
}

/* Add the line of LEN bytes at LINE. Returns 0 (added or skipped), or -ENOMEM. */
static int add_line(struct perfmap *pm, const char *line, size_t len)
{
	uint64_t start, size;
	const char *name;
	size_t name_len;
	int err;

	if (parse_line(line, len, &start, &size, &name, &name_len))
		return 0;
	if (name_len > LIMIT_PERFMAP_NAME_MAX) {
		limits__hit(LIMIT_PERFMAP_LINES, 1);
		return 0;
	}
	if (pm->nr == LIMIT_PERFMAP_ENTRIES_MAX) {
		limits__hit(LIMIT_PERFMAP_ENTRIES, 1);
		pm->full = true;
		return 0;
	}
	err = grow(pm, (void **)&pm->e, &pm->cap, pm->nr + 1, sizeof(*pm->e));
	if (!err)
		err = grow(pm, (void **)&pm->names, &pm->names_cap,
			   pm->names_len + name_len + 1, 1);
	if (err == -ENOSPC) {
		limits__hit(LIMIT_MEMORY_PERFMAP, 1);
		pm->full = true;
		return 0;
	}
	if (err)
		return err;
	memcpy(pm->names + pm->names_len, name, name_len);
	pm->names[pm->names_len + name_len] = '\0';
	pm->e[pm->nr] = (struct pm_entry){ start, start + size, pm->pos, (uint32_t)pm->nr,
					   (uint32_t)pm->names_len };
	pm->names_len += name_len + 1;
	pm->nr++;
	return 0;
}

/* Read F's lines into PM, until its end or PM is full. Lines longer than LINE_MAX_LEN are
 * skipped whole (counted). Returns 0 or -ENOMEM. */
static int read_lines(struct perfmap *pm, FILE *f)
{
	char *buf = malloc(CHUNK);
	size_t have = 0, n, off;
	bool skipping = false;
	char *nl;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (!err && !pm->full && (n = fread(buf + have, 1, CHUNK - have, f)) > 0) {
		have += n;
		off = 0;
		while (!err && !pm->full && (nl = memchr(buf + off, '\n', have - off))) {
			pm->pos += (size_t)(nl - (buf + off)) + 1;
			if (!skipping)
				err = add_line(pm, buf + off, (size_t)(nl - (buf + off)));
			skipping = false;
			off = (size_t)(nl - buf) + 1;
		}
		if (!skipping && !pm->full && have - off > LINE_MAX_LEN) {
			limits__hit(LIMIT_PERFMAP_LINES, 1);
			skipping = true;
		}
		if (skipping) {
			pm->pos += have - off;
			off = have;		/* the rest of a long line: dropped */
		}
		memmove(buf, buf + off, have - off);
		have -= off;
	}
	if (!err && !pm->full && have && !skipping) {
		pm->pos += have;
		err = add_line(pm, buf, have);	/* the last line, without a newline */
	}
	free(buf);
	return err;
}

/* PM's entries, as read, sorted and made to overlap no more. */
static void resolve(struct perfmap *pm)
{
	size_t out = 0, cap_old = 0;

	if (pm->nr)
		qsort(pm->e, pm->nr, sizeof(*pm->e), entry_cmp);
	/* Overlapping entries: the later line wins (code recompiled at the same place); the
	 * one it replaced is kept apart, for what was sampled before the later line was
	 * written (perfmap__lookup_at). */
	for (size_t i = 0; i < pm->nr; i++) {
		struct pm_entry *last = out ? &pm->e[out - 1] : NULL, gone;

		if (last && last->end > pm->e[i].start) {
			gone = pm->e[i];
			if (pm->e[i].seq > last->seq) {
				gone = *last;
				*last = pm->e[i];
			}
			/* Past the budget, the replaced entry is only forgotten (as before). */
			if (!grow(pm, (void **)&pm->old, &cap_old, pm->nr_old + 1, sizeof(gone)))
				pm->old[pm->nr_old++] = gone;
			continue;
		}
		pm->e[out++] = pm->e[i];
	}
	pm->nr = out;
	if (pm->nr_old)
		qsort(pm->old, pm->nr_old, sizeof(*pm->old), entry_cmp);
}

struct perfmap *perfmap__parse(FILE *f)
{
	struct perfmap *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	pm->fd = -1;
	if (read_lines(pm, f)) {
		perfmap__free(pm);
		errno = ENOMEM;
		return NULL;
	}
	resolve(pm);
	return pm;
}

/* --- a map followed as its file changes ------------------------------------------------- */

/* A FILE reading a descriptor from its start with pread: the descriptor is neither moved
 * (shared with whoever handed it) nor closed. */
struct pread_cookie {
	int fd;
	off_t off;
};

static ssize_t cookie_read(void *c, char *buf, size_t size)
{
	struct pread_cookie *pc = c;
	ssize_t n = pread(pc->fd, buf, size, pc->off);

	if (n > 0)
		pc->off += n;
	return n;
}

static int cookie_close(void *c)
{
	(void)c;
	return 0;
}

/* FD's text from its start, into PM's raw entries (not resolved); when it is read again
 * (PM->next_follow set). Returns 0 or -errno. */
static int read_from_start(struct perfmap *pm, int fd)
{
	struct pread_cookie pc = { fd, 0 };
	cookie_io_functions_t io = { .read = cookie_read, .close = cookie_close };
	uint64_t t0 = clock_mono_ns(), took;
	FILE *f = fopencookie(&pc, "r", io);
	int err;

	if (!f)
		return -errno;
	err = read_lines(pm, f);
	fclose(f);
	took = clock_mono_ns() - t0;
	pm->next_follow = clock_mono_ns() + (4 * took > FOLLOW_MIN_NS ? 4 * took : FOLLOW_MIN_NS);
	return err;
}

static bool same_file_state(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* Whether N's raw entries (sorted by start) hold one of START, END and NAME. */
static bool has_line(const struct perfmap *n, uint64_t start, uint64_t end, const char *name)
{
	size_t i = BSEARCH_PREFIX(n->nr, mid, n->e[mid].start < start);

	for (; i < n->nr && n->e[i].start == start; i++)
		if (n->e[i].end == end && !strcmp(n->names + n->e[i].name, name))
			return true;
	return false;
}

/* Into N (its raw entries sorted by start), X of PM (an entry its file's lines no longer
 * hold): numbered before N's lines, written before any of them (upto 0). */
static void carry(struct perfmap *n, const struct perfmap *pm, const struct pm_entry *x,
		  uint32_t seq)
{
	const char *name = pm->names + x->name;
	size_t len = strlen(name);

	if (n->nr == LIMIT_PERFMAP_ENTRIES_MAX ||
	    grow(n, (void **)&n->e, &n->cap, n->nr + 1, sizeof(*n->e)) ||
	    grow(n, (void **)&n->names, &n->names_cap, n->names_len + len + 1, 1))
		return;		/* (forgotten: the budget, as a map too long is cut) */
	memcpy(n->names + n->names_len, name, len + 1);
	n->e[n->nr++] = (struct pm_entry){ x->start, x->end, 0, seq, (uint32_t)n->names_len };
	n->names_len += len + 1;
}

static int seq_cmp(const void *a, const void *b)
{
	const struct pm_entry *const *x = a, *const *y = b;

	return (*x)->seq < (*y)->seq ? -1 : (*x)->seq > (*y)->seq;
}

/*
 * PM's file changed since it was read: read again. A map only appended to reads as it would
 * have from the start. One written anew (HotSpot truncates /tmp/perf-PID.map and writes the
 * code alive then at each Compiler.perfmap) no longer holds the lines of code freed before
 * (a method deoptimized, a class unloaded) that samples taken earlier were in: those of
 * PM's lines the new text does not hold are kept, as lines written before all of its own
 * (upto 0, numbered first, in their order): in force where no new line is, replaced where
 * one is (perfmap__lookup_at: named so when sampled before). On failure PM stays as it was.
 */
static void perfmap__follow(struct perfmap *pm)
{
	struct perfmap *n;
	struct pm_entry **gone = NULL;
	size_t nr_gone = 0, nr_new;
	struct stat st;

	if (pm->fd < 0 || clock_mono_ns() < pm->next_follow || fstat(pm->fd, &st) ||
	    same_file_state(&st, &pm->seen))
		return;
	n = calloc(1, sizeof(*n));
	if (!n)
		return;
	n->fd = -1;
	if (read_from_start(n, pm->fd))
		goto fail;
	nr_new = n->nr;
	if (nr_new)
		qsort(n->e, nr_new, sizeof(*n->e), entry_cmp);
	gone = malloc((pm->nr + pm->nr_old + 1) * sizeof(*gone));
	if (!gone)
		goto fail;
	for (size_t i = 0; i < pm->nr + pm->nr_old; i++) {
		struct pm_entry *x = i < pm->nr ? &pm->e[i] : &pm->old[i - pm->nr];

		if (!has_line(n, x->start, x->end, pm->names + x->name))
			gone[nr_gone++] = x;
	}
	/* The new lines numbered after the kept ones. */
	qsort(gone, nr_gone, sizeof(*gone), seq_cmp);
	for (size_t i = 0; i < nr_new; i++)
		n->e[i].seq += (uint32_t)nr_gone;
	for (size_t i = 0; i < nr_gone; i++)
		carry(n, pm, gone[i], (uint32_t)i);
	free(gone);
	resolve(n);
	/* N's content into PM (which keeps its descriptor). */
	limits__release(pm->bytes);
	free(pm->e);
	free(pm->old);
	free(pm->names);
	n->fd = pm->fd;
	n->seen = st;
	*pm = *n;		/* (next_follow: N's, set as it was read) */
	free(n);
	return;
fail:
	pm->next_follow = n->next_follow;
	free(gone);
	perfmap__free(n);
}

/* The effective uid of live process PID (/proc/PID/status), or -1. */
static long proc_euid(pid_t pid)
{
	char path[64], line[256];
	long uid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %*u %ld", &uid) == 1)
			break;
	fclose(f);
	return uid;
}

int perfmap__open(pid_t pid)
{
	pid_t inner = pidns__inner_pid(pid);
	long euid = proc_euid(pid);
	struct stat st;
	char path[96];
	int fd = -ENOENT, root;

	/* Written by the profiled process's user: a FIFO or a device there must not block, and a
	 * link there must not lead anywhere. The process names it by its pid in its own
	 * namespace, in its own /tmp: a container's, seen through /proc/PID/root. */
	snprintf(path, sizeof(path), "/proc/%d/root", pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root >= 0 && inner > 0) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", inner);
		fd = fileio__open_regular_how(root, path, PERFMAP_FILE_MAX, FILEIO_NOFOLLOW, &st);
	}
	if (root >= 0)
		close(root);
	if (fd < 0) {	/* the process is gone: its file in our /tmp, if it shares it */
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", pid);
		fd = fileio__open_regular_how(-1, path, PERFMAP_FILE_MAX, FILEIO_NOFOLLOW, &st);
	}
	/* The process's own file: not another user's (a hard link to a file it cannot read
	 * would be read for it). */
	if (fd >= 0 && euid >= 0 && st.st_uid != (uid_t)euid) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

struct perfmap *perfmap__read_fd(int fd)
{
	struct perfmap *pm = calloc(1, sizeof(*pm));
	int err;

	if (!pm || fstat(fd, &pm->seen)) {
		err = pm ? errno : ENOMEM;
		free(pm);
		close(fd);
		errno = err;
		return NULL;
	}
	pm->fd = -1;
	err = read_from_start(pm, fd);
	if (err) {
		perfmap__free(pm);
		close(fd);
		errno = -err;
		return NULL;
	}
	resolve(pm);
	pm->fd = fd;
	return pm;
}

struct perfmap *perfmap__load(pid_t pid)
{
	int fd = perfmap__open(pid);

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	return perfmap__read_fd(fd);
}

size_t perfmap__line_starts(const char *buf, size_t n,
			    void (*fn)(void *ctx, uint64_t start, size_t offset), void *ctx)
{
	size_t pos = 0;

	for (;;) {
		const char *nl = memchr(buf + pos, '\n', n - pos), *p = buf + pos;
		uint64_t start;

		if (!nl)
			break;
		if (!parse_hex(&p, nl, &start))
			fn(ctx, start, pos);
		pos = (size_t)(nl - buf) + 1;
	}
	return pos ? pos : n;
}

void perfmap__free(struct perfmap *pm)
{
	if (!pm)
		return;
	limits__release(pm->bytes);
	if (pm->fd >= 0)
		close(pm->fd);
	free(pm->e);
	free(pm->old);
	free(pm->names);
	free(pm);
}

const char *perfmap__lookup(const struct perfmap *pm, uint64_t addr)
{
	return perfmap__lookup_at(pm, addr, UINT64_MAX);
}

const char *perfmap__lookup_at(const struct perfmap *pm, uint64_t addr, uint64_t upto)
{
	const struct pm_entry *e, *best = NULL, *first = NULL;

	/* (A map read from a descriptor is its file's as it is now: the one mutable part of a
	 * map that is otherwise only read.) */
	if (pm->fd >= 0)
		perfmap__follow((struct perfmap *)pm);
	e = perfmap__entry(pm, addr);

	if (e && e->upto <= upto)
		return pm->names + e->name;
	/* Written after UPTO, or none in force at the end (a later line over part of an
	 * earlier one): of the lines that named ADDR, the latest within UPTO, else the first. */
	if (e)
		first = e;
	for (size_t i = 0; i < pm->nr_old && pm->old[i].start <= addr; i++) {
		const struct pm_entry *o = &pm->old[i];

		if (o->end <= addr)
			continue;
		if (o->upto <= upto && (!best || o->seq > best->seq))
			best = o;
		if (!first || o->seq < first->seq)
			first = o;
	}
	if (!e && !best && upto == UINT64_MAX)
		return NULL;	/* as before: what no line in force at the end names */
	return best ? pm->names + best->name : first ? pm->names + first->name : NULL;
}

/* The entry in force for ADDR after every line (the latest), or NULL. */
static const struct pm_entry *perfmap__entry(const struct perfmap *pm, uint64_t addr)
{
	size_t lo = BSEARCH_PREFIX(pm->nr, mid, pm->e[mid].end <= addr);

	if (lo < pm->nr && pm->e[lo].start <= addr)
		return &pm->e[lo];
	return NULL;
}

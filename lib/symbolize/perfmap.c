// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/fileio.h"
#include "proc/ns.h"
#include "symbolize/perfmap.h"

#define PERFMAP_FILE_MAX (1ULL << 30)

#define NAME_MAX_LEN	1023
#define MAX_ENTRIES	(4u << 20)

struct pm_entry {
	uint64_t start, end;
	uint32_t seq;		/* line order: later entries win */
	char *name;
};

struct perfmap {
	struct pm_entry *e;
	size_t nr, cap;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct pm_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int parse_line(char *line, uint64_t *start, uint64_t *size, char **name)
{
	char *p = line, *end;
	size_t len;

	errno = 0;
	*start = strtoull(p, &end, 16);
	if (errno || end == p || *end != ' ')
		return -EINVAL;
	p = end + 1;
	*size = strtoull(p, &end, 16);
	if (errno || end == p || *end != ' ' || *size == 0 || *start + *size < *start)
		return -EINVAL;
	*name = end + 1;
	len = strcspn(*name, "\n");
	(*name)[len] = '\0';
	return len ? 0 : -EINVAL;
}

struct perfmap *perfmap__parse(FILE *f)
{
	struct perfmap *pm = calloc(1, sizeof(*pm));
	char line[NAME_MAX_LEN + 64];
	size_t out = 0;

	if (!pm)
		return NULL;
	while (fgets(line, sizeof(line), f) && pm->nr < MAX_ENTRIES) {
		uint64_t start, size;
		char *name;

		if (!strchr(line, '\n') && !feof(f)) {
			int c;

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
			continue;
		}
		if (parse_line(line, &start, &size, &name))
			continue;
		if (pm->nr == pm->cap) {
			size_t cap = pm->cap ? pm->cap * 2 : 256;
			struct pm_entry *e = realloc(pm->e, cap * sizeof(*e));

			if (!e)
				goto nomem;
			pm->e = e;
			pm->cap = cap;
		}
		pm->e[pm->nr].name = strdup(name);
		if (!pm->e[pm->nr].name)
			goto nomem;
		pm->e[pm->nr].start = start;
		pm->e[pm->nr].end = start + size;
		pm->e[pm->nr].seq = (uint32_t)pm->nr;
		pm->nr++;
	}
	if (pm->nr)
		qsort(pm->e, pm->nr, sizeof(*pm->e), entry_cmp);
	/* Overlapping entries: the later line wins (code recompiled at the same place). */
	for (size_t i = 0; i < pm->nr; i++) {
		struct pm_entry *last = out ? &pm->e[out - 1] : NULL;

		if (last && last->end > pm->e[i].start) {
			if (pm->e[i].seq > last->seq) {
				free(last->name);
				*last = pm->e[i];
			} else {
				free(pm->e[i].name);
			}
			continue;
		}
		pm->e[out++] = pm->e[i];
	}
	pm->nr = out;
	return pm;
nomem:
	perfmap__free(pm);
	errno = ENOMEM;
	return NULL;
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
	struct perfmap *pm;
	FILE *f = fdopen(fd, "r");
	int err;

	if (!f) {
		err = errno;
		close(fd);
		errno = err;
		return NULL;
	}
	pm = perfmap__parse(f);
	err = errno;
	fclose(f);
	errno = err;
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

void perfmap__free(struct perfmap *pm)
{
	if (!pm)
		return;
	for (size_t i = 0; i < pm->nr; i++)
		free(pm->e[i].name);
	free(pm->e);
	free(pm);
}

const char *perfmap__lookup(const struct perfmap *pm, uint64_t addr)
{
	size_t lo = 0, hi = pm->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->e[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < pm->nr && pm->e[lo].start <= addr)
		return pm->e[lo].name;
	return NULL;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* cgroup: see cgroup.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include "base/htab.h"
#include "base/grow.h"
#include "proc/cgroup.h"

#define CGROUP2_MAGIC	0x63677270	/* statfs's f_type of cgroup v2 */
#define NAMES_MAX	65536
#define DEPTH_MAX	32

int cgroup__root(char *root, size_t size)
{
	static const char *const where[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	struct statfs fs;

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		if (statfs(where[i], &fs) == 0 && (unsigned long)fs.f_type == CGROUP2_MAGIC) {
			snprintf(root, size, "%s", where[i]);
			return 0;
		}
	}
	return -ENOENT;
}

int cgroup__id(const char *root, const char *path, uint64_t *id)
{
	static const char sysfs[] = "/sys/fs/cgroup";
	size_t rl = strlen(root), sl = strlen(sysfs);
	char full[4096];
	struct statfs fs;
	struct stat st;

	if (path[0] != '/')
		snprintf(full, sizeof(full), "%s/%s", root, path);
	else if ((!strncmp(path, root, rl) && (path[rl] == '/' || !path[rl])) ||
		 strncmp(path, sysfs, sl) || (path[sl] != '/' && path[sl]))
		snprintf(full, sizeof(full), "%s", path);
	else
		snprintf(full, sizeof(full), "%s%s", root, path + sl);
	if (stat(full, &st))
		return -ENOENT;
	if (!S_ISDIR(st.st_mode) || statfs(full, &fs) ||
	    (unsigned long)fs.f_type != CGROUP2_MAGIC)
		return -ENOTDIR;
	*id = st.st_ino;
	return 0;
}

struct cgroup_names {
	uint64_t *ids;
	char **paths;
	size_t nr, cap;
	struct htab index;
};

static int names_add(struct cgroup_names *n, uint64_t id, const char *path)
{
	char *p;

	/* Two arrays of one capacity: the second grows with a copy of the first's counter. */
	if (n->nr == n->cap) {
		size_t cap = n->cap;

		if (array_grow(&n->ids, &cap, sizeof(*n->ids), n->nr) ||
		    array_grow(&n->paths, &n->cap, sizeof(*n->paths), n->nr))
			return -ENOMEM;
	}
	p = strdup(path);
	if (!p || htab__insert(&n->index, hash_u64(HASH_SEED, id), (uint32_t)n->nr)) {
		free(p);
		return -ENOMEM;
	}
	n->ids[n->nr] = id;
	n->paths[n->nr++] = p;
	return 0;
}

/* The cgroups under directory FD (its path REL, "" for the root), DEPTH levels down. */
static int names_walk(struct cgroup_names *n, int fd, char *rel, size_t len, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int err = 0;

	if (!d) {
		close(fd);
		return 0;
	}
	while (!err && n->nr < NAMES_MAX && (de = readdir(d))) {
		struct stat st;
		size_t l = strlen(de->d_name);
		int sub;

		if (de->d_type != DT_DIR || de->d_name[0] == '.' || len + 1 + l >= 4096)
			continue;
		sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		if (fstat(sub, &st)) {
			close(sub);
			continue;
		}
		rel[len] = '/';
		memcpy(rel + len + 1, de->d_name, l + 1);
		err = names_add(n, st.st_ino, rel);
		if (!err && depth < DEPTH_MAX)
			err = names_walk(n, sub, rel, len + 1 + l, depth + 1);
		else
			close(sub);
		rel[len] = '\0';
	}
	closedir(d);
	return err;
}

struct cgroup_names *cgroup_names__read(const char *root)
{
	struct cgroup_names *n = calloc(1, sizeof(*n));
	char rel[4096] = "";
	struct stat st;
	int fd;

	if (!n)
		return NULL;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return n;
	if (fstat(fd, &st) || names_add(n, st.st_ino, "/")) {
		close(fd);
		cgroup_names__free(n);
		return NULL;
	}
	/* (The walk closes FD.) */
	if (names_walk(n, fd, rel, 0, 1)) {
		cgroup_names__free(n);
		return NULL;
	}
	return n;
}

void cgroup_names__free(struct cgroup_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nr; i++)
		free(n->paths[i]);
	free(n->paths);
	free(n->ids);
	htab__free(&n->index);
	free(n);
}

const char *cgroup_names__find(const struct cgroup_names *n, uint64_t id)
{
	uint32_t pos, i;

	if (!n)
		return NULL;
	for (i = htab__first(&n->index, hash_u64(HASH_SEED, id), &pos); i != HTAB_NONE;
	     i = htab__next(&n->index, hash_u64(HASH_SEED, id), &pos))
		if (n->ids[i] == id)
			return n->paths[i];
	return NULL;
}

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cgroup: cgroups (v2, the unified hierarchy) by path and by id, for --cgroup and --group-by
 * cgroup. A cgroup's id, as BPF reads it (kernfs node id), is the inode number of its
 * directory.
 */
#ifndef PROC_CGROUP_H
#define PROC_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/* Where cgroup v2 is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid
 * system), into ROOT (SIZE bytes). Returns 0, or -ENOENT when it is not mounted. */
int cgroup__root(char *root, size_t size);

/*
 * The id of cgroup PATH: absolute (under ROOT, or under /sys/fs/cgroup where that is not
 * ROOT: /sys/fs/cgroup/X is then ROOT/X) or relative to ROOT. Returns 0 with *ID set, or
 * -ENOENT (no such cgroup), -ENOTDIR (not a cgroup v2 directory).
 */
int cgroup__id(const char *root, const char *path, uint64_t *id);

/* Names of cgroups by id: the paths under a root, relative to it ("/" for the root). */
struct cgroup_names;

/* Every cgroup under ROOT (at most 65536 of them, 32 levels deep), read now. NULL on ENOMEM. */
struct cgroup_names *cgroup_names__read(const char *root);
void cgroup_names__free(struct cgroup_names *n);

/* The path of cgroup ID ("/a/b"), or NULL when it was not there when N was read. Owned by N. */
const char *cgroup_names__find(const struct cgroup_names *n, uint64_t id);

#endif

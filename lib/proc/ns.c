// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "proc/ns.h"

#define PROC_PID_INIT_INO	0xEFFFFFFCu	/* the initial pid namespace's inode (proc_ns.h) */

int pidns__self(struct pidns *ns)
{
	char self[32];
	struct stat st;
	ssize_t n;

	if (stat("/proc/self/ns/pid", &st))
		return -errno;
	ns->dev = (uint64_t)major(st.st_dev) << 20 | minor(st.st_dev);
	ns->ino = st.st_ino;
	ns->initial = st.st_ino == PROC_PID_INIT_INO;
	/* /proc/self names us by our pid in the namespace /proc was mounted for: not ours when
	 * the two differ, nor when we have no pid there. */
	n = readlink("/proc/self", self, sizeof(self) - 1);
	if (n <= 0)
		return -EXDEV;
	self[n] = '\0';
	if (strtol(self, NULL, 10) != getpid())
		return -EXDEV;
	return 0;
}

pid_t pidns__inner_pid(pid_t pid)
{
	char path[64], line[256];
	pid_t inner = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 6, *end;

		if (strncmp(line, "NSpid:", 6))
			continue;
		/* One number per namespace, ours first, the process's own last. */
		for (;;) {
			long v = strtol(p, &end, 10);

			if (end == p)
				break;
			if (v > 0)
				inner = (pid_t)v;
			p = end;
		}
		break;
	}
	fclose(f);
	return inner;
}

int rootdir__open(pid_t pid, struct rootdir_id *id)
{
	struct stat st, ours, mnt, our_mnt;
	char path[64];
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	if (stat(path, &mnt) || stat("/proc/self/ns/mnt", &our_mnt))
		return -errno;
	snprintf(path, sizeof(path), "/proc/%d/root", pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || stat("/", &ours)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (mnt.st_ino == our_mnt.st_ino && st.st_dev == ours.st_dev && st.st_ino == ours.st_ino) {
		close(fd);
		return -EEXIST;
	}
	*id = (struct rootdir_id){ mnt.st_ino, st.st_dev, st.st_ino };
	return fd;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* proc/children: the processes under others (children.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "base/grow.h"
#include "proc/children.h"

/* The children of process PID (of all its threads) appended to *V (*N of them) unless there
 * already. Returns 0 or -ENOMEM. */
static int add_children(pid_t pid, pid_t **v, size_t *n, size_t *cap, size_t max)
{
	char path[96], buf[4096];
	struct dirent *de;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;		/* gone meanwhile */
	while (!err && (de = readdir(d))) {
		char *p, *end;
		ssize_t got;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.20s/children", (int)pid, de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		got = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[got > 0 ? got : 0] = '\0';
		for (p = buf; !err; p = end) {
			long c = strtol(p, &end, 10);
			size_t k = 0;

			if (end == p || c <= 0)
				break;
			while (k < *n && (*v)[k] != (pid_t)c)
				k++;
			if (k < *n)
				continue;
			if (*n >= max || array_grow(v, cap, sizeof(**v), *n))
				err = -ENOMEM;
			else
				(*v)[(*n)++] = (pid_t)c;
		}
	}
	closedir(d);
	return err;
}

long proc__descendants(pid_t **v, size_t n, size_t *cap, size_t max, size_t *n_out)
{
	int err = 0;

	for (size_t i = 0; !err && i < n; i++)
		err = add_children((*v)[i], v, &n, cap, max);
	*n_out = n;
	return err ? err : (long)n;
}

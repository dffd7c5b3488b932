// SPDX-License-Identifier: GPL-3.0-or-later
/* proc/procfile: a small file of a task's under /proc (procfile.h). */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include "proc/procfile.h"

ssize_t proc__read(pid_t pid, const char *name, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	if (size < 2)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* collect/pids: the processes of -p. A thread's id (not its process's leader) stands for its
 * process, with a note; a process given twice is profiled once. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/log.h"
#include "collect/session_int.h"

/* The process (thread group) of thread TID, from /proc/TID/status; TID itself when it cannot
 * be read (check_pids then says it is gone). */
static pid_t tgid_of(pid_t tid)
{
	char path[64], text[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tid;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return tid;
	text[n] = '\0';
	p = strstr(text, "\nTgid:");
	return p ? (pid_t)strtol(p + 6, NULL, 10) : tid;
}

int session__resolve_pids(struct session *s)
{
	size_t n = 0;

	if (!s->opts.nr_pids)
		return 0;
	s->pids = calloc(s->opts.nr_pids, sizeof(*s->pids));
	if (!s->pids)
		return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	for (size_t i = 0; i < s->opts.nr_pids; i++) {
		pid_t pid = s->opts.pids[i], tgid = tgid_of(pid);
		size_t k = 0;

		if (tgid > 0 && tgid != pid) {
			pr_warn("pid %d is a thread of process %d: profiling the process, all its "
				"threads", pid, tgid);
			pid = tgid;
		}
		while (k < n && s->pids[k] != pid)
			k++;
		if (k == n)
			s->pids[n++] = pid;
	}
	s->opts.pids = s->pids;
	s->opts.nr_pids = n;
	return 0;
}

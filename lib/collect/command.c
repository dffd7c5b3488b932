// SPDX-License-Identifier: GPL-3.0-or-later
/* collect/command: the command to profile, forked held on a pipe and released once sampling
 * is attached, so that none of its instructions run unsampled. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "collect/session_int.h"

int session__start_command(struct session *s)
{
	int go[2], exec_err[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) || pipe2(exec_err, O_CLOEXEC))
		return session__fail(s, SESSION_ERR_RUNTIME, -errno, "cannot create a pipe: %s",
				     strerror(errno));
	pid = fork();
	if (pid < 0)
		return session__fail(s, SESSION_ERR_RUNTIME, -errno, "cannot fork: %s",
				     strerror(errno));
	if (pid == 0) {
		char c;
		int err;

		close(go[1]);
		close(exec_err[0]);
		/* Held: no instruction of the command runs before the parent says go. */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(s->opts.argv[0], s->opts.argv);
		err = errno;
		if (write(exec_err[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(exec_err[1]);
	s->child = pid;
	s->go_fd = go[1];
	s->exec_err_fd = exec_err[0];
	return 0;
}

int session__release_command(struct session *s)
{
	char go = 1;
	int err = 0;
	ssize_t n;

	if (write(s->go_fd, &go, 1) != 1)
		return session__fail(s, SESSION_ERR_RUNTIME, -errno, "cannot start the command");
	close(s->go_fd);
	s->go_fd = -1;
	do
		n = read(s->exec_err_fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(s->exec_err_fd);
	s->exec_err_fd = -1;
	if (n == sizeof(err)) {
		waitpid(s->child, NULL, 0);
		s->child = 0;
		return session__fail(s, SESSION_ERR_TARGET, -err, "cannot execute '%s': %s",
				     s->opts.argv[0], strerror(err));
	}
	return 0;
}

void session__stop_command(struct session *s, int sig)
{
	if (s->child) {
		int status;

		kill(s->child, sig);
		if (waitpid(s->child, &status, 0) == s->child)
			s->stats.cmd_status = status;
		s->child = 0;
	}
	if (s->go_fd >= 0)
		close(s->go_fd);
	if (s->exec_err_fd >= 0)
		close(s->exec_err_fd);
	s->go_fd = s->exec_err_fd = -1;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * profile: the files this run made for -o are removed again when nothing is written to
 * them, also once profile runs as uid 65534 (collect/privs.c), which may not remove a name
 * from the folder: a process forked while profile is still root waits for one word, then
 * removes them ('d') or leaves them ('k'). It reads nothing else, holds no other descriptor,
 * ignores the terminal's signals; if profile dies without a word, it removes those files
 * that are still empty (nothing was written to them).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "base/log.h"
#include "cli.h"

static pid_t janitor;
static int janitor_fd = -1;

static void janitor_run(const struct settings *st, int fd)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	ssize_t n;
	char c = 0;

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	/* Only the pipe: none of profile's files stay open because of it. */
	if (dup2(fd, 3) == 3)
		fd = 3;
	for (int i = 4; i < 1024; i++)
		close(i);
	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	for (int i = 0; i < st->nr_out; i++) {
		const struct output *o = &st->out[i];
		struct stat sb;

		if (!o->made || !o->path || c == 'k')
			continue;
		if (c == 'd' || (n == 0 && !lstat(o->path, &sb) && S_ISREG(sb.st_mode) &&
				 sb.st_size == 0))
			unlink(o->path);
	}
	_exit(0);
}

void janitor_start(const struct settings *st)
{
	bool made = false;
	int p[2];

	for (int i = 0; i < st->nr_out; i++)
		made |= st->out[i].made;
	/* Not root: profile stays who it is, and removes them itself. */
	if (!made || geteuid() != 0 || pipe2(p, O_CLOEXEC))
		return;
	fflush(NULL);
	janitor = fork();
	if (janitor == 0) {
		close(p[1]);
		janitor_run(st, p[0]);
	}
	close(p[0]);
	if (janitor < 0) {
		close(p[1]);
		janitor = 0;
		return;
	}
	janitor_fd = p[1];
}

/* Say WORD, and wait until it was done. */
static bool janitor_say(char word)
{
	ssize_t n;

	if (!janitor)
		return false;
	do
		n = write(janitor_fd, &word, 1);
	while (n < 0 && errno == EINTR);
	close(janitor_fd);
	janitor_fd = -1;
	while (waitpid(janitor, NULL, 0) < 0 && errno == EINTR)
		;
	janitor = 0;
	return n == 1;
}

bool janitor_remove(void)
{
	return janitor_say('d');
}

void janitor_keep(void)
{
	janitor_say('k');
}

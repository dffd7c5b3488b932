// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * profile: the -o files settled at the end. A file this run made is removed again when
 * nothing is written to it; an existing regular file is replaced whole, through a file
 * written beside it and renamed over it, or left as it was. Once profile runs as uid 65534
 * (collect/privs.c) it may not make or remove a name in the folder: a process forked while
 * profile is still root does it, told by a word per output ('k' keep, 'd' drop). It reads
 * nothing else, holds no other descriptor, ignores the terminal's signals; if profile dies
 * without its words, it removes the files beside and those made that are still empty.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "base/log.h"
#include "cli.h"

static pid_t janitor;
static int janitor_fd = -1;

/* Output O settled by WORD: 'k' keep (the temporary file renamed over it), 'd' drop (the
 * file made or the temporary one removed), 0 (profile died without a word: the temporary
 * file removed, a file made and still empty removed). */
static int settle_one(const struct output *o, char word)
{
	struct stat sb;

	if (!o->path)
		return 0;
	if (o->tmp)
		return word == 'k' ? rename(o->tmp, o->path) : unlink(o->tmp);
	if (!o->made)
		return 0;
	if (word == 'd' || (!word && !lstat(o->path, &sb) && S_ISREG(sb.st_mode) &&
			    sb.st_size == 0))
		return unlink(o->path);
	return 0;
}

static void janitor_run(const struct settings *st, int fd)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC), got = 0;
	char words[MAX_OUTPUTS] = { 0 };
	ssize_t n;

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
	/* A word per output; fewer when profile died. */
	while (got < st->nr_out) {
		n = read(fd, words + got, (size_t)(st->nr_out - got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (int)n;
	}
	for (int i = 0; i < st->nr_out; i++)
		settle_one(&st->out[i], words[i]);
	_exit(0);
}

void janitor_start(const struct settings *st)
{
	bool any = false;
	int p[2];

	for (int i = 0; i < st->nr_out; i++)
		any |= st->out[i].made || st->out[i].tmp;
	/* Not root: profile stays who it is, and settles them itself. */
	if (!any || geteuid() != 0 || pipe2(p, O_CLOEXEC))
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

int settle_outputs(struct settings *st, bool keep)
{
	char words[MAX_OUTPUTS];
	int ret = 0;

	for (int i = 0; i < st->nr_out; i++)
		words[i] = keep && !st->out[i].failed ? 'k' : 'd';
	if (janitor) {
		ssize_t n;

		do
			n = write(janitor_fd, words, (size_t)st->nr_out);
		while (n < 0 && errno == EINTR);
		close(janitor_fd);
		janitor_fd = -1;
		while (waitpid(janitor, NULL, 0) < 0 && errno == EINTR)
			;
		janitor = 0;
		/* (It says nothing: what it left undone shows.) */
		for (int i = 0; i < st->nr_out; i++) {
			struct output *o = &st->out[i];

			if (o->tmp && !access(o->tmp, F_OK)) {
				pr_warn("cannot replace '%s' with '%s'", o->path, o->tmp);
				ret = -1;
			}
		}
	} else {
		for (int i = 0; i < st->nr_out; i++) {
			struct output *o = &st->out[i];

			if (settle_one(o, words[i]) && errno != ENOENT) {
				pr_warn("cannot %s '%s': %s", o->tmp && words[i] == 'k' ?
					"replace" : "remove", o->tmp ? o->tmp : o->path,
					strerror(errno));
				ret = -1;
			}
		}
	}
	for (int i = 0; i < st->nr_out; i++) {
		free(st->out[i].tmp);
		st->out[i].tmp = NULL;
		st->out[i].made = false;
	}
	return ret;
}

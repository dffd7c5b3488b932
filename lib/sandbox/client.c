// SPDX-License-Identifier: GPL-3.0-or-later
/* client: starting, talking to and ending symbolizer workers (see client.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "base/limits.h"
#include "base/log.h"
#include "proc/procfile.h"
#include "sandbox/client.h"
#include "sandbox/worker.h"

#define SOCK_BUF	(4 << 20)	/* socket buffers: a message of SB_MSG_MAX fits */

extern char **environ;

double sb_client__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int sb_client__init(struct sb_client *c, uid_t uid, gid_t gid)
{
	const char *t = getenv(SB_TIMEOUT_ENV);
	char *end;

	*c = (struct sb_client){ .sock = -1, .uid = uid, .gid = gid };
	c->timeout = SB_TIMEOUT_MS / 1000.0;
	if (t && *t) {
		double v = strtod(t, &end);

		if (*end || !(v >= 0.1 && v <= 3600))
			pr_warn("%s=%s: not seconds from 0.1 to 3600; %g s", SB_TIMEOUT_ENV, t,
				c->timeout);
		else
			c->timeout = v;
	}
	c->rbuf = malloc(SB_MSG_MAX);
	c->test = getenv(SANDBOX_TEST_ENV);
	return c->rbuf ? 0 : -ENOMEM;
}

/* Kill the worker, close its socket and reap it. Returns its wait status, or -1. (Killed
 * first: a worker that saw its socket closed would exit on its own, and one built with ASan
 * then runs LeakSanitizer, whose tracer its seccomp filter kills: a stalled worker's end
 * read as SIGSYS, a forbidden system call.) */
static int sb_client__end(struct sb_client *c)
{
	int status = -1;

	if (c->sock < 0)
		return -1;
	kill(c->pid, SIGKILL);
	close(c->sock);
	c->sock = -1;
	while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
		;
	c->pid = 0;
	return status;
}

void sb_client__fini(struct sb_client *c)
{
	sb_client__end(c);
	free(c->rbuf);
	c->rbuf = NULL;
}

/* Bigger socket buffers than an unprivileged process may set: one message may be SB_MSG_MAX. */
static void sock__buffers(int fd)
{
	int size = SOCK_BUF;

	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
}

/* The bounds the worker met (SB_LIMITS: its totals so far) counted here as if met here, for
 * the summary; counts that went back (none should) are ignored. */
static void sb_client__limits(struct sb_client *c, const struct sb_msg *m)
{
	for (uint32_t i = 0; i < m->n && i < LIMIT__MAX; i++) {
		if (m->counts[i] > c->limits_seen[i]) {
			limits__hit((enum limit)i, m->counts[i] - c->limits_seen[i]);
			c->limits_seen[i] = m->counts[i];
		}
	}
}

int sb_spawn_self(char *const argv[], char *const envp[], int fd, bool idle, int *sock,
		  pid_t *pid)
{
	struct sched_param sp = { 0 };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t all, none;
	int sv[2], err;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	/* Not already the child's descriptor number: dup2 onto itself would keep CLOEXEC. */
	if (sv[1] == fd) {
		int moved = fcntl(sv[1], F_DUPFD_CLOEXEC, fd + 1);

		close(sv[1]);
		sv[1] = moved;
	}
	sock__buffers(sv[0]);
	sock__buffers(sv[1]);
	sigfillset(&all);
	sigemptyset(&none);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_adddup2(&fa, sv[1], fd);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclosefrom_np(&fa, fd + 1);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
				 POSIX_SPAWN_SETSIGDEF | (idle ? POSIX_SPAWN_SETSCHEDULER : 0));
	posix_spawnattr_setschedpolicy(&attr, SCHED_IDLE);
	posix_spawnattr_setschedparam(&attr, &sp);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	err = sv[1] < 0 ? EMFILE : posix_spawn(pid, "/proc/self/exe", &fa, &attr, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (sv[1] >= 0)
		close(sv[1]);
	if (err) {
		close(sv[0]);
		return -err;
	}
	*sock = sv[0];
	return 0;
}

/* This program started as the worker (SANDBOX_WORKER_ARG), over a socket of its own into
 * *SOCK. */
static int sb_client__spawn(struct sb_client *c, int *sock, pid_t *pid)
{
	char uid[16], gid[16], parent[16], level[16], budget[24], test[128];
	char *argv[] = { "profile-symbolizer", SANDBOX_WORKER_ARG, uid, gid, parent, level,
			 budget, NULL };
	char *envp[2] = { NULL, NULL };

	snprintf(uid, sizeof(uid), "%u", (unsigned int)c->uid);
	snprintf(gid, sizeof(gid), "%u", (unsigned int)c->gid);
	snprintf(parent, sizeof(parent), "%d", (int)getpid());
	snprintf(level, sizeof(level), "%d", log_level);
	/* The worker's caches are held to the profiler's --max-memory too (its own count). */
	snprintf(budget, sizeof(budget), "%llu", (unsigned long long)limits__budget());
	/* A clean environment; the test hook for the first worker only. */
	if (c->test && c->spawns == 0 && strlen(c->test) < 64) {
		snprintf(test, sizeof(test), "%s=%s", SANDBOX_TEST_ENV, c->test);
		envp[0] = test;
	}
	return sb_spawn_self(argv, envp, SANDBOX_WORKER_FD, c->idle, sock, pid);
}

int sb_client__start(struct sb_client *c)
{
	int sock, err;
	pid_t pid;

	if (c->sock >= 0)
		return 0;
	if (c->dead)
		return -ECHILD;
	if (c->spawns - c->recycled >= SB_SPAWNS_MAX || c->waited * 1000 >= SB_TOTAL_MS) {
		pr_warn("symbolizer worker: none started again after %u (%.0f s waited): the frames "
			"of the files left are FILE+0xOFFSET", c->spawns, c->waited);
		c->dead = true;
		return -ECHILD;
	}
	err = sb_client__spawn(c, &sock, &pid);
	c->spawns++;
	if (err) {
		pr_warn("symbolizer worker: cannot start: %s: frames in files are FILE+0xOFFSET",
			strerror(-err));
		c->dead = true;
		return -ECHILD;
	}
	c->sock = sock;
	c->pid = pid;
	c->gen++;
	c->confined = c->busy_known = false;
	memset(c->limits_seen, 0, sizeof(c->limits_seen));
	pr_debug("symbolizer worker: pid %d started", (int)pid);
	return 0;
}

int sb_client__send(struct sb_client *c, const struct sb_buf *b, const int *fds,
		    unsigned int nfds, bool nowait)
{
	int err = sb_buf__end(b);

	if (err)
		return err;
	if (c->sock < 0)
		return -EPIPE;
	err = sb_send(c->sock, b->p, b->len, fds, nfds, nowait ? MSG_DONTWAIT : 0);
	if (err == -ECONNRESET)
		err = -EPIPE;
	return err;
}

int sb_client__recv(struct sb_client *c, struct sb_msg *m, double deadline)
{
	int fds[SB_FDS_MAX];
	unsigned int nfds;
	long len;

	if (c->sock < 0)
		return -EPIPE;
	for (;;) {
		struct pollfd p = { c->sock, POLLIN, 0 };
		double now = sb_client__now();
		int ms = deadline ? (int)((deadline - now) * 1000) + 1 : 0;

		if (deadline && now >= deadline)
			return -ETIMEDOUT;
		if (poll(&p, 1, ms) < 0 && errno != EINTR)
			return -EPIPE;
		if (deadline)
			c->waited += sb_client__now() - now;
		len = sb_recv(c->sock, c->rbuf, fds, &nfds, MSG_DONTWAIT);
		if (len == -EAGAIN || len == -EINTR) {
			if (!deadline)
				return -EAGAIN;
			continue;
		}
		if (len == 0 || len == -ECONNRESET)
			return -EPIPE;
		if (len < 0)
			return -EBADMSG;
		/* A worker never hands descriptors over. */
		for (unsigned int i = 0; i < nfds; i++)
			close(fds[i]);
		if (nfds || sb_msg__decode(c->rbuf, (size_t)len, 0, false, m))
			return -EBADMSG;
		if (m->type == SB_HELLO) {
			c->confined = true;
			pr_info("symbolizer worker: pid %d, uid %u, gid %u, no capabilities, "
				"seccomp filter", (int)c->pid, m->uid, m->gid);
		} else if (m->type == SB_BUSY) {
			c->busy = m->id | (m->arg ? SB_BUSY_MAP : 0);
			c->busy_known = true;
		} else if (m->type == SB_LIMITS) {
			sb_client__limits(c, m);
		} else {
			return 0;
		}
	}
}

void sb_client__fail(struct sb_client *c, int err, const char *what)
{
	pid_t pid = c->pid;
	int status = sb_client__end(c);
	char how[96];

	if (status != -1 && WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
		snprintf(how, sizeof(how), "was killed by signal %d (%s)%s", WTERMSIG(status),
			 strsignal(WTERMSIG(status)), WTERMSIG(status) == SIGSYS ?
			 ": a system call its sandbox forbids" : "");
	else if (err == -ETIMEDOUT)
		snprintf(how, sizeof(how), "did not answer within %g s", c->timeout);
	else if (err == -EBADMSG)
		snprintf(how, sizeof(how), "sent a message that does not decode");
	else if (status != -1 && WIFEXITED(status))
		snprintf(how, sizeof(how), "exited with status %d", WEXITSTATUS(status));
	else
		snprintf(how, sizeof(how), "failed: %s", strerror(err < 0 ? -err : EIO));
	/* pr_warn escapes the file's name for the terminal, as every message. */
	pr_warn("symbolizer worker (pid %d) %s while reading %s: its frames there are left "
		"unnamed (FILE+0xOFFSET)", (int)pid, how, what);
	/* It could not even confine itself (it said why): the next would not either. */
	if (!c->confined && status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 1) {
		pr_warn("symbolizer worker: no other started: frames in files are FILE+0xOFFSET");
		c->dead = true;
	}
}

void sb_client__recycle(struct sb_client *c)
{
	pid_t pid = c->pid;

	if (c->sock < 0)
		return;
	sb_client__end(c);
	c->recycled++;
	pr_debug("symbolizer worker: pid %d ended for its memory; the next starts afresh",
		 (int)pid);
}

uint64_t sb_client__anon_kib(const struct sb_client *c)
{
	char buf[2048];
	const char *p;

	if (c->sock < 0 || proc__read(c->pid, "status", buf, sizeof(buf)) < 0)
		return 0;
	p = strstr(buf, "\nRssAnon:");
	return p ? strtoull(p + 9, NULL, 10) : 0;
}

void sb_client__set_idle(struct sb_client *c, bool idle)
{
	struct sched_param sp = { 0 };

	if (c->idle != idle && c->sock >= 0)
		sched_setscheduler(c->pid, idle ? SCHED_IDLE : SCHED_OTHER, &sp);
	c->idle = idle;
}

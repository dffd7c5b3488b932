// SPDX-License-Identifier: GPL-3.0-or-later
/* collect/command: the command to profile, forked held on a pipe and released once sampling
 * is attached, so that none of its instructions run unsampled; run as the user of --user;
 * ended with SIGTERM, and SIGKILL when it does not end in a grace period. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "base/clock.h"
#include "base/log.h"
#include "collect/runas.h"
#include "collect/session_int.h"

#define TERM_GRACE_S	2.0	/* after SIGTERM, the command's time to exit before SIGKILL */

/* What the held child sends back when the command could not be run; EOF when it was. */
struct child_err {
	int step;		/* enum runas_step; RUNAS_OK: the exec failed */
	int err;		/* errno */
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The held child: become the user, wait for the go, exec; on failure tell the parent why
 * (after the go, where the parent reads it). Never returns. */
static void __attribute__((noreturn)) child(struct session *s, int go, int report)
{
	struct child_err ce = { 0, 0 };
	char c;

	/* Before the go: the command's first instruction is the first one sampled. */
	ce.step = runas__become(s->runas, &ce.err);
	/* Held: no instruction of the command runs before the parent says go. */
	if (read(go, &c, 1) != 1)
		_exit(127);
	if (ce.step == RUNAS_OK) {
		if (s->runas)
			execvpe(s->opts.argv[0], s->opts.argv, s->runas->envp);
		else
			execvp(s->opts.argv[0], s->opts.argv);
		ce.err = errno;
	}
	if (write(report, &ce, sizeof(ce)) < 0)
		_exit(127);
	_exit(127);
}

/* Whether a file NAME exists where execvp looks for it (NAME itself when it has a '/', else
 * along PATH): a command that is nowhere is refused before anything starts (and before the
 * -o files are touched); one that cannot run for another reason fails at its exec. */
static bool command_exists(const char *name)
{
	const char *path = getenv("PATH"), *p, *end;
	char buf[4096];

	if (strchr(name, '/'))
		return access(name, F_OK) == 0;
	for (p = path && *path ? path : "/bin:/usr/bin"; ; p = end + 1) {
		size_t len;

		end = strchrnul(p, ':');
		len = (size_t)(end - p);
		if (snprintf(buf, sizeof(buf), "%.*s%s%s", (int)len, p, len ? "/" : "", name) <
		    (int)sizeof(buf) && access(buf, F_OK) == 0)
			return true;
		if (!*end)
			return false;
	}
}

/*
 * The runtimes a command may start name their JIT frames when asked by their documented
 * switches, for little (issue 29): node writes a perf map of its functions
 * (--perf-basic-prof-only-functions, which NODE_OPTIONS may carry), a HotSpot JVM one of its
 * compiled methods when it exits (JAVA_TOOL_OPTIONS' -XX:+DumpPerfMapAtExit, a diagnostic
 * flag). A JVM is also asked to keep frame records in its compiled code
 * (-XX:+PreserveFramePointer, JDK 8u60 and later: within 1% of its speed on JDK 17 with a
 * call-heavy loop), without which no stack goes past its Java frames: each is cut at the
 * first, marked. (Python is not asked for trampolines, PYTHONPERFSUPPORT: its frames are
 * read at each sample, collect/python.c.) Set in our environment before the fork (--user's
 * copies it), unless the user set them or said --no-runtime.
 */
static void runtime_env(struct session *s)
{
	static char said[160];
	const char *node = getenv("NODE_OPTIONS"), *java = getenv("JAVA_TOOL_OPTIONS");
	char *v = NULL;
	bool map, fp;

	s->stats.runtime_env = "";
	if (s->opts.no_runtime)
		return;
	said[0] = '\0';
	if ((!node || !strstr(node, "--perf-basic-prof")) &&
	    asprintf(&v, "%s%s--perf-basic-prof-only-functions", node ? node : "",
		     node && *node ? " " : "") >= 0) {
		if (!setenv("NODE_OPTIONS", v, 1))
			strcat(said, "NODE_OPTIONS=--perf-basic-prof-only-functions");
		free(v);
	}
	map = !java || !strstr(java, "PerfMap");
	fp = !java || !strstr(java, "PreserveFramePointer");
	if ((map || fp) &&
	    asprintf(&v, "%s%s%s%s%s", java ? java : "", java && *java ? " " : "",
		     map ? "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit" : "",
		     map && fp ? " " : "", fp ? "-XX:+PreserveFramePointer" : "") >= 0) {
		if (!setenv("JAVA_TOOL_OPTIONS", v, 1)) {
			strcat(said, said[0] ? ", JAVA_TOOL_OPTIONS=" : "JAVA_TOOL_OPTIONS=");
			strcat(said, map ? "-XX:+DumpPerfMapAtExit" : "");
			strcat(said, map && fp ? " " : "");
			strcat(said, fp ? "-XX:+PreserveFramePointer" : "");
		}
		free(v);
	}
	s->stats.runtime_env = said;
}

int session__start_command(struct session *s)
{
	int go[2] = { -1, -1 }, report[2] = { -1, -1 };
	char err[256];
	pid_t pid;
	int ret;

	if (!command_exists(s->opts.argv[0]))
		return session__fail(s, SESSION_ERR_TARGET, -ENOENT, "cannot execute '%s': %s",
				     s->opts.argv[0], strerror(ENOENT));
	runtime_env(s);

	if (s->opts.user) {
		s->runas = calloc(1, sizeof(*s->runas));
		if (!s->runas)
			return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
		ret = runas__resolve(s->opts.user, s->runas, err, sizeof(err));
		if (!ret && runas__env(s->runas, environ))
			ret = -ENOMEM;
		if (ret)
			return session__fail(s, ret == -ENOMEM ? SESSION_ERR_RUNTIME : SESSION_ERR_USAGE,
					     ret, "%s", ret == -ENOMEM ? "out of memory" : err);
	}
	if (pipe2(go, O_CLOEXEC) || pipe2(report, O_CLOEXEC)) {
		ret = session__fail(s, SESSION_ERR_RUNTIME, -errno, "cannot create a pipe: %s",
				    strerror(errno));
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		ret = session__fail(s, SESSION_ERR_RUNTIME, -errno, "cannot fork: %s",
				    strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		close(go[1]);
		close(report[0]);
		child(s, go[0], report[1]);
	}
	close(go[0]);
	close(report[1]);
	s->child = s->command_pid = pid;
	session__signals_command(pid);
	s->go_fd = go[1];
	s->exec_err_fd = report[0];
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		close_fd(&go[i]);
		close_fd(&report[i]);
	}
	return ret;
}

/* The go to the held child; EPIPE (not SIGPIPE, which would end profile) when it is gone. */
static int send_go(int fd)
{
	struct timespec zero = { 0, 0 };
	sigset_t pipe_set, old;
	char go = 1;
	int err = 0;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	if (write(fd, &go, 1) != 1) {
		err = errno ? -errno : -EIO;
		if (err == -EPIPE)
			sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

int session__release_command(struct session *s)
{
	struct child_err ce;
	ssize_t n;
	int err = send_go(s->go_fd);

	if (err)
		return session__fail(s, SESSION_ERR_RUNTIME, err, "cannot start the command: %s",
				     err == -EPIPE ? "it ended while held" : strerror(-err));
	close_fd(&s->go_fd);
	do
		n = read(s->exec_err_fd, &ce, sizeof(ce));
	while (n < 0 && errno == EINTR);
	close_fd(&s->exec_err_fd);
	if (n != sizeof(ce))
		return 0;
	waitpid(s->child, NULL, 0);
	session__signals_command(0);
	s->child = 0;
	if (ce.step == RUNAS_OK)
		return session__fail(s, SESSION_ERR_TARGET, -ce.err, "cannot execute '%s': %s",
				     s->opts.argv[0], strerror(ce.err));
	return session__fail(s, ce.err == EPERM ? SESSION_ERR_ENV : SESSION_ERR_RUNTIME, -ce.err,
			     "cannot %s of the command (--user %s): %s", runas__step_name(ce.step),
			     s->opts.user ? s->opts.user : "", strerror(ce.err));
}

/* Wait up to SECONDS for the command to exit; true when it did (its status recorded). */
static bool reap(struct session *s, double seconds)
{
	double end = clock_mono_seconds() + seconds;
	int status;

	for (;;) {
		pid_t r = waitpid(s->child, &status, WNOHANG);

		if (r == s->child || (r < 0 && errno == ECHILD)) {
			if (r == s->child)
				s->stats.cmd_status = status;
			session__signals_command(0);
			return true;
		}
		if (clock_mono_seconds() >= end)
			return false;
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
}

void session__stop_command(struct session *s, int sig)
{
	if (s->child) {
		kill(s->child, sig);
		if (sig == SIGKILL || !reap(s, TERM_GRACE_S)) {
			if (sig != SIGKILL)
				pr_warn("the command did not exit within %.0f s of SIGTERM: killed",
					TERM_GRACE_S);
			kill(s->child, SIGKILL);
			reap(s, 1e9);
		}
		s->child = 0;
	}
	close_fd(&s->go_fd);
	close_fd(&s->exec_err_fd);
}

void session__free_command(struct session *s)
{
	session__stop_command(s, SIGKILL);
	runas__free(s->runas);
	free(s->runas);
	s->runas = NULL;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * jvmattach: a HotSpot JVM asked for a perf map of its compiled methods (issue 29), through
 * its attach socket, as `jcmd PID Compiler.perfmap` asks it: once as sampling begins (the
 * methods compiled by then, some of them freed later, named early), at each --every
 * period's end and at the end, before names are given. For the JVMs of -p, and the command
 * (when it turns out to be one), unless --no-runtime.
 *
 * Who does what:
 *  - profile (the sampling process) finds the JVMs: a process is asked only while it maps
 *    libjvm.so and catches SIGQUIT or has its attach socket already (-Xrs starts it), never
 *    when started with -XX:+DisableAttachMechanism (/proc/PID/maps, cmdline and status,
 *    which it may still read after the drop: CAP_SYS_PTRACE). Nothing else touches a
 *    process that is not one, and only a JVM that catches SIGQUIT is sent it.
 *  - one helper per JVM does the asking: forked while profile is still root (before the
 *    drop, one thread), it becomes the JVM's effective uid and gid (its only group), with
 *    no capability at all, no new privileges, and then only: creates the trigger file
 *    .attach_pid<NSPID> in the JVM's working directory (or its /tmp), sends SIGQUIT by a
 *    pidfd, waits (bounded) for the socket /tmp/.java_pid<NSPID> in the JVM's root, connects
 *    and sends "1\0jcmd\0Compiler.perfmap\0\0\0", reads the status line, closes. HotSpot
 *    accepts a peer of its own effective uid and gid, or root (17's
 *    os::Posix::matches_effective_uid_and_gid_or_root); a JVM of root's with capabilities
 *    is reached as uid 0 without any. The JVM's working directory, its
 *    /tmp and its pidfd are opened by profile before the fork (so that a helper without
 *    capabilities reaches a JVM of root's, and in a container its own /tmp) and are all the
 *    helper keeps; the paths it uses are relative to them, everything it reads is bounded.
 *  - profile sends a helper a byte for each ask and reads one answer (struct answer) back:
 *    without waiting while sampling, waiting (bounded) at a period's end and at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include "base/clock.h"
#include "base/log.h"
#include "collect/runas.h"
#include "collect/session_int.h"

#define JVM_MAX			8	/* JVMs asked (the -p pids that are, the command) */
#define SOCKET_WAIT_S		3.0	/* after SIGQUIT, the socket waited for */
#define IO_TIMEOUT_S		2	/* connect, send, the reply */
#define ANSWER_WAIT_S		6.0	/* profile waits for an answer (period end, the end) */
#define COMMAND_LOOK_S		0.1	/* the command looked at for a JVM this often ... */
#define COMMAND_LOOK_FOR_S	30.0	/* ... for this long after sampling began */
#define REPLY_MAX		4096	/* bytes of a reply read */

enum ask_result { ASK_OK, ASK_GONE, ASK_FAILED };

/* A helper's answer to one ask. */
struct answer {
	int32_t result;			/* enum ask_result */
	int32_t frame_pointers;		/* -XX:+PreserveFramePointer: 1, 0, -1 not known */
	char why[160];			/* ASK_FAILED: one sentence's end, NUL-terminated */
};

struct jvm {
	pid_t pid;			/* the JVM (in our pid namespace) */
	pid_t helper;
	int req, res;			/* to the helper, from it (non-blocking) */
	bool command;			/* the command: a JVM only once it maps libjvm.so */
	bool busy;			/* an ask sent, not answered yet */
	bool stop;			/* failed, or gone: asked no more */
	unsigned int asked;		/* asks answered ASK_OK */
	int frame_pointers;		/* its -XX:+PreserveFramePointer (1, 0; -1: not known) */
	char why[160];			/* the first failure */
};

struct jvmattach {
	struct jvm v[JVM_MAX];
	int nr;
	double next_look;		/* the command: when it is looked at again */
	char said[JVM_MAX * 512];	/* for the summary (stats.jvm_said) */
};

/* --- what profile reads of a process ---------------------------------------------------- */

/* Up to LEN - 1 bytes of /proc/PID/NAME into BUF; bytes read, or -1. */
static ssize_t read_proc(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];
	ssize_t n, got = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((size_t)got < len - 1 && (n = read(fd, buf + got, len - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return got;
}

/* The value text of a "Name:\t..." line of a status text; NULL when absent. */
static const char *status_field(const char *text, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, len) && p[len] == ':')
			return p + len + 1;
	return NULL;
}

/* The NTH number of status field NAME (base BASE); false when it has none. */
static bool status_num(const char *text, const char *name, int nth, int base,
		       unsigned long long *v)
{
	const char *p = status_field(text, name);
	char *end;

	for (int i = 0; p && i <= nth; i++) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\n' || !*p)
			return false;
		*v = strtoull(p, &end, base);
		if (end == p)
			return false;
		p = end;
	}
	return p != NULL;
}

/* The last number of status field NAME (NSpid: the pid in the process's own namespace). */
static bool status_last(const char *text, const char *name, unsigned long long *v)
{
	bool any = false;
	unsigned long long x;

	for (int i = 0; i < 32 && status_num(text, name, i, 10, &x); i++) {
		*v = x;
		any = true;
	}
	return any;
}

/* Whether STATUS says the process catches SIGQUIT (a JVM started: its handler is there). */
static bool catches_sigquit(const char *status)
{
	unsigned long long cgt;

	return status_num(status, "SigCgt", 0, 16, &cgt) && (cgt & (1ull << (SIGQUIT - 1)));
}

/* What PID is to us: not a JVM (no file named libjvm.so mapped), one that will not be
 * asked (-XX:+DisableAttachMechanism on its command line; SIGQUIT not caught: -Xrs, or not
 * started yet), or one to ask. Only the last may be signalled. */
enum jvm_state { NOT_JVM, JVM_NO_ATTACH, JVM_NO_SIGQUIT, JVM_READY };

static enum jvm_state jvm_state(pid_t pid)
{
	static const char no_attach[] = "-XX:+DisableAttachMechanism";
	char status[4096], path[64], *buf = NULL, *line, *cmd;
	bool jvm = false;
	ssize_t n;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return NOT_JVM;
	while (!jvm && getline(&buf, &cap, f) > 0) {
		size_t len = strlen(buf);

		if (len && buf[len - 1] == '\n')
			buf[--len] = '\0';
		line = strrchr(buf, '/');
		jvm = line && !strcmp(line, "/libjvm.so");
	}
	free(buf);
	fclose(f);
	if (!jvm)
		return NOT_JVM;
	cmd = malloc(65536);
	n = cmd ? read_proc(pid, "cmdline", cmd, 65536) : -1;
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(cmd + i) + 1)
		if (!strcmp(cmd + i, no_attach)) {
			free(cmd);
			return JVM_NO_ATTACH;
		}
	free(cmd);
	if (read_proc(pid, "status", status, sizeof(status)) <= 0)
		return NOT_JVM;
	if (!catches_sigquit(status)) {
		unsigned long long nspid;
		struct stat st;

		/* Its listener may be up already (-Xrs starts it with the JVM): asked
		 * through it, never signalled (the helper looks at SigCgt again). */
		if (!status_last(status, "NSpid", &nspid))
			nspid = (unsigned long long)pid;
		snprintf(path, sizeof(path), "/proc/%d/root/tmp/.java_pid%llu", pid, nspid);
		return stat(path, &st) == 0 && S_ISSOCK(st.st_mode) ? JVM_READY : JVM_NO_SIGQUIT;
	}
	return JVM_READY;
}

/* Why a JVM in STATE is not asked. */
static const char *not_asked(enum jvm_state state)
{
	return state == JVM_NO_ATTACH ? "it was started with -XX:+DisableAttachMechanism" :
	       "it does not catch SIGQUIT, which starts its attach listener (-Xrs?), and has "
	       "no attach socket";
}

/* --- the helper --------------------------------------------------------------------------- */

struct target {
	pid_t pid;			/* in our namespace (the /proc/PID/status it reads) */
	pid_t nspid;			/* in its own: the names of the files */
	uid_t uid;			/* its effective ids, become by the helper */
	gid_t gid;
	int pidfd, cwd, tmp;		/* opened by profile before the fork (-1: none) */
};

static void say(struct answer *a, int result, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(struct answer *a, int result, const char *fmt, ...)
{
	va_list ap;

	a->result = result;
	va_start(ap, fmt);
	vsnprintf(a->why, sizeof(a->why), fmt, ap);
	va_end(ap);
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The JVM's socket in its /tmp: a socket of its uid. */
static bool socket_there(const struct target *t, const char *name)
{
	struct stat st;

	return t->tmp >= 0 && !fstatat(t->tmp, name, &st, AT_SYMLINK_NOFOLLOW) &&
	       S_ISSOCK(st.st_mode) && st.st_uid == t->uid;
}

/* The trigger file in directory DIR: created (ours to remove: *MADE) or there already. */
static bool make_trigger(int dir, const char *name, uid_t uid, bool *made)
{
	struct stat st;
	int fd;

	*made = false;
	if (dir < 0)
		return false;
	fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		*made = true;
		/* A file system that gives files another owner: the JVM would not trust it. */
		if (!fstat(fd, &st) && st.st_uid == uid) {
			close(fd);
			return true;
		}
		close(fd);
		unlinkat(dir, name, 0);
		*made = false;
		return false;
	}
	return errno == EEXIST && !fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) &&
	       S_ISREG(st.st_mode) && st.st_uid == uid;
}

/* The JVM's attach listener started: the trigger file, SIGQUIT, the socket waited for. */
static bool start_listener(const struct target *t, const char *sock, struct answer *a)
{
	char name[64], status[4096];
	unsigned long long euid, egid;
	int dir = t->cwd;
	bool made, up = false;

	snprintf(name, sizeof(name), ".attach_pid%d", t->nspid);
	if (!make_trigger(dir, name, t->uid, &made)) {
		dir = t->tmp;
		if (!make_trigger(dir, name, t->uid, &made)) {
			say(a, ASK_FAILED, "cannot create %s in its working directory nor in its "
			    "/tmp", name);
			return false;
		}
	}
	/* Looked at once more, just before the signal: still a process of these ids that
	 * catches SIGQUIT. The pidfd is the process profile found mapping libjvm.so: a pid
	 * reused since gets nothing. */
	if (read_proc(t->pid, "status", status, sizeof(status)) <= 0)
		say(a, ASK_GONE, "it exited");
	else if (!status_num(status, "Uid", 1, 10, &euid) || !status_num(status, "Gid", 1, 10,
									 &egid) ||
		 euid != t->uid || egid != t->gid)
		say(a, ASK_FAILED, "it no longer runs as uid %u, gid %u", (unsigned)t->uid,
		    (unsigned)t->gid);
	else if (!catches_sigquit(status))
		say(a, ASK_FAILED, "it no longer catches SIGQUIT");
	else if (syscall(SYS_pidfd_send_signal, t->pidfd, SIGQUIT, NULL, 0))
		say(a, errno == ESRCH ? ASK_GONE : ASK_FAILED, "cannot send it SIGQUIT: %s",
		    strerror(errno));
	else {
		double end = clock_mono_seconds() + SOCKET_WAIT_S;

		while (!(up = socket_there(t, sock)) && clock_mono_seconds() < end)
			sleep_s(0.02);
		if (!up)
			say(a, ASK_FAILED, "its attach socket did not appear within %.0f s of SIGQUIT "
			    "(-XX:+DisableAttachMechanism?)", SOCKET_WAIT_S);
	}
	if (made)
		unlinkat(dir, name, 0);
	return up;
}

/* The reply's first line made printable (at most LEN bytes into OUT). */
static void printable(const char *in, size_t n, char *out, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < n && in[i] != '\n' && o + 1 < len; i++)
		out[o++] = in[i] >= 0x20 && in[i] < 0x7f ? in[i] : '?';
	out[o] = '\0';
}

/* One command (CMD, LEN bytes with its final NULs) through T's attach socket, its reply (at
 * most REPLY_MAX bytes, NUL-terminated) into REPLY, its length into *GOT. False, with *A
 * saying why (WHAT: the command's name), when it could not be sent or failed. */
static bool attach_command(const struct target *t, const char *cmd, size_t len,
			   const char *what, char reply[REPLY_MAX + 1], size_t *got,
			   struct answer *a)
{
	struct timeval tv = { IO_TIMEOUT_S, 0 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char sock[64], line[128];
	bool ok = false;
	double end;
	ssize_t n;
	int fd;

	*got = 0;
	reply[0] = '\0';
	snprintf(sock, sizeof(sock), ".java_pid%d", t->nspid);
	if (!socket_there(t, sock) && !start_listener(t, sock, a))
		return false;
	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", t->tmp, sock) >=
	    (int)sizeof(sa.sun_path)) {
		say(a, ASK_FAILED, "its socket's path is too long");
		return false;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		say(a, ASK_FAILED, "cannot make a socket: %s", strerror(errno));
		return false;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		say(a, ASK_FAILED, "cannot connect to its attach socket: %s", strerror(errno));
		goto out;
	}
	if (send(fd, cmd, len, MSG_NOSIGNAL) != (ssize_t)len) {
		say(a, ASK_FAILED, "cannot send the command: %s", strerror(errno));
		goto out;
	}
	/* The status code line, then what the command printed; read until EOF, at most
	 * REPLY_MAX bytes and IO_TIMEOUT_S in all. */
	end = clock_mono_seconds() + IO_TIMEOUT_S;
	while (*got < REPLY_MAX) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double left = end - clock_mono_seconds();

		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			break;
		n = recv(fd, reply + *got, REPLY_MAX - *got, MSG_DONTWAIT);
		if (n <= 0)
			break;
		*got += (size_t)n;
	}
	reply[*got] = '\0';
	if (!*got) {
		say(a, ASK_FAILED, "its attach listener answered nothing (refused: another uid?)");
	} else if (reply[0] != '0' || (*got > 1 && reply[1] != '\n')) {
		const char *msg = memchr(reply, '\n', *got);

		printable(msg ? msg + 1 : reply, msg ? *got - (size_t)(msg + 1 - reply) : *got,
			  line, sizeof(line));
		say(a, ASK_FAILED, "%s failed%s%s", what, line[0] ? ": " : "", line);
	} else {
		ok = true;
	}
out:
	close(fd);
	return ok;
}

/* Whether VM.flags' reply REPLY (the flags set otherwise than by default, "-XX:+Name"
 * each) sets -XX:+PreserveFramePointer: 1, 0, or -1 when it is no such reply. */
static int reply_frame_pointers(const char *reply)
{
	const char *p = strchr(reply, '\n');

	if (!p || !strstr(p, "-XX:"))
		return -1;
	for (p = strstr(p, "PreserveFramePointer"); p; p = strstr(p + 1, "PreserveFramePointer"))
		if (p[-1] == '+' && (p[20] == ' ' || p[20] == '\n' || p[20] == '\0'))
			return 1;
	return 0;
}

/* One ask: Compiler.perfmap through the attach socket; and once, VM.flags, for whether its
 * compiled code keeps frame records (a flag fixed at its start). */
static void ask(const struct target *t, struct answer *a)
{
	static const char perfmap[] = "1\0jcmd\0Compiler.perfmap\0\0";	/* and the final NUL */
	static const char flags[] = "1\0jcmd\0VM.flags\0\0";
	static int frame_pointers = -1;
	char reply[REPLY_MAX + 1];
	struct answer fa;
	size_t got;

	memset(a, 0, sizeof(*a));
	a->frame_pointers = -1;
	if (!attach_command(t, perfmap, sizeof(perfmap), "Compiler.perfmap", reply, &got, a))
		return;
	a->result = ASK_OK;
	if (frame_pointers < 0 &&
	    attach_command(t, flags, sizeof(flags), "VM.flags", reply, &got, &fa))
		frame_pointers = reply_frame_pointers(reply);
	a->frame_pointers = frame_pointers;
}

/* Become T's effective uid and gid (its only group), with no capability, no new
 * privileges, dying with profile. False on any failure. */
static bool become(const struct target *t, pid_t parent)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[2] = { 0 };

	/* The bounding set emptied while we may (CAP_SETPCAP): nothing to gain by an exec
	 * either (nor may we: no new privileges below). */
	for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL && errno != EPERM)
			return false;
	/* (Run by the JVM's user without CAP_SETGID: its groups are kept; the JVM looks at
	 * the uid and gid only.) */
	if (setgroups(1, &t->gid) && !(errno == EPERM && geteuid() == t->uid))
		return false;
	if (setresgid(t->gid, t->gid, t->gid) ||
	    prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) || setresuid(t->uid, t->uid, t->uid))
		return false;
	/* None left (a uid 0 keeps them across setresuid), none ambient; none to gain. */
	if (syscall(SYS_capset, &hdr, caps) ||
	    (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return false;
	if (syscall(SYS_capget, &hdr, caps) || caps[0].effective || caps[0].permitted ||
	    caps[1].effective || caps[1].permitted || caps[0].inheritable || caps[1].inheritable)
		return false;
	/* (The change of ids cleared any death signal: set after it.) */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) || getppid() != parent)
		return false;
	return geteuid() == t->uid && getegid() == t->gid;
}

/* The helper: every descriptor but REQ, RES and T's closed; the ids become; one answer per
 * byte read, until EOF. Never returns. */
static void __attribute__((noreturn)) helper(struct target *t, int req, int res, pid_t parent)
{
	int keep[5] = { req, res, t->pidfd, t->cwd, t->tmp };
	struct answer a;
	char c;

	/* Ctrl-C reaches the whole process group: profile says when the helper ends. */
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGQUIT, SIG_DFL);
	for (int fd = 3; fd < 65536; fd++) {
		bool kept = false;

		for (int i = 0; i < 5; i++)
			kept |= keep[i] == fd;
		if (!kept)
			close(fd);
	}
	if (!become(t, parent)) {
		memset(&a, 0, sizeof(a));
		say(&a, ASK_FAILED, "the helper could not become uid %u, gid %u: %s",
		    (unsigned)t->uid, (unsigned)t->gid, strerror(errno));
		while (read(req, &c, 1) == 1)
			if (write(res, &a, sizeof(a)) != sizeof(a))
				break;
		_exit(1);
	}
	while (read(req, &c, 1) == 1) {
		ask(t, &a);
		if (write(res, &a, sizeof(a)) != sizeof(a))
			break;
	}
	_exit(0);
}

/* --- profile's side ----------------------------------------------------------------------- */

static void close_target(struct target *t)
{
	if (t->pidfd >= 0)
		close(t->pidfd);
	if (t->cwd >= 0)
		close(t->cwd);
	if (t->tmp >= 0)
		close(t->tmp);
}

/* A helper for PID (the command's: COMMAND, of ids UID, GID; else its own ids). */
static void add_jvm(struct session *s, pid_t pid, bool command, uid_t uid, gid_t gid)
{
	struct jvmattach *ja = s->jva;
	struct target t = { .pid = pid, .uid = uid, .gid = gid, .pidfd = -1, .cwd = -1,
			    .tmp = -1 };
	char status[4096], path[64];
	unsigned long long v;
	int req[2], res[2];
	struct jvm *j;
	pid_t helper_pid;

	if (ja->nr >= JVM_MAX || read_proc(pid, "status", status, sizeof(status)) <= 0)
		return;
	if (!status_last(status, "NSpid", &v))
		v = (unsigned long long)pid;
	t.nspid = (pid_t)v;
	if (!command) {
		unsigned long long euid, egid;

		if (!status_num(status, "Uid", 1, 10, &euid) ||
		    !status_num(status, "Gid", 1, 10, &egid))
			return;
		t.uid = (uid_t)euid;
		t.gid = (gid_t)egid;
	}
	t.pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	snprintf(path, sizeof(path), "/proc/%d/cwd", pid);
	t.cwd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/root/tmp", pid);
	t.tmp = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	j = &ja->v[ja->nr];
	*j = (struct jvm){ .pid = pid, .command = command, .req = -1, .res = -1,
			   .frame_pointers = -1 };
	if (t.pidfd < 0 || t.tmp < 0) {
		snprintf(j->why, sizeof(j->why), "cannot open its %s: %s",
			 t.pidfd < 0 ? "pidfd" : "/tmp", strerror(errno));
		j->stop = true;
		ja->nr++;
		close_target(&t);
		return;
	}
	if (pipe2(req, O_CLOEXEC)) {
		close_target(&t);
		return;
	}
	if (pipe2(res, O_CLOEXEC)) {
		close(req[0]);
		close(req[1]);
		close_target(&t);
		return;
	}
	fflush(NULL);
	helper_pid = fork();
	if (helper_pid == 0) {
		close(req[1]);
		close(res[0]);
		helper(&t, req[0], res[1], getppid());
	}
	close(req[0]);
	close(res[1]);
	close_target(&t);
	if (helper_pid < 0) {
		close(req[1]);
		close(res[0]);
		return;
	}
	fcntl(res[0], F_SETFL, O_NONBLOCK);
	fcntl(req[1], F_SETFL, O_NONBLOCK);
	j->helper = helper_pid;
	j->req = req[1];
	j->res = res[0];
	ja->nr++;
	pr_debug("jvmattach: helper %d for pid %d (nspid %d) as uid %u, gid %u", helper_pid,
		 pid, t.nspid, (unsigned)t.uid, (unsigned)t.gid);
}

int session__jvm_open(struct session *s)
{
	if (s->opts.no_runtime)
		return 0;
	s->jva = calloc(1, sizeof(*s->jva));
	if (!s->jva)
		return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	for (size_t i = 0; i < s->opts.nr_pids; i++) {
		enum jvm_state st = jvm_state(s->opts.pids[i]);
		struct jvm *j = &s->jva->v[s->jva->nr];

		if (st == JVM_READY) {
			add_jvm(s, s->opts.pids[i], false, 0, 0);
		} else if (st != NOT_JVM && s->jva->nr < JVM_MAX) {
			/* Not signalled: said why. */
			*j = (struct jvm){ .pid = s->opts.pids[i], .req = -1, .res = -1,
					   .stop = true };
			snprintf(j->why, sizeof(j->why), "%s", not_asked(st));
			s->jva->nr++;
		}
	}
	/* The command runs as --user's ids, or ours; a JVM only once it maps libjvm.so. */
	if (s->child)
		add_jvm(s, s->child, true, s->runas ? s->runas->uid : geteuid(),
			s->runas ? s->runas->gid : getegid());
	return 0;
}

/* An answer of J's read (non-blocking unless TIMEOUT > 0: waited for up to TIMEOUT s). */
static void take_answer(struct jvm *j, double timeout)
{
	struct answer a;
	ssize_t n;

	if (!j->busy || j->res < 0)
		return;
	if (timeout > 0) {
		struct pollfd p = { .fd = j->res, .events = POLLIN };

		if (poll(&p, 1, (int)(timeout * 1000)) <= 0)
			return;
	}
	n = read(j->res, &a, sizeof(a));
	if (n < 0 && errno == EAGAIN)
		return;
	j->busy = false;
	if (n != sizeof(a)) {
		if (!j->asked && !j->why[0])
			snprintf(j->why, sizeof(j->why), "its helper ended");
		j->stop = true;
		return;
	}
	a.why[sizeof(a.why) - 1] = '\0';
	if (a.result == ASK_OK) {
		j->asked++;
		if (a.frame_pointers >= 0)
			j->frame_pointers = a.frame_pointers;
		pr_debug("jvmattach: pid %d wrote its perf map (Compiler.perfmap)", j->pid);
		return;
	}
	/* Failed (or gone): not asked again, for a JVM that will not open its socket prints a
	 * thread dump at each SIGQUIT. */
	j->stop = true;
	if (a.result == ASK_FAILED && !j->why[0])
		snprintf(j->why, sizeof(j->why), "%s", a.why);
	pr_debug("jvmattach: pid %d: %s", j->pid, a.why);
}

/* Send J an ask when it is a JVM now and not busy. */
static bool send_ask(struct jvm *j)
{
	enum jvm_state st;
	char c = 'A';

	if (j->stop || j->busy || j->req < 0)
		return false;
	st = jvm_state(j->pid);
	if (st != JVM_READY) {
		/* The command may not be a JVM yet, or not have its handler yet: looked at
		 * again. A JVM that will not be asked, or a -p pid that is no JVM now, is left. */
		if (st == JVM_NO_ATTACH || (!j->command && st != NOT_JVM))
			snprintf(j->why, sizeof(j->why), "%s", not_asked(st));
		if (st == JVM_NO_ATTACH || !j->command)
			j->stop = true;
		return false;
	}
	if (write(j->req, &c, 1) != 1)
		return false;
	j->busy = true;
	return true;
}

void session__jvm_begin(struct session *s)
{
	struct jvmattach *ja = s->jva;

	if (!ja)
		return;
	for (int i = 0; i < ja->nr; i++)
		if (!ja->v[i].command)
			send_ask(&ja->v[i]);
	ja->next_look = clock_mono_seconds();
}

void session__jvm_poll(struct session *s)
{
	struct jvmattach *ja = s->jva;
	double now;

	if (!ja || !ja->nr)
		return;
	for (int i = 0; i < ja->nr; i++)
		take_answer(&ja->v[i], 0);
	/* The command: asked once as soon as it is a JVM that catches SIGQUIT. */
	now = clock_mono_seconds();
	if (now < ja->next_look || now > s->run_start + COMMAND_LOOK_FOR_S)
		return;
	ja->next_look = now + COMMAND_LOOK_S;
	for (int i = 0; i < ja->nr; i++) {
		struct jvm *j = &ja->v[i];

		char status[4096];

		/* (Its status first: most programs do not catch SIGQUIT, and their maps,
		 * maybe long, are not read ten times a second.) */
		if (j->command && !j->asked && !j->busy && !j->stop &&
		    read_proc(j->pid, "status", status, sizeof(status)) > 0 &&
		    catches_sigquit(status))
			send_ask(j);
	}
}

void session__jvm_ask(struct session *s)
{
	struct jvmattach *ja = s->jva;
	double end = clock_mono_seconds() + ANSWER_WAIT_S;

	if (!ja)
		return;
	/* An ask under way (the first one): its answer first. */
	for (int i = 0; i < ja->nr; i++)
		take_answer(&ja->v[i], end - clock_mono_seconds());
	for (int i = 0; i < ja->nr; i++)
		send_ask(&ja->v[i]);
	end = clock_mono_seconds() + ANSWER_WAIT_S;
	for (int i = 0; i < ja->nr; i++)
		take_answer(&ja->v[i], end - clock_mono_seconds());
}

const char *session__jvm_said(struct session *s)
{
	struct jvmattach *ja = s->jva;
	size_t o = 0;

	if (!ja)
		return NULL;
	ja->said[0] = '\0';
	for (int i = 0; i < ja->nr && o < sizeof(ja->said); i++) {
		struct jvm *j = &ja->v[i];

		if (j->asked) {
			o += (size_t)snprintf(ja->said + o, sizeof(ja->said) - o, "%sasked JVM %d for "
					      "a perf map of its compiled methods (Compiler.perfmap "
					      "through its attach socket, %u time%s); --no-runtime "
					      "leaves it alone", o ? "\n" : "", j->pid, j->asked,
					      j->asked > 1 ? "s" : "");
			/* (Its stacks say so too, in --explain: cut in anonymous code. This
			 * says which JVM, and what to do.) */
			if (j->frame_pointers == 0 && o < sizeof(ja->said))
				o += (size_t)snprintf(ja->said + o, sizeof(ja->said) - o,
						      "\nJVM %d runs without -XX:+PreserveFramePointer: "
						      "its stacks end at their first compiled Java "
						      "frame, marked [truncated]; started with it "
						      "(profile -- java ... gives it), they are whole, "
						      "for about 1%% of its speed", j->pid);
		} else if (j->why[0])
			o += (size_t)snprintf(ja->said + o, sizeof(ja->said) - o, "%scould not ask JVM "
					      "%d for a perf map of its compiled methods: %s",
					      o ? "\n" : "", j->pid, j->why);
	}
	return ja->said[0] ? ja->said : NULL;
}

void session__jvm_free(struct session *s)
{
	struct jvmattach *ja = s->jva;

	if (!ja)
		return;
	for (int i = 0; i < ja->nr; i++) {
		struct jvm *j = &ja->v[i];

		/* EOF: the helper exits after its ask under way (bounded); reaped if it did,
		 * else it dies with profile (PR_SET_PDEATHSIG). */
		if (j->req >= 0)
			close(j->req);
		if (j->res >= 0)
			close(j->res);
		if (j->helper > 0) {
			for (int k = 0; k < 20 && waitpid(j->helper, NULL, WNOHANG) == 0; k++)
				sleep_s(0.005);
		}
	}
	free(ja);
	s->jva = NULL;
}

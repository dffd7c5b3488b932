// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/privs: the capabilities a session needs, checked before it starts, and dropped
 * after attach to those the rest of the run still uses.
 *
 * What each step needs was found by trying it with one capability at a time (setpriv, on
 * 6.18), for a process of another user:
 *
 *	load, attach (before the drop)		CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)
 *	map and ring-buffer reads and writes	nothing: the descriptors are enough
 *	/proc/PID/maps				CAP_PERFMON or CAP_SYS_PTRACE
 *	process_vm_readv (stacks past the copy,	CAP_SYS_PTRACE
 *	the vDSO), /proc/PID/root, /ns/mnt
 *	files another user may keep from us,	CAP_DAC_READ_SEARCH (and /proc/PID/map_files,
 *	/proc/PID/map_files/ itself		0500, is the process owner's)
 *	opening through /proc/PID/map_files	CAP_CHECKPOINT_RESTORE (or CAP_SYS_ADMIN)
 *	(files deleted or replaced since)
 *	/proc/kallsyms' addresses		CAP_SYSLOG (unless kptr_restrict=0 and
 *						perf_event_paranoid <= 1)
 *	the warm-up thread out of SCHED_IDLE	CAP_SYS_NICE (RLIMIT_NICE is 0)
 *	SIGTERM/SIGKILL to the command		CAP_KILL once our uid is not its own
 *	a symbolizer worker started again	CAP_SETUID and CAP_SETGID while we stay
 *	(one failed) that confines itself	root (continuous mode writing files,
 *	to uid 65534				opts.keep_uid; else we are 65534 already)
 *
 * A process that keeps CAP_SYS_PTRACE but not all of another's permitted capabilities may
 * still read it: the kernel asks for a subset or CAP_SYS_PTRACE, not both.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <grp.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "base/log.h"
#include "collect/runas.h"
#include "collect/session_int.h"
#include "proc/procfile.h"

#define BIT(cap)	(1ull << (cap))
#define UNPRIVILEGED_ID	65534	/* the overflow uid and gid ("nobody") */

/* Needed for the processes of other users (-a, -p, --user): their memory, /proc and files. */
#define CAPS_OTHERS	(BIT(CAP_SYS_PTRACE) | BIT(CAP_DAC_READ_SEARCH))
/* Needed by --user: the command's credentials, and its end once ours differ. */
#define CAPS_USER	(BIT(CAP_SETUID) | BIT(CAP_SETGID) | BIT(CAP_KILL) | CAPS_OTHERS)

static const char *const cap_names[] = {
	[CAP_KILL] = "CAP_KILL", [CAP_SETGID] = "CAP_SETGID", [CAP_SETUID] = "CAP_SETUID",
	[CAP_SYS_PTRACE] = "CAP_SYS_PTRACE", [CAP_DAC_READ_SEARCH] = "CAP_DAC_READ_SEARCH",
	[CAP_SYS_NICE] = "CAP_SYS_NICE", [CAP_SYSLOG] = "CAP_SYSLOG",
	[CAP_CHECKPOINT_RESTORE] = "CAP_CHECKPOINT_RESTORE",
};

struct capsets {
	uint64_t eff, prm, inh;
};

static int caps_get(struct capsets *c)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };

	if (syscall(SYS_capget, &hdr, d))
		return -errno;
	c->eff = d[0].effective | (uint64_t)d[1].effective << 32;
	c->prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	c->inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	return 0;
}

static int caps_set(const struct capsets *c)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {
		{ (uint32_t)c->eff, (uint32_t)c->prm, (uint32_t)c->inh },
		{ (uint32_t)(c->eff >> 32), (uint32_t)(c->prm >> 32), (uint32_t)(c->inh >> 32) },
	};

	return syscall(SYS_capset, &hdr, d) ? -errno : 0;
}

/* "CAP_A and CAP_B" of the capabilities in MASK, into BUF. */
static void cap_list(uint64_t mask, char *buf, size_t len)
{
	int n = 0, total = __builtin_popcountll(mask);
	size_t o = 0;

	buf[0] = '\0';
	for (int c = 0; c < 64 && o < len; c++) {
		if (!(mask & BIT(c)))
			continue;
		n++;
		o += snprintf(buf + o, len - o, "%s%s", n == 1 ? "" : n == total ? " and " : ", ",
			      c < (int)(sizeof(cap_names) / sizeof(cap_names[0])) && cap_names[c] ?
			      cap_names[c] : "?");
	}
}

/* --- before: what the targets need ------------------------------------------------------ */

/* The values of a "Name:\tA\tB..." line of /proc/PID/status into V (up to 4); how many. */
static int status_fields(const char *text, const char *name, unsigned long long *v, int base)
{
	const char *p = strstr(text, name);
	int n = 0;

	if (!p)
		return 0;
	p += strlen(name);
	while (n < 4 && *p && *p != '\n') {
		char *end;

		while (*p == '\t' || *p == ' ')
			p++;
		v[n] = strtoull(p, &end, base);
		if (end == p)
			break;
		n++;
		p = end;
	}
	return n;
}

/*
 * Whether PID is, to the kernel's ptrace checks, another user's: one of its uids or gids is
 * not ours, it is not dumpable (its /proc directory is then root's), or it may have
 * capabilities we do not. False when it cannot be read (gone: check_pids says so).
 */
static bool other_users(pid_t pid, const struct capsets *ours)
{
	char path[64], text[4096];
	unsigned long long uid[4], gid[4], prm;
	struct stat st;

	if (proc__read(pid, "status", text, sizeof(text)) < 0)
		return false;
	if (status_fields(text, "\nUid:", uid, 10) != 4 || status_fields(text, "\nGid:", gid, 10) != 4)
		return true;
	for (int i = 0; i < 4; i++)
		if (uid[i] != getuid() || uid[i] != geteuid() || gid[i] != getgid() ||
		    gid[i] != getegid())
			return true;
	if (status_fields(text, "\nCapPrm:", &prm, 16) == 1 && (prm & ~ours->eff))
		return true;
	snprintf(path, sizeof(path), "/proc/%d", pid);
	return stat(path, &st) == 0 && st.st_uid != uid[1];
}

int session__check_privs(struct session *s)
{
	const struct session_opts *o = &s->opts;
	struct capsets c;
	char have[256];
	uint64_t missing;
	int err = caps_get(&c);

	if (err)
		return session__fail(s, SESSION_ERR_RUNTIME, err,
				     "cannot read our capabilities: %s", strerror(-err));
	if (o->user) {
		missing = CAPS_USER & ~c.eff;
		cap_list(missing, have, sizeof(have));
		if (missing)
			return session__fail(s, SESSION_ERR_ENV, -EPERM,
					     "running the command as another user (--user) needs "
					     "root, or the capabilities %s besides CAP_BPF and "
					     "CAP_PERFMON: %s %s missing", "CAP_SETUID, CAP_SETGID, "
					     "CAP_KILL, CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH", have,
					     __builtin_popcountll(missing) > 1 ? "are" : "is");
	}
	missing = CAPS_OTHERS & ~c.eff;
	if (!missing)
		return 0;
	cap_list(missing, have, sizeof(have));
	if (o->all)
		return session__fail(s, SESSION_ERR_ENV, -EPERM,
				     "profiling the whole system (-a) reads other users' processes, "
				     "which needs root, or CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH "
				     "besides CAP_BPF and CAP_PERFMON: %s %s missing", have,
				     __builtin_popcountll(missing) > 1 ? "are" : "is");
	for (size_t i = 0; i < o->nr_pids; i++)
		if (other_users(o->pids[i], &c))
			return session__fail(s, SESSION_ERR_ENV, -EPERM,
					     "pid %d is another user's process (or more "
					     "privileged): profiling it needs root, or "
					     "CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH besides CAP_BPF "
					     "and CAP_PERFMON: %s %s missing", o->pids[i], have,
					     __builtin_popcountll(missing) > 1 ? "are" : "is");
	return 0;
}

/* --- after attach: the drop ------------------------------------------------------------- */

/* The number of threads of this process; -1 when unknown. */
static int nr_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += isdigit((unsigned char)e->d_name[0]) != 0;
	closedir(d);
	return n;
}

/* What the run keeps after attach (of what it has). */
static uint64_t kept_caps(const struct session_opts *o)
{
	uint64_t keep = CAPS_OTHERS | BIT(CAP_CHECKPOINT_RESTORE) | BIT(CAP_SYS_NICE);

	if (!o->user_only)
		keep |= BIT(CAP_SYSLOG);
	if (o->argv)
		keep |= BIT(CAP_KILL);
	/* Staying root: a worker started after a failed one must become 65534 (the exec gives
	 * it what our bounding set holds). */
	if (o->keep_uid)
		keep |= BIT(CAP_SETUID) | BIT(CAP_SETGID);
	return keep;
}

/* Root's uid and gids away, to UNPRIVILEGED_ID, the permitted capabilities kept across
 * (PR_SET_KEEPCAPS, on only around the change: it clears the effective ones). */
static int leave_root(void)
{
	int err = 0;

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		return -errno;
	if (setgroups(0, NULL) || setresgid(UNPRIVILEGED_ID, UNPRIVILEGED_ID, UNPRIVILEGED_ID) ||
	    setresuid(UNPRIVILEGED_ID, UNPRIVILEGED_ID, UNPRIVILEGED_ID))
		err = -errno;
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) && !err)
		err = -errno;
	return err;
}

int session__drop_privs(struct session *s)
{
	uint64_t keep = kept_caps(&s->opts);
	struct capsets c;
	int threads = nr_threads(), err;
	uid_t ruid, euid, suid;

	/* Capabilities are per thread: a thread started before would keep them all. */
	if (threads != 1)
		return session__fail(s, SESSION_ERR_RUNTIME, -EBUSY, "cannot drop capabilities: "
				     "%d threads run (expected 1)", threads);
	err = caps_get(&c);
	if (err)
		goto fail;
	keep &= c.prm;
	/* No program we might execute gets back what we drop (needs CAP_SETPCAP; without it
	 * the bounding set stays, and nothing is executed from here on anyway). */
	if (c.eff & BIT(CAP_SETPCAP))
		for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
			if (!(keep & BIT(cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) &&
			    errno != EINVAL) {
				err = -errno;
				goto fail;
			}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL) {
		err = -errno;
		goto fail;
	}
	/* Root without CAP_SETUID and CAP_SETGID (a reduced bounding set) stays root; so does
	 * continuous mode with files to write as it goes (opts.keep_uid): they are the user's
	 * to own, in the user's directories, which uid 65534 could not write. */
	getresuid(&ruid, &euid, &suid);
	if ((!ruid || !euid || !suid) && !s->opts.keep_uid &&
	    (c.eff & (BIT(CAP_SETUID) | BIT(CAP_SETGID))) == (BIT(CAP_SETUID) | BIT(CAP_SETGID))) {
		err = leave_root();
		if (err)
			goto fail;
	}
	c = (struct capsets){ .eff = keep, .prm = keep, .inh = 0 };
	err = caps_set(&c);
	if (!err && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		err = -errno;
	if (!err && !caps_get(&c) && (c.eff | c.prm | c.inh) & ~keep)
		err = -EPERM;
	if (!err) {
		pr_debug("capabilities after attach: %#llx, uid %d", (unsigned long long)keep,
			 (int)geteuid());
		return 0;
	}
fail:
	return session__fail(s, SESSION_ERR_RUNTIME, err, "cannot drop capabilities after "
			     "attaching: %s", strerror(-err));
}

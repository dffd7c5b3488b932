// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * confine: the worker's confinement (see confine.h). The seccomp filter is a classic BPF
 * program written here (no libseccomp: the list is short, the conditions on arguments few,
 * and one more library in the privileged process is one more thing to trust).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include "base/log.h"
#include "base/mapguard.h"
#include "sandbox/confine.h"

#if !defined(__x86_64__)
#error "the worker's seccomp filter knows x86-64's system calls only"
#endif

#define FILTER_MAX	256

/* A filter being written: every jump is forward, by a count of instructions. */
struct filter {
	struct sock_filter ins[FILTER_MAX];
	unsigned int n;
};

static void emit(struct filter *f, uint16_t code, uint8_t jt, uint8_t jf, uint32_t k)
{
	if (f->n < FILTER_MAX)
		f->ins[f->n] = (struct sock_filter)BPF_JUMP(code, k, jt, jf);
	f->n++;
}

#define ARG_LO(i)	(offsetof(struct seccomp_data, args[i]))
#define ARG_HI(i)	(offsetof(struct seccomp_data, args[i]) + 4)
#define LD(off)		emit(f, BPF_LD | BPF_W | BPF_ABS, 0, 0, (off))
#define ALLOW()		emit(f, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW)
#define KILL()		emit(f, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_KILL_PROCESS)

/* System call NR allowed whatever its arguments. */
static void allow(struct filter *f, uint32_t nr)
{
	emit(f, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, nr);
	ALLOW();
}

/* System call NR allowed when its argument ARG (an int) is V, else OTHERWISE (a return
 * value): a block that returns. */
static void allow_arg_is_else(struct filter *f, uint32_t nr, int arg, uint32_t v,
			      uint32_t otherwise)
{
	emit(f, BPF_JMP | BPF_JEQ | BPF_K, 0, 4, nr);
	LD(ARG_LO(arg));
	emit(f, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, v);
	ALLOW();
	emit(f, BPF_RET | BPF_K, 0, 0, otherwise);
	LD(offsetof(struct seccomp_data, nr));
}

/* System call NR allowed when its argument ARG (an int) is V, else the process killed. */
static void allow_arg_is(struct filter *f, uint32_t nr, int arg, uint32_t v)
{
	allow_arg_is_else(f, nr, arg, v, SECCOMP_RET_KILL_PROCESS);
}

/* System call NR fails with ERR, kills nothing: path lookups BFD makes (realpath of a name
 * it is given) find nothing, as they would in the empty root. */
static void deny(struct filter *f, uint32_t nr, uint32_t err)
{
	emit(f, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, nr);
	emit(f, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA));
}

/* mmap and mprotect: allowed unless the protection (argument 2) asks for PROT_EXEC or has
 * bits in its upper half. */
static void allow_no_exec(struct filter *f, uint32_t nr)
{
	emit(f, BPF_JMP | BPF_JEQ | BPF_K, 0, 6, nr);
	LD(ARG_HI(2));
	emit(f, BPF_JMP | BPF_JEQ | BPF_K, 0, 2, 0);
	LD(ARG_LO(2));
	emit(f, BPF_JMP | BPF_JSET | BPF_K, 0, 1, PROT_EXEC);
	KILL();
	ALLOW();
}

/* fcntl: descriptor flags, status flags and F_DUPFD_CLOEXEC only (what stdio and BFD use). */
static void allow_fcntl(struct filter *f)
{
	static const uint32_t cmds[] = { F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_DUPFD_CLOEXEC };
	const uint8_t n = sizeof(cmds) / sizeof(*cmds);

	emit(f, BPF_JMP | BPF_JEQ | BPF_K, 0, n + 3, SYS_fcntl);
	LD(ARG_LO(1));
	for (uint8_t i = 0; i < n; i++)
		emit(f, BPF_JMP | BPF_JEQ | BPF_K, n - i, 0, cmds[i]);
	KILL();
	ALLOW();
}

/* prlimit64 reading this process's limits (BFD asks how many files it may open), not
 * setting any. */
static void allow_getrlimit(struct filter *f)
{
	emit(f, BPF_JMP | BPF_JEQ | BPF_K, 0, 8, SYS_prlimit64);
	LD(ARG_LO(0));
	emit(f, BPF_JMP | BPF_JEQ | BPF_K, 0, 5, 0);
	LD(ARG_LO(2));
	emit(f, BPF_JMP | BPF_JEQ | BPF_K, 0, 3, 0);
	LD(ARG_HI(2));
	emit(f, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
	ALLOW();
	KILL();
	LD(offsetof(struct seccomp_data, nr));
}

/* tgkill of this very thread (abort() raises SIGABRT so), nothing else. */
static void allow_tgkill_self(struct filter *f, pid_t self)
{
	emit(f, BPF_JMP | BPF_JEQ | BPF_K, 0, 6, SYS_tgkill);
	LD(ARG_LO(0));
	emit(f, BPF_JMP | BPF_JEQ | BPF_K, 0, 3, (uint32_t)self);
	LD(ARG_LO(1));
	emit(f, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, (uint32_t)self);
	ALLOW();
	KILL();
}

/*
 * The filter: x86-64 system calls only (not x32, not i386), and of those what libelf, BFD,
 * zlib, the demangler, malloc and stdio need on descriptors already open, the messages on
 * SOCK, messages on stderr. Everything else kills the process (SECCOMP_RET_KILL_PROCESS).
 */
static int filter__build(struct filter *f, int sock, pid_t self)
{
	static const uint32_t plain[] = {
		SYS_read, SYS_pread64, SYS_readv, SYS_lseek, SYS_fstat, SYS_close,
		SYS_munmap, SYS_mremap, SYS_madvise, SYS_brk, SYS_poll, SYS_futex,
		SYS_exit, SYS_exit_group, SYS_rt_sigreturn, SYS_rt_sigprocmask,
		SYS_restart_syscall, SYS_clock_gettime, SYS_gettimeofday, SYS_getpid,
		SYS_gettid, SYS_getuid, SYS_getgid, SYS_getrlimit, SYS_sysinfo, SYS_getrandom,
		SYS_sched_yield,
	};

	LD(offsetof(struct seccomp_data, arch));
	emit(f, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, AUDIT_ARCH_X86_64);
	KILL();
	LD(offsetof(struct seccomp_data, nr));
	emit(f, BPF_JMP | BPF_JGE | BPF_K, 0, 1, 0x40000000);	/* __X32_SYSCALL_BIT */
	KILL();
	for (size_t i = 0; i < sizeof(plain) / sizeof(*plain); i++)
		allow(f, plain[i]);
	allow_no_exec(f, SYS_mmap);
	LD(offsetof(struct seccomp_data, nr));
	allow_no_exec(f, SYS_mprotect);
	LD(offsetof(struct seccomp_data, nr));
	/* fstat() is newfstatat(fd, "", st, AT_EMPTY_PATH) in glibc. BFD also stats the name
	 * it is given: a stat by path fails as in the empty root (ENOENT), kills nothing. */
	allow_arg_is_else(f, SYS_newfstatat, 3, AT_EMPTY_PATH, SECCOMP_RET_ERRNO | ENOENT);
	allow_arg_is(f, SYS_sendmsg, 0, (uint32_t)sock);
	allow_arg_is(f, SYS_recvmsg, 0, (uint32_t)sock);
	allow_arg_is(f, SYS_write, 0, STDERR_FILENO);
	allow_arg_is(f, SYS_writev, 0, STDERR_FILENO);
	deny(f, SYS_getcwd, ENOENT);
	deny(f, SYS_readlink, ENOENT);
	deny(f, SYS_readlinkat, ENOENT);
	allow_getrlimit(f);
	allow_fcntl(f);
	LD(offsetof(struct seccomp_data, nr));
	allow_tgkill_self(f, self);
	KILL();
	return f->n <= FILTER_MAX ? 0 : -E2BIG;
}

/* A root directory with nothing in it, for good: a new directory under /tmp, entered,
 * removed, made the root. Path lookups (stat, which the filter lets through with a path)
 * find nothing there, and nothing can be created in a removed directory. */
static int confine__empty_root(void)
{
	char dir[] = "/tmp/profile-worker.XXXXXX";
	int err = 0;

	if (!mkdtemp(dir))
		return -errno;
	if (chdir(dir))
		err = -errno;
	if (rmdir(dir) && !err)
		err = -errno;
	if (!err && (chroot(".") || chdir("/")))
		err = -errno;
	return err;
}

/* The bounding set emptied, where we may (CAP_SETPCAP: root has it until the uid changes):
 * no way back to a capability, even through an exec the filter would kill anyway. */
static void confine__drop_bounding(void)
{
	for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL)
			break;
}

/* No capabilities left in the effective, permitted, inheritable and ambient sets. */
static int confine__drop_caps(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

static int fail(const char *what, int err)
{
	pr_warn("symbolizer worker: %s: %s", what, strerror(-err));
	return err;
}

int confine__user(uid_t uid, gid_t gid, pid_t parent)
{
	struct rlimit no_core = { 0, 0 };
	int err;

	if (geteuid() == 0) {
		confine__drop_bounding();
		if (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
			return fail("cannot become an unprivileged user", -errno);
		if (getuid() != uid || geteuid() != uid || getgid() != gid || getegid() != gid)
			return fail("cannot become an unprivileged user", -EPERM);
	}
	err = confine__drop_caps();
	if (err)
		return fail("cannot drop capabilities", err);
	/* After the uid change, which resets both. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) || prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		return fail("prctl", -errno);
	if (getppid() != parent)
		return fail("the profiler is gone", -ESRCH);
	setrlimit(RLIMIT_CORE, &no_core);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return fail("no new privileges", -errno);
	return 0;
}

int confine__self(uid_t uid, gid_t gid, int sock, pid_t parent, int stderr_fd)
{
	struct sock_fprog prog;
	struct filter f = { .n = 0 };
	int err;

	if (geteuid() == 0) {
		/* Depth, not the wall: the filter lets no path be opened or stat'ed anyway. A
		 * read-only /tmp must not leave the profile without names. */
		err = confine__empty_root();
		if (err)
			pr_debug("symbolizer worker: no empty root directory: %s", strerror(-err));
	}
	err = confine__user(uid, gid, parent);
	if (err)
		return err;
	/* Files truncated under the worker fault only themselves: the handler is installed
	 * while rt_sigaction is still allowed. */
	err = mapguard__init();
	if (err)
		return fail("SIGBUS handler", err);
	err = filter__build(&f, sock, getpid());
	if (err)
		return fail("seccomp filter", err);
	prog = (struct sock_fprog){ .len = (unsigned short)f.n, .filter = f.ins };
	if (stderr_fd >= 0 && dup2(stderr_fd, STDERR_FILENO) < 0)
		return fail("standard error", -errno);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0))
		return fail("seccomp filter", -errno);
	return 0;
}

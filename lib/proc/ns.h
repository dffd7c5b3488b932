/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ns: what a process in a container sees differently from the profiler: its pid numbers (a
 * pid namespace) and its root directory (a mount namespace or a chroot).
 */
#ifndef PROC_NS_H
#define PROC_NS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* A pid namespace, as /proc/PID/ns/pid names it. */
struct pidns {
	uint64_t dev;		/* st_dev of the nsfs file, in the kernel's own encoding
				 * (major << 20 | minor), as bpf_get_ns_current_pid_tgid takes it */
	uint64_t ino;		/* its inode number */
	bool initial;		/* the initial pid namespace: pids are the kernel's own */
};

/*
 * The pid namespace this process runs in, into *NS. Returns 0; -EXDEV when /proc is not this
 * namespace's own (it shows another namespace's pids, so that pids read there and pids of
 * fork() disagree); or a negative errno from reading /proc/self/ns/pid.
 */
int pidns__self(struct pidns *ns);

/*
 * PID (as our /proc numbers it) in its own innermost pid namespace, the pid the process
 * itself sees (getpid(), the name of its /tmp/perf-PID.map): the last field of NSpid in
 * /proc/PID/status; PID itself when the kernel has no NSpid line. Returns it, or a negative
 * errno (-ENOENT: PID is gone).
 */
pid_t pidns__inner_pid(pid_t pid);

/* What tells the roots that processes see apart: their mount namespace and directory. */
struct rootdir_id {
	uint64_t mntns;		/* inode of /proc/PID/ns/mnt */
	uint64_t dev, ino;	/* of the directory */
};

/*
 * A descriptor (O_PATH) of PID's root directory when PID does not see the files we see (a
 * process in a container: another mount namespace, or a chroot), to open its files with
 * fileio__open_regular_in; *ID says which root it is. Returns the descriptor (the caller
 * closes it), -EEXIST when PID's root is our own (the same directory in our mount
 * namespace), or another negative errno (-ENOENT: PID is gone).
 */
int rootdir__open(pid_t pid, struct rootdir_id *id);

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Pids as the profiler's pid namespace numbers them, for bpf/profile.bpf.c (included once,
 * after vmlinux.h and the libbpf headers). Userspace sets pidns_dev/pidns_ino before load
 * when profile does not run in the initial pid namespace; in the initial one they are 0, a
 * constant the verifier prunes on: pids are the kernel's own and none of this runs.
 */
#ifndef PIDNS_BPF_H
#define PIDNS_BPF_H

/* Set by userspace before load: the profiler's pid namespace (device and inode of
 * /proc/self/ns/pid, the device as the kernel encodes it) when it is not the initial one. */
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;

/* The level of the profiler's pid namespace (its depth under the initial one, never 0 when
 * pidns_ino is set), learnt from the first task found in it; 0 until then. */
__u32 pidns_level;

#define PIDNS_MAX_LEVEL	32	/* the kernel's MAX_PID_NS_LEVEL */

/* The number of PID (a struct pid) in the profiler's namespace, or 0 when it has none there:
 * numbers[level] of a pid whose level is at least ours, when that upid's namespace is ours. */
static __always_inline __u32 pid_nr_ns(struct pid *pid)
{
	__u64 numbers = bpf_core_field_offset(struct pid, numbers);
	__u32 level, want = pidns_level;
	struct upid up;

	if (!pid)
		return 0;
	level = BPF_CORE_READ(pid, level);
	if (want) {
		if (level < want || level >= PIDNS_MAX_LEVEL ||
		    bpf_probe_read_kernel(&up, sizeof(up), (void *)pid + numbers +
					  want * bpf_core_type_size(struct upid)) ||
		    BPF_CORE_READ(up.ns, ns.inum) != pidns_ino)
			return 0;
		return up.nr;
	}
	/* Our level is not known yet: look for our namespace from the pid's own level towards
	 * the initial one. */
	for (int i = 0; i < PIDNS_MAX_LEVEL; i++) {
		if (i > level || i >= PIDNS_MAX_LEVEL)
			break;
		if (bpf_probe_read_kernel(&up, sizeof(up), (void *)pid + numbers +
					  (level - i) * bpf_core_type_size(struct upid)))
			return 0;
		if (BPF_CORE_READ(up.ns, ns.inum) == pidns_ino) {
			pidns_level = level - i;
			return up.nr;
		}
	}
	return 0;
}

/* The tgid of TASK in the profiler's namespace, 0 when it has none there. */
static __always_inline __u32 task_tgid(struct task_struct *task)
{
	if (!pidns_ino)
		return BPF_CORE_READ(task, tgid);
	return pid_nr_ns(BPF_CORE_READ(task, group_leader, thread_pid));
}

/*
 * The current task's ids in the profiler's namespace (when it is not the initial one), as
 * bpf_get_current_pid_tgid gives them: tgid << 32 | pid. Returns false for a task that has
 * no pid there (outside it: such tasks are not sampled); the idle task is 0.
 */
static __always_inline bool current_ns_ids(struct task_struct *task, __u64 *id)
{
	struct bpf_pidns_info ns;
	__u32 tgid, tid;

	if (!bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns))) {
		*id = (__u64)ns.tgid << 32 | ns.pid;
		return true;
	}
	/* The helper knows only tasks of our namespace itself, not of those nested in it. */
	tid = pid_nr_ns(BPF_CORE_READ(task, thread_pid));
	tgid = tid ? pid_nr_ns(BPF_CORE_READ(task, group_leader, thread_pid)) : 0;
	*id = (__u64)tgid << 32 | tid;
	if (tid)
		return tgid != 0;
	return BPF_CORE_READ(task, pid) == 0;	/* the idle task is 0 in every namespace */
}

#endif

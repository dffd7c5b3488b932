/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Structs and constants shared by bpf/profile.bpf.c and the userspace side (lib/). */
#ifndef PROFILE_H
#define PROFILE_H

#define PROFILE_MAX_DEPTH	127	/* user frames kept per stack */
#define PROFILE_COMM_LEN	16

/* Counter slots of the `stats` per-CPU array. */
enum profile_stat {
	STAT_SAMPLES,		/* samples of a profiled task */
	STAT_KSTACK_COLLIDE,	/* kernel stack-map bucket held another stack */
	STAT_KSTACK_FULL,	/* kernel stack map full or other bpf_get_stackid error */
	STAT_USTACK_COLLIDE,	/* user stack hash collision (different frames, same hash) */
	STAT_USTACK_FULL,	/* user stack map full */
	STAT_COUNTS_FULL,	/* counts map full: sample dropped */
	STAT_FP_COMPLETE,	/* frame-pointer walk ended cleanly (rbp == 0) */
	STAT_FP_TRUNCATED,	/* walk stopped early: bad read, bad frame address, depth limit */
	STAT_NO_USER,		/* kernel thread or no user registers */
	STAT__MAX,
};

/* Key of the `counts` hash map: one entry per distinct (process, thread, stacks). */
struct count_key {
	__u32 pid;		/* tgid */
	__u32 tid;		/* thread id when per-thread output is on, else 0 */
	__s32 kstack_id;	/* id in `kstacks`, or negative when none */
	__u32 flags;		/* COUNT_F_* */
	__u64 ustack_hash;	/* key in `ustacks`, or 0 when no user stack */
};

#define COUNT_F_USER_TRUNCATED	1	/* the user frame-pointer walk did not end cleanly */

/* Value of the `ustacks` hash map: the user frames of one stack, leaf first. */
struct ustack {
	__u32 nr;		/* frames in ips[] */
	__u32 check;		/* second hash of the frames: tells collisions apart */
	__u64 ips[PROFILE_MAX_DEPTH];
};

#endif /* PROFILE_H */

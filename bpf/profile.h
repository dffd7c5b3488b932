/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Structs and constants shared by bpf/profile.bpf.c and the userspace side (lib/). */
#ifndef PROFILE_H
#define PROFILE_H

#define PROFILE_MAX_DEPTH	127	/* user frames kept per stack */
#define PROFILE_COMM_LEN	16
#define PROFILE_PAGE_SIZE	4096
#define PROFILE_NR_REGS		16	/* general registers sent with a DWARF sample */
#define PROFILE_RED_ZONE	128	/* bytes below sp a leaf may keep words in (x86-64 ABI) */
#define PROFILE_MAX_STACK_COPY	24576	/* bytes of user stack an event can carry */
#define PROFILE_STACK_COPY	16384	/* ... by default (--stack-copy) */
#define PROFILE_SP_WORDS	8	/* words at sp a counted walk keeps (ustack) */
#define PROFILE_TIME_BUCKETS	128	/* PROFILE_BPF_TIMES: `btimes` buckets per kind: */
#define PROFILE_TIME_FINE	64	/* the first ones PROFILE_TIME_STEP ns wide, */
#define PROFILE_TIME_STEP	100
#define PROFILE_TIME_COARSE	1000	/* the others this wide (the last: all longer) */
#define PROFILE_TIME_KINDS	4	/* a sample, a switch; a sample of the first process
					 * profiled, of the second */
#define PROFILE_TIME_SLOTS	(PROFILE_TIME_KINDS * (PROFILE_TIME_BUCKETS + 1))
					/* then each kind's ns */
/* PROFILE_BPF_TIMES=parts: the parts of a sample's run timed (`tparts`). */
enum profile_tpart {
	TPART_BEGIN,		/* (no part: the run's first clock read) */
	TPART_START,		/* the process's entry, the kernel stack */
	TPART_FP_WALK,		/* the frame-pointer walk */
	TPART_TAB_SETUP,	/* the tables' walk: up to its first frame (tab_warm) */
	TPART_TAB_FIRST,	/* ... its first frame: the leaf's row, the first stack read */
	TPART_TAB_SECOND,	/* ... its second */
	TPART_TAB_REST,		/* ... the others */
	TPART_TAB_END,		/* ... after its last frame */
	TPART_HASH,		/* the walks' end to the stack's hash (runtimes' frames too) */
	TPART_COUNTED,		/* counted in this CPU's cache */
	TPART_STORED,		/* ... or not: the stack stored (`ustacks`) */
	TPART_COUNTED_NEW,	/* ... and counted in `counts` */
	TPART__MAX,
};

#define PROFILE_DEEP_WORDS	32	/* words past the copy read at a sample (deepwords) */
#define PROFILE_MAX_SPANS	64	/* spans of code kinds per process (a power of two) */
#define PROFILE_SPAN_STEPS	7	/* binary search steps over them: log2(MAX_SPANS) + 1 */

/* --unwind */
enum profile_unwind_mode {
	UNWIND_AUTO = 0,	/* frame pointers; DWARF for stacks whose walk broke off */
	UNWIND_FP = 1,		/* frame pointers only */
	UNWIND_DWARF = 2,	/* DWARF for every stack */
};

/* Counter slots of the `stats` per-CPU array. */
enum profile_stat {
	STAT_SAMPLES,		/* samples of a profiled task */
	STAT_KSTACK_COLLIDE,	/* kernel stack-map buckets held other stacks in both maps */
	STAT_KSTACK_FULL,	/* kernel stack map full or other bpf_get_stackid error */
	STAT_USTACK_COLLIDE,	/* user stack hash collision (different frames, same hash) */
	STAT_USTACK_FULL,	/* user stack map full */
	STAT_COUNTS_FULL,	/* counts map full: sample dropped */
	STAT_FP_COMPLETE,	/* frame-pointer walk whole: a stack bottom, or a saved rbp of 0 */
	STAT_FP_TRUNCATED,	/* walk stopped early: bad read, bad frame address, depth limit */
	STAT_NO_USER,		/* kernel thread or no user registers */
	STAT_EVENTS,		/* samples sent to userspace for DWARF unwinding */
	STAT_EVENTS_LOST,	/* of those, lost: ring buffer full */
	STAT_FP_NOREC,		/* walk reached a function that keeps no frame record there: sent
				 * to DWARF (with --unwind fp: truncated) */
	STAT_NO_PROC,		/* no spans known for the process yet: sent to DWARF */
	STAT_OFF_CPU,		/* --off-cpu/--wall: blocks counted (times off the CPU) */
	STAT_FORKS_LEFT,	/* -p without --children: processes the pids forked, not profiled */
	STAT_TAB_WHOLE,		/* stacks walked whole in BPF from the files' unwind tables */
	STAT_TAB_NO_TABLE,	/* ... not: a frame in code without a table in BPF (sent) */
	STAT_TAB_NO_RULE,	/* ... not: a rule BPF does not follow, or no row (sent) */
	STAT_TAB_NO_MEMORY,	/* ... not: a word of the stack could not be read (sent) */
	STAT_TAB_DEPTH,		/* ... not: deeper than PROFILE_MAX_DEPTH (sent) */
	STAT_TAB_RESUMED,	/* of those not whole (no table, too deep), sent with their
				 * walked frames and a copy from the frame where the walk stopped */
	STAT_TAB_ROWS,		/* rows the walks from the tables looked for (a frame each) */
	STAT_TAB_ROW_MISSES,	/* ... not in the CPU's row cache (`rcache`): searched */
	STAT_PROC_TORN,		/* copies of a `procs` entry read while it was reused for
				 * another (its tgids not the process's): read again */
	STAT_LEAF_SCAN_PLACED,	/* JIT leaves in their prologue or epilogue placed by their
				 * code (bpf/leafscan.h): the return address not at rbp + 8 */
	STAT_LEAF_SCAN_CUT,	/* ... whose code the scan could not follow: cut at the leaf */
	STAT_FP_LEAF_NOREC,	/* frame-pointer walks whole whose words at sp return into code
				 * without records (a leaf that made none, its caller left out):
				 * walked from the tables instead */
	STAT_OFF_UNSEEN,	/* --off-cpu/--wall: waits whose end no switch showed (the task
				 * left again, or exits, still off the CPU to BPF): ended when
				 * its CPU time says it came back */
	STAT_TAB_ROW_CUT,	/* rows searched whose stretch was not found (the next row's
				 * start not past theirs): cached for their pc alone */
	STAT_NESTED,		/* samples of a profiled task taken while its CPU ran on_switch
				 * (a hardware event's NMI, a tracepoint its reads hit):
				 * dropped, the walk's per-CPU maps being the switch's then */
	STAT_PROC_STALE,	/* copies of a `procs` entry of a program the process has left
				 * by an exec since (a write userspace made from what it knew
				 * before the exec): not used, the process taken as not
				 * described (its stacks to DWARF, the whole copy) */
	STAT_TAB_MEMO,		/* walks from the tables ended from the thread's last walk
				 * (its frames' words where they were: bpf/tabwalk.bpf.h) */
	STAT__MAX,
};

/* kstack_id: ids in the second kernel stack map (`kstacks2`, where a stack goes when its
 * bucket in `kstacks` holds another) have this bit; KSTACK_LOST is a kernel stack that went
 * into neither (both buckets taken, or a map full): shown as one frame saying so. */
#define KSTACK_SECOND	(1 << 30)
#define KSTACK_LOST	(-2)

/* Key of the `counts` hash map: one entry per distinct (process, thread, stacks). */
struct count_key {
	__u32 pid;		/* tgid */
	__u32 tid;		/* thread id when per-thread output is on, else 0 */
	__s32 kstack_id;	/* id in `kstacks` (KSTACK_SECOND: `kstacks2`), KSTACK_LOST,
				 * or -1 when none */
	__u32 flags;		/* COUNT_F_* */
	__u64 ustack_hash;	/* key in `ustacks`, or 0 when no user stack */
	__u32 ucheck;		/* the stack's check word (struct ustack), or 0 */
	__u32 period;		/* continuous mode: the parity of the period counted in (in
				 * ucounts: 0); 0 otherwise */
	__u64 gen;		/* when the process's program began (`incarns`), 0: before the
				 * profile: which of the programs run under the pid it was */
};
/* The sampling program compares and hashes keys as four 64-bit words. */
_Static_assert(sizeof(struct count_key) == 40, "count_key is five 64-bit words");

/* A rename (`renames`): the thread, and the gen (count_key.gen) its samples carry from then. */
struct rename_key {
	__u32 tid;
	__u32 pad;
	__u64 time;
};

struct rename_val {
	char before[PROFILE_COMM_LEN];
	char after[PROFILE_COMM_LEN];
};

/* The low bits of an `incarns` value (a time in ns otherwise; count_key.gen has them clear):
 * the program was sampled; the one before it under the pid was (so userspace keeps that
 * one's mappings apart, and only then). */
#define INCARN_SAMPLED		1ull
#define INCARN_PREV_SAMPLED	2ull
#define INCARN_FLAGS		3ull

/* Slots of a per-CPU `cached` table in front of `counts`, in pairs (a power of two; a table
 * must stay under the kernel's 32 KiB per-CPU allocation limit), and the tables a period's
 * cache is made of (a power of two): 4096 slots, 192 KiB a CPU. One table of 512 held too
 * few of xz -9e's stacks (a distinct one at each leaf pc): 11.7% of its samples missed it
 * and took ~3.5 us each to store and count (`ustacks`, `counts`: hash maps out of the
 * caches and the TLB); with eight, 7.1%, nearly all of them stacks never seen before. */
#define PROFILE_CACHE_SLOTS	512
#define PROFILE_CACHE_TABLES	8
/* --cgroup: at most this many cgroups (v2) whose tasks, and their descendants', are
 * profiled. */
#define PROFILE_MAX_CGROUPS	8
/* pids the sampling program checks without a map lookup (the rest are in `pids` only). */
#define PROFILE_FAST_PIDS	8

/* A slot of `cached`: the latest stack seen on this CPU among those that share the slot,
 * and its samples not yet added to `counts` (userspace adds the rest at the end). */
struct count_slot {
	struct count_key key;
	__u64 count;
};

struct count_slots {
	struct count_slot s[PROFILE_CACHE_SLOTS];
};

/* (Userspace decodes a count_key into its own struct stack_key, lib/collect/stacks.h.) */
#define COUNT_F_USER_TRUNCATED	1	/* the user frame-pointer walk did not end cleanly */
#define COUNT_F_TABLE_WALK	2	/* the user stack was walked from the files' unwind
					 * tables in BPF (whole): no leaf to mend from sp_words */
/* The count is nanoseconds off the CPU (--off-cpu, --wall), not samples. */
#define COUNT_F_OFF_CPU		(1u << 8)
/* Which of the -e events the sample is of (its index in the order given). */
#define COUNT_F_EVENT_SHIFT	9
#define COUNT_F_EVENT_MASK	(7u << COUNT_F_EVENT_SHIFT)
#define PROFILE_MAX_EVENTS	8

/* The BPF cookie of an -e event's attachment: its index, how its samples weigh. */
#define EV_COOKIE_INDEX		0xfull		/* the index (COUNT_F_EVENT_*) */
#define EV_COOKIE_WEIGH		(1ull << 4)	/* a sample weighs its period (the events it
						 * stands for): software, hardware events */
#define EV_COOKIE_DEDUPE	(1ull << 5)	/* a task's samples at the same place as its
						 * last send their weight, not their stacks */
#define EV_COOKIE_TASK_KSTACK	(1ull << 6)	/* a page fault's: its sample's registers are the
						 * user's, the kernel stack is the task's own
						 * (ktasks) */
#define EV_COOKIE_EVERY_SHIFT	32		/* a tracepoint's -c N: a sample every Nth hit
						 * on a CPU (0: each) */

/* Why a sample was sent to userspace for DWARF unwinding (sample_event.why). */
enum profile_send {
	SEND_NONE = 0,		/* not sent: counted in BPF */
	SEND_WALK_BROKEN,	/* the frame-pointer walk broke off (no frame pointer, code the
				 * process does not map, the depth limit) */
	SEND_NOREC,		/* the walk reached a function that keeps no frame record there:
				 * frames past it would be wrong (STAT_FP_NOREC) */
	SEND_NO_PROC,		/* the process was not described to BPF yet (STAT_NO_PROC) */
	SEND_DWARF,		/* --unwind dwarf: every sample */
	SEND_TABLE_CHECK,	/* PROFILE_TABLE_WALK_CHECK: walked whole from the tables, its
				 * frames sent to be compared with userspace's unwind of its copy */
	SEND_TABLE_REST,	/* walked from the tables up to a frame with no table in BPF or
				 * past the depth limit: frames[] are the frames walked, ip, sp and
				 * bp (bp_ok) the stopping frame's (a return address), stack[] the
				 * copy from there; the leaf's regs[] and below[] are not its */
};

/* Value of the `ustacks` hash map: the user frames of one stack, leaf first. */
struct ustack {
	__u32 nr;		/* frames in ips[] */
	__u32 check;		/* second hash of the frames: tells collisions apart */
	/* The words at sp and sp + 8 (to sp + 56 in a process with Go's windows) where they
	 * point into executable mappings, else 0: one may be the return address of a leaf
	 * that keeps no frame, or is between making its frame and its record (userspace asks
	 * the leaf's CFI), which a walk from rbp skips. */
	__u64 sp_words[PROFILE_SP_WORDS];
	__u64 ips[PROFILE_MAX_DEPTH];
};

/*
 * A sample whose user stack needs DWARF unwinding, sent through the `events` ring buffer:
 * the registers, the frames the frame-pointer walk found, and a copy of the user stack from
 * sp. Only the first offsetof(stack) + stack_len bytes are sent.
 */
struct sample_event {
	__u32 pid;		/* tgid */
	__u32 tid;
	__s32 kstack_id;	/* id in `kstacks`, or negative */
	__u32 nr_frames;	/* frames[] found by the frame-pointer walk, leaf first */
	__u64 ip, sp, bp;	/* user registers at the sample */
	__u64 regs[PROFILE_NR_REGS];	/* all general registers, in DWARF's x86-64 numbering
					 * (rax rdx rcx rbx rsi rdi rbp rsp r8..r15) */
	__u32 stack_len;	/* bytes of stack[] copied from sp */
	__u32 holes;		/* bit i: page i of stack[] (page 0 from sp to its page's end)
				 * was not readable here and holds zeros */
	__u32 why;		/* enum profile_send: why it was sent */
	__u32 period;		/* count_key.period: which maps kstack_id is in */
	__u64 gen;		/* count_key.gen */
	__u32 below_ok;		/* below[] was readable */
	__u32 bp_ok;		/* bp holds the frame's rbp (0: SEND_TABLE_REST's frame restored
				 * none) */
	__u32 pad2;
	__u64 time;		/* bpf_ktime_get_ns() at the sample */
	__u32 evflags;		/* the -e event's index, as count_key.flags has it
				 * (COUNT_F_EVENT_MASK) */
	__u32 ktid;		/* the task's tid in the kernel's namespace */
	__u32 event;		/* an -e event's sample with a seq (off_seq): counted with its
				 * weight, and its stacks kept for the task's next samples at
				 * the same place, which come as off_weight records */
	__u64 off_seq;		/* not 0: the stacks of a task leaving the CPU (--off-cpu,
				 * --wall), whose time off it comes in an off_weight of this seq;
				 * or (event) of an event's sample */
	__u64 weight;		/* what the sample weighs: events (-e), 0 for a task off the CPU
				 * until userspace sets its time; 0 is 1 on the CPU */
	__u64 below[PROFILE_RED_ZONE / 8];	/* the words below sp, the leaf's red zone: a
						 * register an epilogue popped, that its CFI
						 * still says is saved there */
	__u32 nr_deep;		/* deep_addr[]: the task's `deepwords` when it was sampled */
	__u32 deep_ok;		/* bit i: deep_val[i] was readable */
	__u64 deep_addr[PROFILE_DEEP_WORDS];
	__u64 deep_val[PROFILE_DEEP_WORDS];	/* the words there, read at the sample */
	__u64 frames[PROFILE_MAX_DEPTH];
	__u8 stack[PROFILE_MAX_STACK_COPY + PROFILE_PAGE_SIZE];
};

/* `deepwords` values: addresses of a task's stack past the copy whose words its last DWARF
 * unwind needed (return addresses, saved registers of the frames there), read with each of
 * its samples: the frames past the copy as they were at the sample. */
struct deep_words {
	__u32 nr;
	__u32 pad;
	__u64 addr[PROFILE_DEEP_WORDS];
};

/* --off-cpu/--wall: a task off the CPU (the `offpend` map, by kernel tid): since when, and
 * its stacks: the count key, or (seq not 0) the seq of the sample_event that took them to
 * userspace for DWARF unwinding. */
struct off_pending {
	__u64 start;		/* bpf_ktime_get_ns at the switch */
	__u64 seq;
	__u64 same_as;		/* not 0: the stacks are those sent as this seq (offsig) */
	__u32 tid;		/* in the profiler's namespace */
	__u32 ktid;		/* the kernel's */
	struct count_key key;	/* with seq: its kernel stack id and period only */
	__u64 ran;		/* the task's CPU time then (sum_exec_runtime, ns): how long it
				 * ran since says when it came back if no switch said so */
};

/* `offsig` values: see there. */
struct off_sig {
	__u64 sig;
	__u64 seq;
	__u32 period;		/* the parity of the kernel stack maps when sent */
	__u32 pad;
};

/* Kernel stack ids with this bit are in `ktasks` (the low 28 bits its key): the kernel
 * stack of a task whose sample has its user registers (a page fault), taken with
 * bpf_get_task_stack; its first frames are the sampling's own (perf's, BPF's), which
 * userspace cuts by name. */
#define KSTACK_TASK		(1 << 28)
#define PROFILE_TASK_KDEPTH	48

struct ktask_stack {
	__u32 nr;
	__u32 check;		/* the frames' hash's low bits: tells collisions apart */
	__u64 ips[PROFILE_TASK_KDEPTH];
};

/* Kernel stack ids with this bit are stacks userspace got from off_tasks (not in a stack
 * map): of tasks already off the CPU when the profile began. */
#define KSTACK_EXTRA	(1 << 29)

/* A record of the off_tasks iterator: a profiled task off the CPU when the profile began,
 * with its registers and kernel stack. */
struct off_task {
	__u32 pid, tid;		/* in the profiler's namespace */
	__u32 ktid;		/* the kernel's */
	__u32 nr_kframes;
	__u64 ip;
	__u64 ran;		/* its CPU time (sum_exec_runtime, ns) */
	__u64 regs[PROFILE_NR_REGS];	/* as sample_event.regs */
	__u64 kframes[PROFILE_MAX_DEPTH];
};

/* Sent through `events` for each sample counted in the kernel when a timeline is asked for
 * (-o FILE.speedscope.json): when it was taken, by which thread, counted under which key
 * (told apart from the other records by its size). */
struct timed_sample {
	__u64 time;		/* bpf_ktime_get_ns() */
	__u64 weight;		/* what it weighs (1 for a clock's sample; -e: events) */
	__u32 tid;		/* in the profiler's namespace */
	__u32 pad;
	struct count_key key;
};
/* (Told apart by size from struct off_weight.) */
_Static_assert(sizeof(struct timed_sample) == 64, "timed_sample is 64 bytes");

/* Sent through `events` when a task whose stacks went there comes back to a CPU: its time off
 * it (told apart from a sample_event by its size). */
struct off_weight {
	__u32 tid;
	__s32 kstack_id;	/* the kernel stack it left with this time */
	__u64 seq;
	__u64 same_as;		/* not 0: its stacks are those of this earlier seq (no event
				 * was sent for seq) */
	__u64 ns;
	__u64 start;		/* when it left the CPU (an event's sample: when it was taken;
				 * bpf_ktime_get_ns) */
};

/*
 * The kinds of code of a process, for the frame-pointer walk's checks (from the CFI of its
 * files, see lib/unwind/frames.h). A walk steps from a return address to the frame record at
 * rbp: only where the function returned to keeps one there is that its record.
 */
enum profile_span {
	SPAN_NONE = 0,		/* not code the process maps: a walk that gets here broke */
	SPAN_TRUSTED,		/* frame records kept (or no CFI to say otherwise: JIT code) */
	SPAN_THIN,		/* no record, return address at [sp] or [sp + 8]: a leaf here is
				 * fixed up from the words at sp; a walk cannot go on from here */
	SPAN_NOREC,		/* no record: the stack goes to DWARF */
	SPAN_BOTTOM,		/* where threads start (CFI's outermost frames, the C library's
				 * and Go's start functions): a walk that reaches it is whole */
};

/* proc_ranges.version and proc_tabs.version: userspace's from 1 up, BPF's with this bit. */
#define PROFILE_BPF_VERSION	0x80000000u

/* Value of the `execs` map (bpf/maps.bpf.h): the process's execs while profiling, and when
 * the last one was. */
struct exec_seen {
	__u64 time;
	__u32 seq;
	__u32 pad;
};

/* Value of the `procs` map, set by userspace from a process's mappings. */
struct proc_ranges {
	/* The process's code by kind: span i is [span_start[i], span_start[i + 1]), the last
	 * one ends at span_end; gaps between mappings are SPAN_NONE spans. No spans (a process
	 * just exec'd, or not described yet): every stack goes to DWARF. */
	__u32 nr_spans;
	/* Bytes of stack from sp a DWARF sample of this process carries, when less than
	 * stack_copy: what its unwinds have needed so far, plus a margin (0: stack_copy).
	 * A deeper stack is cut where its copy ends, and raises it. */
	__u32 copy_hint;
	/* Not 0: some thread of the process has `deepwords` (its samples look them up). */
	__u32 has_deep;
	/* Not 0: the process maps Go code, whose windows (frames__kind's FRAME_LOST_*) a
	 * walk's leaf may be in: PROFILE_SP_WORDS words at sp are kept, not 2. */
	__u32 go_windows;
	/* Not 0: the process maps anonymous code (JIT code): a walk's leaf in code that keeps
	 * records is placed by its code (bpf/leafscan.h), not taken for its record. */
	__u32 jit;
	/* Another at every write of it (userspace's, and BPF's on_exec: PROFILE_BPF_VERSION
	 * set), which the cached rows (`rcache`) of its kinds are of. */
	__u32 version;
	/* The process's tgid, at the start and at the end of the entry: a hash map's element
	 * is reused as soon as an update has replaced it, by the next update on that CPU of
	 * any key (userspace writes the entries of several processes in a row). A copy BPF
	 * was taking of it meanwhile holds another process's kinds, or parts of two: its
	 * tgids say so. */
	__u32 tgid;
	/* Which of the process's programs the entry describes: its `execs` seq then (0: the
	 * program profiling began with, or that the process forked with). A copy of an entry
	 * whose seq is not the process's now is of the program before an exec: not used. */
	__u32 exec_seq;
	__u64 span_end;
	__u64 span_start[PROFILE_MAX_SPANS];
	__u8 span_kind[PROFILE_MAX_SPANS];
	__u32 tgid_end;		/* the tgid again */
	__u32 pad;
};

/*
 * Unwinding in BPF from the files' tables (the worker's utab rows, unwind/utab.h): a file's
 * rows are cut into shards of UTAB_SHARD_ROWS (elements of `ushards`, a hash map allocated
 * as they are added, by userspace without privileges as the file is first needed: a map
 * made then would need CAP_BPF); `ufiles` says which shards a file has and where each
 * begins; a process's `proc_tabs` entry says which file each of its mappings is and its
 * bias.
 */
#define UTAB_SHARD_ROWS		4092	/* rows per shard: 64 KiB with the hash element's
					 * header (the kernel's allocation is a power of two) */
#define UTAB_SHARD_STEPS	13	/* binary search steps in one: log2(rows) + 1 */
#define UTAB_FILE_SHARDS	128	/* shards per file (node's 464k rows take 114): the rows
					 * past them are not in BPF */
#define UTAB_FILE_STEPS		8
#define UTAB_MAX_FILES		2048	/* files with tables in BPF */
#define UTAB_MAX_SHARDS		8192
#define PROFILE_MAX_TABS	64	/* a process's mappings with a table in BPF (a power of
					 * two) */
#define PROFILE_TAB_STEPS	7

/* How a row gives the caller's CFA (urow.cfa). */
enum urow_cfa {
	UROW_NONE = 0,		/* no rule BPF follows here: the stack goes to userspace, with
				 * a copy from the leaf (the rule needs registers BPF does not
				 * restore: a CFA from another register, rbp at sp or in one) */
	UROW_RSP,		/* rsp + cfa_off */
	UROW_RBP,		/* rbp + cfa_off */
	UROW_PLT,		/* rsp + cfa_off, 8 more when (ip & 15) >= bp_off (a .plt entry) */
	UROW_DEREF_RSP,		/* the word at rsp + cfa_off */
	UROW_DEREF_RBP,		/* the word at rbp + cfa_off */
	UROW_OUTERMOST,		/* the return address is undefined: the stack's first frame */
	UROW_SP_ONLY,		/* userspace's, from rsp and rbp alone: a signal frame (its
				 * registers on the stack), code no FDE describes (a stack scan):
				 * past the leaf, sent with a copy from this frame */
	UROW_REG,		/* the register urow.reg (DWARF's number; neither rsp nor rbp)
				 * + cfa_off, as the sample had it unless a frame since saved
				 * it (UROW_F_CS): OpenSSL's assembly, whose frames go by rax,
				 * rbx, r9, r11 */
	UROW_RECORD,		/* the frame record at rbp (CFA rbp + 16, the return address
				 * and the caller's rbp below it): code that keeps one where it
				 * calls, no FDE (V8's builtins), or no CFI at all (JIT code, a
				 * file without any: tab_find's, as the frame-pointer walk goes
				 * there). A leaf is placed by its code where that tells
				 * (bpf/leafscan.h); else one of the first kind goes to
				 * userspace as for UROW_SP_ONLY unless its code says the
				 * record is its own, one of the second goes by the record */
};

/* UROW_RECORD's row: the record at rbp (the start: the stretch's). */
#define UROW_RECORD_ROW(s)	((struct urow){ .start = (s), .cfa = UROW_RECORD, .cfa_off = 16, \
						.ra_off = -8, .bp = UROW_BP_AT_CFA, .bp_off = -16 })

/* Where the caller's rbp is (urow.bp). */
enum urow_bp {
	UROW_BP_SAME = 0,	/* where it was */
	UROW_BP_AT_CFA,		/* the word at CFA + bp_off */
	UROW_BP_UNDEFINED,	/* not known: a later rule from rbp cannot be followed */
};

/* A row: from link-time offset start (from its table's base) to the next row's, the return
 * address at CFA + ra_off. */
struct urow {
	__u32 start;
	__s32 cfa_off;
	__s16 ra_off;
	__s16 bp_off;		/* UROW_PLT: the low bits of ip from which 8 is added */
	__u8 cfa;		/* enum urow_cfa */
	__u8 bp;		/* enum urow_bp */
	__u8 reg;		/* UROW_REG: the register */
	__u8 flags;		/* UROW_F_* */
};

/* urow.flags: the row has a rule for rbx, r12, r13, r14 or r15 (the frame saved it, or lost
 * it): past it, the walk knows none of their values (userspace restores them; a frame
 * further out that needs one goes to userspace). */
#define UROW_F_CS	1u
/* The registers UROW_F_CS makes unknown, as bits of DWARF's numbers. */
#define UROW_CS_REGS	(1u << 3 | 1u << 12 | 1u << 13 | 1u << 14 | 1u << 15)

/* One shard: rows sorted by start; those past a file's last are start 0xffffffff. */
struct ushard {
	struct urow rows[UTAB_SHARD_ROWS];
};

/* A file's shards (`ufiles`): shard i (in `ushards`) holds its rows from first[i] on. */
struct ufile_dir {
	__u32 nr;
	__u32 pad;
	__u32 shard[UTAB_FILE_SHARDS];
	__u32 first[UTAB_FILE_SHARDS];
};

/* A process's mappings with tables (`proc_tabs`), sorted by start: the row offset of address
 * pc in mapping i is pc - bias[i] in file[i]'s table (`ufiles`). */
struct proc_tabs {
	__u32 nr;
	__u32 version;		/* another at every write of it, as proc_ranges.version */
	__u64 start[PROFILE_MAX_TABS];
	__u64 end[PROFILE_MAX_TABS];
	__u64 bias[PROFILE_MAX_TABS];
	__u64 ino[PROFILE_MAX_TABS];	/* the mapping's file (its inode) and the file */
	__u64 pgoff[PROFILE_MAX_TABS];	/* offset at start: what on_ma_write checks */
	__u32 file[PROFILE_MAX_TABS];
};

/*
 * CPython: where a sample finds the thread's Python frames, for one version's layout (bytes
 * from the start of each struct; PY_NO_FIELD: the version has no such field). Filled by
 * lib/python/pylayout.c from each version's own layout (3.8-3.13, checked against their
 * DWARF and 3.13's _Py_DebugOffsets), per process in `py_procs`.
 */
#define PY_NO_FIELD	0xffff
#define PY_MAX_FRAMES	48	/* Python frames read per sample */
#define PY_MAX_THREADS	64	/* thread states looked through for the sampled thread */
#define PY_CODE_SIG	96	/* bytes of a code object read from co_firstlineno on */

/* How a version keeps its frames (py_offsets.model). */
enum py_model {
	PY_MODEL_NONE = 0,
	PY_MODEL_FRAMEOBJ_BYTES,	/* 3.8, 3.9: PyFrameObject chain, f_lasti a byte offset */
	PY_MODEL_FRAMEOBJ_UNITS,	/* 3.10: f_lasti in code units (2 bytes) */
	PY_MODEL_ENTRY_FLAG,		/* 3.11: _PyInterpreterFrame, is_entry, prev_instr */
	PY_MODEL_SHIM_PREV,		/* 3.12: owner FRAME_OWNED_BY_CSTACK shims, prev_instr */
	PY_MODEL_SHIM_NEXT,		/* 3.13 on: shims, instr_ptr */
};

struct py_offsets {
	__u16 runtime_interp_head;	/* _PyRuntimeState.interpreters.head */
	__u16 interp_tstate_head;	/* PyInterpreterState.tstate_head (.threads.head 3.11 on) */
	__u16 tstate_next;		/* PyThreadState.next */
	__u16 tstate_thread_id;		/* PyThreadState.thread_id (pthread_t: the fs base) */
	__u16 tstate_frame;		/* .frame (3.8-3.10), .cframe (3.11, 3.12), .current_frame */
	__u16 cframe_current_frame;	/* _PyCFrame.current_frame (3.11, 3.12) */
	__u16 frame_previous;		/* PyFrameObject.f_back, _PyInterpreterFrame.previous */
	__u16 frame_code;		/* .f_code (3.13: .f_executable) */
	__u16 frame_instr;		/* .f_lasti (int), .prev_instr (3.11, 3.12), .instr_ptr */
	__u16 frame_entry;		/* .is_entry (3.11), .owner (3.12 on): one byte */
	__u16 code_adaptive;		/* PyCodeObject.co_code_adaptive (3.11 on) */
	__u16 code_firstlineno;		/* PyCodeObject.co_firstlineno (int) */
	__u16 code_sig_name;		/* its qualified name's (or name's) pointer, and */
	__u16 code_sig_file;		/* its file name's: read with the first line, within
					 * PY_CODE_SIG bytes of it, as the object's signature
					 * (collect/python.c sets them; PY_NO_FIELD: not) */
	__u8 model;			/* enum py_model */
	__u8 owner_cstack;		/* .owner's FRAME_OWNED_BY_CSTACK (3.12 on) */
	__u16 pad;
};

/* A stack's frames (struct ustack's ips) are its native ones, leaf first, then, when the
 * thread ran Python code, PY_MARK and its Python frames, leaf first: each the code object's
 * address with PY_WORD_ENTRY set on the first frame each run of the interpreter's loop ran
 * (the one whose C caller is below it), and the instruction (code units) in the top 16 bits
 * (PY_UNIT_UNKNOWN: not known). */
#define PY_MARK		0xfffffffffffffff0ULL
#define PY_MARK_CUT	1ULL		/* in PY_MARK: more Python frames than were read */
#define PY_WORD_ENTRY	1ULL
#define PY_WORD_ADDR	0x0000fffffffffff8ULL
#define PY_UNIT_SHIFT	48
#define PY_UNIT_UNKNOWN	0xffffULL
#define PY_UNIT_BEFORE_FIRST 0xfffeULL	/* a frame that has not begun its first instruction */

/* A code object seen for the first time in a process (`events`; told apart by size): its
 * address, for userspace to read its names while the process lives. */
struct py_code_event {
	__u32 pid;		/* tgid, in the profiler's namespace */
	__u32 magic;		/* PY_CODE_MAGIC */
	__u64 code;
	__u64 gen;		/* count_key.gen of the sample */
};
#define PY_CODE_MAGIC	0x7079636fu

/* A process running CPython (`py_procs`, by tgid). */
struct py_proc {
	__u64 runtime;			/* the address of _PyRuntime */
	struct py_offsets off;
};

/*
 * CRuby 3.1: what a sample follows from the sampled thread to its Ruby control frames
 * (lib/ruby/rblayout.c fills it, from Debian's ruby3.1's own headers), per process in
 * `rb_procs`. Per sample: the VM (*vm_ptr), its main ractor, the ec of the thread holding
 * the GVL (threads.running_ec), taken only when its thread's pthread_t is the sampled
 * thread's fs base (the thread running Ruby code); then the frames from ec->cfp up to the
 * last one before the end of its VM stack (the thread's dummy frame): per frame pc, iseq
 * and ep in one read, ep[-2..0] in another. Then RB_MARK and one word a frame, leaf first.
 */
#define RB_NO_FIELD	0xffff
#define RB_MAX_FRAMES	64	/* control frames looked at per sample */

struct rb_offsets {
	__u16 vm_main_ractor;		/* rb_vm_t.ractor.main_ractor */
	__u16 ractor_running_ec;	/* rb_ractor_t.threads.running_ec: the GVL holder's ec */
	__u16 ractor_threads;		/* rb_ractor_t.threads.set (list_head: .next first) */
	__u16 thread_node;		/* rb_thread_t.lt_node (list_node: .next first) */
	__u16 thread_ec;		/* rb_thread_t.ec (the fiber it runs now) */
	__u16 thread_tid;		/* rb_thread_t.tid (int: the kernel's tid) */
	__u16 thread_pthread;		/* rb_thread_t.thread_id (pthread_t: the fs base) */
	__u16 thread_ractor;		/* rb_thread_t.ractor */
	__u16 ec_vm_stack;		/* rb_execution_context_t.vm_stack (VALUE *) */
	__u16 ec_vm_stack_size;		/* .vm_stack_size (size_t, in VALUEs) */
	__u16 ec_cfp;			/* .cfp (the leaf control frame) */
	__u16 ec_thread;		/* .thread_ptr */
	__u16 cfp_size;			/* sizeof(rb_control_frame_t): frames go up by it */
	__u16 cfp_pc;			/* rb_control_frame_t.pc (the next instruction; 0: C) */
	__u16 cfp_iseq;			/* .iseq (rb_iseq_t *; 0 in a CFUNC frame) */
	__u16 cfp_ep;			/* .ep: ep[0] the frame's flags, ep[-2] its method entry */
	__u16 cfp_read;			/* bytes from the frame's start covering pc, iseq, ep */
	__u16 iseq_body;		/* rb_iseq_t.body (announcing an iseq) */
	__u16 body_first_lineno;	/* rb_iseq_constant_body.location.first_lineno (a Fixnum) */
	__u16 pad;
};

/* ep[0]'s flags (VM_FRAME_MAGIC_*, VM_FRAME_FLAG_*: vm_core.h). */
#define RB_FRAME_MAGIC_MASK	0x7fff0001u
#define RB_FRAME_MAGIC_CFUNC	0x55550001u
#define RB_FRAME_MAGIC_IFUNC	0x66660001u
#define RB_FRAME_MAGIC_DUMMY	0x79990001u
#define RB_FRAME_FLAG_FINISH	0x0020u	/* the first frame a run of vm_exec pushed */
#define RB_FRAME_FLAG_CFRAME	0x0080u	/* a C frame (CFUNC, IFUNC, dummy) */

/*
 * The words after RB_MARK, leaf first. A Ruby frame (iseq and pc not 0):
 *   bits 3-47   the iseq's address (rb_iseq_t: 8-aligned, below 1 << 48)
 *   bits 48-63  (pc >> 3) & 0xffff: with the iseq's iseq_encoded, its position exactly while
 *               iseq_size < 0x10000 VALUEs (rb_word__pos)
 *   bit 0       RB_WORD_ENTRY: ep[0] had VM_FRAME_FLAG_FINISH: the first frame of a run of
 *               vm_exec (rb_vm_exec's frame in the native stack)
 * A CFUNC frame: its method entry (ep[-2], a rb_callable_method_entry_t) | RB_WORD_CFUNC,
 * bits 48-63 0. IFUNC and dummy frames, and the stack's last frame, are not recorded.
 */
#define RB_MARK		0xffffffffffffffe0ULL
#define RB_MARK_NOGVL	1ULL		/* in RB_MARK: the thread did not hold the GVL */
#define RB_MARK_CUT	2ULL		/* in RB_MARK: more control frames than were read */
#define RB_WORD_ENTRY	1ULL
#define RB_WORD_CFUNC	2ULL
#define RB_WORD_ADDR	0x0000fffffffffff8ULL
#define RB_PC_SHIFT	48

/* A process running Ruby (`rb_procs`, by tgid), filled by userspace. */
struct rb_proc {
	__u64 vm_ptr;		/* the address of ruby_current_vm_ptr (the VM: read at each
				 * sample, not there before the VM is made) */
	__s64 ec_tls;		/* where a thread's ruby_current_ec is from its fs base
				 * (static TLS: the same in every thread), learnt by BPF from
				 * the GVL holder's; 0: not yet */
	__u32 learn;		/* tries at learning it (RB_LEARN_TRIES at most) */
	__u32 pad;
	struct rb_offsets off;
};
#define RB_LEARN_TRIES	16
#define RB_TLS_WORDS	64	/* words below the fs base looked through for it */

/* An iseq seen for the first time in a process (`events`; told apart by size and magic),
 * for userspace to read its names while the process lives. */
struct rb_iseq_event {
	__u32 pid;		/* tgid, in the profiler's namespace */
	__u32 magic;		/* RB_ISEQ_MAGIC */
	__u64 iseq;
	__u64 gen;
	__u64 pad;
};
#define RB_ISEQ_MAGIC	0x72626973u


#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* The `incarns` value that begins a new gen (an epoch, a rename) at time NOW of a program
 * whose value was OLD (0: none): the time, its flags kept. Used by BPF and userspace (a perf
 * map's rewrite). */
static __always_inline __u64 incarn_new_gen(__u64 old, __u64 now)
{
	return (now & ~INCARN_FLAGS) | (old & INCARN_FLAGS);
}

/*
 * How many of the first N entries of ARR (sorted; at most MAX, a power of two, of them:
 * STEPS = log2(MAX) + 1) are at or below KEY: a binary search the verifier follows (a fixed
 * number of steps, each index masked). BPF's searches, and userspace's of the same arrays.
 */
#define BOUNDED_UPTO(arr, n, max, steps, key)                                  \
	__extension__({                                                        \
		__u32 lo_ = 0, hi_ = (n) < (max) ? (n) : (max), mid_;          \
		for (int i_ = 0; i_ < (steps); i_++) {                         \
			if (lo_ >= hi_)                                        \
				break;                                         \
			mid_ = (lo_ + hi_) / 2;                                \
			if ((arr)[mid_ & ((max) - 1)] <= (key))                \
				lo_ = mid_ + 1;                                \
			else                                                   \
				hi_ = mid_;                                    \
		}                                                              \
		lo_;                                                           \
	})

/* 1 + the index of PR's span that holds ADDR, by binary search; 0 when none does. */
static __always_inline __u32 proc_span_at(const struct proc_ranges *pr, __u64 addr)
{
	__u32 lo = BOUNDED_UPTO(pr->span_start, pr->nr_spans, PROFILE_MAX_SPANS,
				PROFILE_SPAN_STEPS, addr);

	return addr < pr->span_end ? lo : 0;
}

/* The kind of code at ADDR in PR (enum profile_span): used by the BPF program at every
 * frame, and by userspace. */
static __always_inline __u8 proc_span_kind(const struct proc_ranges *pr, __u64 addr)
{
	__u32 lo = proc_span_at(pr, addr);

	return lo ? pr->span_kind[(lo - 1) & (PROFILE_MAX_SPANS - 1)] : SPAN_NONE;
}

#endif /* PROFILE_H */

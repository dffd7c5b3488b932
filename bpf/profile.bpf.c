// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * The sampling program: runs at every cpu-clock tick on every CPU, keeps the samples of the
 * profiled tasks, and counts them per distinct (process, thread, kernel stack, user stack).
 * User stacks are walked here through frame pointers so that a walk that ended cleanly can be
 * told from one that broke off.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "profile.h"
#include "pidns.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by userspace before load. */
const volatile bool filter_pids = false;	/* only tasks whose tgid is in `pids` */
const volatile bool include_idle = false;	/* keep samples of pid 0 */
const volatile bool per_thread = false;		/* count per thread, not per process */
const volatile bool user_stacks = true;
const volatile bool kernel_stacks = true;
const volatile bool follow_children = false;	/* add new processes forked by profiled ones */
const volatile __u32 unwind_mode = UNWIND_AUTO;
const volatile __u32 stack_copy = PROFILE_STACK_COPY;	/* bytes, at most PROFILE_MAX_STACK_COPY */
const volatile __u64 min_block_ns = 0;	/* --off-cpu/--wall: shorter blocks are not counted */
/* --cgroup: only tasks in these cgroups (v2 ids) or below them; 0 of them: any task. */
const volatile __u32 nr_cgroups = 0;
const volatile __u64 cgroup_ids[PROFILE_MAX_CGROUPS];
/* --group-by cgroup: each process's cgroup in `cgroup_of`. */
const volatile bool group_cgroup = false;
/* -e: what each event's samples are, how they weigh, in its attachment's BPF cookie
 * (EV_COOKIE_*). */

/* Set by userspace after load, before attaching: the profiled processes checked without a
 * map lookup (0-terminated), and whether `pids` may hold others (more pids than slots, or
 * children added by on_fork). */
__u32 fast_pids[PROFILE_FAST_PIDS];
bool pids_spill;
/* Set by userspace when it sleeps for longer than its 20 ms (no records for a while): the next
 * record wakes it. */
bool wake_user;
/* Bumped after every change to `procs` (by userspace too): per-CPU copies of older
 * generations are stale. */
__u64 procs_gen;
/* Continuous mode (--every): the number of the period being sampled, advanced by userspace
 * at each period's end. A sample counts in the maps of its period's parity (the `cached`
 * table of that index, `counts` keys with count_key.period, `ustacks` hashes with that low
 * bit, `kstacks`/`kstacks2` or `kstacks_b`/`kstacks2_b`): userspace reads the other parity's
 * and clears them while this one fills. Always 0 otherwise. */
__u32 period;
/* --off-cpu/--wall: the last off_pending.seq given. */
__u64 off_seq;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PROFILE_MAX_DEPTH * sizeof(__u64));
} kstacks SEC(".maps");

/* --group-by cgroup: the cgroup (v2 id) of each process sampled, noted when a CPU first
 * samples it (sized by userspace). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cgroup_of SEC(".maps");

/* --off-cpu/--wall: each profiled task off the CPU (by its kernel tid): when it left and the
 * stacks it left with (sized by userspace; LRU: a task that exits off the CPU never comes
 * back). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct off_pending);
} offpend SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct off_pending);
} off_scratch SEC(".maps");

/* --off-cpu/--wall: per task (kernel tid), what the last stacks it left the CPU with that
 * went to userspace were: a hash of the registers and the stack bytes copied, and their
 * seq. The next time it leaves with the same (a thread that waits at the same place over and
 * over), nothing is sent: userspace unwinds nothing, it counts the time on those stacks
 * (off_weight.same_as). An unwind reads nothing but the registers, the bytes copied (words
 * past them are read live: the copy size grows then) and the process's files. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct off_sig);
} offsig SEC(".maps");

/* Where a kernel stack goes when its bucket in `kstacks` holds another (sized otherwise, so
 * the same stack falls in another bucket). */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 4096);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PROFILE_MAX_DEPTH * sizeof(__u64));
} kstacks2 SEC(".maps");

/* The same two for the odd periods of continuous mode (one entry each otherwise). */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PROFILE_MAX_DEPTH * sizeof(__u64));
} kstacks_b SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 4096);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PROFILE_MAX_DEPTH * sizeof(__u64));
} kstacks2_b SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct ustack);
} ustacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct count_key);
	__type(value, __u64);
} counts SEC(".maps");

/* Per-CPU perf buffers that userspace opens for mmap, comm and fork records (no program
 * writes to it: the kernel does, for every process). */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} mmap_events SEC(".maps");

/* Samples for DWARF unwinding in userspace. Its size is set by userspace (ring_size). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");

/* tgid -> stack-bottom functions and executable ranges of that process (set by userspace
 * from its mappings). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct proc_ranges);
} procs SEC(".maps");

/*
 * Incarnations: tgid -> when (bpf_ktime_get_ns) the process under that pid last began as a
 * new program: its fork, or its latest exec, seen while profiling. No entry: the program it
 * ran when profiling began. Samples carry it (count_key.gen), so that userspace names each
 * with the mappings of the program that ran then, not the last one seen under the pid.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} incarns SEC(".maps");

/* Names: tgid -> the process (group leader) name, tid -> the thread name. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, char[PROFILE_COMM_LEN]);
} comms SEC(".maps");

/*
 * Hash-map lookups cost 0.3 us each at a sample here: the maps are large and cold, out of
 * the caches and the TLB by the time the next timer tick comes. So the common case uses
 * none, only per-CPU state, contiguous and touched at every sample on that CPU:
 *
 * `cached`: pairs of slots in front of `counts`. A sample whose key is in one of its pair's
 * slots adds to that slot; a new key evicts the pair's smaller count to `counts`, and
 * userspace adds what the slots still hold when sampling has stopped.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);		/* by the period's parity; 1 entry but in continuous mode */
	__type(key, __u32);
	__type(value, struct count_slots);
} cached SEC(".maps");

/*
 * Never read by a program: userspace updates its entry after advancing `period`, for the
 * kernel to wait until every program that began before has returned (an update of a map of
 * maps waits for an RCU grace period, and a perf_event program runs inside a read-side
 * section): from then on nothing writes the previous period's maps.
 */
struct sync_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} sync_inner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct sync_inner);
} period_sync SEC(".maps") = {
	.values = { &sync_inner },
};

/* `cur_proc`: the last process sampled on this CPU, with a copy of its `procs` entry (of
 * generation `gen`). A new one also has its name recorded. */
struct cpu_proc {
	__u32 tgid_1;		/* the process's tgid + 1 (pid 0 is the idle task); 0: none yet */
	__u32 has_ranges;	/* `procs` had an entry: pr is valid */
	__u64 gen;		/* procs_gen when pr was copied */
	__u64 since;		/* the process's `incarns` entry then, 0: none */
	struct proc_ranges pr;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_proc);
} cur_proc SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* A page of zeros (never written). */
struct zero_page {
	__u8 b[PROFILE_PAGE_SIZE];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct zero_page);
} zeros SEC(".maps");

/* The stack from sp, read at once for the frame-pointer walk. */
#define WINDOW_WORDS 64
#define MAIN_STACK_SPAN	(64ULL << 20)	/* sp this far under the stack top: the main thread */
struct stack_window {
	__u64 w[WINDOW_WORDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_window);
} window SEC(".maps");

/* A DWARF sample is built here, then sent with as many bytes as it holds: a record reserved
 * in the ring at its largest size (30 KiB) would fill the ring 7 times faster than the 3-4
 * KiB most samples carry, and wake userspace for it. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_event);
} event_buf SEC(".maps");

/* -e page-faults: kernel stacks of tasks whose samples carry user registers (KSTACK_TASK);
 * few distinct ones, evicted when old (userspace shows one evicted as lost). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct ktask_stack);
} ktasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ktask_stack);
} kscratch SEC(".maps");

/* Scratch space for the user stack being walked (too big for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ustack);
} scratch SEC(".maps");



static __always_inline void stat_add(__u32 slot, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &slot);

	if (v)
		*v += n;
}

static __always_inline void stat_inc(__u32 slot)
{
	stat_add(slot, 1);
}

/* Whether TGID is one of the profiled processes. */
static __always_inline bool profiled(__u32 tgid)
{
	for (int i = 0; i < PROFILE_FAST_PIDS; i++) {
		if (!fast_pids[i])
			break;
		if (fast_pids[i] == tgid)
			return true;
	}
	return pids_spill && bpf_map_lookup_elem(&pids, &tgid);
}

/* TASK's cgroup (v2) id. */
static __always_inline __u64 task_cgroup(struct task_struct *task)
{
	return BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
}

/* Whether TASK is in one of the --cgroup cgroups or below one (true without --cgroup). */
static __always_inline bool in_cgroups(struct task_struct *task)
{
	struct cgroup *cg;

	if (!nr_cgroups)
		return true;
	cg = BPF_CORE_READ(task, cgroups, dfl_cgrp);
	for (int l = 0; l < 64 && cg; l++) {
		__u64 id = BPF_CORE_READ(cg, kn, id);

		for (int i = 0; i < PROFILE_MAX_CGROUPS; i++) {
			if (i >= nr_cgroups)
				break;
			if (cgroup_ids[i] == id)
				return true;
		}
		/* The cgroup's own css is its first member: its parent's is its parent. */
		cg = (struct cgroup *)BPF_CORE_READ(cg, self.parent);
	}
	return false;
}

struct uregs {
	__u64 ip, sp, bp;
};

/* The user-mode registers of the current task: the sampled ones when the sample (CTX, NULL
 * for an off-CPU one) hit user mode, else those the task saved on entering the kernel.
 * Returns 0 when there are none (kernel threads). */
static __always_inline int user_regs(struct bpf_perf_event_data *ctx, struct task_struct *task,
				     struct uregs *r)
{
	struct pt_regs *regs;
	__u64 cs;

	/* ctx loads must be 8 bytes wide, and direct: the verifier rewrites them. */
	if (ctx) {
		cs = *(volatile __u64 *)&ctx->regs.cs;
		if ((cs & 3) == 3) {
			r->ip = ctx->regs.ip;
			r->sp = ctx->regs.sp;
			r->bp = ctx->regs.bp;
			return 1;
		}
	}
	if (!BPF_CORE_READ(task, mm))
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	r->ip = BPF_CORE_READ(regs, ip);
	r->sp = BPF_CORE_READ(regs, sp);
	r->bp = BPF_CORE_READ(regs, bp);
	return r->ip != 0;
}

/*
 * All general user registers into G, in DWARF's numbering: assembly's CFI may define the
 * frame through any of them (OpenSSL's AES-GCM keeps it in rbx or r11), and the unwinder
 * restores the callee-saved ones frame by frame. CTX as for user_regs.
 */
static __always_inline void user_gprs(struct bpf_perf_event_data *ctx, struct task_struct *task,
				      __u64 *g)
{
	struct pt_regs *regs;

	if (ctx && (*(volatile __u64 *)&ctx->regs.cs & 3) == 3) {
		g[0] = ctx->regs.ax;
		g[1] = ctx->regs.dx;
		g[2] = ctx->regs.cx;
		g[3] = ctx->regs.bx;
		g[4] = ctx->regs.si;
		g[5] = ctx->regs.di;
		g[6] = ctx->regs.bp;
		g[7] = ctx->regs.sp;
		g[8] = ctx->regs.r8;
		g[9] = ctx->regs.r9;
		g[10] = ctx->regs.r10;
		g[11] = ctx->regs.r11;
		g[12] = ctx->regs.r12;
		g[13] = ctx->regs.r13;
		g[14] = ctx->regs.r14;
		g[15] = ctx->regs.r15;
		return;
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	g[0] = BPF_CORE_READ(regs, ax);
	g[1] = BPF_CORE_READ(regs, dx);
	g[2] = BPF_CORE_READ(regs, cx);
	g[3] = BPF_CORE_READ(regs, bx);
	g[4] = BPF_CORE_READ(regs, si);
	g[5] = BPF_CORE_READ(regs, di);
	g[6] = BPF_CORE_READ(regs, bp);
	g[7] = BPF_CORE_READ(regs, sp);
	g[8] = BPF_CORE_READ(regs, r8);
	g[9] = BPF_CORE_READ(regs, r9);
	g[10] = BPF_CORE_READ(regs, r10);
	g[11] = BPF_CORE_READ(regs, r11);
	g[12] = BPF_CORE_READ(regs, r12);
	g[13] = BPF_CORE_READ(regs, r13);
	g[14] = BPF_CORE_READ(regs, r14);
	g[15] = BPF_CORE_READ(regs, r15);
}

/* FNV-1a style mixing over the frames, and a second, independent mix for the check word. */
static __always_inline void hash_frames(struct ustack *st, __u64 *hash, __u32 *check)
{
	__u64 h = 0xcbf29ce484222325ULL;
	__u32 c = 0x9747b28c;

	for (int i = 0; i < PROFILE_MAX_DEPTH; i++) {
		if (i >= st->nr)
			break;
		h = (h ^ st->ips[i]) * 0x100000001b3ULL;
		c = (c ^ (__u32)(st->ips[i] >> 3)) * 0x01000193;
		c ^= c >> 15;
	}
	h = (h ^ st->sp_words[0]) * 0x100000001b3ULL;
	h = (h ^ st->sp_words[1]) * 0x100000001b3ULL;
	c = (c ^ (__u32)(st->sp_words[0] >> 3) ^ (__u32)(st->sp_words[1] >> 7)) * 0x01000193;
	*hash = h ? h : 1;
	*check = c;
}

/*
 * The kind of code at ADDR in PR. A global function: the verifier checks it once, not at
 * each of the walk's steps (which it cannot otherwise follow within its limit).
 */
__noinline __u8 span_kind(const struct proc_ranges *pr, __u64 addr)
{
	if (!pr)
		return SPAN_NONE;
	return proc_span_kind(pr, addr);
}

/* How a frame-pointer walk ended. */
enum walk_end {
	WALK_BROKEN = 0,	/* no frame pointer, an unreadable or misplaced frame, the depth
				 * limit, or code the process does not map */
	WALK_WHOLE,		/* at a stack bottom, or at a saved rbp of 0 in code that keeps
				 * records */
	WALK_NOREC,		/* at a function that keeps no frame record where it was: the
				 * frames past it would be wrong */
};

/*
 * Walk the frame-pointer chain from R into ST (leaf first), checking each step against PR,
 * the kinds of the process's code (see enum profile_span): the leaf must not be in code
 * without a frame record (a frameless leaf with its return address at sp is fixed up by
 * userspace), each return address must be in a function that keeps one. PR NULL: nothing is
 * known of the process, the walk is not checked and ends well at a saved rbp of 0.
 */
static __always_inline int walk_user(const struct uregs *r, const struct proc_ranges *pr,
				     struct ustack *st, struct stack_window **winp)
{
	__u64 fp = r->bp, frame[2], off;
	struct stack_window *win;
	__u32 zero = 0, idx;
	__u8 kind;
	int i;

	st->ips[0] = r->ip;
	st->nr = 1;
	/* One read of the stack from sp serves the words at sp (see keep_sp_words) and the
	 * frames that lie in it, most of them in shallow stacks; frames past it are read one by
	 * one. Near the top of the stack the read fails and every frame is read alone. */
	win = bpf_map_lookup_elem(&window, &zero);
	if (win && bpf_probe_read_user(win->w, sizeof(win->w), (void *)r->sp))
		win = NULL;
	*winp = win;
	if (pr) {
		kind = span_kind(pr, r->ip);
		if (kind == SPAN_BOTTOM)
			return WALK_WHOLE;
		if (kind == SPAN_NOREC)
			return WALK_NOREC;
		if (kind == SPAN_NONE)
			return WALK_BROKEN;
	}
	/* rbp == 0 in a register says nothing: code without frame pointers leaves it so. */
	if (fp == 0 || fp < r->sp)
		return WALK_BROKEN;
	for (i = 1; i < PROFILE_MAX_DEPTH; i++) {
		if (fp & 7)
			return WALK_BROKEN;
		off = fp - r->sp;
		if (win && fp >= r->sp && off <= (WINDOW_WORDS - 2) * 8) {
			idx = off / 8;
			if (idx > WINDOW_WORDS - 2)
				return WALK_BROKEN;
			frame[0] = win->w[idx];
			frame[1] = win->w[idx + 1];
		} else if (bpf_probe_read_user(frame, sizeof(frame), (void *)fp)) {
			return WALK_BROKEN;
		}
		if (frame[1] == 0)
			return frame[0] == 0 ? WALK_WHOLE : WALK_BROKEN;
		st->ips[i] = frame[1];
		st->nr = i + 1;
		if (pr) {
			/* The call is one byte before the return address. */
			kind = span_kind(pr, frame[1] - 1);
			if (kind == SPAN_BOTTOM)
				return WALK_WHOLE;
			if (kind == SPAN_THIN || kind == SPAN_NOREC)
				return WALK_NOREC;
			if (kind != SPAN_TRUSTED)
				return WALK_BROKEN;
		}
		if (frame[0] == 0)
			return WALK_WHOLE;
		if (frame[0] <= fp)
			return WALK_BROKEN;
		fp = frame[0];
	}
	return WALK_BROKEN;
}

/* Store the user stack in ST, whose hash is HASH, into `ustacks`; returns HASH, or 0 when it
 * could not be. */
static __always_inline __u64 store_ustack(struct ustack *st, __u64 hash)
{
	struct ustack *old;
	long err;

	old = bpf_map_lookup_elem(&ustacks, &hash);
	if (old) {
		if (old->check == st->check && old->nr == st->nr)
			return hash;
		stat_inc(STAT_USTACK_COLLIDE);
		return 0;
	}
	err = bpf_map_update_elem(&ustacks, &hash, st, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST: another CPU stored it first */) {
		stat_inc(STAT_USTACK_FULL);
		return 0;
	}
	return hash;
}

/* The words at sp that may be a frameless leaf's return address (see struct ustack), from
 * the window the walk read at sp when it has one. */
static __always_inline void keep_sp_words(const struct proc_ranges *pr, __u64 sp,
					  const struct stack_window *win, struct ustack *st)
{
	__u64 w[2];

	st->sp_words[0] = st->sp_words[1] = 0;
	if (!pr)
		return;
	if (win) {
		w[0] = win->w[0];
		w[1] = win->w[1];
	} else if (bpf_probe_read_user(w, sizeof(w), (void *)sp)) {
		return;
	}
	if (span_kind(pr, w[0]) != SPAN_NONE)
		st->sp_words[0] = w[0];
	if (span_kind(pr, w[1]) != SPAN_NONE)
		st->sp_words[1] = w[1];
}

struct hash_ctx {
	const struct sample_event *e;
	__u64 h;
	__u64 base;		/* hash_tail_word: the word its first call hashes */
};

/* Whether W may be an address in the process (code, stack, data), as opposed to a small
 * number: only such a word can take an unwind anywhere (a return address, a saved frame
 * pointer, a register that holds the CFA). */
static __always_inline bool may_be_address(__u64 w)
{
	return w >= 0x10000 && w < 0x800000000000ULL;
}

/* W, word or register I, into hash H when it may be an address: the words an unwind can
 * follow, not a loop's counter that changes at every wait in the same place. */
static __always_inline __u64 hash_mix(__u64 h, __u64 w, __u64 i)
{
	if (!may_be_address(w))
		return h;
	return (h ^ w ^ i << 48) * 0x100000001b3ULL;
}

/* bpf_loop's callback: words 8I to 8I + 7 of the stack copy into the hash (the verifier
 * checks it once, not per word). */
static long hash_word(__u64 i, void *arg)
{
	struct hash_ctx *c = arg;
	const __u64 *w;

	if (i >= PROFILE_MAX_STACK_COPY / 64)
		return 1;
	w = (const __u64 *)&c->e->stack[i * 64];
	for (int k = 0; k < 8; k++)
		c->h = hash_mix(c->h, w[k], i * 8 + k + 64);
	return 0;
}

/*
 * Whether E, the stacks of a task leaving the CPU (OP), unwind as those it left with last
 * time, sent then as OP's off_sig.seq: the same ip, sp, and words that may be addresses, in
 * the registers, the red zone and the copy, at the same places (OP->same_as says so). Else
 * they are noted as its last.
 */
/* bpf_loop's callback: word BASE + I, one of the copy's last (short of 8). */
static long hash_tail_word(__u64 i, void *arg)
{
	struct hash_ctx *c = arg;
	__u64 k = c->base + i;

	if (k >= PROFILE_MAX_STACK_COPY / 8)
		return 1;
	c->h = hash_mix(c->h, *(const __u64 *)&c->e->stack[k * 8], k + 64);
	return 0;
}

static __always_inline bool same_stacks(const struct sample_event *e, struct off_pending *op)
{
	struct hash_ctx c = { .e = e, .h = 0x84222325cbf29ce4ULL ^ e->ip };
	__u32 par = period & 1;
	struct off_sig *old, sig;

	for (int i = 0; i < PROFILE_NR_REGS; i++)
		c.h = hash_mix(c.h, e->regs[i], i);
	for (int i = 0; i < PROFILE_RED_ZONE / 8; i++)
		c.h = hash_mix(c.h, e->below[i], i + PROFILE_NR_REGS);
	c.h = (c.h ^ e->sp) * 0x100000001b3ULL;
	/* (A thread id reused by another process is not the same task; a sample of another
	 * event at the same place is not the same either.) */
	c.h = (c.h ^ ((__u64)e->pid << 32 | e->tid)) * 0x100000001b3ULL;
	c.h = (c.h ^ e->evflags) * 0x100000001b3ULL;
	c.base = 0;
	bpf_loop(e->stack_len / 64, hash_word, &c, 0);
	c.base = e->stack_len / 64 * 8;
	bpf_loop(e->stack_len / 8 - c.base, hash_tail_word, &c, 0);
	c.h ^= (__u64)e->holes << 32 | e->stack_len;
	c.h = (c.h ^ e->gen) * 0x100000001b3ULL;
	old = bpf_map_lookup_elem(&offsig, &op->ktid);
	if (old && old->sig == c.h && old->period == par && e->below_ok) {
		op->same_as = old->seq;
		return true;
	}
	sig = (struct off_sig){ .sig = c.h, .seq = op->seq, .period = par };
	bpf_map_update_elem(&offsig, &op->ktid, &sig, BPF_ANY);
	return false;
}

/*
 * Send the sample to userspace for DWARF unwinding, WHY (enum profile_send) it was sent (OFF_SEQ
 * not 0: the stacks of a task leaving the CPU, whose time off it comes later in a struct
 * off_weight of that seq; CTX NULL then):
 * registers, the frames found, and the user stack from sp, copied a page at a time (bpf_probe_read_user is all or nothing) up to
 * `stack_copy` bytes or the first unreadable page, the end of the stack. A page that is not
 * there (never written: a frame just made, or the unused part of a large frame, as in the
 * dynamic linker's start-up) is not the end when it is sp's own page or lies below the main
 * thread's stack top (STACK_TOP, 0 when unknown): zeros stand for it, marked in `holes`, and
 * the copy goes on. The record is built in `event_buf` and goes to the ring with only the
 * stack_len bytes of stack it holds.
 */
static __always_inline void send_event(struct bpf_perf_event_data *ctx, struct task_struct *task,
				       const struct uregs *r, const struct ustack *st,
				       const struct proc_ranges *pr, __u32 tgid, __u32 tid,
				       const struct count_key *ck, __u64 stack_top, __u32 why,
				       struct off_pending *op, __u64 ck_weight)
{
	struct sample_event *e;
	__u64 off = 0, n, want = stack_copy, flags = BPF_RB_NO_WAKEUP;
	__u32 key = 0;
	const struct zero_page *zero = bpf_map_lookup_elem(&zeros, &key);

	if (pr && pr->copy_hint && pr->copy_hint < want)
		want = pr->copy_hint;

	stat_inc(STAT_EVENTS);
	e = bpf_map_lookup_elem(&event_buf, &key);
	if (!e) {
		stat_inc(STAT_EVENTS_LOST);
		return;
	}
	e->pid = tgid;
	e->tid = tid;
	e->kstack_id = ck->kstack_id;
	e->period = ck->period;
	e->ip = r->ip;
	e->sp = r->sp;
	e->bp = r->bp;
	user_gprs(ctx, task, e->regs);
	e->nr_frames = st->nr;
	e->holes = 0;
	e->why = why;
	e->below_ok = !bpf_probe_read_user(e->below, sizeof(e->below),
					   (void *)(r->sp - sizeof(e->below)));
	e->gen = ck->gen;
	e->weight = ck_weight;
	e->off_seq = op ? op->seq : 0;
	e->event = op && !(ck->flags & COUNT_F_OFF_CPU);
	e->evflags = ck->flags & COUNT_F_EVENT_MASK;
	e->pad = 0;
	/* Only a main thread's sp lies this close under its stack top. */
	if (stack_top <= r->sp || stack_top - r->sp > MAIN_STACK_SPAN)
		stack_top = 0;
	for (int i = 0; i < PROFILE_MAX_DEPTH; i++) {
		if (i >= st->nr)
			break;
		e->frames[i] = st->ips[i];
	}
	if (want > PROFILE_MAX_STACK_COPY)
		want = PROFILE_MAX_STACK_COPY;
	n = PROFILE_PAGE_SIZE - (r->sp & (PROFILE_PAGE_SIZE - 1));
	for (int i = 0; i < PROFILE_MAX_STACK_COPY / PROFILE_PAGE_SIZE + 1; i++) {
		if (off >= want)
			break;
		if (n > want - off)
			n = want - off;
		/* Keep the bounds where the verifier sees them. */
		asm volatile("" : "+r"(n), "+r"(off));
		if (off > PROFILE_MAX_STACK_COPY || n > PROFILE_PAGE_SIZE || n == 0)
			break;
		if (bpf_probe_read_user(&e->stack[off], n, (void *)(r->sp + off))) {
			if (off && r->sp + off + n > stack_top)
				break;
			if (!zero || bpf_probe_read_kernel(&e->stack[off], n, zero->b))
				break;
			e->holes |= 1u << i;
		}
		off += n;
		n = PROFILE_PAGE_SIZE;
	}
	e->stack_len = off;
	/* A wakeup per record costs about 8 us here (an IPI in a VM) against 1 us for the
	 * whole sample: userspace polls every 20 ms while records come, and is woken only when
	 * the ring fills, or for the first record after it went to sleep for longer. */
	if (wake_user) {
		wake_user = false;
		flags = BPF_RB_FORCE_WAKEUP;
	} else if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >
		   bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 4) {
		flags = BPF_RB_FORCE_WAKEUP;
	}
	if (off > PROFILE_MAX_STACK_COPY + PROFILE_PAGE_SIZE)
		return;
	if (op && same_stacks(e, op))
		return;
	if (bpf_ringbuf_output(&events, e, offsetof(struct sample_event, stack) + off, flags))
		stat_inc(STAT_EVENTS_LOST);
}

static __always_inline void remember_comm(__u32 id, struct task_struct *task)
{
	char name[PROFILE_COMM_LEN];
	char *old = bpf_map_lookup_elem(&comms, &id);

	BPF_CORE_READ_STR_INTO(&name, task, comm);
	/* Names change at exec and prctl(PR_SET_NAME): compare the first 8 bytes. */
	if (old && *(__u64 *)old == *(__u64 *)name)
		return;
	bpf_map_update_elem(&comms, &id, name, BPF_ANY);
}

/* Add N samples of KEY to `counts`. */
static __always_inline void count_add(const struct count_key *key, __u64 n)
{
	__u64 *count = bpf_map_lookup_elem(&counts, key);
	long err;

	if (count) {
		__sync_fetch_and_add(count, n);
		return;
	}
	err = bpf_map_update_elem(&counts, key, &n, BPF_NOEXIST);
	if (err == -17 /* EEXIST: another CPU added it first */) {
		count = bpf_map_lookup_elem(&counts, key);
		if (count)
			__sync_fetch_and_add(count, n);
	} else if (err) {
		stat_add(STAT_COUNTS_FULL, n);
	}
}

static __always_inline bool same_key(const struct count_key *a, const struct count_key *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3] && x[4] == y[4];
}

/*
 * Count one sample of KEY in its pair of slots of this CPU's `cached` table; returns true.
 * When neither slot holds KEY, returns false with *VICTIM the slot to give it (or NULL):
 * the one with the smaller count.
 */
static __always_inline bool count_cached(const struct count_key *key, struct count_slot **victim,
					 __u64 n)
{
	const __u64 *x = (const __u64 *)key;
	__u64 h = (x[0] ^ x[1] * 0x9e3779b97f4a7c15ULL ^ x[2]) * 0xbf58476d1ce4e5b9ULL;
	__u32 par = key->period, i = ((__u32)(h >> 40) & (PROFILE_CACHE_SLOTS / 2 - 1)) * 2;
	struct count_slots *t = bpf_map_lookup_elem(&cached, &par);
	struct count_slot *a, *b;

	*victim = NULL;
	if (!t || i > PROFILE_CACHE_SLOTS - 2)
		return false;
	a = &t->s[i];
	b = &t->s[i + 1];
	if (a->count && same_key(&a->key, key)) {
		a->count += n;
		return true;
	}
	if (b->count && same_key(&b->key, key)) {
		b->count += n;
		return true;
	}
	*victim = b->count > a->count ? a : b;
	return false;
}

/* Give SLOT to KEY, with one sample, after moving what it held to `counts`. */
static __always_inline void count_new(struct count_slot *slot, const struct count_key *key,
				      __u64 n)
{
	if (!slot) {
		count_add(key, n);
		return;
	}
	if (slot->count)
		count_add(&slot->key, slot->count);
	slot->key = *key;
	slot->count = n;
}

/* The process TGID's `incarns` value T (NULL: none), marked sampled in the map when it was
 * not (once per program and CPU cache miss). Returns the value with the mark. */
static __always_inline __u64 note_sampled(__u32 tgid, const __u64 *t)
{
	__u64 v = t ? *t : 0;

	if (!(v & INCARN_SAMPLED)) {
		v |= INCARN_SAMPLED;
		bpf_map_update_elem(&incarns, &tgid, &v, BPF_ANY);
	}
	return v;
}

/*
 * The process TGID's `procs` entry, from this CPU's copy when it is the last one sampled
 * here (NULL when it has none). A process new to the CPU has its name recorded.
 */
static __always_inline const struct proc_ranges *current_proc(__u32 tgid,
							      struct task_struct *task,
							      __u64 *since)
{
	__u64 gen = procs_gen;
	struct proc_ranges *pr;
	struct cpu_proc *cp;
	__u32 zero = 0;

	cp = bpf_map_lookup_elem(&cur_proc, &zero);
	if (!cp) {
		*since = note_sampled(tgid, bpf_map_lookup_elem(&incarns, &tgid)) & ~INCARN_FLAGS;
		return bpf_map_lookup_elem(&procs, &tgid);
	}
	if (cp->tgid_1 == tgid + 1 && cp->gen == gen) {
		*since = cp->since & ~INCARN_FLAGS;
		return cp->has_ranges ? &cp->pr : NULL;
	}
	if (cp->tgid_1 != tgid + 1) {
		remember_comm(tgid, BPF_CORE_READ(task, group_leader));
		if (group_cgroup) {
			__u64 cg = task_cgroup(task);

			bpf_map_update_elem(&cgroup_of, &tgid, &cg, BPF_ANY);
		}
	}
	cp->tgid_1 = tgid + 1;
	cp->gen = gen;
	cp->since = note_sampled(tgid, bpf_map_lookup_elem(&incarns, &tgid));
	*since = cp->since & ~INCARN_FLAGS;
	pr = bpf_map_lookup_elem(&procs, &tgid);
	cp->has_ranges = pr != NULL;
	if (!pr)
		return NULL;
	__builtin_memcpy(&cp->pr, pr, sizeof(cp->pr));
	return &cp->pr;
}

/* The kernel stack of TASK (current) as it runs now, in `ktasks`: its id (KSTACK_TASK),
 * KSTACK_LOST (a collision, no scratch), or -1 (none). */
static __always_inline __s32 task_kstack(struct task_struct *task)
{
	__u32 zero = 0, id;
	struct ktask_stack *r = bpf_map_lookup_elem(&kscratch, &zero), *old;
	__u64 h = 0xcbf29ce484222325ULL;
	long len;

	if (!r)
		return KSTACK_LOST;
	len = bpf_get_task_stack(task, r->ips, sizeof(r->ips), 0);
	if (len <= 0)
		return -1;
	r->nr = (__u32)(len / 8);
	for (int i = 0; i < PROFILE_TASK_KDEPTH; i++) {
		if (i >= r->nr)
			break;
		h = hash_mix(h, r->ips[i], i);
	}
	id = (__u32)(h >> 36) & (KSTACK_TASK - 1);
	r->check = (__u32)h;
	old = bpf_map_lookup_elem(&ktasks, &id);
	if (old)
		return old->check == r->check ? (__s32)(KSTACK_TASK | id) : KSTACK_LOST;
	if (bpf_map_update_elem(&ktasks, &id, r, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&ktasks, &id))
		return KSTACK_LOST;
	return (__s32)(KSTACK_TASK | id);
}

/*
 * The stacks of the current task: an on-CPU sample, counted (PCTX the perf event's context,
 * OP NULL); or those it leaves the CPU with (PCTX NULL, CTX the switch's tracepoint's), into
 * *OP: the count key when the frame-pointer walk made the user stack, else the seq of the
 * event sent for DWARF unwinding. TGID and TID in the profiler's namespace.
 */
static __always_inline int take_sample(void *ctx, struct bpf_perf_event_data *pctx,
				       struct task_struct *task, __u32 tgid, __u32 tid,
				       struct off_pending *op, __u64 weight, __u64 kskip,
				       __u64 cookie)
{
	__u32 zero = 0;
	struct count_key key = {};
	struct count_slot *slot;
	struct uregs regs;
	struct ustack *st = NULL;
	__u64 hash = 0;
	const struct proc_ranges *pr;
	struct stack_window *win;
	int complete, end;

	if (!op)
		stat_inc(STAT_SAMPLES);
	key.period = period & 1;
	pr = current_proc(tgid, task, &key.gen);
	/* Thread names can change any time (pthread_setname_np). */
	if (per_thread && tid != tgid)
		remember_comm(tid, task);

	key.pid = tgid;
	key.tid = per_thread ? tid : 0;
	key.kstack_id = -1;
	key.flags = (__u32)(cookie & EV_COOKIE_INDEX) << COUNT_F_EVENT_SHIFT;
	if (op)
		key.flags |= COUNT_F_OFF_CPU;
	/* A sample in user mode has no kernel stack: skip the helper (about half a microsecond). */
	if (kernel_stacks && (!pctx || (*(volatile __u64 *)&pctx->regs.cs & 3) != 3)) {
		__u64 skip = kskip;

		key.kstack_id = key.period ? bpf_get_stackid(ctx, &kstacks_b, skip) :
					     bpf_get_stackid(ctx, &kstacks, skip);
		if (key.kstack_id == -17 /* EEXIST: the bucket holds another stack */) {
			key.kstack_id = key.period ? bpf_get_stackid(ctx, &kstacks2_b, skip) :
						     bpf_get_stackid(ctx, &kstacks2, skip);
			if (key.kstack_id >= 0)
				key.kstack_id |= KSTACK_SECOND;
			else if (key.kstack_id == -17)
				stat_inc(STAT_KSTACK_COLLIDE);
		}
		if (key.kstack_id < 0 && key.kstack_id != -14 /* EFAULT: user-mode sample */) {
			if (key.kstack_id != -17)
				stat_inc(STAT_KSTACK_FULL);
			key.kstack_id = KSTACK_LOST;
		} else if (key.kstack_id < 0) {
			key.kstack_id = -1;
		}
	} else if (kernel_stacks && (cookie & EV_COOKIE_TASK_KSTACK)) {
		/* A page fault from user mode: the task is in the kernel all the same. */
		key.kstack_id = task_kstack(task);
	}

	if (user_stacks) {
		st = bpf_map_lookup_elem(&scratch, &zero);
		if (!st || !user_regs(pctx, task, &regs)) {
			stat_inc(STAT_NO_USER);
			st = NULL;
		} else {
			end = walk_user(&regs, pr, st, &win);
			complete = end == WALK_WHOLE;
			/* Nothing known of the process yet: DWARF says, and the first of its
			 * samples to reach userspace has the process described. */
			if (!pr && unwind_mode == UNWIND_AUTO) {
				complete = 0;
				if (!op)
					stat_inc(STAT_NO_PROC);
			} else {
				if (!op)
					stat_inc(end == WALK_WHOLE ? STAT_FP_COMPLETE :
						 end == WALK_NOREC ? STAT_FP_NOREC :
						 STAT_FP_TRUNCATED);
			}
			if (unwind_mode == UNWIND_DWARF ||
			    (unwind_mode == UNWIND_AUTO && !complete)) {
				/* -e EVENT: a task's samples at the same place again send no
				 * stacks (as waits off the CPU do): their weight goes to the
				 * ones it sent (same_stacks). */
				if (!op && (cookie & EV_COOKIE_DEDUPE)) {
					op = bpf_map_lookup_elem(&off_scratch, &zero);
					if (op) {
						op->seq = __sync_fetch_and_add(&off_seq, 1) + 1;
						op->tid = tid;
						op->ktid = BPF_CORE_READ(task, pid);
						op->same_as = 0;
					}
				}
				/* The kernel stack and period of the stacks. */
				if (op)
					op->key = key;
				send_event(pctx, task, &regs, st, pr, tgid, tid, &key,
					   BPF_CORE_READ(task, mm, start_stack),
					   unwind_mode == UNWIND_DWARF ? SEND_DWARF :
					   !pr ? SEND_NO_PROC :
					   end == WALK_NOREC ? SEND_NOREC : SEND_WALK_BROKEN, op,
					   weight);
				if (op && op->same_as && !(key.flags & COUNT_F_OFF_CPU)) {
					struct off_weight w = {
						.tid = tid, .kstack_id = key.kstack_id,
						.seq = op->seq, .same_as = op->same_as,
						.ns = weight,
					};

					if (bpf_ringbuf_output(&events, &w, sizeof(w), 0))
						stat_inc(STAT_EVENTS_LOST);
				}
				return 0;
			}
			if (!complete)
				key.flags |= COUNT_F_USER_TRUNCATED;
			keep_sp_words(pr, regs.sp, win, st);
			hash_frames(st, &hash, &st->check);
			/* The period's parity in the low bit: each period stores its own. */
			hash = (hash & ~3ull) | 2 | key.period;
			key.ustack_hash = hash;
			key.ucheck = st->check;
		}
	}

	/* Off the CPU: counted when the task is back, with the time it was off. */
	if (op) {
		if (st && key.ustack_hash && !store_ustack(st, key.ustack_hash)) {
			key.ustack_hash = 0;
			key.ucheck = 0;
		}
		op->key = key;
		op->seq = 0;
		return 0;
	}
	if (count_cached(&key, &slot, weight))
		return 0;
	/* New to this CPU's table: make sure its user stack is stored. A stack that cannot be
	 * (map full, hash collision) is left out of the key; the sample counts all the same. */
	if (st && key.ustack_hash && !store_ustack(st, key.ustack_hash)) {
		key.ustack_hash = 0;
		key.ucheck = 0;
	}
	count_new(slot, &key, weight);
	return 0;
}

/* Whether the current task TASK is one to sample, its ids (tgid << 32 | tid, in the
 * profiler's namespace) into *ID: a profiled process's (all with -a), in the --cgroup
 * cgroups, not the idle task unless --idle. */
static __always_inline bool sampled_task(struct task_struct *task, __u64 *id)
{
	if (!pidns_ino)
		*id = bpf_get_current_pid_tgid();
	else if (!current_ns_ids(task, id))
		return false;
	if ((__u32)*id == 0 && !include_idle)
		return false;
	if (filter_pids && !profiled(*id >> 32))
		return false;
	return in_cgroups(task);
}

/* A counted event's count on this CPU at its last sample, any task's (per event index):
 * userspace reads it at the end for the events after the last sample (ev_tail). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROFILE_MAX_EVENTS);
	__type(key, __u32);
	__type(value, __u64);
} ev_counted SEC(".maps");

/* The events a sample of a counted event stands for: those on this CPU since its last sample,
 * whichever task's, read from the event's counter. Not its period: at -F's rate the kernel
 * sets a sample's period after the events it stands for came (a burst's samples weighed 1.5-24
 * times what the program did); the counter's differences add up to the CPU's count. */
static __always_inline __u64 event_weight(struct bpf_perf_event_data *ctx, __u64 cookie)
{
	struct bpf_perf_event_value v = {};
	__u32 idx = (__u32)(cookie & EV_COOKIE_INDEX);
	__u64 *last = bpf_map_lookup_elem(&ev_counted, &idx), w;

	if (!last || bpf_perf_prog_read_value(ctx, &v, sizeof(v)))
		return ctx->sample_period;
	/* (The first sample on a CPU: the events since the counter opened, before the program
	 * was attached, are not this sample's.) */
	w = *last && v.counter > *last ? v.counter - *last : ctx->sample_period;
	*last = v.counter;
	return w;
}

SEC("perf_event")
int do_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id, cookie = bpf_get_attach_cookie(ctx), weight = 1;

	/* Every task's sample moves the count on, kept or not. */
	if (cookie & EV_COOKIE_WEIGH)
		weight = event_weight(ctx, cookie);
	if (!sampled_task(task, &id))
		return 0;
	return take_sample(ctx, ctx, task, id >> 32, (__u32)id, NULL, weight, 0, cookie);
}

/* -e CATEGORY:NAME: a sample at each hit of the tracepoint by a profiled task (every -c Nth
 * on a CPU). The task is in the kernel: its user registers are those it entered with. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROFILE_MAX_EVENTS);
	__type(key, __u32);
	__type(value, __u64);
} tp_hits SEC(".maps");

SEC("tracepoint")
int do_tracepoint(void *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id, *hits, cookie, every;
	__u32 idx;

	if (!sampled_task(task, &id))
		return 0;
	cookie = bpf_get_attach_cookie(ctx);
	every = cookie >> EV_COOKIE_EVERY_SHIFT;
	idx = (__u32)(cookie & EV_COOKIE_INDEX);
	if (every > 1) {
		hits = bpf_map_lookup_elem(&tp_hits, &idx);
		if (!hits || ++*hits % every)
			return 0;
	}
	/* (The kernel stack's first frame is perf's handler of the tracepoint.) */
	return take_sample(ctx, NULL, task, id >> 32, (__u32)id, NULL,
			   every > 1 ? every : 1, 1, cookie);
}

/*
 * --off-cpu/--wall, at every switch of a CPU from PREV (the current task) to NEXT: NEXT's time
 * off the CPU is over, counted on the stacks it left with when at least min_block_ns (or,
 * when those went to userspace for DWARF unwinding, sent there as a struct off_weight); a
 * profiled PREV leaves with its stacks, taken now (its user memory is readable: it is
 * current), and the time.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 ntid = BPF_CORE_READ(next, pid), ptid = BPF_CORE_READ(prev, pid);
	__u64 now = bpf_ktime_get_ns(), id;
	struct task_struct *task;
	struct off_pending *op;

	op = ntid ? bpf_map_lookup_elem(&offpend, &ntid) : NULL;
	if (op) {
		__u64 ns = now > op->start ? now - op->start : 0;

		if (ns && ns >= min_block_ns) {
			stat_inc(STAT_OFF_CPU);
			if (op->seq) {
				struct off_weight w = {
					.tid = op->tid, .kstack_id = op->key.kstack_id,
					.seq = op->seq, .same_as = op->same_as, .ns = ns,
				};

				if (bpf_ringbuf_output(&events, &w, sizeof(w), 0))
					stat_inc(STAT_EVENTS_LOST);
			} else {
				count_add(&op->key, ns);
			}
		}
		bpf_map_delete_elem(&offpend, &ntid);
	}
	/* Kernel threads, and tasks that exit: they never come back. */
	if (!ptid || (BPF_CORE_READ(prev, flags) & (0x00200000 /* PF_KTHREAD */ |
						     0x00000004 /* PF_EXITING */)))
		return 0;
	task = bpf_get_current_task_btf();
	if (!pidns_ino)
		id = bpf_get_current_pid_tgid();
	else if (!current_ns_ids(task, &id))
		return 0;
	if ((filter_pids && !profiled(id >> 32)) || !in_cgroups(task))
		return 0;
	op = bpf_map_lookup_elem(&off_scratch, &(__u32){ 0 });
	if (!op)
		return 0;
	op->start = now;
	op->tid = (__u32)id;
	op->ktid = ptid;
	op->same_as = 0;
	op->seq = __sync_fetch_and_add(&off_seq, 1) + 1;
	/* (Two frames of the kernel stack are the tracepoint's caller and this program.) */
	take_sample(ctx, NULL, task, id >> 32, (__u32)id, op, 0, 2, 0);
	bpf_map_update_elem(&offpend, &ptid, op, BPF_ANY);
	return 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct off_task);
} off_task_buf SEC(".maps");

/*
 * --off-cpu/--wall, run once by userspace when sampling begins: every profiled task that is
 * off the CPU then (not a kernel thread, not exiting, not running), with its user registers
 * and kernel stack, as struct off_task records. Userspace takes its user stack (the task is
 * off the CPU: it stays as it is) and gives it an `offpend` entry from then on.
 */
SEC("iter/task")
int off_tasks(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct seq_file *seq = ctx->meta->seq;
	struct off_task *r;
	struct pt_regs *regs;
	__u32 zero = 0, tgid, tid;
	long n;

	if (!task || (task->flags & (0x00200000 /* PF_KTHREAD */ | 0x00000004 /* PF_EXITING */)) ||
	    task->on_cpu || !task->mm || !task->pid)
		return 0;
	tgid = task_tgid(task);
	tid = pidns_ino ? pid_nr_ns(task->thread_pid) : task->pid;
	if (!tgid || !tid || (filter_pids && !profiled(tgid)) || !in_cgroups(task))
		return 0;
	r = bpf_map_lookup_elem(&off_task_buf, &zero);
	if (!r)
		return 0;
	remember_comm(tgid, BPF_CORE_READ(task, group_leader));
	if (per_thread && tid != tgid)
		remember_comm(tid, task);
	if (group_cgroup) {
		__u64 cg = task_cgroup(task);

		bpf_map_update_elem(&cgroup_of, &tgid, &cg, BPF_ANY);
	}
	r->pid = tgid;
	r->tid = tid;
	r->ktid = task->pid;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	r->ip = BPF_CORE_READ(regs, ip);
	r->regs[0] = BPF_CORE_READ(regs, ax);
	r->regs[1] = BPF_CORE_READ(regs, dx);
	r->regs[2] = BPF_CORE_READ(regs, cx);
	r->regs[3] = BPF_CORE_READ(regs, bx);
	r->regs[4] = BPF_CORE_READ(regs, si);
	r->regs[5] = BPF_CORE_READ(regs, di);
	r->regs[6] = BPF_CORE_READ(regs, bp);
	r->regs[7] = BPF_CORE_READ(regs, sp);
	r->regs[8] = BPF_CORE_READ(regs, r8);
	r->regs[9] = BPF_CORE_READ(regs, r9);
	r->regs[10] = BPF_CORE_READ(regs, r10);
	r->regs[11] = BPF_CORE_READ(regs, r11);
	r->regs[12] = BPF_CORE_READ(regs, r12);
	r->regs[13] = BPF_CORE_READ(regs, r13);
	r->regs[14] = BPF_CORE_READ(regs, r14);
	r->regs[15] = BPF_CORE_READ(regs, r15);
	n = bpf_get_task_stack(task, r->kframes, sizeof(r->kframes), 0);
	r->nr_kframes = n > 0 ? (__u32)((__u64)n >> 3) : 0;
	bpf_seq_write(seq, r, sizeof(*r));
	return 0;
}

/*
 * exec changes the process name: keep the newest one for profiled processes. The kinds of
 * code were the old program's: none are known until userspace reads the new mappings (every
 * stack goes to DWARF meanwhile). The copy size learnt for the old program (or inherited from
 * the parent) says nothing of the new one, whose dynamic linker starts with deep frames: copy
 * the whole stack until userspace learns again.
 */
/* The `incarns` value of a program under TGID beginning at NOW: flags clear, but for
 * whether the program before it under the pid was sampled, or one before that in the last
 * INCARN_PREV_SPAN ns. Userspace reads the flag when it reads the fork or exec record, by
 * then often after the next one: a shell's fork and exec of the next program under a pid
 * used again come within a millisecond, and the flag of the fork's copy of the shell (never
 * sampled) made the program before it, sampled, forgotten (its samples then named as the
 * newest program under the pid). */
#define INCARN_PREV_SPAN	(2 * 1000000000ull)
static __always_inline __u64 next_incarn(__u32 tgid, __u64 now)
{
	__u64 *old = bpf_map_lookup_elem(&incarns, &tgid);

	now &= ~INCARN_FLAGS;
	if (old && ((*old & INCARN_SAMPLED) ||
		    ((*old & INCARN_PREV_SAMPLED) && now - (*old & ~INCARN_FLAGS) < INCARN_PREV_SPAN)))
		now |= INCARN_PREV_SAMPLED;
	return now;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = task_tgid(p);
	__u64 now = bpf_ktime_get_ns();
	struct proc_ranges *pr;

	if ((pidns_ino && !tgid) || (filter_pids && !profiled(tgid)))
		return 0;
	if (bpf_map_lookup_elem(&comms, &tgid))
		remember_comm(tgid, p);
	now = next_incarn(tgid, now);
	bpf_map_update_elem(&incarns, &tgid, &now, BPF_ANY);
	pr = bpf_map_lookup_elem(&procs, &tgid);
	if (pr) {
		pr->nr_spans = 0;
		pr->copy_hint = 0;
	}
	__sync_fetch_and_add(&procs_gen, 1);
	return 0;
}

/* A profiled process forked a new process: profile it too (before it runs a single
 * instruction, since this runs in the parent during fork). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = task_tgid(parent), ctgid = task_tgid(child);
	__u64 now = bpf_ktime_get_ns();
	struct proc_ranges *b;
	__u8 one = 1;

	/* A new thread; or, in a pid namespace, a process outside it. */
	if (ptgid == ctgid || (pidns_ino && (!ptgid || !ctgid)))
		return 0;
	if (follow_children && profiled(ptgid)) {
		pids_spill = true;
		bpf_map_update_elem(&pids, &ctgid, &one, BPF_ANY);
	}
	/* A new process under CTGID: an earlier one's samples are not its. */
	if (!filter_pids || profiled(ctgid)) {
		now = next_incarn(ctgid, now);
		bpf_map_update_elem(&incarns, &ctgid, &now, BPF_ANY);
		__sync_fetch_and_add(&procs_gen, 1);
	}
	/* The child has the parent's C library at the same place. */
	b = bpf_map_lookup_elem(&procs, &ptgid);
	if (b) {
		bpf_map_update_elem(&procs, &ctgid, b, BPF_ANY);
		__sync_fetch_and_add(&procs_gen, 1);
	}
	return 0;
}

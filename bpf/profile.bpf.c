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
#include "leafscan.h"
#include "pidns.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#include "maps.bpf.h"
#include "walk.bpf.h"
#include "tabwalk.bpf.h"
#include "send.bpf.h"
#include "python.bpf.h"
#include "ruby.bpf.h"
#include "count.bpf.h"

/* KEY's kernel stack (KSKIP frames skipped): none for a sample in user mode, but the task's
 * own for a page fault's (EV_COOKIE_TASK_KSTACK in COOKIE); KSTACK_LOST where no map had room. */
static __always_inline void sample_kstack(void *ctx, struct bpf_perf_event_data *pctx,
					  struct task_struct *task, struct count_key *key,
					  __u64 kskip, __u64 cookie)
{
	key->kstack_id = -1;
	/* A sample in user mode has no kernel stack: skip the helper (about half a microsecond). */
	if (kernel_stacks && (!pctx || (*(volatile __u64 *)&pctx->regs.cs & 3) != 3)) {
		__u64 skip = kskip;

		key->kstack_id = key->period ? bpf_get_stackid(ctx, &kstacks_b, skip) :
					       bpf_get_stackid(ctx, &kstacks, skip);
		if (key->kstack_id == -17 /* EEXIST: the bucket holds another stack */) {
			key->kstack_id = key->period ? bpf_get_stackid(ctx, &kstacks2_b, skip) :
						       bpf_get_stackid(ctx, &kstacks2, skip);
			if (key->kstack_id >= 0)
				key->kstack_id |= KSTACK_SECOND;
			else if (key->kstack_id == -17)
				stat_inc(STAT_KSTACK_COLLIDE);
		}
		if (key->kstack_id < 0 && key->kstack_id != -14 /* EFAULT: user-mode sample */) {
			if (key->kstack_id != -17)
				stat_inc(STAT_KSTACK_FULL);
			key->kstack_id = KSTACK_LOST;
		} else if (key->kstack_id < 0) {
			key->kstack_id = -1;
		}
	} else if (kernel_stacks && (cookie & EV_COOKIE_TASK_KSTACK)) {
		/* A page fault from user mode: the task is in the kernel all the same. */
		key->kstack_id = task_kstack(task);
	}
}

/*
 * The user stack of sample D to userspace for DWARF unwinding. A task's samples of an -e
 * event at the same place again (COOKIE's EV_COOKIE_DEDUPE) send no stacks, as waits off
 * the CPU do: their weight goes to the ones it sent (same_stacks), in an off_weight.
 */
static __always_inline void send_for_dwarf(struct bpf_perf_event_data *pctx,
					   struct task_struct *task, struct dwarf_send *d,
					   __u64 cookie)
{
	struct off_pending *op = d->op;
	__u32 zero = 0;

	if (!op && (cookie & EV_COOKIE_DEDUPE)) {
		op = bpf_map_lookup_elem(&off_scratch, &zero);
		if (op) {
			op->seq = __sync_fetch_and_add(&off_seq, 1) + 1;
			op->tid = d->tid;
			op->ktid = BPF_CORE_READ(task, pid);
			op->same_as = 0;
		}
	}
	/* The kernel stack and period of the stacks. */
	if (op)
		op->key = *d->ck;
	d->op = op;
	send_event(pctx, task, d);
	if (op && op->same_as && !(d->ck->flags & COUNT_F_OFF_CPU)) {
		struct off_weight w = {
			.tid = d->tid, .kstack_id = d->ck->kstack_id,
			.seq = op->seq, .same_as = op->same_as,
			.ns = d->weight, .start = bpf_ktime_get_ns(),
		};

		if (bpf_ringbuf_output(&events, &w, sizeof(w), ring_flags()))
			stat_inc(STAT_EVENTS_LOST);
	}
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
	struct ustack *st = NULL, *ts = NULL;
	__u64 hash = 0;
	const struct proc_ranges *pr;
	struct stack_window *win;
	struct tab_at at = {};
	int complete, end, rest = 0, words = 0;

	if (!op)
		stat_inc(STAT_SAMPLES);
	key.period = period & 1;
	pr = current_proc(tgid, task, &key.gen);
	/* Thread names can change any time (pthread_setname_np). */
	if ((per_thread || timeline) && tid != tgid)
		remember_comm(tid, task);

	key.pid = tgid;
	key.tid = per_thread ? tid : 0;
	key.flags = (__u32)(cookie & EV_COOKIE_INDEX) << COUNT_F_EVENT_SHIFT;
	if (op)
		key.flags |= COUNT_F_OFF_CPU;
	sample_kstack(ctx, pctx, task, &key, kskip, cookie);
	TIME_PART(TPART_START);

	if (user_stacks) {
		st = bpf_map_lookup_elem(&scratch, &zero);
		if (!st || !user_regs(pctx, task, &regs)) {
			stat_inc(STAT_NO_USER);
			st = NULL;
		} else {
			end = walk_user(&regs, pr, st, &win);
			TIME_PART(TPART_FP_WALK);
			/* A leaf that made no frame record, called from code that keeps none: the
			 * walk from rbp left its callers out. Walked from the tables instead (the
			 * words at sp, which it keeps, say so). */
			if (end == WALK_WHOLE && pr && unwind_mode == UNWIND_AUTO && !no_copy) {
				words = 1;
				if (keep_sp_words(pr, regs.sp, win, st)) {
					end = WALK_NOREC;
					if (!op)
						stat_inc(STAT_FP_LEAF_NOREC);
				}
			}
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
			/* Walked from the files' tables instead, when they take it whole. */
			if (unwind_mode == UNWIND_AUTO && !complete && table_walk && pr) {
				int te;

				ts = bpf_map_lookup_elem(&tscratch, &zero);
				tab_gprs();
				at.r = regs;
				at.cache = op ? RCACHE_SWITCH : RCACHE_SAMPLE;
				te = ts ? tab_walk(&at, pr, ts, tgid, win != NULL) : TAB_NO_TABLE;
				TIME_PART(TPART_TAB_END);

				if (!op)
					stat_inc(te == TAB_WHOLE ? STAT_TAB_WHOLE :
						 te == TAB_NO_RULE || te == TAB_HANDOFF ?
						 STAT_TAB_NO_RULE :
						 te == TAB_NO_MEMORY ? STAT_TAB_NO_MEMORY :
						 te == TAB_DEPTH ? STAT_TAB_DEPTH :
						 STAT_TAB_NO_TABLE);
				if (te == TAB_WHOLE && ts) {
					st = ts;
					words = 0;
					complete = !table_check;
					key.flags |= COUNT_F_TABLE_WALK;
				} else if (ts && !no_copy && !table_check && ts->nr > 1 &&
					   (te == TAB_NO_TABLE || te == TAB_DEPTH ||
					    te == TAB_HANDOFF)) {
					/* Its frames so far are the sample's: userspace goes on
					 * from the frame where it stopped, with a copy from
					 * there (the words past the leaf's copy, at the
					 * sample). (The walk's stack and that frame's registers
					 * take the place of the sample's, as for a whole walk:
					 * states the verifier has seen.) */
					rest = 1;
					ts->nr--;
					st = ts;
					words = 0;
					regs = at.r;
					if (!op)
						stat_inc(STAT_TAB_RESUMED);
				}
			}
			/* No copies: the longer of the two walks (TS: the tables' walk ran),
			 * cut. */
			if (no_copy && !complete && ts && st != ts && ts->nr > st->nr) {
				st = ts;
				words = 0;
				key.flags |= COUNT_F_TABLE_WALK;
			}
			/* The thread's Python frames behind its native ones, read now. */
			if (python && py_any)
				py_frames(st, tgid, BPF_CORE_READ(task, pid),
					  BPF_CORE_READ(task, thread.fsbase), key.gen);
			/* And its Ruby frames. */
			if (ruby && rb_any)
				rb_frames(st, tgid, BPF_CORE_READ(task, thread.fsbase), key.gen);
			if (!no_copy && (unwind_mode == UNWIND_DWARF ||
					 (unwind_mode == UNWIND_AUTO && !complete))) {
				struct dwarf_send d = {
					.r = &regs, .st = st, .pr = pr, .ck = &key, .op = op,
					.weight = weight, .tgid = tgid, .tid = tid,
					.bp_ok = rest ? at.bp_ok : 1,
					.stack_top = BPF_CORE_READ(task, mm, start_stack),
					.why = rest ? SEND_TABLE_REST :
					       unwind_mode == UNWIND_DWARF ? SEND_DWARF :
					       (key.flags & COUNT_F_TABLE_WALK) ?
					       SEND_TABLE_CHECK :
					       !pr ? SEND_NO_PROC :
					       end == WALK_NOREC ? SEND_NOREC : SEND_WALK_BROKEN,
				};

				send_for_dwarf(pctx, task, &d, cookie);
				return 0;
			}
			if (!complete)
				key.flags |= COUNT_F_USER_TRUNCATED;
			/* (Without copies, not even the words at sp leave.) */
			if ((!(key.flags & COUNT_F_TABLE_WALK) || at.leaf_rec) && !no_copy) {
				if (!words)
					keep_sp_words(pr, regs.sp, win, st);
			}
			else
				for (int i = 0; i < PROFILE_SP_WORDS; i++)
					st->sp_words[i] = 0;
			hash_frames(st, &hash, &st->check);
			TIME_PART(TPART_HASH);
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
	if (timeline)
		send_timed(bpf_ktime_get_ns(), weight, tid, &key);
	if (count_cached(&key, &slot, weight)) {
		TIME_PART(TPART_COUNTED);
		return 0;
	}
	/* New to this CPU's table: make sure its user stack is stored. A stack that cannot be
	 * (map full, hash collision) is left out of the key; the sample counts all the same. */
	if (st && key.ustack_hash && !store_ustack(st, key.ustack_hash)) {
		key.ustack_hash = 0;
		key.ucheck = 0;
	}
	TIME_PART(TPART_STORED);
	count_new(slot, &key, weight);
	TIME_PART(TPART_COUNTED_NEW);
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
	if (!wanted(*id >> 32))
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

/*
 * Set while on_switch runs on a CPU. The walks' per-CPU maps (scratch, tscratch, tpage,
 * window, cur_proc, cached, event_buf...) have one element: a hardware event's sample is an
 * NMI, which can come in the middle of on_switch (the kernel keeps perf_event and classic
 * tracepoint programs from nesting only inside each other and kprobes, not inside a tp_btf
 * program), and so can a tracepoint's (-e exceptions:page_fault_user, when a read of
 * on_switch's faults); their walks would overwrite the switch's. Such a sample is dropped
 * and counted (STAT_NESTED). A timer's sample cannot come then: on_switch runs with
 * interrupts off.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} in_switch SEC(".maps");

/* Whether on_switch is loaded (--off-cpu, --wall): without it no sample can be inside it, and
 * the samples look up nothing. */
const volatile bool switch_prog = false;

/* Whether this CPU is in on_switch (the sample is then dropped, and counted). */
static __always_inline bool nested(void)
{
	__u32 *busy;

	if (!switch_prog)
		return false;
	busy = bpf_map_lookup_elem(&in_switch, &(__u32){ 0 });
	if (!busy || !*(volatile __u32 *)busy)
		return false;
	stat_inc(STAT_NESTED);
	return true;
}

SEC("perf_event")
int do_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id, cookie = bpf_get_attach_cookie(ctx), weight = 1;
	__u64 t0 = time_runs ? bpf_ktime_get_ns() : 0;

	/* Every task's sample moves the count on, kept or not. */
	if (cookie & EV_COOKIE_WEIGH)
		weight = event_weight(ctx, cookie);
	if (!sampled_task(task, &id) || nested())
		return 0;
	TIME_PART(TPART_BEGIN);
	take_sample(ctx, ctx, task, id >> 32, (__u32)id, NULL, weight, 0, cookie);
	TIME_PART(TPART__MAX);
	if (time_runs)
		time_run(id >> 32 && id >> 32 == fast_pids[0] ? TIME_SAMPLE_FIRST :
			 id >> 32 && id >> 32 == fast_pids[1] ? TIME_SAMPLE_SECOND : TIME_SAMPLE,
			 t0);
	return 0;
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

	if (!sampled_task(task, &id) || nested())
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
/* PROFILE_TEST_UNSEEN=N (tests): every Nth return of a task with a wait under way is not
 * seen by on_switch. */
const volatile __u32 test_unseen = 0;
/* PROFILE_TEST_NESTED=1 (tests): on_switch leaves its CPU's in_switch set, as if every later
 * sample there came inside it (no hardware PMU here to make one). */
const volatile __u32 test_nested = 0;
__u64 test_returns = 0;

/* Wait OP ended after NS off the CPU: counted on the stacks it left with (when at least
 * min_block_ns), or its time sent to the ones userspace unwinds (OP->seq). */
static __always_inline void off_end(struct off_pending *op, __u64 ns)
{
	if (!ns || ns < min_block_ns)
		return;
	stat_inc(STAT_OFF_CPU);
	if (op->seq) {
		struct off_weight w = {
			.tid = op->tid, .kstack_id = op->key.kstack_id,
			.seq = op->seq, .same_as = op->same_as, .ns = ns,
			.start = op->start,
		};

		if (bpf_ringbuf_output(&events, &w, sizeof(w), ring_flags()))
			stat_inc(STAT_EVENTS_LOST);
	} else {
		count_add(&op->key, ns);
		if (timeline)
			send_timed(op->start, ns, op->tid, &op->key);
	}
}

static __always_inline void switched(void *ctx,
				     struct task_struct *prev, struct task_struct *next)
{
	__u32 ntid = BPF_CORE_READ(next, pid), ptid = BPF_CORE_READ(prev, pid);
	__u64 now = bpf_ktime_get_ns(), id, flags, ran, back;
	struct task_struct *task;
	struct off_pending *op;

	op = ntid ? bpf_map_lookup_elem(&offpend, &ntid) : NULL;
	/* (Tests: every test_unseen'th return of a task with a wait unseen, as the kernel
	 * leaves one now and then; see below.) */
	if (op && test_unseen && __sync_fetch_and_add(&test_returns, 1) % test_unseen == 0)
		op = NULL;
	if (op) {
		off_end(op, now > op->start ? now - op->start : 0);
		bpf_map_delete_elem(&offpend, &ntid);
	}
	flags = BPF_CORE_READ(prev, flags);
	if (!ptid || (flags & 0x00200000 /* PF_KTHREAD */))
		return;
	task = bpf_get_current_task_btf();
	if (!pidns_ino)
		id = bpf_get_current_pid_tgid();
	else if (!current_ns_ids(task, &id))
		return;
	if (!wanted(id >> 32))
		return;
	ran = BPF_CORE_READ(prev, se.sum_exec_runtime);
	/* A task that leaves (or exits) with a wait under way came back to a CPU without this
	 * program run for it: under load, now and then one return in a few thousand of a
	 * profiled task's (a second program on this tracepoint missed the same ones). The
	 * wait ended when it came back: now, less the CPU time it had since. (Left be, the
	 * next leave replaced it, or it ran on to the profile's end.) */
	op = bpf_map_lookup_elem(&offpend, &ptid);
	if (op) {
		back = ran > op->ran ? ran - op->ran : 0;
		stat_inc(STAT_OFF_UNSEEN);
		off_end(op, now > op->start + back ? now - op->start - back : 0);
		bpf_map_delete_elem(&offpend, &ptid);
	}
	/* Tasks that exit: they never come back. */
	if ((flags & 0x00000004 /* PF_EXITING */) || !in_cgroups(task))
		return;
	op = bpf_map_lookup_elem(&off_scratch, &(__u32){ 0 });
	if (!op)
		return;
	op->start = now;
	op->ran = ran;
	op->tid = (__u32)id;
	op->ktid = ptid;
	op->same_as = 0;
	op->seq = __sync_fetch_and_add(&off_seq, 1) + 1;
	/* (Two frames of the kernel stack are the tracepoint's caller and this program.) */
	take_sample(ctx, NULL, task, id >> 32, (__u32)id, op, 0, 2, 0);
	bpf_map_update_elem(&offpend, &ptid, op, BPF_ANY);
	if (time_runs)
		time_run(TIME_SWITCH, now);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 *busy = bpf_map_lookup_elem(&in_switch, &(__u32){ 0 });

	if (!busy)
		return 0;
	*(volatile __u32 *)busy = 1;
	switched(ctx, prev, next);
	if (!test_nested)
		*(volatile __u32 *)busy = 0;
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
	if (!tgid || !tid || !wanted(tgid) || !in_cgroups(task))
		return 0;
	r = bpf_map_lookup_elem(&off_task_buf, &zero);
	if (!r)
		return 0;
	remember_comm(tgid, BPF_CORE_READ(task, group_leader));
	if ((per_thread || timeline) && tid != tgid)
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
	r->ran = task->se.sum_exec_runtime;
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
	struct exec_seen *ex, nx = { .time = now };
	struct proc_ranges *pr;

	if ((pidns_ino && !tgid) || (filter_pids && !profiled(tgid)))
		return 0;
	/* (One exec at a time per process: the kernel's cred_guard_mutex.) */
	ex = bpf_map_lookup_elem(&execs, &tgid);
	nx.seq = (ex ? ex->seq : 0) + 1;
	bpf_map_update_elem(&execs, &tgid, &nx, BPF_ANY);
	if (bpf_map_lookup_elem(&comms, &tgid))
		remember_comm(tgid, p);
	now = next_incarn(tgid, now);
	bpf_map_update_elem(&incarns, &tgid, &now, BPF_ANY);
	/* Its name from now on, should it have been renamed before (`renames`). */
	{
		struct rename_key k = { .tid = tgid, .time = now & ~INCARN_FLAGS };
		struct rename_val v = {};

		BPF_CORE_READ_STR_INTO(&v.after, p, comm);
		bpf_map_update_elem(&renames, &k, &v, BPF_ANY);
	}
	pr = bpf_map_lookup_elem(&procs, &tgid);
	if (pr) {
		pr->nr_spans = 0;
		pr->copy_hint = 0;
		/* (Another for this process: the counter only grows, whichever CPUs add to
		 * it meanwhile; another process may read the same, its entries are its own.) */
		__sync_fetch_and_add(&bpf_versions, 1);
		pr->version = bpf_versions | PROFILE_BPF_VERSION;
		pr->exec_seq = nx.seq;
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
	struct proc_tabs *t;
	__u8 one = 1;

	/* A new thread; or, in a pid namespace, a process outside it. */
	if (ptgid == ctgid || (pidns_ino && (!ptgid || !ctgid)))
		return 0;
	if (follow_children && profiled(ptgid)) {
		pids_spill = true;
		bpf_map_update_elem(&pids, &ctgid, &one, BPF_ANY);
	} else if (filter_pids && profiled(ptgid)) {
		stat_inc(STAT_FORKS_LEFT);	/* the summary says so */
	}
	/* A new process under CTGID: an earlier one's samples are not its. */
	if (!filter_pids || profiled(ctgid)) {
		now = next_incarn(ctgid, now);
		bpf_map_update_elem(&incarns, &ctgid, &now, BPF_ANY);
		__sync_fetch_and_add(&procs_gen, 1);
	}
	/* The child has the parent's C library at the same place. */
	t = bpf_map_lookup_elem(&proc_tabs, &ptgid);
	if (t)
		bpf_map_update_elem(&proc_tabs, &ctgid, t, BPF_ANY);
	b = bpf_map_lookup_elem(&procs, &ptgid);
	if (b) {
		/* (The child has seen no exec: seq 0, its entry's too.) */
		bpf_map_delete_elem(&execs, &ctgid);
		bpf_map_update_elem(&procs, &ctgid, b, BPF_ANY);
		/* (The child's own from now on: a copy of it is checked by them.) */
		b = bpf_map_lookup_elem(&procs, &ctgid);
		if (b) {
			b->tgid = ctgid;
			b->tgid_end = ctgid;
			b->exec_seq = 0;
		}
		__sync_fetch_and_add(&procs_gen, 1);
	}
	return 0;
}

/*
 * Epochs of a program: its samples carry a new gen (count_key.gen) from each change that can
 * name its code differently, so that userspace names those before with what was there before
 * (procmaps epochs) and those after with what is there after:
 * - a file mapped executable (a library dlopen'ed, perhaps where another one was dlclose'd);
 * - a rename of the process or, with per-thread output, of one of its threads (`renames`).
 * The flags of the program's `incarns` value stay. Returns the time of the new gen.
 */
static __always_inline __u64 new_epoch(__u32 tgid)
{
	__u64 *old = bpf_map_lookup_elem(&incarns, &tgid);
	__u64 now = incarn_new_gen(old ? *old : 0, bpf_ktime_get_ns());

	bpf_map_update_elem(&incarns, &tgid, &now, BPF_ANY);
	__sync_fetch_and_add(&procs_gen, 1);
	return now & ~INCARN_FLAGS;
}

#define EPOCH_VM_EXEC	0x4ull	/* VM_EXEC */

/*
 * A mapping stored into a process's tree of mappings (the maple tree's write: mmap, mprotect
 * and munmap of the current process store there): a file mapped executable begins an epoch.
 * This comes before the mmap record, whose time is a little later (PROCMAPS_EPOCH_SLACK_NS).
 * (No kprobes nor fentry here: the kernels this runs on may have neither.)
 */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

/*
 * A file mapped executable over part of what TGID's `proc_tabs` entry has: unless it is the
 * same file at the same place (a mapping split by mprotect, stored again), that entry's
 * tables may be another file's now, and it goes until userspace, with the mapping's record,
 * writes it again (its stacks go to userspace meanwhile).
 */
static __always_inline void check_tabs(__u32 tgid, const struct vm_area_struct *vma)
{
	struct proc_tabs *pt = bpf_map_lookup_elem(&proc_tabs, &tgid);
	__u64 start = vma->vm_start, end = vma->vm_end;
	__u64 ino = vma->vm_file->f_inode->i_ino, base = start - (vma->vm_pgoff << 12);

	if (!pt)
		return;
	for (int i = 0; i < PROFILE_MAX_TABS; i++) {
		if (i >= pt->nr)
			break;
		if (pt->start[i] >= end || pt->end[i] <= start)
			continue;
		if (pt->ino[i] != ino || pt->start[i] - pt->pgoff[i] != base) {
			bpf_map_delete_elem(&proc_tabs, &tgid);
			return;
		}
	}
}

SEC("tp_btf/ma_write")
int BPF_PROG(on_ma_write, const char *fn, struct ma_state *mas, unsigned long piv, void *val)
{
	struct task_struct *task;
	struct vm_area_struct *vma;
	struct mm_struct *mm;
	__u32 tgid;

	/* Cheap first, at every store of every process: plain loads (no helper calls), the
	 * flags before anything else (most stores map no code). */
	if (!val)
		return 0;
	vma = bpf_rdonly_cast(val, bpf_core_type_id_kernel(struct vm_area_struct));
	if (!(vma->vm_flags & EPOCH_VM_EXEC) || !vma->vm_file)
		return 0;
	task = bpf_get_current_task_btf();
	mm = task->mm;
	if (!mm || (void *)mas->tree != (void *)&mm->mm_mt)
		return 0;
	tgid = task_tgid(task);
	if (!tgid || (filter_pids && !profiled(tgid)))
		return 0;
	/* Its tables' mappings may be another file's now: none until userspace has the
	 * mapping's record (its stacks go to userspace meanwhile). (Before the new epoch's
	 * bump of procs_gen: the CPUs' copies of whether it has tables go with it.) */
	if (table_walk)
		check_tabs(tgid, vma);
	new_epoch(tgid);
	return 0;
}

/* A rename (prctl PR_SET_NAME, pthread_setname_np; not an exec): the names before and after,
 * at the time of the gen it begins, for userspace to name each sample by the name it ran
 * under. */
SEC("tp_btf/task_rename")
int BPF_PROG(on_rename, struct task_struct *task, const char *comm)
{
	struct rename_key k = {};
	struct rename_val v = {};
	__u32 tgid = task_tgid(task);

	if (!tgid || (filter_pids && !profiled(tgid)))
		return 0;
	k.tid = pidns_ino ? pid_nr_ns(BPF_CORE_READ(task, thread_pid)) : BPF_CORE_READ(task, pid);
	if (!k.tid || (k.tid != tgid && !per_thread))
		return 0;
	k.time = new_epoch(tgid);
	BPF_CORE_READ_STR_INTO(&v.before, task, comm);
	bpf_probe_read_kernel_str(v.after, sizeof(v.after), comm);
	bpf_map_update_elem(&renames, &k, &v, BPF_ANY);
	return 0;
}

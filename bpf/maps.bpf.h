/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The sampling programs' settings (read-only data set by userspace before load, and the
 * globals it sets after), their maps, and the small helpers on them: the statistics, whether
 * a task is profiled, in the --cgroup cgroups. Included by profile.bpf.c only.
 */
#ifndef PROFILE_MAPS_BPF_H
#define PROFILE_MAPS_BPF_H

/* Set by userspace before load. */
const volatile bool filter_pids = false;	/* only tasks whose tgid is in `pids` */
const volatile bool leave_self = false;	/* -a without --self: not profile's own processes */
/* profile's own processes (itself, its symbolizer worker, its debuginfod fetcher; 0: none),
 * in the profiler's pid namespace: set by userspace as they start. */
__u32 self_tgids[4] = {};
const volatile bool include_idle = false;	/* keep samples of pid 0 */
const volatile bool per_thread = false;		/* count per thread, not per process */
const volatile bool user_stacks = true;
const volatile bool kernel_stacks = true;
const volatile bool follow_children = false;	/* add new processes forked by profiled ones */
const volatile __u32 unwind_mode = UNWIND_AUTO;
/* --unwind auto: a stack the frame-pointer walk cannot take is walked from the files' unwind
 * tables (`proc_tabs`) before it is sent to userspace with a copy. */
const volatile bool table_walk = false;
/* ... and its whole stacks are sent with a copy all the same, to be checked in userspace. */
const volatile bool table_check = false;
/* --stack-copy 0: nothing is sent; a stack neither walk takes whole is counted cut. */
const volatile bool no_copy = false;
/* A timeline is asked for: every sample counted in the kernel is also sent as a
 * struct timed_sample. */
const volatile bool timeline = false;
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
/* Bumped after every change to `procs`, `proc_tabs` or `incarns`' gens (by userspace too:
 * session__bpf_changed): per-CPU copies (`cur_proc`) of older generations are stale. */
__u64 procs_gen;
/* The versions BPF gives the `procs` entries it changes (proc_ranges.version). */
__u32 bpf_versions;
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

/* Words past the stack copy each task's samples read (struct deep_words), by kernel tid;
 * written by userspace from what its unwinds needed. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct deep_words);
} deepwords SEC(".maps");

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

/*
 * Execs while profiling: tgid -> how many (the process's seq: 0 when forked while profiling,
 * or when none was seen) and when the last one was (bpf_ktime_get_ns). Userspace stamps a
 * `procs` entry with the seq of the program it describes, taken only once the records read
 * are past the last exec's time: an entry it wrote from what it knew before an exec (a
 * read-modify-write of the copy hint that straddled it, the mappings of the program before)
 * then has another seq than the process, and BPF does not use it. No entry (evicted): seq 0.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct exec_seen);
} execs SEC(".maps");

/* Renames while profiling: (tid, the gen it began) -> the names before and after. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct rename_key);
	__type(value, struct rename_val);
} renames SEC(".maps");

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
 * userspace adds what the slots still hold when sampling has stopped. PROFILE_CACHE_TABLES
 * tables a period, the key's hash choosing one: table (parity * PROFILE_CACHE_TABLES + j).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	/* (Both parities' tables; userspace leaves the odd one's out but in continuous
	 * mode.) */
	__uint(max_entries, 2 * PROFILE_CACHE_TABLES);
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

/* The files' unwind tables (struct ushard, struct ufile_dir, struct proc_tabs in profile.h):
 * shards added by userspace as a file is first needed, a directory per file, the mappings of
 * each process described. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, UTAB_MAX_SHARDS);
	__type(key, __u32);
	__type(value, struct ushard);
} ushards SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UTAB_MAX_FILES);
	__type(key, __u32);
	__type(value, struct ufile_dir);
} ufiles SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct proc_tabs);
} proc_tabs SEC(".maps");

/* `cur_proc`: the last process sampled on this CPU, with a copy of its `procs` entry (of
 * generation `gen`) and whether it has a `proc_tabs` entry then, of what version (a write
 * of either entry bumps `procs_gen` after it). A new one also has its name recorded. */
struct cpu_proc {
	__u32 tgid_1;		/* the process's tgid + 1 (pid 0 is the idle task); 0: none yet */
	__u32 has_ranges;	/* `procs` had an entry: pr is valid */
	__u64 gen;		/* procs_gen when pr was copied */
	__u64 since;		/* the process's `incarns` entry then, 0: none */
	__u32 tabs;		/* its `proc_tabs` entry as of gen (CPU_TABS_*), found by the
				 * first walk from the tables that needed it */
	__u32 tabs_ver;		/* CPU_TABS_THERE: that entry's version */
	struct proc_ranges pr;
};

enum { CPU_TABS_UNKNOWN = 0, CPU_TABS_NONE, CPU_TABS_THERE };

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

/* PROFILE_BPF_TIMES=parts (benchmarks): the ns a perf event's sample (do_sample) spent in
 * each part of its run (enum profile_tpart), from one clock read to the next, summed per CPU
 * (`tparts`; in slot TPART__MAX the last read's time, or 0 outside such a run: a switch's
 * and a tracepoint's runs add nothing): where the time of a walk goes, without a debug
 * build. The reads cost a few tens of ns each, and the tables' walk has more of them: its
 * parts are not to set beside the frame-pointer walk's as they are. */
const volatile bool time_parts = false;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TPART__MAX + 1);
	__type(key, __u32);
	__type(value, __u64);
} tparts SEC(".maps");

/* The time since the last read into part K (TPART_BEGIN: none, the run's first read;
 * TPART__MAX: the run's last, none after it). */
static __always_inline void time_part_add(__u32 k)
{
	__u32 last = TPART__MAX;
	__u64 now = bpf_ktime_get_ns(), *prev = bpf_map_lookup_elem(&tparts, &last), *v;

	if (!prev || (k != TPART_BEGIN && !*prev))
		return;
	if (k != TPART_BEGIN) {
		v = bpf_map_lookup_elem(&tparts, &k);
		if (v && k < TPART__MAX)
			*v += now - *prev;
	}
	*prev = k == TPART__MAX ? 0 : now;
}
#define TIME_PART(k) do { if (time_parts) time_part_add(k); } while (0)

/* PROFILE_BPF_TIMES (benchmarks): how long each run of the programs took, for a profiled
 * task's sample (the first PROFILE_TIME_BUCKETS) and for a switch that took a profiled
 * task's stacks off the CPU (the next), in buckets of PROFILE_TIME_STEP ns up to
 * PROFILE_TIME_FINE of them, PROFILE_TIME_COARSE past: the distribution bpf_stats' totals do
 * not give; then each kind's total ns, for a mean of those runs alone (bpf_stats' counts
 * every run, the other processes' too). Two more clock reads per run. */
const volatile bool time_runs = false;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROFILE_TIME_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} btimes SEC(".maps");

/* The kinds of run timed (PROFILE_TIME_KINDS): a sample's of a profiled task, a switch's; and
 * of the samples, apart, those of the first process profiled (fast_pids[0], -p's first) and
 * of the second (with the samples too): two targets' costs from one run, under the same
 * load, as bench/walkpair.py sets them side by side. */
enum { TIME_SAMPLE, TIME_SWITCH, TIME_SAMPLE_FIRST, TIME_SAMPLE_SECOND };

/* One run of kind KIND's NS into `btimes`. */
static __always_inline void time_one(__u32 kind, __u64 ns)
{
	__u64 fine = PROFILE_TIME_FINE * PROFILE_TIME_STEP;
	__u64 b = ns < fine ? ns / PROFILE_TIME_STEP :
		  PROFILE_TIME_FINE + (ns - fine) / PROFILE_TIME_COARSE;
	__u32 key = kind * PROFILE_TIME_BUCKETS +
		    (b < PROFILE_TIME_BUCKETS ? (__u32)b : PROFILE_TIME_BUCKETS - 1);
	__u64 *v = bpf_map_lookup_elem(&btimes, &key);

	if (v)
		*v += 1;
	key = PROFILE_TIME_KINDS * PROFILE_TIME_BUCKETS + kind;
	v = bpf_map_lookup_elem(&btimes, &key);
	if (v)
		*v += ns;
}

/* A run of kind KIND (TIME_*) that began at T0, into `btimes`: a sample of the first or the
 * second process is a sample too. */
static __always_inline void time_run(__u32 kind, __u64 t0)
{
	__u64 ns = bpf_ktime_get_ns() - t0;

	if (kind >= TIME_SAMPLE_FIRST)
		time_one(TIME_SAMPLE, ns);
	time_one(kind, ns);
}

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

/* How far below the word it needs a read of the stack past the window begins: a frame's
 * saved rbp lies below its return address, read first. */
#define PAGE_READ_BELOW	64

/* Threads whose last walk each CPU keeps (tab_page.last, by tid mod this). */
#define TAB_LAST_THREADS 8
/* Frames of a thread's last walk whose rows' cache entries a walk reads first. */
#define TAB_WARM 16

/* What tab_memo_try is asked (the frame the walk is at) and answers: in the walk's page (map
 * memory, whose values the verifier does not follow: as the walk's, each made its states
 * apart). */
struct memo_q {
	__u64 wsp;		/* the window's sp */
	__u64 ip, sp, bp;	/* the frame's registers; at a hit, the last frame's */
	__u32 bp_ok;
	__u32 cur;		/* the memo's first frame not yet passed (MEMO_FRAMES: no more) */
	__u32 hit;		/* the walk ended from the memo */
	__u32 tid_1, tgid;	/* the walk's thread, its process and their entries' versions */
	__u32 pr_ver, pt_ver;
	__u32 c, n;		/* the memo's frame that is the walk's, the walk's frames */
	__u32 bp_from;		/* the memo's frame whose read gave the rbp of the one it is at
				 * (MEMO_BP_*) */
	__u32 fail;		/* a word not where it was */
	__u32 kept;		/* the walk's memo holds it whole (its frames from the memo's) */
	__u32 left;		/* the memo's frames past c to check */
};

/*
 * The stack the walk read past the window: from a little below the first word it needed
 * there up to where the thread's last whole walk on this CPU ended (its outermost frame's
 * CFA: a thread's stack bottom stays where it is from sample to sample), else to the end of
 * that word's page. The words of the frames above it in one read instead of one per word (the
 * walk only goes up: the part below is never needed). A read is most of its cost, not its
 * size: xz -9e's walks needed 1.5 reads each, up to their pages' ends, and one read to where
 * the last walk ended.
 */
struct tab_page {
	__u64 w[(PROFILE_PAGE_SIZE + PAGE_READ_BELOW) / 8];
	/* The words in w: [lo, hi) (none yet: 0, 0). */
	__u64 lo, hi;
	/* This walk's first read goes up to here (0: to its page's end). */
	__u64 until;
	/* The last whole walk of a thread, by tid mod TAB_LAST_THREADS: its tid + 1 (0: none),
	 * which of its two `tmemo` entries holds the walk (bpf/tabwalk.bpf.h), its outermost
	 * CFA, and the pcs its first TAB_WARM frames looked up (0: none past them;
	 * tab_warm). */
	struct {
		__u32 tid;
		__u32 memo;
		__u64 end;
		__u64 pc[TAB_WARM];
	} last[TAB_LAST_THREADS];
	__u64 sink;
	/* The walk's TAB_F_* (here, in map memory, the verifier tracks no value: as fields
	 * of the walk's state, each value made its states apart, 65k instructions more). */
	__u32 flags;
	/* Which of gr (bits of DWARF's register numbers) the walk knows at its frame: the
	 * sample's registers (tab_gprs), until a row makes them unknown (UROW_F_CS). */
	__u32 valid;
	/* gr not read yet: a sample in kernel mode or a switch's, whose user registers are
	 * those the task saved on entering the kernel, read once a row needs one. */
	__u32 lazy;
	__u64 gr[16];		/* the general registers, DWARF's numbering */
	struct memo_q mq;	/* the walk's frame and its thread's last walk (tab_memo_try) */
};

/* tab_page.flags: the frame's return address is from a record in code no table describes
 * (where it goes is checked); the leaf went by its record (tab_at.leaf_rec). */
#define TAB_F_GUESSED	1u
#define TAB_F_LEAF_REC	2u

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tab_page);
} tpage SEC(".maps");

/* A walk's first read past its window is to come: nothing in PG->w yet, and the read goes up
 * to where this thread's last whole walk on this CPU ended (0, none: to its page's end).
 * Returns the thread's slot in PG->last. */
static __always_inline __u32 tab_page_begin(struct tab_page *pg)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u32 slot = tid & (TAB_LAST_THREADS - 1);

	pg->lo = pg->hi = 0;
	pg->until = pg->last[slot].tid == tid + 1 ? pg->last[slot].end : 0;
	return slot;
}

/* The words of the stack about ADDR (8-aligned) into PG->w, for tab_read: from a little
 * below it up to PG->until (once), else to its page's end; [PG->lo, PG->hi) then. Returns 0,
 * or -1 when they could not be read. A global function: the verifier checks it once, and the
 * walk's step keeps only the read from what was read (the code of a sample's walk is cold in
 * the CPU's caches at most samples: the less of it, the fewer misses). */
__noinline int tab_page_read(struct tab_page *pg, __u64 addr)
{
	__u64 base = addr & ~(__u64)(PROFILE_PAGE_SIZE - 1), lo, n;

	if (!pg)
		return -1;
	pg->lo = pg->hi = 0;
	/* (Into the page below when the word is near its page's start: the frame's saved rbp
	 * may be there.) */
	lo = addr - PAGE_READ_BELOW;
	n = base + PROFILE_PAGE_SIZE - lo;
	/* (Past the page when the thread's last walk went there: that stack was there then.
	 * Else, or should that read fail, to the page's end.) */
	if (pg->until > addr && pg->until - lo <= sizeof(pg->w))
		n = (pg->until - lo + 7) & ~7ull;
	pg->until = 0;
	/* (Bounds the compiler keeps: the verifier checks the size.) */
	asm volatile("" : "+r"(n));
	if (n > sizeof(pg->w))
		return -1;
	if (bpf_probe_read_user(pg->w, n, (void *)lo)) {
		if (lo + n <= base + PROFILE_PAGE_SIZE)
			return -1;
		n = base + PROFILE_PAGE_SIZE - lo;
		asm volatile("" : "+r"(n));
		if (n > sizeof(pg->w) || bpf_probe_read_user(pg->w, n, (void *)lo))
			return -1;
	}
	pg->lo = lo;
	pg->hi = lo + n;
	return 0;
}

/* The scan of a JIT leaf's code (bpf/leafscan.h), off the programs' stacks. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct leaf_scan);
} lscan SEC(".maps");

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

/* Whether TGID is one of profile's own processes. */
static __always_inline bool is_self(__u32 tgid)
{
	return tgid && (self_tgids[0] == tgid || self_tgids[1] == tgid ||
			self_tgids[2] == tgid || self_tgids[3] == tgid);
}

/* Whether process TGID's tasks are sampled: a profiled one's (-p, a command), or with -a any
 * but profile's own (unless --self). */
static __always_inline bool wanted(__u32 tgid)
{
	if (filter_pids)
		return profiled(tgid);
	return !leave_self || !is_self(tgid);
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

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
/* collect/bpf: the BPF side of a session: libbpf's messages, privilege, BTF and pid namespace
 * checks, map and ring-buffer sizes, loading, the pid filter, perf attach/detach per CPU, the
 * stats. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/clock.h"
#include "base/log.h"
#include "collect/session_int.h"
#include "profile.skel.h"

#define MAP_SIZE_MIN	16384
#define MAP_SIZE_MAX	65536	/* derived sizes stop here; --map-size may go further */
#define RING_MIN	(1u << 20)	/* DWARF sample ring buffer: see ring_size */
#define RING_MAX	(256u << 20)
/* With --off-cpu/--wall or -e, at least: stacks come at every switch of a waiting task
 * (until a task waits at the same place again), or at each hit of an event, not at a rate
 * of the frequency. */
#define RING_OFF_CPU	(16u << 20)
#define OFFPEND_MAX	65536	/* tasks off the CPU at once (--off-cpu, --wall) */
#define PROC_USER_INIT_INO	0xEFFFFFFDu	/* the initial user namespace's inode (proc_ns.h) */

int session__libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if ((level == LIBBPF_DEBUG && log_level < LOG_DEBUG) ||
	    (level == LIBBPF_INFO && log_level < LOG_INFO) || log_level < LOG_INFO)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* --- checks ----------------------------------------------------------------------------- */

int session__check_btf(struct session *s)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return session__fail(s, SESSION_ERR_ENV, -ENOENT,
				     "this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): "
				     "profile needs a kernel built with CONFIG_DEBUG_INFO_BTF");
	return 0;
}

int session__check_pidns(struct session *s)
{
	int err = pidns__self(&s->pidns);

	if (err == -EXDEV)
		return session__fail(s, SESSION_ERR_ENV, err,
				     "profile runs in a pid namespace whose /proc is not its own "
				     "(/proc shows another namespace's pids): mount one, as "
				     "'unshare --pid --fork --mount-proc' does");
	if (err)
		return session__fail(s, SESSION_ERR_ENV, err,
				     "cannot read /proc/self/ns/pid: %s", strerror(-err));
	if (!s->pidns.initial)
		pr_info("in pid namespace %llu: pids as it numbers them, tasks outside it not "
			"sampled", (unsigned long long)s->pidns.ino);
	return 0;
}

/* Whether this process may load BPF and open perf events: CAP_SYS_ADMIN, or CAP_BPF and
 * CAP_PERFMON, effective. */
static bool have_bpf_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };

	if (syscall(SYS_capget, &hdr, data))
		return geteuid() == 0;
#define HAS(cap) (data[(cap) / 32].effective & (1u << ((cap) % 32)))
	return HAS(CAP_SYS_ADMIN) || (HAS(CAP_BPF) && HAS(CAP_PERFMON));
#undef HAS
}

bool session__in_user_ns(void)
{
	struct stat st;

	return stat("/proc/self/ns/user", &st) == 0 && st.st_ino != PROC_USER_INIT_INO;
}

int session__fail_user_ns(struct session *s, int err)
{
	return session__fail(s, SESSION_ERR_ENV, err,
			     "permission denied loading BPF: profile runs in a user namespace "
			     "(an unprivileged container), and needs root, or CAP_BPF and "
			     "CAP_PERFMON, of the host");
}

/* --- loading ---------------------------------------------------------------------------- */

/* The rate of event I's samples: a clock's -F; an event that counts, its own rate. */
unsigned int session__event_rate(const struct session *s, unsigned int i)
{
	if (s->evs[i].kind != EVENT_SOFTWARE && s->evs[i].kind != EVENT_HARDWARE)
		return s->opts.freq;
	return s->opts.event_freq ? s->opts.event_freq : s->opts.freq;
}

/* The highest rate of the events of S (-c N: -F's, for the sizes). */
static unsigned int top_rate(const struct session *s)
{
	unsigned int top = s->opts.freq;

	for (unsigned int i = 0; i < s->nr_evs && !s->opts.count; i++)
		if (session__event_rate(s, i) > top)
			top = session__event_rate(s, i);
	return top;
}

static unsigned int derived_map_size(const struct session_opts *o, unsigned int freq,
				     int nr_cpus)
{
	/* Continuous mode: the maps hold one period (the previous one is cleared early in the
	 * next). */
	double secs = o->every > 0 ? o->every : o->duration > 0 ? o->duration : 30;
	double n = (double)freq * secs * nr_cpus;

	if (o->map_size)
		return o->map_size;
	if (n < MAP_SIZE_MIN)
		return MAP_SIZE_MIN;
	return n > MAP_SIZE_MAX ? MAP_SIZE_MAX : (unsigned int)n;
}

/*
 * The ring buffer of DWARF samples: 50 ms of the worst case (every CPU sampling, every sample
 * with a full stack copy), which the loop drains every 20 ms (and BPF wakes it at a quarter
 * full), as a power of two between 1 and 256 MiB. Its pages are mapped twice in this
 * process, so they are twice its size in RSS once written: 16 MiB fixed made 32 MB of a 2-CPU
 * run's 69 MB. With -a, 200 ms: every new process starts with whole copies, and on a busy
 * machine (a parallel build) the loop waited for a CPU long enough to lose 2-7% of the
 * samples at 999 Hz. The loop never waits for the worker's unwind tables (the samples that
 * need one wait in a queue: samples.c): node started beside two busy loops, every sample
 * sent to DWARF at 999 Hz, lost none with 50 ms, and some (35-61 samples, one run in three)
 * once records carried deep words and code without CFI was scanned: 100 ms. A record is its
 * header (2 KiB with the frame-pointer walk's frames and the deep words) and its copy.
 */
static uint32_t ring_size(const struct session_opts *o, unsigned int freq, bool counted,
			  int nr_cpus, uint32_t copy)
{
	double need = (o->all ? 0.2 : 0.1) * freq * nr_cpus *
		      ((double)copy + offsetof(struct sample_event, stack) + 16.0);
	uint32_t size = o->off_cpu || o->wall || counted ? RING_OFF_CPU : RING_MIN;

	while (size < RING_MAX && size < need)
		size <<= 1;
	return size;
}

/* Tracepoint CAT:NAME's id from tracefs (/sys/kernel/tracing, or debugfs's; mounted at
 * /sys/kernel/tracing when neither is there). Returns it, or -ENOENT / -errno. */
static long tracepoint_id(const char *cat, const char *name)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[512];
	long id = -ENOENT;

	for (int pass = 0; pass < 2 && id == -ENOENT; pass++) {
		for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
			FILE *f;

			snprintf(path, sizeof(path), "%s/events/%s/%s/id", roots[i], cat, name);
			f = fopen(path, "re");
			if (!f)
				continue;
			if (fscanf(f, "%ld", &id) != 1)
				id = -EINVAL;
			fclose(f);
			break;
		}
		snprintf(path, sizeof(path), "%s/events", roots[0]);
		if (id == -ENOENT && !pass && access(path, F_OK) &&
		    mount("tracefs", roots[0], "tracefs", 0, NULL))
			break;
	}
	return id;
}

int session__resolve_event(struct session *s)
{
	char err[256];
	int n = events__parse_list(s->opts.event ? s->opts.event : "cpu-clock", s->evs,
				   PROFILE_MAX_EVENTS, err, sizeof(err));

	if (n < 0)
		return session__fail(s, SESSION_ERR_USAGE, -EINVAL, "%s", err);
	s->nr_evs = (unsigned int)n;
	for (unsigned int i = 0; i < s->nr_evs; i++) {
		struct event_spec *e = &s->evs[i];
		long id;

		if (e->kind != EVENT_CLOCK)
			s->counted = true;
		if (e->kind != EVENT_TRACEPOINT)
			continue;
		id = tracepoint_id(e->category, e->event);
		if (id < 0)
			return session__fail(s, SESSION_ERR_USAGE, (int)id, "no tracepoint '%s' here "
					     "(the kernel's are in "
					     "/sys/kernel/tracing/available_events)", e->name);
		e->config = (uint64_t)id;
	}
	return 0;
}

/* Whether an event of KIND is among the session's. */
static bool session__has_kind(const struct session *s, enum event_kind kind)
{
	for (unsigned int i = 0; i < s->nr_evs; i++)
		if (s->evs[i].kind == kind)
			return true;
	return false;
}

/* The BPF cookie of event I's attachments (EV_COOKIE_*). */
static uint64_t event_cookie(const struct session *s, unsigned int i)
{
	const struct event_spec *e = &s->evs[i];
	uint64_t c = i;

	if (e->kind == EVENT_SOFTWARE || e->kind == EVENT_HARDWARE)
		c |= EV_COOKIE_WEIGH;
	if (e->kind != EVENT_CLOCK)
		c |= EV_COOKIE_DEDUPE;
	if (e->kind == EVENT_TRACEPOINT)
		c |= s->opts.count << EV_COOKIE_EVERY_SHIFT;
	/* A page fault's sample has the user's registers: no kernel stack from them. */
	if (e->kind == EVENT_SOFTWARE && (e->config == PERF_COUNT_SW_PAGE_FAULTS ||
					  e->config == PERF_COUNT_SW_PAGE_FAULTS_MIN ||
					  e->config == PERF_COUNT_SW_PAGE_FAULTS_MAJ))
		c |= EV_COOKIE_TASK_KSTACK;
	return c;
}

/* Open, size and load the programs; WITHOUT_EPOCHS: all but the two that begin epochs
 * (mapping stores, renames: kernels before 6.2 have no bpf_rdonly_cast). */
static int load_bpf(struct session *s, bool without_epochs);

int session__load_bpf(struct session *s)
{
	int err = load_bpf(s, false);

	/* Not for want of privileges: the same without them (a warning said what is lost). */
	if (err && err != -EPERM && err != -EACCES && s->err_kind != SESSION_ERR_ENV) {
		profile_bpf__destroy(s->skel);
		s->skel = NULL;
		free(s->err);
		s->err = NULL;
		pr_debug("loading without the epoch programs after: %s", strerror(-err));
		err = load_bpf(s, true);
		if (!err)
			pr_warn("this kernel cannot run the programs that tell a library loaded where "
				"another was, or a thread renamed, apart: such samples are named as "
				"at the end");
	}
	return err;
}

/* -v: how long SKEL's programs took to load (the verifier, mostly: issue 28 holds it), and
 * the instructions it went through for them. */
static void say_load_time(struct profile_bpf *skel, uint64_t ns)
{
	struct bpf_program *prog;
	unsigned long long insns = 0;
	int nr = 0;

	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		insns += info.verified_insns;
		pr_debug("BPF program %s: %u instructions verified", bpf_program__name(prog),
			 info.verified_insns);
		nr++;
	}
	pr_info("BPF programs loaded in %.2f s: %d programs, %llu instructions verified", ns / 1e9,
		nr, insns);
}

static int load_bpf(struct session *s, bool without_epochs)
{
	uint64_t t0;
	const struct session_opts *o = &s->opts;
	struct profile_bpf *skel;
	unsigned int size = derived_map_size(o, top_rate(s), s->nr_cpus);
	int err;

	skel = profile_bpf__open();
	if (!skel)
		return session__fail(s, SESSION_ERR_RUNTIME, -errno,
				     "cannot open the BPF programs: %s", strerror(errno));
	s->skel = skel;
	skel->rodata->filter_pids = !o->all;
	skel->rodata->leave_self = o->all && !o->self;
	skel->rodata->include_idle = o->idle;
	skel->rodata->per_thread = o->threads;
	skel->rodata->user_stacks = !o->kernel_only;
	skel->rodata->kernel_stacks = !o->user_only;
	skel->rodata->follow_children = o->argv != NULL || o->children;
	skel->rodata->unwind_mode = o->unwind_mode;
	/* Walks from the files' tables in BPF: only where BPF hears of every mapping as it is
	 * made (on_ma_write: a table walked against a mapping replaced since would give the
	 * old file's rows for the new code). PROFILE_NO_TABLE_WALK: as before, for
	 * comparisons. */
	s->table_walk = o->unwind_mode == UNWIND_AUTO && !without_epochs &&
			!getenv("PROFILE_NO_TABLE_WALK");
	skel->rodata->table_walk = s->table_walk;
	skel->rodata->table_check = s->table_walk && getenv("PROFILE_TABLE_WALK_CHECK") &&
				    !o->no_copy;
	skel->rodata->no_copy = o->no_copy;
	skel->rodata->timeline = o->timeline;
	skel->rodata->python = !o->no_runtime && !o->kernel_only;
	skel->rodata->ruby = !o->no_runtime && !o->kernel_only;
	skel->rodata->time_runs = getenv("PROFILE_BPF_TIMES") != NULL;
	skel->rodata->time_parts = skel->rodata->time_runs &&
				   !strcmp(getenv("PROFILE_BPF_TIMES"), "parts");
	skel->rodata->test_unseen = getenv("PROFILE_TEST_UNSEEN") ?
				    (__u32)atoi(getenv("PROFILE_TEST_UNSEEN")) : 0;
	skel->rodata->test_nested = getenv("PROFILE_TEST_NESTED") != NULL;
	if (!s->table_walk) {
		bpf_map__set_max_entries(skel->maps.ushards, 1);
		bpf_map__set_max_entries(skel->maps.ufiles, 1);
		bpf_map__set_max_entries(skel->maps.proc_tabs, 1);
	}
	skel->rodata->stack_copy = session__stack_copy_max(o);
	skel->rodata->nr_cgroups = (__u32)o->nr_cgroups;
	for (size_t i = 0; i < o->nr_cgroups && i < PROFILE_MAX_CGROUPS; i++)
		skel->rodata->cgroup_ids[i] = s->cgroup_ids[i];
	skel->rodata->group_cgroup = o->group_cgroup;
	if (without_epochs) {
		bpf_program__set_autoload(skel->progs.on_ma_write, false);
		bpf_program__set_autoload(skel->progs.on_rename, false);
	}
	if (!session__has_kind(s, EVENT_TRACEPOINT))
		bpf_program__set_autoload(skel->progs.do_tracepoint, false);
	if (s->nr_evs && !session__has_kind(s, EVENT_CLOCK) &&
	    !session__has_kind(s, EVENT_SOFTWARE) && !session__has_kind(s, EVENT_HARDWARE))
		bpf_program__set_autoload(skel->progs.do_sample, false);
	if (!s->pidns.initial) {
		skel->rodata->pidns_dev = s->pidns.dev;
		skel->rodata->pidns_ino = s->pidns.ino;
	}
	bpf_map__set_max_entries(skel->maps.kstacks, size);
	bpf_map__set_max_entries(skel->maps.kstacks2, size / 4);
	/* The odd periods' kernel stacks and sample cache: continuous mode only. */
	bpf_map__set_max_entries(skel->maps.kstacks_b, o->every > 0 ? size : 1);
	bpf_map__set_max_entries(skel->maps.kstacks2_b, o->every > 0 ? size / 4 : 1);
	bpf_map__set_max_entries(skel->maps.cached, (o->every > 0 ? 2 : 1) * PROFILE_CACHE_TABLES);
	bpf_map__set_max_entries(skel->maps.ustacks, size);
	bpf_map__set_max_entries(skel->maps.counts, size);
	bpf_map__set_max_entries(skel->maps.comms, size);
	bpf_map__set_max_entries(skel->maps.cgroup_of, o->group_cgroup ? size : 1);
	bpf_map__set_max_entries(skel->maps.pids, 65536);
	/* The stacks tasks sent last: off-CPU waits and -e's samples at the same place again. */
	if (o->off_cpu || o->wall || s->counted)
		bpf_map__set_max_entries(skel->maps.offsig, OFFPEND_MAX);
	/* Off-CPU time: its two programs only with --off-cpu or --wall. */
	if (o->off_cpu || o->wall) {
		skel->rodata->min_block_ns = (__u64)o->min_block_us * 1000;
		skel->rodata->switch_prog = true;
		bpf_map__set_max_entries(skel->maps.offpend, OFFPEND_MAX);
		bpf_map__set_max_entries(skel->maps.offsig, OFFPEND_MAX);
	} else {
		bpf_program__set_autoload(skel->progs.on_switch, false);
	}
	bpf_map__set_max_entries(skel->maps.procs, 65536);
	bpf_map__set_max_entries(skel->maps.events,
				 o->no_copy ? RING_MIN :
				 ring_size(o, top_rate(s), s->counted, s->nr_cpus, skel->rodata->stack_copy));
	pr_debug("map size %u entries, ring buffer %u KiB", size,
		 bpf_map__max_entries(skel->maps.events) >> 10);

	t0 = clock_mono_ns();
	err = profile_bpf__load(skel);
	if (!err)
		say_load_time(skel, clock_mono_ns() - t0);
	if ((err == -EPERM || err == -EACCES) && session__in_user_ns())
		return session__fail_user_ns(s, err);
	if ((err == -EPERM || err == -EACCES) && !have_bpf_caps())
		return session__fail(s, SESSION_ERR_ENV, err,
				     "permission denied loading BPF: profile needs root, or "
				     "CAP_BPF and CAP_PERFMON");
	if (err)
		return session__fail(s, SESSION_ERR_RUNTIME, err,
				     "cannot load the BPF programs: %s (run with -vv for details)",
				     strerror(-err));
	return 0;
}

void session__bpf_changed(struct session *s)
{
	__atomic_add_fetch(&s->skel->bss->procs_gen, 1, __ATOMIC_SEQ_CST);
}

uint32_t session__bpf_version(struct session *s)
{
	s->bpf_version = (s->bpf_version + 1) & ~PROFILE_BPF_VERSION;
	if (!s->bpf_version)
		s->bpf_version = 1;
	return s->bpf_version;
}

/* Profile PID: `pids` holds every profiled process; the first few also go into the program's
 * fast_pids[], which it checks without a map lookup (before attaching: no sample reads them
 * half written). */
int session__add_pid(struct session *s, pid_t pid)
{
	__u32 key = pid;
	__u8 one = 1;

	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.pids), &key, &one, BPF_ANY))
		return session__fail(s, SESSION_ERR_RUNTIME, -errno,
				     "cannot add pid %d to the BPF filter: %s", pid,
				     strerror(errno));
	if (s->nr_fast_pids < PROFILE_FAST_PIDS)
		s->skel->bss->fast_pids[s->nr_fast_pids++] = key;
	else
		s->skel->bss->pids_spill = true;
	return 0;
}

/* --- sampling --------------------------------------------------------------------------- */

/* Event EV (index I) on every CPU, or, a tracepoint, once: its program with its cookie.
 * Returns the CPUs attached (a tracepoint: all), or a negative errno with the error set. */
static int session__attach_event(struct session *s, unsigned int i)
{
	const struct event_spec *ev = &s->evs[i];
	struct perf_event_attr attr = {
		.type = ev->type,
		.size = sizeof(attr),
		.config = ev->config,
		.freq = 1,
		.sample_freq = session__event_rate(s, i),
	};
	LIBBPF_OPTS(bpf_perf_event_opts, popts, .bpf_cookie = event_cookie(s, i));
	LIBBPF_OPTS(bpf_tracepoint_opts, topts, .bpf_cookie = event_cookie(s, i));
	struct bpf_link **links = s->links + (size_t)i * s->nr_cpus;
	int *pfds = s->pfds + (size_t)i * s->nr_cpus;
	int attached = 0;

	/* -c N: a sample every N events. */
	if (s->opts.count) {
		attr.freq = 0;
		attr.sample_period = s->opts.count;
	}
	/* A tracepoint's program runs at its every hit, whichever CPU: attached once (the BPF
	 * program counts -c's N itself). */
	if (ev->kind == EVENT_TRACEPOINT) {
		links[0] = bpf_program__attach_tracepoint_opts(s->skel->progs.do_tracepoint,
							       ev->category, ev->event, &topts);
		if (!links[0])
			return session__fail(s, SESSION_ERR_RUNTIME, -errno,
					     "cannot attach to tracepoint %s: %s", ev->name,
					     strerror(errno));
		return s->nr_cpus;
	}
	for (int cpu = 0; cpu < s->nr_cpus; cpu++) {
		int fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		pfds[cpu] = fd;
		if (fd < 0) {
			int err = -errno;

			if (ev->kind == EVENT_HARDWARE &&
			    (err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV))
				return session__fail(s, SESSION_ERR_ENV, err,
						     "this machine has no hardware event '%s' "
						     "(its CPU shows perf no counters, as most "
						     "virtual machines'); software events and "
						     "tracepoints work: profile -e list",
						     ev->name);
			if (err == -ENODEV)	/* offline CPU */
				continue;
			if (err == -EINVAL && attr.freq)
				return session__fail(s, SESSION_ERR_USAGE, err,
						     "the kernel refuses %u Hz sampling (see "
						     "sysctl kernel.perf_event_max_sample_rate)",
						     (unsigned int)attr.sample_freq);
			if (err == -EACCES || err == -EPERM)
				return session__fail(s, SESSION_ERR_ENV, err,
						     "permission denied opening perf events: "
						     "profile needs root, or CAP_PERFMON");
			return session__fail(s, SESSION_ERR_RUNTIME, err,
					     "cannot open a %s event on CPU %d: %s", ev->name,
					     cpu, strerror(-err));
		}
		links[cpu] = bpf_program__attach_perf_event_opts(s->skel->progs.do_sample, fd,
								 &popts);
		if (!links[cpu])
			return session__fail(s, SESSION_ERR_RUNTIME, -errno,
					     "cannot attach to the perf event on CPU %d: %s", cpu,
					     strerror(errno));
		attached++;
	}
	return attached;
}

int session__attach(struct session *s)
{
	size_t slots = (size_t)s->nr_cpus * (s->nr_evs ? s->nr_evs : 1);
	int attached = 0;

	s->pfds = malloc(slots * sizeof(*s->pfds));
	s->links = calloc(slots, sizeof(*s->links));
	/* All -1 before the first open: after a failure at one CPU (or here), session__detach
	 * closes only what was opened. */
	for (size_t k = 0; s->pfds && k < slots; k++)
		s->pfds[k] = -1;
	if (!s->pfds || !s->links)
		return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	/* --off-cpu: the switch tracepoint only (the skeleton attaches it). */
	if (s->opts.off_cpu) {
		s->stats.nr_cpus = s->nr_cpus;
		return 0;
	}
	for (unsigned int i = 0; i < s->nr_evs; i++) {
		int n = session__attach_event(s, i);

		if (n < 0)
			return n;
		if (n > attached)
			attached = n;
	}
	s->stats.nr_cpus = attached;
	if (!attached)
		return session__fail(s, SESSION_ERR_RUNTIME, -ENODEV, "no CPU could be sampled");
	return 0;
}

/* The events of counted event I (software, hardware) that came after each CPU's last sample
 * (a sample weighs those before it, ev_counted): the kernel's count now, less the count at
 * that sample. Called before the events are closed. */
static uint64_t unsampled_events(struct session *s, unsigned int i)
{
	__u64 *last = calloc(s->nr_cpus, sizeof(*last));
	const int *pfds = s->pfds + (size_t)i * s->nr_cpus;
	uint64_t n = 0;
	__u32 key = i;

	if (!last || bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.ev_counted), &key, last)) {
		free(last);
		return 0;
	}
	for (int cpu = 0; cpu < s->nr_cpus; cpu++) {
		uint64_t count;

		if (pfds[cpu] >= 0 && read(pfds[cpu], &count, sizeof(count)) == sizeof(count) &&
		    count > last[cpu])
			n += count - last[cpu];
	}
	free(last);
	return n;
}

void session__detach(struct session *s)
{
	size_t slots = (size_t)s->nr_cpus * (s->nr_evs ? s->nr_evs : 1);

	for (unsigned int i = 0; s->skel && s->pfds && i < s->nr_evs; i++)
		if (s->evs[i].kind == EVENT_SOFTWARE || s->evs[i].kind == EVENT_HARDWARE)
			s->stats.ev_unsampled += unsampled_events(s, i);

	if (s->skel && s->skel->links.on_switch) {
		bpf_link__destroy(s->skel->links.on_switch);
		s->skel->links.on_switch = NULL;
	}

	for (size_t k = 0; s->links && k < slots; k++) {
		bpf_link__destroy(s->links[k]);
		s->links[k] = NULL;
	}
	for (size_t k = 0; s->pfds && k < slots; k++) {
		if (s->pfds[k] >= 0)
			close(s->pfds[k]);
		s->pfds[k] = -1;
	}
}

/* The first N slots of the per-CPU array MAP, each summed over the CPUs, into OUT (VALS:
 * room for a slot's values; a slot that cannot be read keeps what OUT had). */
static void sum_percpu(const struct session *s, struct bpf_map *map, __u32 n, __u64 *vals,
		       uint64_t *out)
{
	int fd = bpf_map__fd(map);

	for (__u32 k = 0; k < n; k++) {
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		out[k] = 0;
		for (int c = 0; c < s->nr_cpus; c++)
			out[k] += vals[c];
	}
}

void session__read_stats(struct session *s)
{
	__u64 *vals = calloc(s->nr_cpus, sizeof(*vals));

	if (!vals)
		return;
	sum_percpu(s, s->skel->maps.stats, STAT__MAX, vals, s->stats.bpf);
	/* PROFILE_BPF_TIMES: the programs' run times, bucketed; =parts: a sample's by part. */
	if (s->skel->rodata->time_runs)
		sum_percpu(s, s->skel->maps.btimes, PROFILE_TIME_SLOTS, vals, s->stats.bpf_times);
	if (s->skel->rodata->time_parts)
		sum_percpu(s, s->skel->maps.tparts, TPART__MAX, vals, s->stats.bpf_parts);
	free(vals);
}

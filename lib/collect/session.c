// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "dso/dso.h"
#include "dso/dsos.h"
#include "output/folded.h"
#include "base/log.h"
#include "proc/procmaps.h"
#include "collect/session.h"
#include "collect/ucounts.h"
#include "symbolize/symbolize.h"
#include "unwind/unwind.h"
#include "profile.skel.h"

#define MAP_SIZE_MIN	16384
#define MAP_SIZE_MAX	65536	/* derived sizes stop here; --map-size may go further */
#define MMAP_PAGES	64	/* per-CPU buffer for mmap records: 256 KiB */
#define TICK_IDLE_MS	250	/* ... and when none came for QUIET_TICKS: the first one
				 * that comes wakes the loop (wake_user) */
#define QUIET_TICKS	5
#define RING_MIN	(1u << 20)	/* DWARF sample ring buffer: see ring_size */
#define RING_MAX	(256u << 20)
#define TICK_MS		20	/* poll period: DWARF samples wait at most this long, so
				 * older frames read from the live process are still there */
#define USER_MAX_DEPTH	512	/* frames of a DWARF-unwound stack */
#define HINT_SLOTS	256	/* processes whose copy_hint is remembered here */
#define HINT_MARGIN	2048	/* bytes of stack copied past what unwinds have needed */
#define HINT_WINDOW	256	/* unwinds after which a copy_hint above their need comes down */

struct session {
	struct session_opts opts;
	struct profile_bpf *skel;
	int nr_cpus;
	int *pfds;			/* cpu-clock event per CPU, -1 where offline */
	struct bpf_link **links;
	struct perf_buffer *mmap_pb;
	struct ring_buffer *events;
	struct procmaps *maps;
	struct dsos *dsos;		/* every file mapped: shared by sym and unw */
	struct symbolizer *sym;
	struct unwinder *unw;
	struct ucounts *unwound;	/* samples unwound here */
	pid_t child;			/* the command, 0 when none */
	int nr_fast_pids;		/* of the BPF program's fast_pids[] */
	struct {			/* copy_hint set, by pid */
		pid_t pid;
		uint32_t bytes;		/* the copy_hint written for pid */
		uint32_t peak;		/* the most this window's unwinds needed */
		uint32_t n;		/* unwinds in this window */
	} hints[HINT_SLOTS];
	int go_fd;			/* write end: releases the held command */
	int exec_err_fd;		/* read end: errno of a failed exec, EOF on success */
	struct session_stats stats;
	char *err;
	enum session_err_kind err_kind;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static int session__fail(struct session *s, enum session_err_kind kind, int err,
			 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Record the error sentence; returns ERR (negative errno) for the caller to return. */
static int session__fail(struct session *s, enum session_err_kind kind, int err,
			 const char *fmt, ...)
{
	va_list ap;

	free(s->err);
	s->err = NULL;
	va_start(ap, fmt);
	if (vasprintf(&s->err, fmt, ap) < 0)
		s->err = NULL;
	va_end(ap);
	s->err_kind = kind;
	return err < 0 ? err : -EINVAL;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if ((level == LIBBPF_DEBUG && log_level < LOG_DEBUG) ||
	    (level == LIBBPF_INFO && log_level < LOG_INFO) || log_level < LOG_INFO)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Monotonic time: the vDSO reads it without a system call (the thread's CPU clock needs one,
 * which cost more than a fast unwind). */
static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A process is alive when /proc/PID/stat exists and it is not a zombie. */
static bool pid_alive(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* --- the command, held until sampling is attached --------------------------------------- */

static int start_held_command(struct session *s)
{
	int go[2], exec_err[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) || pipe2(exec_err, O_CLOEXEC))
		return session__fail(s, SESSION_ERR_RUNTIME, -errno, "cannot create a pipe: %s",
				     strerror(errno));
	pid = fork();
	if (pid < 0)
		return session__fail(s, SESSION_ERR_RUNTIME, -errno, "cannot fork: %s",
				     strerror(errno));
	if (pid == 0) {
		char c;
		int err;

		close(go[1]);
		close(exec_err[0]);
		/* Held: no instruction of the command runs before the parent says go. */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(s->opts.argv[0], s->opts.argv);
		err = errno;
		if (write(exec_err[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(exec_err[1]);
	s->child = pid;
	s->go_fd = go[1];
	s->exec_err_fd = exec_err[0];
	return 0;
}

/* Let the command run; returns 0 when it was executed, else the exec's error. */
static int release_command(struct session *s)
{
	char go = 1;
	int err = 0;
	ssize_t n;

	if (write(s->go_fd, &go, 1) != 1)
		return session__fail(s, SESSION_ERR_RUNTIME, -errno, "cannot start the command");
	close(s->go_fd);
	s->go_fd = -1;
	do
		n = read(s->exec_err_fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(s->exec_err_fd);
	s->exec_err_fd = -1;
	if (n == sizeof(err)) {
		waitpid(s->child, NULL, 0);
		s->child = 0;
		return session__fail(s, SESSION_ERR_TARGET, -err, "cannot execute '%s': %s",
				     s->opts.argv[0], strerror(err));
	}
	return 0;
}

/* --- loading ---------------------------------------------------------------------------- */

static unsigned int derived_map_size(const struct session_opts *o, int nr_cpus)
{
	double secs = o->duration > 0 ? o->duration : 30;
	double n = o->freq * secs * nr_cpus;

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
 * run's 69 MB.
 */
static uint32_t ring_size(const struct session_opts *o, int nr_cpus, uint32_t copy)
{
	double need = 0.05 * o->freq * nr_cpus * (copy + 256.0);
	uint32_t size = RING_MIN;

	while (size < RING_MAX && size < need)
		size <<= 1;
	return size;
}

static int check_targets(struct session *s)
{
	for (size_t i = 0; i < s->opts.nr_pids; i++) {
		pid_t pid = s->opts.pids[i];

		if (!pid_alive(pid))
			return session__fail(s, SESSION_ERR_TARGET, -ESRCH,
					     "no process with pid %d", pid);
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return session__fail(s, SESSION_ERR_ENV, -ENOENT,
				     "this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): "
				     "profile needs a kernel built with CONFIG_DEBUG_INFO_BTF");
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

/* Bytes of user stack a DWARF sample carries at most: --stack-copy, or the default. */
static uint32_t stack_copy_max(const struct session_opts *o)
{
	return o->stack_copy ? o->stack_copy : PROFILE_STACK_COPY;
}

static int load_bpf(struct session *s)
{
	const struct session_opts *o = &s->opts;
	struct profile_bpf *skel;
	unsigned int size = derived_map_size(o, s->nr_cpus);
	int err;

	skel = profile_bpf__open();
	if (!skel)
		return session__fail(s, SESSION_ERR_RUNTIME, -errno,
				     "cannot open the BPF programs: %s", strerror(errno));
	s->skel = skel;
	skel->rodata->filter_pids = !o->all;
	skel->rodata->include_idle = o->idle;
	skel->rodata->per_thread = o->threads;
	skel->rodata->user_stacks = !o->kernel_only;
	skel->rodata->kernel_stacks = !o->user_only;
	skel->rodata->follow_children = o->argv != NULL;
	skel->rodata->unwind_mode = o->unwind_mode;
	skel->rodata->stack_copy = stack_copy_max(o);
	bpf_map__set_max_entries(skel->maps.kstacks, size);
	bpf_map__set_max_entries(skel->maps.ustacks, size);
	bpf_map__set_max_entries(skel->maps.counts, size);
	bpf_map__set_max_entries(skel->maps.comms, size);
	bpf_map__set_max_entries(skel->maps.pids, 65536);
	bpf_map__set_max_entries(skel->maps.procs, 65536);
	bpf_map__set_max_entries(skel->maps.events,
				 ring_size(o, s->nr_cpus, skel->rodata->stack_copy));
	pr_debug("map size %u entries, ring buffer %u KiB", size,
		 bpf_map__max_entries(skel->maps.events) >> 10);

	err = profile_bpf__load(skel);
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

/* Profile PID: `pids` holds every profiled process; the first few also go into the program's
 * fast_pids[], which it checks without a map lookup (before attaching: no sample reads them
 * half written). */
static int add_pid(struct session *s, pid_t pid)
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

/* Merge the two closest neighbouring ranges of PR into one. */
static void merge_closest(struct proc_ranges *pr)
{
	uint64_t gap = UINT64_MAX;
	uint32_t i, best = 0;

	for (i = 0; i + 1 < pr->nr_exec; i++) {
		if (pr->exec_start[i + 1] - pr->exec_end[i] < gap) {
			gap = pr->exec_start[i + 1] - pr->exec_end[i];
			best = i;
		}
	}
	pr->exec_end[best] = pr->exec_end[best + 1];
	for (i = best + 1; i + 1 < pr->nr_exec; i++) {
		pr->exec_start[i] = pr->exec_start[i + 1];
		pr->exec_end[i] = pr->exec_end[i + 1];
	}
	pr->nr_exec--;
}

/* Add [START, END) to the executable ranges of PR, kept sorted; with every slot taken, the
 * two closest neighbours merge (the ranges only filter candidate return addresses). */
static void add_exec_range(struct proc_ranges *pr, uint64_t start, uint64_t end)
{
	uint32_t i;

	if (pr->nr_exec > PROFILE_MAX_EXEC)
		pr->nr_exec = 0;
	for (i = 0; i < pr->nr_exec; i++)
		if (start < pr->exec_end[i] && end > pr->exec_start[i])
			return;	/* known, or inside a merged range */
	if (pr->nr_exec == PROFILE_MAX_EXEC)
		merge_closest(pr);
	for (i = pr->nr_exec; i > 0 && pr->exec_start[i - 1] > start; i--) {
		pr->exec_start[i] = pr->exec_start[i - 1];
		pr->exec_end[i] = pr->exec_end[i - 1];
	}
	pr->exec_start[i] = start;
	pr->exec_end[i] = end;
	pr->nr_exec++;
}

/*
 * Functions of the C library where a thread's stack begins: __libc_start_call_main for the
 * main thread, start_thread for the others. glibc leaves a non-zero rbp in them (it uses rbp
 * as a general register), so a frame-pointer walk never ends at rbp == 0 on Debian: a walk
 * whose outermost frame is one of them reached the bottom all the same. BPF gets their
 * runtime ranges per process; userspace trims frames outside them.
 */
static const char *const stack_bottoms[] = { "__libc_start_call_main", "start_thread" };
#define NR_STACK_BOTTOMS (sizeof(stack_bottoms) / sizeof(stack_bottoms[0]))

/* Runtime ranges of a C library's stack-bottom functions (__libc_start_call_main for the
 * main thread, start_thread for the others). */
static void add_bottoms(struct session *s, pid_t pid, const struct map *m, struct proc_ranges *pr)
{
	struct dso *elf;
	uint64_t start, end, rt;
	int n = 0;

	elf = dsos__get(s->dsos, pid, m, NULL);
	if (!elf)
		return;
	for (size_t i = 0; i < NR_STACK_BOTTOMS && n < PROFILE_MAX_BOTTOMS; i++) {
		if (dso__find_range(elf, stack_bottoms[i], &start, &end) ||
		    dso__vaddr_to_runtime(elf, m, start, &rt))
			continue;
		pr->bottom_start[n] = rt;
		pr->bottom_end[n] = rt + (end - start);
		n++;
	}
}

/* Write PID's `procs` entry PR (FLAGS: BPF_ANY, BPF_EXIST), then bump the generation that
 * tells the CPUs holding a copy of an older one to read it again. */
static int update_proc(struct session *s, pid_t pid, const struct proc_ranges *pr, __u64 flags)
{
	__u32 key = pid;

	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.procs), &key, pr, flags))
		return -errno;
	__atomic_add_fetch(&s->skel->bss->procs_gen, 1, __ATOMIC_SEQ_CST);
	return 0;
}

/*
 * A mapping was added: tell BPF the process's executable ranges and, for a C library, where
 * its stacks begin, so that frame-pointer walks ending there count as complete without
 * DWARF.
 */
static void on_map_added(void *ctx, pid_t pid, const struct map *m)
{
	struct session *s = ctx;
	int fd = bpf_map__fd(s->skel->maps.procs);
	const char *base = strrchr(m->path, '/');
	struct proc_ranges pr;
	__u32 key = pid;

	if (bpf_map_lookup_elem(fd, &key, &pr))
		memset(&pr, 0, sizeof(pr));
	add_exec_range(&pr, m->start, m->end);
	if (base && !strncmp(base + 1, "libc.so", 7))
		add_bottoms(s, pid, m, &pr);
	update_proc(s, pid, &pr, BPF_ANY);
}

struct session *session__open(const struct session_opts *opts, char **errmsg,
			      enum session_err_kind *kind)
{
	struct session *s = calloc(1, sizeof(*s));
	int err;

	if (!s) {
		if (errmsg)
			*errmsg = strdup("out of memory");
		if (kind)
			*kind = SESSION_ERR_RUNTIME;
		return NULL;
	}
	s->opts = *opts;
	s->go_fd = s->exec_err_fd = -1;
	s->stats.cmd_status = -1;
	libbpf_set_print(libbpf_print);

	s->nr_cpus = libbpf_num_possible_cpus();
	if (s->nr_cpus <= 0) {
		err = session__fail(s, SESSION_ERR_RUNTIME, s->nr_cpus, "cannot count the CPUs");
		goto fail;
	}
	s->maps = procmaps__new();
	s->dsos = dsos__new();
	s->sym = symbolizer__new(s->maps, s->dsos, (opts->no_inline ? 0 : SYMBOLIZE_INLINE) |
					  (opts->no_demangle ? 0 : SYMBOLIZE_DEMANGLE));
	s->unw = unwinder__new(s->maps, s->dsos);
	s->unwound = ucounts__new();
	if (!s->maps || !s->dsos || !s->sym || !s->unw || !s->unwound) {
		err = session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
		goto fail;
	}
	err = check_targets(s);
	if (err)
		goto fail;
	err = load_bpf(s);
	if (err)
		goto fail;
	procmaps__set_add_hook(s->maps, on_map_added, s);
	for (size_t i = 0; i < opts->nr_pids; i++) {
		err = add_pid(s, opts->pids[i]);
		if (err)
			goto fail;
	}
	if (opts->argv) {
		err = start_held_command(s);
		if (err)
			goto fail;
		err = add_pid(s, s->child);
		if (err)
			goto fail;
	}
	return s;
fail:
	if (errmsg)
		*errmsg = s->err ? strdup(s->err) : strdup("cannot start profiling");
	if (kind)
		*kind = s->err_kind ? s->err_kind : SESSION_ERR_RUNTIME;
	session__free(s);
	return NULL;
}

/* --- sampling --------------------------------------------------------------------------- */

/* PERF_RECORD_MMAP2 as the kernel writes it (without the build-id variant). */
struct mmap2_record {
	struct perf_event_header header;
	__u32 pid, tid;
	__u64 addr, len, pgoff;
	__u32 maj, min;
	__u64 ino, ino_generation;
	__u32 prot, flags;
	char filename[];
};

struct fork_record {
	struct perf_event_header header;
	__u32 pid, ppid, tid, ptid;
	__u64 time;
};

struct lost_record {
	struct perf_event_header header;
	__u64 id, lost;
};

static enum bpf_perf_event_ret on_mmap_record(void *ctx, int cpu, struct perf_event_header *h)
{
	struct session *s = ctx;
	(void)cpu;

	if (h->type == PERF_RECORD_LOST) {
		s->stats.mmap_lost += ((struct lost_record *)h)->lost;
	} else if (h->type == PERF_RECORD_FORK && h->size >= sizeof(struct fork_record)) {
		struct fork_record *r = (struct fork_record *)h;

		/* A new process starts with its parent's mappings: no mmap records for those. */
		if (r->pid != r->ppid && r->pid == r->tid && procmaps__fork(s->maps, r->ppid, r->pid))
			pr_warn("out of memory recording mappings of pid %u", r->pid);
	} else if (h->type == PERF_RECORD_MMAP2 && h->size > sizeof(struct mmap2_record)) {
		struct mmap2_record *r = (struct mmap2_record *)h;
		size_t max = h->size - sizeof(*r);
		__u32 key = r->pid;
		__u8 v;
		struct map m = {
			.start = r->addr,
			.end = r->addr + r->len,
			.pgoff = r->pgoff,
			.ino = r->ino,
			.dev = makedev(r->maj, r->min),
		};

		if (!s->opts.all &&
		    bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.pids), &key, &v))
			return LIBBPF_PERF_EVENT_CONT;
		if (!memchr(r->filename, '\0', max))
			return LIBBPF_PERF_EVENT_CONT;
		m.path = r->filename;
		if (procmaps__add(s->maps, r->pid, &m))
			pr_warn("out of memory recording mappings of pid %u", r->pid);
	}
	return LIBBPF_PERF_EVENT_CONT;
}

/* mmap records of every process, from now on: new executables and libraries are known even
 * when their process exits before the profile ends. */
static int open_mmap_events(struct session *s)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.mmap = 1,
		.mmap2 = 1,
		.task = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	s->mmap_pb = perf_buffer__new_raw(bpf_map__fd(s->skel->maps.mmap_events), MMAP_PAGES,
					  &attr, on_mmap_record, s, NULL);
	if (!s->mmap_pb)
		return session__fail(s, SESSION_ERR_RUNTIME, -errno,
				     "cannot open mmap events: %s", strerror(errno));
	return 0;
}

/*
 * A DWARF unwind of PID read USED bytes of stack from sp (STOP: how it ended). Make the
 * process's samples carry that much stack plus a margin, not the whole --stack-copy: the
 * copy is most of a DWARF sample's cost. A deeper stack raises the copy at once (it was read
 * past the copy from the live process this time); an unwind that ran out of stack memory
 * restores the whole copy. The copy comes down again after HINT_WINDOW unwinds that all
 * needed less: a deep phase (the dynamic linker's start-up, say) does not cost the rest of
 * the run.
 */
static void learn_copy_size(struct session *s, pid_t pid, size_t used, enum unwind_stop stop)
{
	uint32_t max = stack_copy_max(&s->opts), need, want;
	int fd = bpf_map__fd(s->skel->maps.procs);
	__typeof__(s->hints[0]) *h = &s->hints[(uint32_t)pid % HINT_SLOTS];
	struct proc_ranges pr;
	__u32 key = pid;

	need = stop == UNWIND_STOP_NO_MEMORY ? max : (uint32_t)((used + HINT_MARGIN + 1023) & ~1023ul);
	if (need > max)
		need = max;
	if (h->pid != pid)
		*h = (__typeof__(*h)){ .pid = pid };
	if (need > h->peak)
		h->peak = need;
	want = h->bytes;
	if (need > h->bytes)
		want = need;
	else if (++h->n >= HINT_WINDOW) {
		want = h->peak;
		h->n = 0;
		h->peak = 0;
	}
	if (want == h->bytes)
		return;
	if (bpf_map_lookup_elem(fd, &key, &pr))
		return;
	pr.copy_hint = want;
	if (update_proc(s, pid, &pr, BPF_EXIST))
		return;
	h->bytes = want;
}

/* A sample whose user stack BPF could not complete: unwind it with DWARF now, while the
 * process still runs (older frames past the copy are read from it). */
static int on_sample_event(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	const struct sample_event *e = data;
	size_t hdr = offsetof(struct sample_event, stack);
	uint64_t ips[USER_MAX_DEPTH];
	struct count_key key = { 0 };
	struct unwind_sample us;
	enum unwind_stop stop;
	uint64_t t0;
	int n;

	if (size < hdr || e->stack_len > size - hdr || e->nr_frames > PROFILE_MAX_DEPTH)
		return 0;
	/* mmap records of a process that just started may still wait in their buffer. */
	if (!procmaps__find(s->maps, e->pid, e->ip))
		perf_buffer__consume(s->mmap_pb);
	procmaps__ensure(s->maps, e->pid);
	us = (struct unwind_sample){
		.pid = e->pid, .ip = e->ip, .sp = e->sp, .bp = e->bp,
		.stack = e->stack, .stack_len = e->stack_len,
	};
	t0 = mono_ns();
	n = unwinder__unwind(s->unw, &us, ips, USER_MAX_DEPTH, &stop);
	s->stats.unwind_ns += mono_ns() - t0;
	s->stats.unwind_frames += n;
	s->stats.copy_bytes += e->stack_len;
	s->stats.dwarf++;
	s->stats.unwind_stop[stop]++;
	learn_copy_size(s, e->pid, unwinder__stack_used(s->unw), stop);
	/* No unwind info even at the leaf (code without CFI, JIT code): the frames the
	 * frame-pointer walk found are the better stack; still truncated unless they reach a
	 * stack bottom, which the fold checks by name. */
	if (n == 1 && stop != UNWIND_STOP_END && e->nr_frames > 1) {
		n = e->nr_frames;
		memcpy(ips, e->frames, n * sizeof(*ips));
	}
	key.pid = e->pid;
	key.tid = s->opts.threads ? e->tid : 0;
	key.kstack_id = e->kstack_id;
	if (stop != UNWIND_STOP_END)
		key.flags |= COUNT_F_USER_TRUNCATED;
	if (ucounts__add(s->unwound, &key, ips, n))
		return -ENOMEM;
	return 0;
}

static int open_events(struct session *s)
{
	s->events = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_sample_event, s, NULL);
	if (!s->events)
		return session__fail(s, SESSION_ERR_RUNTIME, -errno,
				     "cannot open the sample ring buffer: %s", strerror(errno));
	return 0;
}

static int attach_sampling(struct session *s)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = s->opts.freq,
	};
	int attached = 0;

	s->pfds = malloc(s->nr_cpus * sizeof(*s->pfds));
	s->links = calloc(s->nr_cpus, sizeof(*s->links));
	if (!s->pfds || !s->links)
		return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	for (int cpu = 0; cpu < s->nr_cpus; cpu++) {
		int fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		s->pfds[cpu] = fd;
		if (fd < 0) {
			int err = -errno;

			if (err == -ENODEV)	/* offline CPU */
				continue;
			if (err == -EINVAL)
				return session__fail(s, SESSION_ERR_USAGE, err,
						     "the kernel refuses %u Hz sampling (see "
						     "sysctl kernel.perf_event_max_sample_rate)",
						     s->opts.freq);
			if (err == -EACCES || err == -EPERM)
				return session__fail(s, SESSION_ERR_ENV, err,
						     "permission denied opening perf events: "
						     "profile needs root, or CAP_PERFMON");
			return session__fail(s, SESSION_ERR_RUNTIME, err,
					     "cannot open a cpu-clock event on CPU %d: %s", cpu,
					     strerror(-err));
		}
		s->links[cpu] = bpf_program__attach_perf_event(s->skel->progs.do_sample, fd);
		if (!s->links[cpu])
			return session__fail(s, SESSION_ERR_RUNTIME, -errno,
					     "cannot attach to the perf event on CPU %d: %s", cpu,
					     strerror(errno));
		attached++;
	}
	s->stats.nr_cpus = attached;
	if (!attached)
		return session__fail(s, SESSION_ERR_RUNTIME, -ENODEV, "no CPU could be sampled");
	return 0;
}

static void detach_sampling(struct session *s)
{
	for (int cpu = 0; s->links && cpu < s->nr_cpus; cpu++) {
		bpf_link__destroy(s->links[cpu]);
		s->links[cpu] = NULL;
	}
	for (int cpu = 0; s->pfds && cpu < s->nr_cpus; cpu++) {
		if (s->pfds[cpu] >= 0)
			close(s->pfds[cpu]);
		s->pfds[cpu] = -1;
	}
}

static void read_stats(struct session *s)
{
	int fd = bpf_map__fd(s->skel->maps.stats);
	__u64 *vals = calloc(s->nr_cpus, sizeof(*vals));

	if (!vals)
		return;
	for (__u32 k = 0; k < STAT__MAX; k++) {
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		s->stats.bpf[k] = 0;
		for (int c = 0; c < s->nr_cpus; c++)
			s->stats.bpf[k] += vals[c];
	}
	free(vals);
}

/* "elapsed, samples, lost" on one terminal line, rewritten in place. */
static void show_status(struct session *s, double elapsed)
{
	uint64_t lost;

	read_stats(s);
	lost = s->stats.bpf[STAT_COUNTS_FULL] + s->stats.bpf[STAT_EVENTS_LOST] + s->stats.mmap_lost;
	fprintf(stderr, "\rprofile: %.0f s, %llu samples, %llu lost, %llu DWARF-unwound\033[K",
		elapsed, (unsigned long long)s->stats.bpf[STAT_SAMPLES], (unsigned long long)lost,
		(unsigned long long)s->stats.dwarf);
}

/* Whether the targets are still there: the command, or any of the pids. */
static bool targets_alive(struct session *s)
{
	if (s->child) {
		int status;
		pid_t r = waitpid(s->child, &status, WNOHANG);

		if (r == s->child) {
			s->stats.cmd_status = status;
			s->child = 0;
			return false;
		}
		return true;
	}
	if (s->opts.all || !s->opts.nr_pids)
		return true;
	for (size_t i = 0; i < s->opts.nr_pids; i++)
		if (pid_alive(s->opts.pids[i]))
			return true;
	return false;
}

int session__run(struct session *s)
{
	struct sigaction sa = { .sa_handler = on_signal };
	double start, deadline, next_status;
	bool prepared;
	int quiet;
	int err;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	err = open_mmap_events(s);
	if (!err)
		err = open_events(s);
	if (err)
		return err;
	/* Mappings that exist already; later ones arrive as mmap records. */
	if (s->opts.all)
		procmaps__load_all(s->maps);
	for (size_t i = 0; i < s->opts.nr_pids; i++)
		procmaps__load(s->maps, s->opts.pids[i]);

	err = attach_sampling(s);
	if (!err)
		err = profile_bpf__attach(s->skel);
	if (err) {
		if (!s->err)
			session__fail(s, SESSION_ERR_RUNTIME, err, "cannot attach: %s",
				      strerror(-err));
		goto out;
	}
	start = now_seconds();
	deadline = s->opts.duration > 0 ? start + s->opts.duration : 0;
	if (s->child) {
		err = release_command(s);
		if (err)
			goto out;
	}
	next_status = start + 1;
	prepared = false;
	quiet = 0;
	while (!stop_signal) {
		int tick = TICK_MS, n = 0;
		double now;

		/* Half a second in, the symbolizer reads what it will need at the end. */
		if (!prepared && now_seconds() >= start + 0.5) {
			symbolizer__prepare(s->sym, !s->opts.user_only);
			prepared = true;
		}
		if (s->opts.status_line && now_seconds() >= next_status) {
			show_status(s, now_seconds() - start);
			next_status += 1;
		}
		err = perf_buffer__consume(s->mmap_pb);
		/* The wait: records come without wakeups (see send_event), and on a timeout
		 * ring_buffer__poll reads nothing, so consume after it. With no records for a
		 * while (a program with frame pointers), sleep longer: waking up costs the
		 * profiled programs a context switch on a busy machine. */
		if (quiet >= QUIET_TICKS) {
			tick = TICK_IDLE_MS;
			now = now_seconds();
			if (deadline && (deadline - now) * 1000 < tick)
				tick = (int)((deadline - now) * 1000) + 1;
			if (s->opts.status_line && (next_status - now) * 1000 < tick)
				tick = (int)((next_status - now) * 1000) + 1;
			if (tick < TICK_MS)
				tick = TICK_MS;
		}
		s->skel->bss->wake_user = tick > TICK_MS;
		if (err >= 0)
			err = n = ring_buffer__poll(s->events, tick);
		if (err >= 0)
			err = ring_buffer__consume(s->events);
		if (err > 0)
			n += err;
		quiet = n > 0 ? 0 : quiet + 1;
		if (err < 0 && err != -EINTR) {
			session__fail(s, SESSION_ERR_RUNTIME, err, "cannot read events: %s",
				      strerror(-err));
			goto out;
		}
		if (deadline && now_seconds() >= deadline)
			break;
		if (!targets_alive(s))
			break;
	}
	err = 0;
	if (s->opts.status_line)
		fputs("\r\033[K", stderr);
	if (stop_signal)
		pr_info("stopping on signal %d", stop_signal);
	s->stats.seconds = now_seconds() - start;
out:
	detach_sampling(s);
	if (s->mmap_pb)
		perf_buffer__consume(s->mmap_pb);
	if (s->events)
		ring_buffer__consume(s->events);
	if (s->child) {
		/* The profile is over (duration or signal): so is the command it started. */
		int status;

		kill(s->child, SIGTERM);
		if (waitpid(s->child, &status, 0) == s->child)
			s->stats.cmd_status = status;
		s->child = 0;
	}
	return err;
}

/* --- collecting ------------------------------------------------------------------------- */

static const char *comm_of(struct session *s, __u32 id, char *buf)
{
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.comms), &id, buf) == 0) {
		buf[PROFILE_COMM_LEN - 1] = '\0';
		if (buf[0])
			return buf;
	}
	return "[unknown]";
}

static bool is_stack_bottom(const char *name)
{
	for (size_t i = 0; i < NR_STACK_BOTTOMS; i++)
		if (!strcmp(name, stack_bottoms[i]))
			return true;
	return false;
}

/*
 * A frame-pointer walk starts at rbp and so skips the caller of a leaf that keeps no frame.
 * When BPF kept words at sp that may be that return address, ask the leaf's CFI: if it puts
 * the return address there and the walk does not have it already, put it in IPS (which has
 * room for NU + 1 frames). Returns the new number of frames.
 */
static int add_leaf_caller(struct session *s, const struct count_key *key, const __u64 *words,
			   uint64_t *ips, int nu)
{
	struct unwind_sample us = {
		.pid = key->pid, .ip = ips[0], .sp = 0x100000, .bp = 0,
		.stack = words, .stack_len = 2 * sizeof(*words),
	};
	uint64_t ret;

	if (nu < 1 || (!words[0] && !words[1]))
		return nu;
	/* Only the words matter: the CFI at ip says at which offset from sp the return address
	 * is; rbp-based rules read outside the copy and fail, as they should. */
	if (unwinder__leaf_return(s->unw, &us, &ret) || !ret || (nu > 1 && ips[1] == ret))
		return nu;
	memmove(&ips[2], &ips[1], (nu - 1) * sizeof(*ips));
	ips[1] = ret;
	return nu + 1;
}

static int fold_key(struct session *s, struct symbolizer *sym, const struct count_key *key,
		    const uint64_t *ips, int nu, char **buf, size_t *len, size_t *cap,
		    bool *truncated)
{
	char comm[PROFILE_COMM_LEN], tcomm[PROFILE_COMM_LEN], tframe[PROFILE_COMM_LEN + 16];
	/* Frames of every address, root first within an address: first[i] is where address
	 * i's frames start in names[], nframes[i] how many. */
	static const char *names[USER_MAX_DEPTH * 4];
	static int first[USER_MAX_DEPTH], nframes[USER_MAX_DEPTH];
	__u64 kips[PROFILE_MAX_DEPTH];
	int err, n, used = 0;

	if (nu > USER_MAX_DEPTH)
		nu = USER_MAX_DEPTH;
	if (nu)
		procmaps__ensure(s->maps, key->pid);
	for (int i = 0; i < nu; i++) {
		int room = (int)(sizeof(names) / sizeof(names[0])) - used;

		first[i] = used;
		nframes[i] = symbolizer__user_frames(sym, key->pid, ips[i], i > 0, &names[used],
						     room > 0 ? room : 0);
		used += nframes[i];
		/* Frames outside the stack-bottom function (_start, __libc_start_main, clone3) are
		 * dropped, so that DWARF- and frame-pointer-unwound stacks share one root. */
		if (i > 0 && nframes[i] && is_stack_bottom(names[first[i]])) {
			nu = i + 1;
			break;
		}
	}
	*truncated = (key->flags & COUNT_F_USER_TRUNCATED) &&
		     !(nu > 0 && nframes[nu - 1] && is_stack_bottom(names[first[nu - 1]]));

	*len = 0;
	err = folded__push_frame(buf, len, cap, comm_of(s, key->pid, comm), NULL);
	if (!err && s->opts.threads && key->tid) {
		snprintf(tframe, sizeof(tframe), "%s/%u", comm_of(s, key->tid, tcomm), key->tid);
		err = folded__push_frame(buf, len, cap, tframe, NULL);
	}
	if (!err && *truncated)
		err = folded__push_frame(buf, len, cap, "[truncated]", NULL);
	for (int i = nu - 1; i >= 0 && !err; i--)
		for (int j = 0; j < nframes[i] && !err; j++)
			err = folded__push_frame(buf, len, cap, names[first[i] + j], NULL);
	if (!err && key->kstack_id >= 0 &&
	    bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.kstacks), &key->kstack_id, kips) == 0) {
		for (n = 0; n < PROFILE_MAX_DEPTH && kips[n]; n++)
			;
		for (int i = n - 1; i >= 0 && !err; i--)
			err = folded__push_frame(buf, len, cap,
						 symbolizer__kernel(sym, kips[i], i > 0), "_[k]");
	}
	return err;
}

static int collect_stack(struct session *s, const struct count_key *key, const uint64_t *ips,
			 int nr, uint64_t count, struct folded *out, char **buf, size_t *len,
			 size_t *cap)
{
	bool truncated;
	int err;

	err = fold_key(s, s->sym, key, ips, nr, buf, len, cap, &truncated);
	if (!err)
		err = folded__add(out, *buf, count);
	if (err)
		return session__fail(s, SESSION_ERR_RUNTIME, err, "out of memory");
	s->stats.samples += count;
	if (truncated)
		s->stats.truncated += count;
	return 0;
}

/* The samples of KEY (COUNT of them) into OUT. */
static int collect_key(struct session *s, const struct count_key *key, uint64_t count,
		       struct folded *out, char **buf, size_t *len, size_t *cap)
{
	uint64_t ips[PROFILE_MAX_DEPTH + 1];
	struct ustack us;
	int nr = 0;

	if (key->ustack_hash &&
	    bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.ustacks), &key->ustack_hash, &us) == 0) {
		nr = us.nr < PROFILE_MAX_DEPTH ? (int)us.nr : PROFILE_MAX_DEPTH;
		memcpy(ips, us.ips, nr * sizeof(*ips));
		procmaps__ensure(s->maps, key->pid);
		nr = add_leaf_caller(s, key, us.sp_words, ips, nr);
	}
	return collect_stack(s, key, ips, nr, count, out, buf, len, cap);
}

/*
 * Move what the per-CPU `cached` tables still hold into `counts` (sampling has stopped). A
 * key that no longer fits there goes straight into OUT.
 */
static int drain_slots(struct session *s, struct folded *out, char **buf, size_t *len,
		       size_t *cap)
{
	int sfd = bpf_map__fd(s->skel->maps.cached), cfd = bpf_map__fd(s->skel->maps.counts);
	struct count_slots *tables = calloc(s->nr_cpus, sizeof(*tables));
	__u32 zero = 0;
	int err = 0;

	if (!tables)
		return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	if (bpf_map_lookup_elem(sfd, &zero, tables)) {
		free(tables);
		return session__fail(s, SESSION_ERR_RUNTIME, -errno,
				     "cannot read the sample cache: %s", strerror(errno));
	}
	for (int c = 0; !err && c < s->nr_cpus; c++) {
		for (int i = 0; !err && i < PROFILE_CACHE_SLOTS; i++) {
			struct count_slot *sl = &tables[c].s[i];
			__u64 count;

			if (!sl->count)
				continue;
			if (bpf_map_lookup_elem(cfd, &sl->key, &count) == 0)
				count += sl->count;
			else
				count = sl->count;
			if (bpf_map_update_elem(cfd, &sl->key, &count, BPF_ANY))
				err = collect_key(s, &sl->key, sl->count, out, buf, len, cap);
		}
	}
	/* Emptied: a second collection does not count them again. */
	memset(tables, 0, s->nr_cpus * sizeof(*tables));
	if (!err && bpf_map_update_elem(sfd, &zero, tables, BPF_ANY))
		err = session__fail(s, SESSION_ERR_RUNTIME, -errno,
				    "cannot empty the sample cache: %s", strerror(errno));
	free(tables);
	return err;
}

int session__collect(struct session *s, struct folded *out)
{
	int fd = bpf_map__fd(s->skel->maps.counts);
	const struct ucount *e;
	struct count_key key, next;
	char *buf = NULL;
	size_t len = 0, cap = 0, pos = 0;
	void *prev = NULL;
	int err;

	read_stats(s);
	err = drain_slots(s, out, &buf, &len, &cap);
	while (!err && bpf_map_get_next_key(fd, prev, &next) == 0) {
		__u64 count;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &count))
			continue;
		err = collect_key(s, &key, count, out, &buf, &len, &cap);
	}
	while (!err && (e = ucounts__next(s->unwound, &pos)))
		err = collect_stack(s, &e->key, e->ips, e->nr, e->count, out, &buf, &len, &cap);
	free(buf);
	return err;
}

const char *session__error(const struct session *s, enum session_err_kind *kind)
{
	if (kind)
		*kind = s->err_kind;
	return s->err;
}

const struct session_stats *session__stats(struct session *s)
{
	if (s->unw) {
		const struct unwind_counts *c = unwinder__counts(s->unw);

		s->stats.unwind_fast = c->fast;
		s->stats.unwind_mismatches = c->mismatches;
	}
	return &s->stats;
}

void session__free(struct session *s)
{
	if (!s)
		return;
	detach_sampling(s);
	perf_buffer__free(s->mmap_pb);
	if (s->child) {
		/* Never released (an error before run): it must not run on its own. */
		kill(s->child, SIGKILL);
		waitpid(s->child, NULL, 0);
	}
	if (s->go_fd >= 0)
		close(s->go_fd);
	if (s->exec_err_fd >= 0)
		close(s->exec_err_fd);
	ring_buffer__free(s->events);
	profile_bpf__destroy(s->skel);
	unwinder__free(s->unw);
	symbolizer__free(s->sym);
	ucounts__free(s->unwound);
	dsos__free(s->dsos);
	procmaps__free(s->maps);
	free(s->links);
	free(s->pfds);
	free(s->err);
	free(s);
}

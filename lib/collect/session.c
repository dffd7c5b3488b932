// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/session: one profiling run from open to free: the targets checked, the BPF side
 * loaded, the command held; then the poll loop (side-band records, DWARF samples, the status
 * line) until the duration ends, a signal arrives or the targets exit. session_int.h says
 * which file of lib/collect/ does the rest.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "dso/dsos.h"
#include "base/clock.h"
#include "base/log.h"
#include "collect/explain.h"
#include "collect/fixup.h"
#include "collect/session_int.h"
#include "collect/ucounts.h"
#include "proc/cgroup.h"
#include "proc/procfile.h"
#include "proc/procmaps.h"
#include "sandbox/symbolizer.h"
#include "unwind/unwind.h"
#include "profile.skel.h"

#define TICK_MS		20	/* poll period: DWARF samples wait at most this long, so
				 * older frames read from the live process are still there */
#define TICK_IDLE_MS	250	/* ... and when none came for QUIET_TICKS: the first one
				 * that comes wakes the loop (wake_user) */
#define QUIET_TICKS	5

int session__fail(struct session *s, enum session_err_kind kind, int err, const char *fmt, ...)
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

/* --- targets ---------------------------------------------------------------------------- */

/* A process is alive when /proc/PID/stat exists and it is not a zombie. */
static bool pid_alive(pid_t pid)
{
	char buf[512], *p;

	if (proc__read(pid, "stat", buf, sizeof(buf)) < 0)
		return false;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static int check_pids(struct session *s)
{
	for (size_t i = 0; i < s->opts.nr_pids; i++) {
		pid_t pid = s->opts.pids[i];

		if (!pid_alive(pid))
			return session__fail(s, SESSION_ERR_TARGET, -ESRCH,
					     "no process with pid %d", pid);
	}
	return 0;
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
			session__signals_command(0);
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

/* --- open ------------------------------------------------------------------------------- */


/* --cgroup's paths to ids, and where cgroup v2 is for them and --group-by cgroup. */
static int resolve_cgroups(struct session *s)
{
	const struct session_opts *o = &s->opts;

	if (!o->nr_cgroups && !o->group_cgroup)
		return 0;
	if (cgroup__root(s->cgroot, sizeof(s->cgroot)))
		return session__fail(s, SESSION_ERR_ENV, -ENOENT, "cgroup v2 is not mounted "
				     "(not at /sys/fs/cgroup, nor /sys/fs/cgroup/unified)");
	for (size_t i = 0; i < o->nr_cgroups && i < PROFILE_MAX_CGROUPS; i++) {
		int err = cgroup__id(s->cgroot, o->cgroups[i], &s->cgroup_ids[i]);

		if (err)
			return session__fail(s, SESSION_ERR_TARGET, err, "no cgroup '%s' (cgroup "
					     "v2: a path under %s, or relative to it)",
					     o->cgroups[i], s->cgroot);
	}
	return 0;
}

/* The unwind table of the file of mapping M of PID, from the symbolizer's worker: while
 * sampling asked for and not waited for (*LATER: the samples that need it wait in a queue),
 * waited for when a period or the run ends. */
static const struct utab *session__table(void *ctx, pid_t pid, const struct map *m,
					 bool *later)
{
	struct session *s = ctx;
	bool ready;
	const struct utab *t = symbolizer__table(s->sym, pid, m, s->tables_wait, &ready);

	*later = !ready;
	return t;
}

static int session__start(struct session *s)
{
	const struct session_opts *opts = &s->opts;
	int err;

	s->nr_cpus = libbpf_num_possible_cpus();
	if (s->nr_cpus <= 0)
		return session__fail(s, SESSION_ERR_RUNTIME, s->nr_cpus, "cannot count the CPUs");
	s->maps = procmaps__new();
	s->dsos = dsos__new();
	/* Files are read by the sandboxed worker only (PROFILE_UNWIND_CHECK's libunwind reads
	 * them here, to check). */
	if (s->dsos && !getenv("PROFILE_UNWIND_CHECK"))
		dsos__set_closed(s->dsos, true);
	/* In a user namespace BPF cannot be loaded: said before the worker starts, whose
	 * change of user fails there too (its own line, before this one, at times: CI). */
	if (session__in_user_ns())
		return session__fail_user_ns(s, -EPERM);
	/* The symbolizer's worker first, before any BPF or perf descriptor exists (it is handed
	 * none but its socket anyway). */
	if (s->maps && s->dsos) {
		s->sym = symbolizer__new(s->maps, s->dsos,
					 (opts->no_inline ? 0 : SYMBOLIZE_INLINE) |
					 (opts->no_demangle ? 0 : SYMBOLIZE_DEMANGLE) |
					 (opts->lines ? SYMBOLIZE_LINES : 0));
		if (!s->sym && errno == EINVAL)
			return session__fail(s, SESSION_ERR_USAGE, -EINVAL, "%s: expected UID[:GID] "
					     "of a user other than root", SANDBOX_USER_ENV);
		if (s->sym && !opts->no_debuginfod)
			symbolizer__debuginfod(s->sym, opts->debuginfod_timeout ?
					       opts->debuginfod_timeout : DEBUGINFOD_TIMEOUT_S);
	}
	s->unw = unwinder__new(s->maps, s->dsos);
	if (s->unw) {
		unwinder__set_bottoms(s->unw, fixup_stack_bottoms, FIXUP_NR_STACK_BOTTOMS);
		/* The files' CFI is read by the sandboxed worker, not here. */
		if (s->sym)
			unwinder__set_table_source(s->unw, session__table, s);
	}
	s->unwound = ucounts__new();
	if (opts->explain)
		s->explain = explain__new();
	if (!s->maps || !s->dsos || !s->sym || !s->unw || !s->unwound ||
	    (opts->explain && !s->explain))
		return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	err = session__check_pidns(s);
	if (!err)
		err = session__resolve_event(s);
	if (!err)
		err = resolve_cgroups(s);
	if (!err)
		err = session__resolve_pids(s);
	if (!err)
		err = check_pids(s);
	if (!err)
		err = session__add_children(s);
	if (!err)
		err = session__check_btf(s);
	if (!err)
		err = session__load_bpf(s);
	if (!err)
		err = session__check_privs(s);
	if (err)
		return err;
	procmaps__set_add_hook(s->maps, session__on_map_added, s);
	for (size_t i = 0; i < opts->nr_pids; i++) {
		err = session__add_pid(s, opts->pids[i]);
		if (err)
			return err;
	}
	if (opts->argv) {
		err = session__start_command(s);
		if (!err)
			err = session__add_pid(s, s->child);
	}
	/* The JVMs' helpers, forked while we are root and one thread (jvmattach.c). */
	if (!err)
		err = session__jvm_open(s);
	return err;
}

struct session *session__open(const struct session_opts *opts, char **errmsg,
			      enum session_err_kind *kind)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s) {
		if (errmsg)
			*errmsg = strdup("out of memory");
		if (kind)
			*kind = SESSION_ERR_RUNTIME;
		return NULL;
	}
	s->opts = *opts;
	s->opened = clock_mono_seconds();
	session__signals_starting();
	s->go_fd = s->exec_err_fd = s->epfd = s->ep_sock = -1;
	s->stats.cmd_status = -1;
	s->parked.free_raw = offcpu__free_raw;
	libbpf_set_print(session__libbpf_print);
	if (!session__start(s))
		return s;
	if (errmsg)
		*errmsg = s->err ? strdup(s->err) : strdup("cannot start profiling");
	if (kind)
		*kind = s->err_kind ? s->err_kind : SESSION_ERR_RUNTIME;
	session__free(s);
	return NULL;
}

/* --- run -------------------------------------------------------------------------------- */

/* "elapsed, samples, lost" on one terminal line, rewritten in place. */
static void show_status(struct session *s, double elapsed)
{
	unsigned int fetched, failed, pending;
	uint64_t lost;

	session__read_stats(s);
	lost = s->stats.bpf[STAT_COUNTS_FULL] + s->stats.bpf[STAT_EVENTS_LOST] + s->stats.mmap_lost;
	symbolizer__fetch_counts(s->sym, &fetched, &failed, &pending);
	fprintf(stderr, "\rprofile: %.0f s, %llu samples, %llu lost, %llu DWARF-unwound",
		elapsed, (unsigned long long)s->stats.bpf[STAT_SAMPLES], (unsigned long long)lost,
		(unsigned long long)s->stats.dwarf);
	if (pending || fetched)
		fprintf(stderr, ", debuginfod: %u fetched, %u fetching", fetched, pending);
	fprintf(stderr, "\033[K");
}

/* Sample until the deadline (S->deadline, 0: none), a signal, the targets' exit or an error
 * reading the buffers (returned, with the error set): 0; in continuous mode
 * SESSION_PERIOD_END when the period's time is up or SIGHUP came first. */
/* -a: profile's own processes, as BPF leaves them out (a worker replaced, the fetcher
 * started since). */
static void note_self(struct session *s)
{
	__u32 now[3] = { (__u32)getpid(), (__u32)symbolizer__worker_pid(s->sym),
			 (__u32)symbolizer__fetcher_pid(s->sym) };

	for (int i = 0; i < 3; i++)
		if (s->skel->bss->self_tgids[i] != now[i])
			s->skel->bss->self_tgids[i] = now[i];
}

/* Seconds between two looks for the unwind tables in BPF no live process maps. */
#define EVICT_SECONDS	5

static int session__loop(struct session *s)
{
	double start = s->run_start, deadline = s->deadline;
	double next_status = start + 1 + (long)(clock_mono_seconds() - start);
	/* (PROFILE_EVICT_SECONDS: another interval, for tests.) */
	const char *ev = getenv("PROFILE_EVICT_SECONDS");
	double evict_every = ev && atof(ev) > 0 ? atof(ev) : EVICT_SECONDS;
	double next_evict = clock_mono_seconds() + evict_every;
	bool continuous = s->opts.every > 0;
	int quiet = 0, err;

	while (!session_stop_signal && !session_flush_signal) {
		int tick = TICK_MS, n = 0;
		double now, until;

		/* Half a second in, the symbolizer reads what it will need at the end. */
		if (!s->prepared && clock_mono_seconds() >= start + 0.5) {
			symbolizer__prepare(s->sym, !s->opts.user_only);
			s->prepared = true;
		}
		/* What the symbolizer's worker asked meanwhile, and the files opened since; the
		 * samples that waited for tables it made. */
		symbolizer__poll(s->sym);
		note_self(s);
		if (session__retry_queued(s, false))
			return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
		if (s->opts.status_line && clock_mono_seconds() >= next_status) {
			show_status(s, clock_mono_seconds() - start);
			next_status += 1;
		}
		err = session__read_sideband(s);
		session__flush_procstate(s);
		/* Every few seconds: the unwind tables no live process maps out of BPF. */
		if (clock_mono_seconds() >= next_evict) {
			session__evict_tables(s);
			next_evict = clock_mono_seconds() + evict_every;
		}
		session__jitwatch_poll(s);
		session__jvm_poll(s);
		/* The wait (session__wait: the ring buffer, and the worker, whose tables samples
		 * may wait for): records come without wakeups (see send_event), so the ring
		 * buffer is consumed after it, whatever woke it. With no records for a
		 * while (a program with frame pointers), sleep longer: waking up costs the
		 * profiled programs a context switch on a busy machine. */
		if (quiet >= QUIET_TICKS) {
			tick = TICK_IDLE_MS;
			now = clock_mono_seconds();
			until = continuous && (!deadline || s->period_due < deadline) ?
				s->period_due : deadline;
			if (until && (until - now) * 1000 < tick)
				tick = (int)((until - now) * 1000) + 1;
			if (s->opts.status_line && (next_status - now) * 1000 < tick)
				tick = (int)((next_status - now) * 1000) + 1;
			if (tick < TICK_MS)
				tick = TICK_MS;
		}
		s->skel->bss->wake_user = tick > TICK_MS;
		if (err >= 0)
			err = session__wait(s, tick);
		if (err >= 0)
			err = ring_buffer__consume(s->events);
		if (err > 0)
			n += err;
		quiet = n > 0 ? 0 : quiet + 1;
		if (err < 0 && err != -EINTR)
			return session__fail(s, SESSION_ERR_RUNTIME, err, "cannot read events: %s",
					     strerror(-err));
		now = clock_mono_seconds();
		if (deadline && now >= deadline)
			return 0;
		if (!targets_alive(s))
			return 0;
		if (continuous && now >= s->period_due)
			return SESSION_PERIOD_END;
	}
	if (session_flush_signal && !session_stop_signal) {
		session_flush_signal = 0;
		pr_info("SIGHUP: the period ends now");
		return SESSION_PERIOD_END;
	}
	return 0;
}

/* A SIGINT or SIGTERM while starting: it ends the start at once (in step DOING), nothing
 * sampled. Returns -EINTR with the error set, or 0 when none came. */
static int interrupted(struct session *s, const char *doing)
{
	if (!session_stop_signal || session_stop_signal == SIGHUP)
		return 0;
	return session__fail(s, SESSION_ERR_INTERRUPTED, -EINTR, "interrupted while starting "
			     "(%s, %.1f s in): nothing was sampled", doing,
			     clock_mono_seconds() - s->opened);
}

/* session__describe every process now alive (-a --stack-copy 0). Returns 0, or what
 * interrupted() says. */
static int describe_all(struct session *s)
{
	size_t n;
	pid_t *pids = procmaps__pids(s->maps, &n);	/* those procmaps__load_all read */
	int err = 0;

	for (size_t i = 0; pids && !err && i < n; i++) {
		session__describe(s, pids[i]);
		err = interrupted(s, "describing the processes");
	}
	free(pids);
	return err;
}

/* Attach and start sampling (the first session__run). Returns 0 or negative errno with the
 * error set. */
static int session__begin(struct session *s)
{
	int err;

	session__catch_signals(s->opts.every > 0);

	err = session__open_sideband(s);
	if (!err)
		err = session__open_samples(s);
	if (!err)
		err = session__jitwatch_open(s);
	if (!err)
		err = interrupted(s, "opening the buffers");
	if (err)
		return err;
	/* Mappings that exist already; later ones arrive as mmap records. */
	if (s->opts.all)
		procmaps__load_all(s->maps);
	/* -a without copies: no sample reaches userspace to have its process described, so
	 * every process is described now (and those they fork, with their parents). */
	if (s->opts.all && s->opts.no_copy)
		err = describe_all(s);
	for (size_t i = 0; !err && i < s->opts.nr_pids; i++) {
		procmaps__load(s->maps, s->opts.pids[i]);
		session__describe(s, s->opts.pids[i]);
		err = interrupted(s, "reading the processes' mappings");
	}
	/* The command has not run yet: its mappings come as mmap records. */
	if (!err && s->child)
		session__describe(s, s->child);

	if (!err)
		err = interrupted(s, "describing the processes");
	if (!err) {
		note_self(s);
		err = session__attach(s);
	}
	if (!err)
		err = profile_bpf__attach(s->skel);
	if (!err)
		err = session__add_children_late(s);
	if (!err && (s->opts.off_cpu || s->opts.wall))
		session__off_cpu_begin(s);
	if (!err)
		err = interrupted(s, "attaching");
	if (!err)
		err = session__drop_privs(s);
	if (err) {
		if (!s->err)
			session__fail(s, SESSION_ERR_RUNTIME, err, "cannot attach: %s",
				      strerror(-err));
		return err;
	}
	s->running = true;
	/* (-v: the moment from which what runs is sampled; tests wait for it.) */
	pr_info("sampling on %d CPUs", s->nr_cpus);
	s->run_start = s->period_mono = clock_mono_seconds();
	clock_gettime(CLOCK_REALTIME, &s->period_real);
	s->period_due = s->run_start + s->opts.every;
	s->deadline = s->opts.duration > 0 ? s->run_start + s->opts.duration : 0;
	/* As end_period does: no last period of a few milliseconds. */
	if (s->deadline && s->period_due > s->deadline - 0.25 * s->opts.every)
		s->period_due = s->deadline;
	/* A command that could not be run was never sampled: nothing to write. */
	if (s->child && (err = session__release_command(s)))
		s->run_start = 0;
	/* The JVMs asked for perf maps of what they compiled so far (jvmattach.c). */
	if (!err)
		session__jvm_begin(s);
	return err;
}

int session__run(struct session *s)
{
	uint64_t end_ns;
	int err, stopped_by = 0;

	s->tables_wait = false;
	if (!s->running) {
		err = session__begin(s);
	} else {
		/* The next period: the worker back to idle priority. */
		symbolizer__sampling_again(s->sym);
		err = 0;
	}
	if (!err)
		err = session__loop(s);
	/* The period's end: the JVMs asked again before its names are given (bounded). */
	if (err == SESSION_PERIOD_END) {
		session__jvm_ask(s);
		return err;
	}
	if (err)
		goto out;
	if (s->opts.status_line)
		fputs("\r\033[K", stderr);
	stopped_by = session_stop_signal;
	s->stats.seconds = clock_mono_seconds() - s->run_start;
out:
	/* The last period (or the whole run) is what the next profile takes. */
	s->taken_real = s->period_real;
	s->taken_seconds = s->period_mono ? clock_mono_seconds() - s->period_mono : 0;
	s->running = false;
	session__finishing();
	/* (Said once the next signal says how to abort.) */
	if (stopped_by)
		pr_info("stopping on signal %d", stopped_by);
	end_ns = clock_mono_ns();
	session__detach(s);
	if (s->mmap_pb)
		session__read_sideband(s);
	/* The samples sent, and those that waited for tables: the tables waited for now. */
	s->tables_wait = true;
	if (s->events)
		ring_buffer__consume(s->events);
	/* Tasks still off the CPU: their time up to the end. */
	if ((s->opts.off_cpu || s->opts.wall) && session__end_off_cpu(s, end_ns) && !err)
		err = session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	if (session__retry_queued(s, true) && !err)
		err = session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	/* The JVMs asked a last time, while they still run (bounded). */
	if (!err && s->run_start > 0)
		session__jvm_ask(s);
	/* The profile is over (duration or signal): so is the command it started. */
	session__stop_command(s, SIGTERM);
	return err;
}

/* --- results and the end ----------------------------------------------------------------- */

const char *session__error(const struct session *s, enum session_err_kind *kind)
{
	if (kind)
		*kind = s->err_kind;
	return s->err;
}

bool session__sampled(const struct session *s)
{
	return s->run_start > 0;
}

const struct session_stats *session__stats(struct session *s)
{
	if (s->unw) {
		const struct unwind_counts *c = unwinder__counts(s->unw);

		s->stats.unwind_fast = c->fast;
		s->stats.unwind_slow = c->slow;
		s->stats.unwind_mismatches = c->mismatches;
	}
	session__bpftabs_stats(s, &s->stats.bpf_files, &s->stats.bpf_shards);
	s->stats.py_procs = python__procs(s, &s->stats.py_minors);
	s->stats.py_unreadable = python__unreadable(s);
	s->stats.rb_procs = ruby__procs(s);
	s->stats.jvm_said = session__jvm_said(s);
	return &s->stats;
}

void session__period(const struct session *s, struct timespec *start, double *seconds)
{
	*start = s->taken_real;
	*seconds = s->taken_seconds;
}

const struct explain *session__explain(const struct session *s)
{
	return s->explain;
}

void session__free(struct session *s)
{
	if (!s)
		return;
	session__detach(s);
	perf_buffer__free(s->mmap_pb);
	/* Never released (an error before run): it must not run on its own. */
	session__free_command(s);
	ring_buffer__free(s->events);
	if (s->epfd >= 0)
		close(s->epfd);
	profile_bpf__destroy(s->skel);
	session__free_queue(s);
	session__free_parked(s);
	free(s->xk.v);
	cgroup_names__free(s->cgnames);
	session__free_procstate(s);
	session__free_python(s);
	session__free_bpftabs(s);
	session__jitwatch_free(s);
	session__jvm_free(s);
	unwinder__free(s->unw);
	symbolizer__free(s->sym);
	timeline__free(&s->tl);
	ucounts__free(s->unwound);
	explain__free(s->explain);
	dsos__free(s->dsos);
	procmaps__free(s->maps);
	free(s->links);
	free(s->pfds);
	free(s->pids);
	free(s->gone);
	free(s->unmapped);
	free(s->comms_gone);
	free(s->err);
	free(s);
}

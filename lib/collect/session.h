/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * session: one profiling run. Loads and configures the BPF programs, starts the command (held
 * until sampling is attached) or checks the pids, samples until the duration ends, a signal
 * arrives or the targets exit, then turns what BPF counted into a profile model.
 */
#ifndef SESSION_H
#define SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>
#include <linux/types.h>
#include "profile.h"

struct profile;

struct session_opts {
	const pid_t *pids;	/* processes to profile (-p), or NULL */
	size_t nr_pids;
	bool all;		/* -a: every process */
	bool self;		/* --self: with -a, profile's own processes too */
	bool no_runtime;	/* --no-runtime: no Python frames read, the command's
				 * environment as it is, and no JVM asked for a perf map */
	bool children;		/* --children: the pids' descendants too, those there at the
				 * start and those they fork later */
	char *const *argv;	/* command to start and profile, or NULL */
	const char *user;	/* with argv: run it as "USER[:GROUP]" (names or ids), or NULL:
				 * as we run */
	unsigned int freq;	/* samples per second per CPU */
	unsigned int event_freq;	/* the same of -e's software and hardware events (0: freq):
					 * a burst of page faults at 99 Hz is two samples */
	const char *event;	/* -e: perf's name of what to sample, NULL: cpu-clock */
	uint64_t count;		/* -c: a sample every COUNT events (0: FREQ a second) */
	double duration;	/* seconds; 0: until a signal or the targets exit */
	bool user_only, kernel_only;
	bool idle;		/* with all: keep the idle task's samples */
	bool threads;		/* a frame per thread under the process */
	unsigned int map_size;	/* entries of the stack and count maps; 0: derived */
	int unwind_mode;	/* enum profile_unwind_mode */
	bool no_inline;		/* no inline chains from DWARF */
	bool no_demangle;	/* C++ and Rust names as in the symbol table */
	bool no_debuginfod;	/* no debug files from DEBUGINFOD_URLS' servers */
	double debuginfod_timeout;	/* seconds a fetch (and the end's wait); 0: default */
	bool lines;		/* each frame's source line from DWARF (profile_frame.line) */
	bool status_line;	/* a status line on stderr (a terminal) about once a second */
	unsigned int stack_copy;	/* bytes of user stack per DWARF sample; 0: 16 KiB */
	bool timeline;			/* each sample's time kept (a speedscope output):
					 * BPF sends a record of each one it counts */
	bool no_copy;			/* --stack-copy 0: no user stack memory leaves the
					 * kernel; what BPF cannot walk whole is cut, marked */
	bool explain;		/* gather where stacks were cut or left unnamed (--explain) */
	double every;		/* continuous mode (--every): seconds per period; 0: one
				 * profile of the whole run */
	const char *const *cgroups;	/* --cgroup: only tasks in these (v2) or below them */
	size_t nr_cgroups;		/* at most PROFILE_MAX_CGROUPS */
	bool group_cgroup;	/* --group-by cgroup: the process's cgroup as the root frame */
	bool off_cpu;		/* --off-cpu: time off the CPU by stack, not on-CPU samples */
	bool wall;		/* --wall: both, in one profile, as time */
	unsigned int min_block_us;	/* --min-block: shorter times off the CPU not counted */
	bool keep_uid;		/* after attach, stay the user we are (capabilities dropped
				 * all the same) rather than uid 65534: files are written as
				 * the run goes (continuous mode) */
};

/* What went wrong, for the command line's exit status. */
enum session_err_kind {
	SESSION_ERR_RUNTIME = 1,	/* loading, attaching, reading BPF maps, writing */
	SESSION_ERR_USAGE = 2,		/* an option value the kernel will not take */
	SESSION_ERR_TARGET = 3,		/* unknown pid, command that cannot be executed */
	SESSION_ERR_ENV = 4,		/* no privileges, no BTF */
	SESSION_ERR_INTERRUPTED = 5,	/* SIGINT or SIGTERM before sampling began */
};

struct session_stats {
	uint64_t bpf[STAT__MAX];	/* the BPF program's counters, summed over CPUs */
	uint64_t mmap_lost;		/* mmap records the kernel dropped (buffer full) */
	uint64_t jit_epochs;		/* JIT code rewritten in place seen (jitwatch.c) */
	uint64_t perf_maps;		/* perf maps found of processes with anonymous code */
	const char *runtime_env;	/* what the command's environment was given, "" none */
	const char *jvm_said;		/* JVMs asked for perf maps, or why not: lines for the
					 * summary (NULL: none) */
	uint64_t samples;		/* samples in the profile */
	uint64_t truncated;		/* of those, samples whose user stack is truncated */
	uint64_t py_ran;		/* of those, samples in CPython's loop (or with Python
					 * frames), */
	uint64_t py_read;		/* with Python frames read, */
	uint64_t py_whole;		/* every loop frame replaced by named ones */
	uint64_t py_procs;		/* processes whose Python frames were read */
	uint32_t py_minors;		/* bit N: a CPython 3.N among them */
	uint64_t rb_procs;		/* processes whose Ruby frames were read (CRuby 3.1) */
	uint64_t py_unreadable;		/* code objects that could not be read */
	uint64_t scanned;		/* of those, samples with a caller found by a stack scan
					 * (code without CFI) */
	uint64_t off_ns;		/* --off-cpu, --wall: time off the CPU in the profile */
	uint64_t off_truncated_ns;	/* of it, time on stacks whose user part is truncated */
	uint64_t timeline_lost;		/* samples left out of the timeline (--max-memory) */
	uint64_t off_waits_end;		/* waits under way at the end, counted by
					 * userspace (BPF's STAT_OFF_CPU has the others) */
	uint64_t off_unseen;		/* waits still under way at the end whose task came back
					 * unseen (see STAT_OFF_UNSEEN) */
	uint64_t off_unmatched;		/* waits whose stacks userspace did not have (lost with
					 * their event, or over --max-memory) */
	uint64_t ev_unsampled;		/* -e's events that count: those after each CPU's last
					 * sample (any task's), in no stack */
	uint64_t dwarf;			/* samples unwound with DWARF in userspace */
	uint64_t table_checked;		/* PROFILE_TABLE_WALK_CHECK: BPF's walks from the tables
					 * compared with userspace's unwind of the same sample */
	uint64_t table_differ;		/* ... and found different */
	uint64_t table_further;		/* ... or going on where the unwind of the copy
					 * stopped short, the same frames up to there */
	uint32_t bpf_files, bpf_shards;	/* files (and shards) with tables in BPF */
	uint64_t bpf_evicted;		/* files whose tables were given back while sampling */
	uint64_t bpf_times[PROFILE_TIME_SLOTS];	/* PROFILE_BPF_TIMES: runs of the sample
						 * program, the switch one, the first and
						 * second process's samples, by time;
						 * then each one's ns (`btimes`) */
	uint64_t bpf_parts[TPART__MAX];	/* PROFILE_BPF_TIMES=parts: ns in each part
						 * of the samples' runs (`tparts`) */
	uint64_t unwind_stop[8];	/* of those, by enum unwind_stop */
	uint64_t cut_stop[8];		/* samples truncated in the profile, by how their DWARF
					 * unwind stopped (UNWIND_STOP_END: no DWARF unwind, or
					 * it ended and the stack was cut after) */
	uint64_t unwind_frames;		/* frames those unwinds produced */
	uint64_t unwind_ns;		/* time spent unwinding them */
	uint64_t unwind_fast;		/* of the unwinds, those done by cached CFI rules alone */
	uint64_t unwind_slow;		/* ... and those libunwind did (unwinds tried again after
					 * reading waiting mmap records count twice) */
	uint64_t unwind_mismatches;	/* PROFILE_UNWIND_CHECK: of those, libunwind disagreed */
	uint64_t copy_bytes;		/* bytes of stack those samples carried */
	uint64_t copies_learnt;		/* of those samples, the ones whose process's copies
					 * had come down to what its unwinds need (its first
					 * carry the whole --stack-copy) */
	uint64_t copies_learnt_bytes;	/* ... and their bytes */
	uint64_t queued;		/* of those, samples that waited for a file's unwind
					 * table (the worker was still making it) */
	uint64_t queued_max;		/* the most that waited at once */
	uint64_t files_forgotten;	/* continuous mode: files forgotten once no process
					 * mapped them (their ids taken by files opened later) */
	unsigned int fetched, fetch_failed, fetch_pending;	/* debuginfod: debug files
					 * fetched, not found (or failed), given up on */
	double seconds;			/* time spent sampling */
	int nr_cpus;			/* CPUs sampled */
	int cmd_status;			/* wait status of the command, -1 when none */
};

struct session;

/*
 * Check the targets (a thread's id stands for its process) and the kernel, load the BPF
 * programs, check the capabilities the targets need and, with a command, start it held
 * before its first instruction (as opts.user). Returns a session or NULL; on NULL, *ERRMSG
 * (when not NULL) gets a malloc'd sentence naming the problem and *KIND its kind.
 */
struct session *session__open(const struct session_opts *opts, char **errmsg,
			      enum session_err_kind *kind);

/* From now until sampling begins (session__open calls it too): SIGINT or SIGTERM ends the
 * process at once with a sentence, exit 130 (or 128 + the signal): nothing was sampled. */
void session__signals_starting(void);

/*
 * Attach sampling, keep only the capabilities still needed (no longer root: see
 * collect/privs.c), release the command, and sample until the duration ends, SIGINT/SIGTERM
 * arrives, the command exits, or every pid has exited; then end the command (SIGTERM,
 * SIGKILL 2 s later). From then on a signal only warns, and a second within 3 s aborts the
 * process (collect/signals.c). Returns 0, or negative errno with session__error() set.
 *
 * Continuous mode (opts.every): returns SESSION_PERIOD_END, still sampling, when a period
 * is over (its time is up, or SIGHUP came): take its profile with session__build_profile,
 * then call session__run again to go on. The last period ends as a run does (0).
 */
int session__run(struct session *s);

#define SESSION_PERIOD_END	1

/*
 * Symbolize everything counted and add it to the profile model P as samples (weights in
 * samples, labels pid, comm, and tid and thread name with opts.threads), their stacks fixed
 * up (see collect/fixup.h). Returns 0 or negative errno with session__error() set.
 *
 * Continuous mode: what was counted in the period that just ended, and only that: while
 * sampling goes on, the next period's samples go to the BPF maps of the other parity from
 * here on (none lost, none counted twice); what the period's profile was made of (the BPF
 * counts, stacks and sample caches of its parity, the stacks unwound here, the names of
 * processes gone since) is cleared, so that memory stays flat over a long run.
 */
int session__build_profile(struct session *s, struct profile *p);

/* The period session__build_profile took last (the whole run but in continuous mode): when
 * it began (CLOCK_REALTIME) and how many seconds it lasted. */
void session__period(const struct session *s, struct timespec *start, double *seconds);

/* The last error's sentence and kind; NULL when none. Owned by S. */
const char *session__error(const struct session *s, enum session_err_kind *kind);

/* Counters of the run, valid after session__build_profile. */
const struct session_stats *session__stats(struct session *s);

/* Whether sampling began: the events attached and, with a command, the command started (one
 * that could not be run was never sampled). A run that failed before has nothing to write. */
bool session__sampled(const struct session *s);

struct explain;

/* With opts.explain, where stacks were cut, untrusted or left unnamed, per file
 * (collect/explain.h), valid after session__build_profile; NULL without. Owned by S. */
const struct explain *session__explain(const struct session *s);

/* Detach, kill nothing that still runs on its own, free everything. NULL is fine. */
void session__free(struct session *s);

#endif

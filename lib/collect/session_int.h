/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * session_int: what the files of lib/collect/ share, and nothing outside it includes. One
 * struct session; each file does one job on it:
 *
 *	session.c	open, run (the poll loop, signals, the status line), errors, free
 *	command.c	the command, forked held on a pipe and released after attach; run as
 *			the user of --user (runas.c); ended, with SIGKILL after a grace period
 *	pids.c		the processes of -p (a thread's id stands for its process)
 *	privs.c		the capabilities checked before, and dropped after attach
 *	signals.c	SIGINT/SIGTERM/SIGHUP: end sampling; twice while finishing: abort
 *	bpf.c		libbpf logging, privilege and BTF checks, sizing and loading the BPF
 *			programs, the pid filter, perf attach/detach per CPU, the stats map
 *	procstate.c	per-process BPF state: executable ranges, stack bottoms, copy hints
 *	bpftabs.c	the files' unwind tables in BPF, each process's mappings to them
 *	python.c	processes running CPython: their `py_procs` entry, their code
 *			objects' names read as BPF meets them
 *	jitwatch.c	perf maps read as they grow: JIT code rewritten in place begins an
 *			epoch of its process
 *	jvmattach.c	HotSpot JVMs asked for perf maps through their attach sockets, by
 *			helpers of the JVMs' ids forked before the drop
 *	sideband.c	the PERF_RECORD_MMAP2/FORK/LOST records
 *	samples.c	the DWARF sample consumer (ring buffer -> unwinder -> ucounts)
 *	drain.c		the per-CPU slots, `counts`, `ustacks` and ucounts -> model.c
 *	model.c		one counted stack -> a sample of the profile model (with fixup.c)
 */
#ifndef COLLECT_SESSION_INT_H
#define COLLECT_SESSION_INT_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include <bpf/libbpf.h>
#include "base/htab.h"
#include "collect/events.h"
#include "collect/parking.h"
#include "collect/session.h"
#include "collect/stacks.h"
#include "proc/ns.h"
#include "unwind/unwind.h"

#define USER_MAX_DEPTH	512	/* frames of a DWARF-unwound stack */
#define HINT_SLOTS	256	/* processes whose copy_hint is remembered here */

struct map;
struct profile;
struct builder;
struct pstates;
struct queued;
struct cgroup_names;

/* builder__add's *SAMPLE when nothing was added; a ucount's sample in the profile being made
 * when it was not added to it. */
#define TL_NO_SAMPLE	(UINT32_MAX - 1)

/* timeline.c: the samples' times (opts.timeline) until a profile takes them. */
struct tl_ent {
	uint64_t time, weight;
	pid_t tid;
	uint32_t key;		/* an index into keys: counted in the kernel; else UINT32_MAX */
	struct ucount *u;	/* unwound here: its entry (its table lives until its period's
				 * profile is made) */
};

struct tl_key {
	struct count_key key;
	uint32_t sample;	/* in the profile being made, or UINT32_MAX */
};

struct timeline {
	struct tl_ent *v;
	size_t nr, cap;
	struct tl_key *keys;	/* the counted keys, each once */
	size_t nr_keys, cap_keys;
	struct htab index;	/* of keys, by their bytes */
	uint64_t bytes;		/* of the memory budget held */
};

struct ucount;

struct session {
	struct session_opts opts;
	struct profile_bpf *skel;
	int nr_cpus;
	int *pfds;			/* cpu-clock event per CPU, -1 where offline */
	struct bpf_link **links;
	struct perf_buffer *mmap_pb;
	struct ring_buffer *events;
	int epfd;			/* the loop waits here: the ring buffer's epoll, the
					 * symbolizer's worker (ep_sock) */
	int ep_sock;
	unsigned int ep_gen;		/* the worker ep_sock is of */
	struct procmaps *maps;
	struct dsos *dsos;		/* every file mapped: shared by sym and unw */
	struct symbolizer *sym;
	struct unwinder *unw;
	struct ucounts *unwound;	/* samples unwound here */
	struct explain *explain;	/* with opts.explain: filled by model.c */
	struct pidns pidns;		/* ours: every pid of the session is numbered in it */
	struct event_spec evs[PROFILE_MAX_EVENTS];	/* -e's (cpu-clock without it) */
	unsigned int nr_evs;
	bool counted;			/* an event other than the clocks among them: samples
					 * weigh events */
	char cgroot[256];		/* where cgroup v2 is (--cgroup, --group-by cgroup) */
	uint64_t cgroup_ids[PROFILE_MAX_CGROUPS];	/* --cgroup's */
	struct cgroup_names *cgnames;	/* --group-by cgroup: paths by id, read when needed */
	pid_t *pids;			/* opts.pids points here: -p, threads made processes */
	pid_t child;			/* the command, 0 when none */
	pid_t command_pid;		/* the command's pid, kept after it is reaped */
	int nr_fast_pids;		/* of the BPF program's fast_pids[] */
	struct {			/* copy_hint set, by pid */
		pid_t pid;
		uint32_t bytes;		/* the copy_hint written for pid */
		uint32_t peak;		/* the most this window's unwinds needed */
		uint32_t n;		/* unwinds in this window */
	} hints[HINT_SLOTS];
	struct pstates *procstate;	/* the processes described to BPF (procstate.c) */
	struct jitwatch *jw;		/* perf maps followed as they grow (jitwatch.c) */
	struct jvmattach *jva;		/* JVMs asked for perf maps (jvmattach.c) */
	struct pythons *py;		/* processes running CPython, their code objects
					 * (python.c) */
	struct bpftabs *bpftabs;	/* the files' unwind tables in BPF (bpftabs.c) */
	bool table_walk;		/* BPF walks stacks from them (--unwind auto) */
	uint32_t bpf_version;		/* the last version given a `procs` or `proc_tabs`
					 * entry (session__bpf_version) */
	struct {			/* DWARF samples waiting for a file's table (samples.c) */
		struct queued **v;	/* samples.c */
		size_t nr, cap;
		uint64_t bytes;
		uint64_t answered;	/* symbolizer__tables_answered when last tried */
	} queue;
	struct {
		uint64_t *v;		/* samples.c: kernel stacks of tasks off the CPU when
					 * the profile began, PROFILE_MAX_DEPTH frames each,
					 * 0-padded (ids KSTACK_EXTRA | index) */
		uint32_t nr, cap;
	} xk;
	struct parking parked;		/* offcpu.c: off-CPU stacks waiting for their time */
	struct timeline tl;		/* timeline.c: opts.timeline's samples, by time */
	bool tables_wait;		/* the unwinder's tables are waited for (the end of a
					 * period or run), not queued for */
	uint64_t sideband_records;	/* fork, exec and mmap records read so far */
	/* When the last whole read of the sideband began (the records' clock): every record
	 * of a time before it has been read. */
	uint64_t sideband_seen;
	int go_fd;			/* write end: releases the held command */
	int exec_err_fd;		/* read end: why the command could not run, EOF when it
					 * was executed */
	struct runas *runas;		/* --user: who the command runs as; NULL without */
	struct session_stats stats;
	bool running;			/* session__run attached sampling */
	bool prepared;			/* symbolizer__prepare was called */
	/* Continuous mode: the period being sampled (bss `period` is its number) and when it
	 * began; the period whose profile is taken next (ended, or the last one). */
	uint32_t period;
	double period_mono;		/* began, CLOCK_MONOTONIC */
	struct timespec period_real;	/* ... and CLOCK_REALTIME */
	double period_due;		/* when its time is up (CLOCK_MONOTONIC) */
	double opened;			/* session__open was called (CLOCK_MONOTONIC) */
	double run_start;		/* sampling began (CLOCK_MONOTONIC) */
	double deadline;		/* the duration ends (0: none) */
	pid_t *gone;			/* processes found gone at the last period's end:
					 * forgotten at the next one's (their last samples may
					 * be in the period after the one they exited in) */
	size_t nr_gone;
	__u32 *comms_gone;		/* ids of `comms` found gone at the last period's end */
	size_t nr_comms_gone;
	uint8_t *unmapped;		/* by dso id: period ends in a row no process mapped
					 * the file at (forgotten at FORGET_AFTER) */
	uint32_t cap_unmapped;
	struct timespec taken_real;	/* the period taken last: began */
	double taken_seconds;		/* ... lasted */
	char *err;
	enum session_err_kind err_kind;
};

/* session.c: record the error sentence and its KIND; returns ERR (negative errno, -EINVAL
 * when ERR is not negative) for the caller to return. */
int session__fail(struct session *s, enum session_err_kind kind, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* pids.c: opts.pids made S->pids: a thread's id replaced by its process's (with a note on
 * stderr), each process once. Returns 0 or -ENOMEM with the error set. */
int session__resolve_pids(struct session *s);
/* pids.c: --children: the processes under the pids added to them. 0 or -errno, the error set. */
int session__add_children(struct session *s);
/* pids.c: --children, once on_fork is attached: the processes forked under the pids since
 * session__add_children looked, added (to the BPF filter's map). Returns 0. */
int session__add_children_late(struct session *s);

/* samples.c: the queued samples tried again when a table came since the last call (with
 * ALL, every one, tables waited for: a period or the run ends). Returns 0 or -ENOMEM. */
int session__retry_queued(struct session *s, bool all);
void session__free_queue(struct session *s);
/* --off-cpu/--wall, at the end (END_NS on BPF's clock): the tasks still off the CPU are
 * counted up to then; what waits for its time is dropped. Returns 0 or -ENOMEM. */
int session__end_off_cpu(struct session *s, uint64_t end_ns);
/* --off-cpu/--wall, as sampling begins (while profile may still read any process): the
 * profiled tasks off the CPU already are counted from now, on the stacks they have now.
 * Warns and goes on when the kernel will not say which they are. */
void session__off_cpu_begin(struct session *s);
/* --off-cpu/--wall in continuous mode, at a period's end (END_NS; PAR the parity of the
 * period that ended, BPF already on the next): each wait still going on is split, the time
 * so far counted in the period that ended, the rest to come on stacks that outlive its
 * maps. Returns 0 or -ENOMEM. */
int session__split_off_cpu(struct session *s, uint64_t end_ns, uint32_t par);
/* Kernel stack ID (KSTACK_EXTRA) into KIPS (PROFILE_MAX_DEPTH frames, 0-padded); -ENOENT
 * when there is none. */
int session__extra_kstack(const struct session *s, int32_t id, uint64_t *kips);
/* offcpu.c: frees a parked raw sample (a struct queued): the parking's free_raw. */
void offcpu__free_raw(void *raw);
/* offcpu.c: every parked stack freed. */
void session__free_parked(struct session *s);

/* samples.c: wait up to MS milliseconds for DWARF samples in the ring buffer (those that ask
 * for a wakeup: see bpf/) or a word from the symbolizer's worker. Returns 0 or -errno
 * (-EINTR: a signal). */
int session__wait(struct session *s, int ms);

/* procstate.c: the spans of mappings whose table was still being made, made again (a table
 * came). */
void session__respan(struct session *s);

/* signals.c: the signal (SIGINT, SIGTERM, SIGHUP) that ended sampling; 0 while none came. */
extern volatile sig_atomic_t session_stop_signal;

/* signals.c: in continuous mode, SIGHUP came: the period is to end now (the loop clears it). */
extern volatile sig_atomic_t session_flush_signal;

/* signals.c: while sampling, a signal sets session_stop_signal and interrupts the wait; with
 * HUP_FLUSHES (continuous mode) SIGHUP sets session_flush_signal instead. */
void session__catch_signals(bool hup_flushes);

/* signals.c: continuous mode, while a period's profile is made (sampling goes on): RESTART
 * says whether interrupted system calls restart (true while the profile is made, so that a
 * signal does not fail a read half-way; false again in the loop, whose wait it ends). */
void session__signals_restart(bool restart);

/* signals.c: the profile is being finished: a signal now says that a second one within 3 s
 * aborts; the second kills the command (session__signals_command) and profile. */
void session__finishing(void);

/* signals.c: the command to kill on abort (0: none). */
void session__signals_command(pid_t pid);

/* command.c: fork the command held before its first instruction (S->child, S->go_fd,
 * S->exec_err_fd), as the user of opts.user (S->runas: resolved here, kind USAGE when
 * unknown). Returns 0 or negative errno with the error set. */
int session__start_command(struct session *s);

/* command.c: let the command run; returns 0 when it was executed, else the exec's error
 * (negative errno, SESSION_ERR_TARGET; ENV or RUNTIME when it could not become the user of
 * --user) with the command reaped. */
int session__release_command(struct session *s);

/* command.c: end the command if it is still ours (SIG: SIGTERM after a profile, SIGKILL when
 * it was never released; SIGKILL too when SIGTERM did not end it within 2 s), record its
 * wait status, and close the pipes still open. Returns once it is reaped. */
void session__stop_command(struct session *s, int sig);

/* command.c: at the end of the session: the command killed if it was never released, what
 * --user resolved freed. */
void session__free_command(struct session *s);

/* privs.c: whether we have the capabilities the targets need besides BPF's: those of other
 * users' processes (-a, -p), of --user. Returns 0 or -EPERM with the error set (kind ENV,
 * naming what is missing). */
int session__check_privs(struct session *s);

/* privs.c: after attach, while one thread runs: keep only the capabilities the rest of the
 * run uses (of those we have: CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH, CAP_CHECKPOINT_RESTORE,
 * CAP_SYS_NICE, CAP_SYSLOG unless -U, CAP_KILL with a command), as uid and gid 65534 when
 * root (and CAP_SETUID and CAP_SETGID allow it), none inheritable or ambient, the bounding
 * set as small, no new privileges. Returns 0 or negative errno with the error set. */
int session__drop_privs(struct session *s);

/* bpf.c: libbpf's messages through our verbosity (libbpf_set_print). */
int session__libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap);

/* bpf.c: whether the kernel has BTF. Returns 0 or -ENOENT with the error set. */
int session__check_btf(struct session *s);

/* bpf.c: our pid namespace (S->pidns), whose pids BPF is to use; an error when /proc is not
 * that namespace's. Returns 0 or negative errno with the error set. */
int session__check_pidns(struct session *s);

/* bpf.c: the samples a second per CPU of event I (-e): a clock's -F; a software or hardware
 * event's own rate (opts.event_freq). */
unsigned int session__event_rate(const struct session *s, unsigned int i);
/* bpf.c: open the BPF programs, set their read-only data and map sizes from S->opts, load
 * them (S->skel). Returns 0 or negative errno with the error set. */
int session__load_bpf(struct session *s);
/* bpf.c: -e's event (cpu-clock without it) into s->ev, a tracepoint's id read from tracefs
 * (mounted when it is not). Returns 0, or fails the session with one sentence. */
int session__resolve_event(struct session *s);

/* bpf.c: after a change to a process's `procs` or `incarns` entry: `procs_gen` bumped, so that
 * the CPUs' copies of older ones (`cur_proc`) are not read. */
void session__bpf_changed(struct session *s);

/* bpf.c: a version for a `procs` or `proc_tabs` entry about to be written, another each time
 * (below PROFILE_BPF_VERSION, never 0): BPF's cached rows of the entry before are not read. */
uint32_t session__bpf_version(struct session *s);

/* bpf.c: add PID to the BPF pid filter. Returns 0 or negative errno with the error set. */
int session__add_pid(struct session *s, pid_t pid);

/* bpf.c: one cpu-clock event per online CPU, the sampling program attached to each.
 * Returns 0 or negative errno with the error set (kind USAGE for a refused frequency). */
int session__attach(struct session *s);

/* bpf.c: detach and close the events; nothing is sampled afterwards. Idempotent. */
void session__detach(struct session *s);

/* bpf.c: S->stats.bpf from the per-CPU `stats` map, summed over CPUs. */
void session__read_stats(struct session *s);

/* Bytes of user stack a DWARF sample carries at most: --stack-copy, or the default. */
static inline uint32_t session__stack_copy_max(const struct session_opts *o)
{
	return o->stack_copy ? o->stack_copy : PROFILE_STACK_COPY;
}

/* procstate.c: describe PID's code to BPF (its `procs` entry) from the mappings known now
 * and, from then on, from every mapping added. BPF checks frame-pointer walks of described
 * processes against it and sends the other processes' samples to DWARF. Returns 0 or
 * negative errno (a warning is printed). Once per process: later calls do nothing. */
int session__describe(struct session *s, pid_t pid);

/* procstate.c: whether PID was described (session__describe). */
bool session__described(struct session *s, pid_t pid);

/* procstate.c: the procmaps hook (CTX is the session): a described process's new mapping
 * into its `procs` entry. */
void session__on_map_added(void *ctx, pid_t pid, const struct map *m);

/* jitwatch.c: follow the perf maps of processes with anonymous code (inotify in the loop's
 * epoll set, data 2). _open returns 0 or -ENOMEM; _want: PID maps anonymous code; _poll:
 * once per loop turn, after the side-band records. */
int session__jitwatch_open(struct session *s);
void session__jitwatch_want(struct session *s, pid_t pid);
void session__jitwatch_poll(struct session *s);
void session__jitwatch_free(struct session *s);

/* jvmattach.c: HotSpot JVMs (the -p pids that map libjvm.so and catch SIGQUIT; the command
 * once it is one) asked for a perf map of their compiled methods (jcmd Compiler.perfmap
 * through the attach socket) by a helper per JVM with its uid and gid and no capability,
 * unless --no-runtime. _open: the helpers forked (before the drop; 0 or -ENOMEM with the
 * error set); _begin: the -p JVMs asked, not waited for; _poll: answers read, the command
 * asked once it is a JVM; _ask: every JVM asked, the answers waited for (bounded: a period's
 * end, the end); _said: the summary's lines (NULL: nothing to say). */
int session__jvm_open(struct session *s);
void session__jvm_begin(struct session *s);
void session__jvm_poll(struct session *s);
void session__jvm_ask(struct session *s);
const char *session__jvm_said(struct session *s);
void session__jvm_free(struct session *s);

/* bpftabs.c: a mapping of a described process whose file's table BPF may walk: [start, end),
 * its file's dso id and table, and the bias that gives a runtime address's row offset
 * (unwinder__map_table). */
struct utab;
struct bpftab_map {
	uint64_t start, end, bias;
	uint64_t ino, pgoff;		/* the mapping's file and offset at start */
	uint32_t id;
	const struct utab *tab;
};

/* bpftabs.c: PID's `proc_tabs` entry from its N mappings MAPS (sorted by start), each file's
 * table put in BPF the first time (or left out, counted, when it does not fit). Written
 * before its `procs` entry. Returns 0 or negative errno. */
int session__write_tabs(struct session *s, pid_t pid, const struct bpftab_map *maps, size_t n);
/* bpftabs.c: the files IDS (N of them) are forgotten (no process maps them): their tables
 * leave BPF, their slots and shards free for others. */
void session__bpftabs_forget(struct session *s, const uint32_t *ids, size_t n);
/* bpftabs.c: the tables of every file in BPF but those USED says (a byte per dso id, NR
 * of them) given back. */
void session__bpftabs_keep(struct session *s, const uint8_t *used, uint32_t nr);
/* procstate.c: the BPF state of the described processes that are gone forgotten, and the
 * tables of the files no described process maps then given back (a file mapped again is
 * loaded again). */
void session__evict_tables(struct session *s);
/* bpftabs.c: the files and shards in BPF now. */
void session__bpftabs_stats(const struct session *s, uint32_t *files, uint32_t *shards);
void session__free_bpftabs(struct session *s);

/* procstate.c: write the `procs` entries of the processes whose mappings changed since the
 * last call (once per batch of side-band records). */
void session__flush_procstate(struct session *s);

/* procstate.c: CHILD was forked from PARENT (whose mappings procmaps gave it): a child of a
 * described process is described; what the unwinder and BPF knew under CHILD's pid (an
 * earlier process's) is forgotten. */
void session__on_fork(struct session *s, pid_t parent, pid_t child);

/* procstate.c: PID ran execve at TIME (the records' clock): its mappings from before, their
 * kinds and its copy size are forgotten; mappings made before TIME that come later are
 * ignored. */
void session__on_exec(struct session *s, pid_t pid, uint64_t time);

/* procstate.c: the kind of code (enum profile_span) at ADDR in PID as described to BPF last;
 * SPAN_NONE when PID was not described or ADDR is in none of its mappings. */
uint8_t session__span_kind(struct session *s, pid_t pid, uint64_t addr);

/* procstate.c: PID exited (continuous mode, none of its samples left to name): its spans
 * and `procs` entry freed (it stays described: a new process under the pid gets its
 * parent's at fork). */
void session__forget_proc(struct session *s, pid_t pid);

/* procstate.c: free what describing processes holds. */
void session__free_procstate(struct session *s);

/* python.c: PID (described) given a `py_procs` entry when it maps CPython with a layout
 * known here, an `rb_procs` entry when it maps CRuby's (libruby-3.N's
 * ruby_current_vm_ptr), each deleted when it no longer does (opts.no_runtime: nothing). */
void python__describe(struct session *s, pid_t pid);
/* python.c: BPF's EV: a CRuby iseq new to its process, its names read now. Returns 0. */
int python__on_iseq(struct session *s, const struct rb_iseq_event *ev);
/* python.c: PID's `py_procs` and `rb_procs` entries deleted (its exec, its end). */
void python__forget(struct session *s, pid_t pid);
/* python.c: BPF's EV: a code object of a process new to it, its names read now. Returns 0. */
int python__on_code(struct session *s, const struct py_code_event *ev);

/* How many of the N frames IPS (struct ustack's) are native: those before PY_MARK or
 * RB_MARK (a runtime's frames follow). */
static inline int python_split(const uint64_t *ips, int n)
{
	for (int i = 0; i < n; i++)
		if ((ips[i] & ~PY_MARK_CUT) == PY_MARK ||
		    (ips[i] & ~(RB_MARK_NOGVL | RB_MARK_CUT)) == RB_MARK)
			return i;
	return n;
}

/* A Python frame's names (owned by the session). */
struct python_frame {
	const char *name;	/* qualified name (3.11 on), else name */
	const char *file;	/* NULL: not known */
	int line;		/* 0: not known */
};
/* python.c: Python frame WORD of PID to be named (python__resolve). */
void python__want(struct session *s, pid_t pid, uint64_t word);
/* python.c: the frames wanted named by the worker (it parses what was read of their code
 * objects). Returns 0 or -ENOMEM. */
int python__resolve(struct session *s);
/* python.c: a period's profile made (continuous mode): the code objects BPF did not send
 * since it ended freed (BPF sends each again in the next period: `period` in its check). */
void python__period_named(struct session *s);
/* python.c: the names of Python frame WORD (struct ustack's, after PY_MARK) of PID into *OUT.
 * Returns 0, or -ENOENT when its code object was not read (OUT says so). */
int python__frame(struct session *s, pid_t pid, uint64_t word, bool ruby,
		  struct python_frame *out);
/* python.c: code objects that could not be read; processes whose Python frames were read
 * (*MINORS: bit N for a CPython 3.N among them). */
uint64_t python__unreadable(const struct session *s);
uint64_t python__procs(const struct session *s, uint32_t *minors);
/* python.c: processes whose Ruby frames were read. */
uint64_t ruby__procs(const struct session *s);
void session__free_python(struct session *s);

/* procstate.c: a DWARF unwind of PID read USED bytes of stack (STOP: how it ended); make
 * PID's samples carry that much stack plus a margin. */
void session__learn_copy_size(struct session *s, pid_t pid, size_t used, enum unwind_stop stop);
/* procstate.c: whether PID's copies have come down to what its unwinds need
 * (session__learn_copy_size), from the whole --stack-copy. */
bool session__copy_learnt(const struct session *s, pid_t pid);

/* sideband.c: open the perf buffer of mmap/fork records (S->mmap_pb). Returns 0 or negative
 * errno with the error set. */
/* bpf.c: whether this process runs in a user namespace other than the initial one (an
 * unprivileged container), where no capability it has reaches BPF and perf events; and the
 * sentence that says so, with ERR (returns session__fail's). */
bool session__in_user_ns(void);
int session__fail_user_ns(struct session *s, int err);

int session__open_sideband(struct session *s);
/* Read the records the sideband has (perf_buffer__consume), then S->sideband_seen. Returns
 * what perf_buffer__consume does. */
int session__read_sideband(struct session *s);

/* procstate.c: PID's samples look up their threads' deep words from now on. */
void session__proc_has_deep(struct session *s, pid_t pid);

/* samples.c: whether the task of kernel tid KTID is still off the CPU in the wait it left
 * with the stacks of off-CPU event SEQ (its memory as it was then). */
bool session__still_off(struct session *s, pid_t ktid, uint64_t seq);

/* samples.c: S as the stack stage's collector (collect/stacks.h). */
struct stack_env session__stack_env(struct session *s);

/* samples.c: KEY of BPF's `counts` (or of an off-CPU wait it keeps) as the stages past BPF
 * see it: the only place a count_key is read for what it says of a stack. */
void stack_key__decode(struct stack_key *out, const struct count_key *key);

/* samples.c: open the ring buffer of DWARF samples (S->events), consumed into S->unwound.
 * Returns 0 or negative errno with the error set. */
int session__open_samples(struct session *s);

/* model.c: a builder of the samples of S in the profile model P (neither owned). NULL on
 * ENOMEM. Free with builder__free (NULL is fine). */
struct builder *builder__new(struct session *s, struct profile *p);
void builder__free(struct builder *b);

/* model.c: the NU user addresses IPS (leaf first) of KEY are to be named: the symbolizer
 * names every address so noted at once, per file (symbolizer__resolve), before the samples
 * are added. */
void builder__want(struct builder *b, const struct stack_key *key, const uint64_t *ips, int nu);

/*
 * COUNT samples of KEY with the NU user addresses IPS (leaf first) into the model: symbolized,
 * trimmed at a stack bottom, marked truncated unless complete, with KEY's kernel stack and
 * labels; S->stats counts them; their sample's id into *SAMPLE (NULL: not asked;
 * TL_NO_SAMPLE when none was added). Returns 0 or negative errno with the error set.
 */
int builder__add(struct builder *b, const struct stack_key *key, const uint64_t *ips, int nu,
		 uint64_t count, uint32_t *sample);

/* model.c: a timed sample into the model's timeline: SAMPLE (from builder__add) taken at
 * TIME by thread TID of the program of GEN (its name then), weighing WEIGHT (OFF: ns off
 * the CPU; else samples or events, as builder__add's COUNT). Returns 0 or negative errno
 * with the error set. */
int builder__timed(struct builder *b, uint32_t sample, pid_t tid, uint64_t gen, uint64_t time,
		   uint64_t weight, bool off);

/* timeline.c: a sample BPF counted under KEY (taken at TIME by TID, weighing WEIGHT) or one
 * unwound here (U, its entry of s->unwound) kept with its time until the profile of its
 * period takes it. Past the memory budget it is not kept (counted in
 * stats.timeline_lost). Returns 0 or -ENOMEM. */
int timeline__counted(struct session *s, uint64_t time, uint64_t weight, pid_t tid,
		      const struct count_key *key);
int timeline__unwound(struct session *s, uint64_t time, pid_t tid, uint64_t weight,
		      struct ucount *u);

/* drain.c: the timed samples of period PAR (their stacks in the model B makes now: the
 * kernel's counted keys added again with no weight for their sample ids, the unwound ones'
 * set as they were added) into its timeline; those of a later period are kept. Returns 0 or
 * negative errno with the error set. */
int timeline__take(struct session *s, struct builder *b, uint32_t par);

/* timeline.c: everything kept given back. */
void timeline__free(struct timeline *t);

#endif

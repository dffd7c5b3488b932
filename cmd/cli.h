// SPDX-License-Identifier: GPL-3.0-or-later
/* The command line's parts: the settings the options make (options.c), the outputs and
 * continuous mode (outputs.c), the summary (summary.c), and main (profile.c). */
#ifndef CMD_CLI_H
#define CMD_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <sys/types.h>
#include "flamegraph.h"
#include "collect/session.h"

struct profile;
struct folded;

/* Exit statuses (man/profile.1, EXIT STATUS). */
enum {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,
	EXIT_USAGE = 2,
	EXIT_TARGET = 3,
	EXIT_ENV = 4,
	EXIT_INTERRUPTED = 130,	/* Ctrl-C before sampling began: as a shell says SIGINT */
};

#define MAX_PIDS 1024
#define MAX_FREQ 100000
#define DEFAULT_EVENT_FREQ 4000	/* perf's -F */

#define MAX_OUTPUTS 8		/* -o given more often is an error (its message says 8) */

enum out_format { FMT_FOLDED, FMT_SVG, FMT_PPROF, FMT_SPEEDSCOPE };

/* One place the profile goes: -o FILE, or standard output. */
struct output {
	const char *path;	/* NULL: standard output */
	enum out_format format;
	FILE *f;
	bool made;		/* the file was made by this run (removed when nothing is) */
	char *tmp;		/* an existing regular file: the file beside it written instead,
				 * renamed over it once written whole (else removed) */
	bool failed;		/* its profile could not be written */
	char *last;		/* --every: the name the pattern gave the last period */
	unsigned int again;	/* ... and how many periods after it it gave them too */
};

struct settings {
	struct session_opts session;
	pid_t pids[MAX_PIDS];
	const char *cgroups[PROFILE_MAX_CGROUPS];
	char events[1024];		/* -e a -e b: "a,b" */
	struct output out[MAX_OUTPUTS];
	int nr_out;
	const char *format;
	struct fg_opts fg;	/* the flame graph's options (--title, --width, ...) */
	bool quiet;
	bool explain;		/* --explain: the whole report, also with -q */
	unsigned int top;	/* --top N: the hottest functions after the summary */
	bool top_set;		/* --top given (else 10 on a terminal) */
	bool top_view;		/* `profile top`: a view, no file (set before parse_args) */
	bool lines;		/* --lines: source lines in folded and SVG output */
	/* Continuous mode (--every): each -o path a strftime pattern expanded at the period's
	 * start; --push sends each period to a Pyroscope server. */
	const char *push_url;
	const char *app_name;
	struct pusher *pusher;
	unsigned int periods;	/* periods written */
	bool period_failed;	/* a period's file could not be written */
};

/* Seconds to send what is queued for the server once sampling is over. */
#define PUSH_GRACE_S	2

/* Lines of the --explain report: all of them (up to this), or the first few with -v. */
#define EXPLAIN_LINES		15
#define EXPLAIN_LINES_VERBOSE	3

/* options.c: the settings from ARGV (exits for --help, --version, -e list). Returns 0 or an
 * exit status, the message printed. */
int parse_args(int argc, char **argv, struct settings *st);
/* usage.c: --help's text on stdout; -e list (returns the exit status). */
void print_usage(void);
int list_events(void);
/* usage.c: prints "profile: " FMT with ARG (FMT has one %s) and the --help hint; returns
 * EXIT_USAGE. */
int usage_error(const char *fmt, const char *arg);
/* Whether -e's events LIST counts events (a tracepoint, a software or hardware event), not
 * time. */
bool counts_events(const char *list);

/* outputs.c: open every -o before sampling (a path that cannot be written fails first);
 * continuous mode's patterns checked instead. Return 0 or an exit status. */
int open_outputs(struct settings *st);
/* Nothing to write (the run failed before sampling): the -o files closed as they were, those
 * this run made removed. */
void discard_outputs(struct settings *st);
int check_patterns(const struct settings *st);
int write_outputs(struct settings *st, const struct profile *p, const struct folded *f,
		  const struct timespec *started, double seconds);
int close_outputs(struct settings *st);
void default_app_name(char *buf, size_t size);
/* outputs.c: the period that just ended as the profile P and (F not NULL) its folded stacks
 * (FLAGS: folded__add_profile's), when it began and how long it lasted. Returns 0, an exit
 * status (the session failed), or -1 (out of memory: the period lost), with one sentence. */
int build_period(struct session *s, struct profile *p, struct folded *f, unsigned int flags,
		 struct timespec *start, double *secs);
/* --every: period after period until the end. Returns the exit status. */
int run_continuous(struct settings *st, struct session *s);

/* summary.c: the lines after a run on stderr, and --explain's total. */
void print_summary(const struct session_stats *st, size_t nr_stacks,
		   const struct settings *set);
uint64_t explain_total(struct session *s, const struct settings *st);
/* summary.c: the files where more than a few percent of the TOTAL samples (explain_total's
 * unit) have frames without names, and what would name them. */
struct explain;
void print_unnamed(const struct explain *ex, uint64_t total);
/* summary.c: --explain's line on the walk from the unwind tables in BPF: of the stacks the
 * frame-pointer walk could not take, those it took whole, and why it left the others to
 * userspace. Nothing when it did not run. */
void print_table_walk(const struct session_stats *st);
/* summary.c: the hottest functions of F after the summary (--top; 10 on a terminal).
 * Returns 0 or an exit status. */
int print_top(const struct folded *f, const struct settings *set);

/* outputs.c: what is profiled, in a few words ("xz -6 file", "pid 12 (python3)"). */
void describe_target(const struct settings *st, char *buf, size_t len);

/* janitor.c: the -o files settled once the run is over: each one written whole kept (a
 * temporary file renamed over the file it replaces), the others removed (a file this run
 * made, a temporary one), so that an existing file is replaced whole or not at all. When
 * root, a process forked while still root does it (janitor_start), as uid 65534 may not;
 * else settle_outputs does it itself. KEEP false: none is kept. Returns 0, or -1 after a
 * sentence per file that could not be settled. */
void janitor_start(const struct settings *st);
int settle_outputs(struct settings *st, bool keep);

/* nothing.c: the -p pids' CPU time now (clock ticks, -1: unreadable) into TICKS (one per
 * pid); after a run that sampled nothing, why, on stderr. Returns the exit status. */
void cpu_snapshot(const struct settings *st, long long *ticks);
int say_why_nothing(const struct settings *st, const struct session_stats *ss,
		    const long long *before);

/* profile.c */
double monotonic_seconds(void);
int exit_status(enum session_err_kind kind);

#endif

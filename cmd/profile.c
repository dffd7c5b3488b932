// SPDX-License-Identifier: GPL-3.0-or-later
/* profile: the command line. It parses options and calls lib/; nothing else. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libgen.h>
#include "flamegraph.h"
#include "flamegraph_cmd.h"
#include "output/folded.h"
#include "output/pprof.h"
#include "output/push.h"
#include "base/limits.h"
#include "base/log.h"
#include "collect/events.h"
#include "collect/explain.h"
#include "collect/session.h"
#include "profile/profile.h"
#include "unwind/unwind.h"

/* Exit statuses (man/profile.1, EXIT STATUS). */
enum {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,
	EXIT_USAGE = 2,
	EXIT_TARGET = 3,
	EXIT_ENV = 4,
};

#define MAX_PIDS 1024
#define MAX_FREQ 100000
#define DEFAULT_EVENT_FREQ 4000	/* perf's -F */

#define MAX_OUTPUTS 8		/* -o given more often is an error (its message says 8) */

enum out_format { FMT_FOLDED, FMT_SVG, FMT_PPROF };

/* One place the profile goes: -o FILE, or standard output. */
struct output {
	const char *path;	/* NULL: standard output */
	enum out_format format;
	FILE *f;
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

static const char usage_text[] =
"Usage: profile [OPTIONS] -p PID[,PID...]\n"
"       profile [OPTIONS] -a\n"
"       profile [OPTIONS] [--] COMMAND [ARGS...]\n"
"       profile flamegraph [OPTIONS] [FILE...]   (see profile flamegraph --help)\n"
"\n"
"Sample on-CPU stacks with BPF (or time off the CPU, by stack) and write them as folded\n"
"stacks, a flame graph or pprof.\n"
"\n"
"Targets:\n"
"  -p, --pid PID[,PID...]   profile these running processes and all their threads\n"
"  -a, --all                profile the whole system\n"
"      --cgroup PATH        only tasks in this cgroup (v2: a path under /sys/fs/cgroup or\n"
"                           relative to it) or below it; several allowed; alone: -a\n"
"  COMMAND [ARGS...]        start COMMAND held, attach, then run it; profile it until it exits\n"
"      --user USER[:GROUP]  run COMMAND as USER (a name or uid) with USER's groups, or GROUP;\n"
"                           without it, COMMAND runs as profile does: as root under sudo\n"
"                           (--user \"$SUDO_USER\" runs it as you)\n"
"\n"
"Options:\n"
"  -F, --frequency HZ       samples per second per CPU (default 99; 4000 for -e's\n"
"                           events that count, as perf)\n"
"  -e, --event EVENT        what to sample, as perf names it (default cpu-clock):\n"
"                           page-faults, context-switches, cycles ..., or a tracepoint\n"
"                           CATEGORY:NAME (syscalls:sys_enter_write); -e list lists them;\n"
"                           several (-e a,b, up to 8): each event's stacks under its name\n"
"  -c, --count N            a sample every N events (counts are events; default: -F a\n"
"                           second, each event of a tracepoint)\n"
"  -d, --duration SECONDS   stop after SECONDS (default: Ctrl-C, or when the targets exit)\n"
"  -o, --output FILE        write to FILE instead of standard output; several -o write the\n"
"                           same profile in several formats\n"
"  -f, --format FORMAT      folded, svg or pprof (default, by FILE's end: .svg svg,\n"
"                           .pb.gz .pb .pprof pprof (gzip'd profile.proto), else folded)\n"
"  -U, --user-only          user frames only\n"
"  -K, --kernel-only        kernel frames only\n"
"      --idle               with -a, keep the idle task's samples\n"
"      --threads            a frame NAME/TID per thread under the process name\n"
"      --group-by cgroup    the process's cgroup path as the root frame (pprof: a label)\n"
"      --map-size N         entries of the BPF stack and count maps (default: derived)\n"
"      --unwind MODE        auto (default: frame pointers, DWARF where they break), fp, dwarf\n"
"      --stack-copy BYTES   user stack copied per DWARF sample (default 16384, at most 24576)\n"
"      --no-inline          no frames for inlined functions (from DWARF)\n"
"      --no-demangle        C++ and Rust names as mangled in the symbol table\n"
"      --lines              frames as NAME (FILE:LINE), from DWARF, in folded and SVG output\n"
"                           (pprof output always has the lines)\n"
"      --no-debuginfod      fetch no debug files, whatever DEBUGINFOD_URLS says\n"
"      --debuginfod-timeout SECONDS\n"
"                           a debug file's fetch, and the end's wait for those under way,\n"
"                           at most SECONDS (default 15)\n"
"      --explain            after the summary: where stacks were cut, untrusted or left\n"
"                           unnamed, per file, and what to do about it\n"
"      --max-memory SIZE    memory for what grows with the profiled programs' files and\n"
"                           stacks (symbols, CFI, DWARF, perf maps, stacks); past it new\n"
"                           files are not parsed (default: 1/8 of RAM, at most 1G)\n"
"\n"
"Off-CPU time (where threads wait: locks, I/O, sleeps, the run queue):\n"
"      --off-cpu            time off the CPU by the stack it left with, in microseconds\n"
"                           (the kernel frames say why: futex_wait, do_nanosleep, pipe_read)\n"
"      --wall               on-CPU samples (as 1/HZ s each) and off-CPU time in one profile;\n"
"                           off-CPU stacks end in a frame [off-cpu]\n"
"      --min-block US       with either: leave out times off the CPU under US microseconds\n"
"\n"
"Continuous mode:\n"
"      --every SECONDS      one profile per period of SECONDS, written to each -o FILE, which\n"
"                           is a strftime(3) pattern expanded at the period's start\n"
"                           (%%Y%%m%%d-%%H%%M%%S...); SIGHUP ends a period at once\n"
"      --push URL           send each period to a Pyroscope server: POST URL/ingest, pprof\n"
"                           (http:// only; a server that is down or slow loses periods, with\n"
"                           a warning each, never samples)\n"
"      --app-name NAME      the application name pushed (default profile.cpu{hostname=HOST})\n"
"\n"
"  -q, --quiet              no summary at the end\n"
"  -v, --verbose            more messages (-vv: libbpf's too)\n"
"  -h, --help               this text\n"
"  -V, --version            the version\n"
"\n"
"Examples:\n"
"  profile -p 1234 -d 10 -o app.folded        a running process for 10 seconds\n"
"  profile -o ls.folded -- ls -R /usr          a command, until it exits\n"
"  profile -a -d 5 > all.folded                the whole system for 5 seconds\n"
"  profile -p 1234 -d 10 -o app.svg            an interactive flame graph\n"
"  profile -o make.svg --title 'make -j2' -- make -j2\n"
"  profile flamegraph app.folded > app.svg     a flame graph of any folded file\n"
"  profile --off-cpu -p 1234 -d 10 -o blocked.svg\n"
"                                              where a process waits, for 10 seconds\n"
"  profile --wall -o server.svg -- ./server --once\n"
"                                              on- and off-CPU time of a command\n"
"  profile --off-cpu --min-block 1000 -a -d 5  waits of 1 ms or more, whole system\n"
"  profile -e page-faults -o faults.svg -- ./app\n"
"                                              where a command faults its memory in\n"
"  profile -e syscalls:sys_enter_write -p 1234 -d 5\n"
"                                              who calls write(2), by stack\n"
"  profile -e page-faults,context-switches -o app.pb.gz -- ./app\n"
"                                              two events, a pprof sample type each\n"
"  DEBUGINFOD_URLS=https://debuginfod.debian.net profile -p 1234 -d 10 -o app.svg\n"
"                                              names of stripped Debian binaries, their\n"
"                                              debug files fetched by build id\n"
"  profile --cgroup system.slice/nginx.service -d 10 -o nginx.svg\n"
"                                              a systemd service (or a container's cgroup)\n"
"  profile -a --group-by cgroup -d 10 -o host.svg\n"
"                                              the whole system, by cgroup\n"
"  profile -a --every 60 -o 'host-%%Y%%m%%d-%%H%%M%%S.pb.gz'\n"
"                                              the whole system, one pprof file a minute\n"
"  profile -a --every 10 --push http://pyroscope:4040 --app-name 'web.cpu{env=prod}'\n"
"                                              the whole system, sent to Pyroscope\n"
"\n"
"Flame graph options (with -f svg or -o FILE.svg):\n"
"%s"
"\n"
"Exit status: 0 written, 1 runtime failure, 2 bad usage, 3 bad target (pid, command),\n"
"4 environment (privileges, BTF). See profile(1).\n";

static int usage_error(const char *fmt, const char *arg)
{
	fputs("profile: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'profile --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

static int parse_pids(struct settings *st, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int ret = 0;

	if (!copy)
		return usage_error("%s", "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long v;

		errno = 0;
		v = strtol(tok, &end, 10);
		if (errno || *end || end == tok || v <= 0 || v > INT_MAX) {
			ret = usage_error("invalid pid '%s': expected a positive number", tok);
			break;
		}
		if (st->session.nr_pids == MAX_PIDS) {
			ret = usage_error("too many pids (at most 1024)%s", "");
			break;
		}
		st->pids[st->session.nr_pids++] = (pid_t)v;
	}
	if (!ret && !st->session.nr_pids)
		ret = usage_error("invalid pid list '%s'", arg);
	free(copy);
	return ret;
}

static int parse_uint(const char *arg, const char *what, unsigned long min, unsigned long max,
		      unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || *end || end == arg || arg[0] == '-' || v < min || v > max) {
		fprintf(stderr, "profile: invalid %s '%s': expected a whole number from %lu to %lu\n",
			what, arg, min, max);
		fputs("Try 'profile --help' for more information.\n", stderr);
		return EXIT_USAGE;
	}
	*out = (unsigned int)v;
	return 0;
}

static int parse_count(const char *arg, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || *end || end == arg || arg[0] == '-' || v == 0)
		return usage_error("invalid count '%s': expected a whole number of events, at "
				   "least 1", arg);
	*out = v;
	return 0;
}

/* profile -e list: the events -e takes, and where the tracepoints are. */
static int list_events(void)
{
	static const char *const kinds[] = {
		[EVENT_CLOCK] = "software, time", [EVENT_SOFTWARE] = "software",
		[EVENT_HARDWARE] = "hardware", [EVENT_TRACEPOINT] = "tracepoint",
	};
	enum event_kind kind;
	const char *name;

	for (size_t i = 0; (name = events__name(i, &kind)); i++)
		printf("  %-28s %s%s\n", name, kinds[kind],
		       kind == EVENT_HARDWARE && access("/sys/bus/event_source/devices/cpu", F_OK) ?
		       " (not on this machine: no PMU)" : "");
	printf("  %-28s tracepoint (those of /sys/kernel/tracing/available_events)\n",
	       "CATEGORY:NAME");
	return EXIT_OK;
}

static int parse_every(const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || *end || end == arg || !isfinite(v) || v < 0.1 || v > 31536000)
		return usage_error("invalid period '%s': expected seconds, at least 0.1", arg);
	*out = v;
	return 0;
}

static int parse_duration(const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || *end || end == arg || !isfinite(v) || v <= 0 || v > 31536000)
		return usage_error("invalid duration '%s': expected seconds greater than 0", arg);
	*out = v;
	return 0;
}

enum {
	OPT_IDLE = 256, OPT_THREADS, OPT_MAP_SIZE, OPT_UNWIND, OPT_STACK_COPY, OPT_NO_INLINE,
	OPT_NO_DEMANGLE, OPT_EXPLAIN, OPT_USER, OPT_MAX_MEMORY, OPT_LINES, OPT_EVERY, OPT_PUSH,
	OPT_APP_NAME, OPT_OFF_CPU, OPT_WALL, OPT_MIN_BLOCK, OPT_CGROUP, OPT_GROUP_BY,
	OPT_EVENT_LIST, OPT_NO_DEBUGINFOD, OPT_DEBUGINFOD_TIMEOUT,
};

#define MIN_MEMORY	(16u << 20)

static int parse_max_memory(const char *arg)
{
	uint64_t bytes;

	if (limits__parse_size(arg, &bytes) || bytes < MIN_MEMORY)
		return usage_error("invalid memory size '%s': expected bytes, or a number with "
				   "K, M, G or T, at least 16M", arg);
	limits__set_budget(bytes);
	return 0;
}

static int parse_unwind(const char *arg, int *mode)
{
	if (!strcmp(arg, "auto"))
		*mode = UNWIND_AUTO;
	else if (!strcmp(arg, "fp"))
		*mode = UNWIND_FP;
	else if (!strcmp(arg, "dwarf"))
		*mode = UNWIND_DWARF;
	else
		return usage_error("unknown unwind mode '%s': expected auto, fp or dwarf", arg);
	return 0;
}

/* Whether PATH ends with SUFFIX, in any case. */
static bool ends_with(const char *path, const char *suffix)
{
	size_t n = strlen(path), m = strlen(suffix);

	return n > m && !strcasecmp(path + n - m, suffix);
}

/* The format of output PATH (NULL: standard output): FORMAT (-f) when given, else by how
 * PATH ends. */
static enum out_format output_format(const char *format, const char *path)
{
	if (format)
		return !strcmp(format, "svg") ? FMT_SVG : !strcmp(format, "pprof") ? FMT_PPROF :
		       FMT_FOLDED;
	if (path && ends_with(path, ".svg"))
		return FMT_SVG;
	if (path && (ends_with(path, ".pb.gz") || ends_with(path, ".pb") ||
		     ends_with(path, ".pprof")))
		return FMT_PPROF;
	return FMT_FOLDED;
}

/* Whether -e's LIST (NULL: cpu-clock) names an event other than the clocks: the counts are
 * events, not samples of time. (A list that does not parse is refused by the session.) */
static bool counts_events(const char *list)
{
	struct event_spec evs[PROFILE_MAX_EVENTS];
	char err[256];
	int n = list ? events__parse_list(list, evs, PROFILE_MAX_EVENTS, err, sizeof(err)) : 0;

	for (int i = 0; i < n; i++)
		if (evs[i].kind != EVENT_CLOCK)
			return true;
	return false;
}

/* -e's events that count, sampled without -F: perf's 4000 Hz, or the kernel's highest rate
 * if lower (kernel.perf_event_max_sample_rate, which the kernel lowers when sampling is slow). */
static unsigned int default_event_freq(void)
{
	unsigned int top = 0;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");

	if (f && fscanf(f, "%u", &top) != 1)
		top = 0;
	if (f)
		fclose(f);
	return top && top < DEFAULT_EVENT_FREQ ? top : DEFAULT_EVENT_FREQ;
}

static int parse_args(int argc, char **argv, struct settings *st)
{
	static const struct option own[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "frequency", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "user-only", no_argument, NULL, 'U' },
		{ "kernel-only", no_argument, NULL, 'K' },
		{ "idle", no_argument, NULL, OPT_IDLE },
		{ "threads", no_argument, NULL, OPT_THREADS },
		{ "map-size", required_argument, NULL, OPT_MAP_SIZE },
		{ "unwind", required_argument, NULL, OPT_UNWIND },
		{ "stack-copy", required_argument, NULL, OPT_STACK_COPY },
		{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "explain", no_argument, NULL, OPT_EXPLAIN },
		{ "lines", no_argument, NULL, OPT_LINES },
		{ "user", required_argument, NULL, OPT_USER },
		{ "max-memory", required_argument, NULL, OPT_MAX_MEMORY },
		{ "every", required_argument, NULL, OPT_EVERY },
		{ "push", required_argument, NULL, OPT_PUSH },
		{ "app-name", required_argument, NULL, OPT_APP_NAME },
		{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
		{ "wall", no_argument, NULL, OPT_WALL },
		{ "min-block", required_argument, NULL, OPT_MIN_BLOCK },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD },
		{ "debuginfod-timeout", required_argument, NULL, OPT_DEBUGINFOD_TIMEOUT },
		{ "event", required_argument, NULL, 'e' },
		{ "count", required_argument, NULL, 'c' },
		{ "group-by", required_argument, NULL, OPT_GROUP_BY },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
	};
	/* Ours, then the flame graph's (--title, --width, ...), then the end. */
	static struct option longopts[sizeof(own) / sizeof(own[0]) + 32];
	struct session_opts *o = &st->session;
	size_t nopts = 0;
	char fgerr[256];
	int c, err, targets;
	bool min_block = false;

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		longopts[nopts++] = own[i];
	for (size_t i = 0; fg_options[i].name && nopts + 1 < sizeof(longopts) / sizeof(longopts[0]); i++)
		longopts[nopts++] = fg_options[i];
	longopts[nopts] = (struct option){ 0 };
	fg_opts__init(&st->fg);

	o->freq = 99;
	o->pids = st->pids;
	/* '+': stop at the first non-option, the command. */
	while ((c = getopt_long(argc, argv, "+p:aF:d:o:f:UKqvhVe:c:", longopts, NULL)) != -1) {
		err = 0;
		switch (c) {
		case 'p': err = parse_pids(st, optarg); break;
		case 'a': o->all = true; break;
		case 'F':
			err = parse_uint(optarg, "frequency", 1, MAX_FREQ, &o->freq);
			o->event_freq = o->freq;
			break;
		case 'e':
			if (!strcmp(optarg, "list"))
				exit(list_events());
			/* -e a,b or -e a -e b, as perf takes them. */
			if (o->event) {
				size_t have = strlen(st->events);

				if (o->event != st->events)
					have = (size_t)snprintf(st->events, sizeof(st->events),
								"%s", o->event);
				if (have + 1 + strlen(optarg) >= sizeof(st->events))
					return usage_error("too many events (-e): '%s'", optarg);
				snprintf(st->events + have, sizeof(st->events) - have, ",%s",
					 optarg);
				o->event = st->events;
			} else {
				o->event = optarg;
			}
			break;
		case 'c': err = parse_count(optarg, &o->count); break;
		case 'd': err = parse_duration(optarg, &o->duration); break;
		case 'o':
			if (st->nr_out == MAX_OUTPUTS)
				return usage_error("%s", "at most 8 outputs (-o)");
			st->out[st->nr_out++].path = optarg;
			break;
		case 'f': st->format = optarg; break;
		case 'U': o->user_only = true; break;
		case 'K': o->kernel_only = true; break;
		case OPT_IDLE: o->idle = true; break;
		case OPT_THREADS: o->threads = true; break;
		case OPT_MAP_SIZE:
			err = parse_uint(optarg, "map size", 1024, 1 << 24, &o->map_size);
			break;
		case OPT_UNWIND: err = parse_unwind(optarg, &o->unwind_mode); break;
		case OPT_STACK_COPY:
			err = parse_uint(optarg, "stack copy size", 512, PROFILE_MAX_STACK_COPY,
					 &o->stack_copy);
			break;
		case OPT_NO_INLINE: o->no_inline = true; break;
		case OPT_NO_DEMANGLE: o->no_demangle = true; break;
		case OPT_EXPLAIN: st->explain = true; break;
		case OPT_LINES: st->lines = true; break;
		case OPT_USER: o->user = optarg; break;
		case OPT_MAX_MEMORY: err = parse_max_memory(optarg); break;
		case OPT_EVERY: err = parse_every(optarg, &o->every); break;
		case OPT_PUSH: st->push_url = optarg; break;
		case OPT_APP_NAME: st->app_name = optarg; break;
		case OPT_OFF_CPU: o->off_cpu = true; break;
		case OPT_CGROUP:
			if (o->nr_cgroups == PROFILE_MAX_CGROUPS)
				return usage_error("at most %s cgroups (--cgroup)", "8");
			st->cgroups[o->nr_cgroups++] = optarg;
			break;
		case OPT_GROUP_BY:
			if (strcmp(optarg, "cgroup"))
				return usage_error("unknown --group-by '%s': expected cgroup", optarg);
			o->group_cgroup = true;
			break;
		case OPT_WALL: o->wall = true; break;
		case OPT_NO_DEBUGINFOD: o->no_debuginfod = true; break;
		case OPT_DEBUGINFOD_TIMEOUT:
			err = parse_duration(optarg, &o->debuginfod_timeout);
			if (!err && o->debuginfod_timeout > 3600)
				err = usage_error("invalid --debuginfod-timeout '%s': at most 3600 "
						  "seconds", optarg);
			break;
		case OPT_MIN_BLOCK:
			err = parse_uint(optarg, "minimum block", 0, 3600000000ul, &o->min_block_us);
			min_block = true;
			break;
		case 'q': st->quiet = true; break;
		case 'v': log_level++; break;
		case 'h': printf(usage_text, FG_OPTIONS_HELP); exit(EXIT_OK);
		case 'V': printf("profile %s\n", PROFILE_VERSION); exit(EXIT_OK);
		default:
			if (c >= FG_OPTION_BASE &&
			    fg_opts__parse_opt(&st->fg, c, optarg, fgerr, sizeof(fgerr)) == 0)
				break;
			if (c >= FG_OPTION_BASE)
				return usage_error("%s", fgerr);
			fputs("Try 'profile --help' for more information.\n", stderr);
			return EXIT_USAGE;
		}
		if (err)
			return err;
	}
	if (optind < argc)
		o->argv = &argv[optind];
	/* -v shows the report's first lines after the summary. */
	o->explain = st->explain || (log_level >= LOG_INFO && !st->quiet);
	o->cgroups = st->cgroups;
	targets = (o->nr_pids > 0) + o->all + (o->argv != NULL);
	/* --cgroup alone: the whole system, those cgroups of it. */
	if (targets == 0 && o->nr_cgroups) {
		o->all = true;
		targets = 1;
	}
	if (targets == 0)
		return usage_error("%s", "nothing to profile: give -p PID, -a, --cgroup PATH, or a "
				   "command");
	if (targets > 1)
		return usage_error("%s", "give only one of -p PID, -a, or a command");
	if (o->user_only && o->kernel_only)
		return usage_error("%s", "-U and -K exclude each other");
	if (o->idle && !o->all)
		return usage_error("%s", "--idle goes with -a");
	if (o->user && !o->argv)
		return usage_error("%s", "--user goes with a command: it says who runs it");
	if (st->format && strcmp(st->format, "folded") && strcmp(st->format, "svg") &&
	    strcmp(st->format, "pprof"))
		return usage_error("unknown format '%s': expected folded, svg or pprof", st->format);
	if (st->push_url && !o->every)
		return usage_error("%s", "--push goes with --every: it sends one profile per period");
	if ((o->off_cpu || o->wall) && (o->event || o->count))
		return usage_error("%s", "-e and -c go with on-CPU sampling, not --off-cpu or "
				   "--wall");
	if (o->off_cpu && o->wall)
		return usage_error("%s", "--off-cpu and --wall exclude each other: --wall has the "
				   "off-CPU time too");
	if (min_block && !o->off_cpu && !o->wall)
		return usage_error("%s", "--min-block goes with --off-cpu or --wall");
	if (st->app_name && !st->push_url)
		return usage_error("%s", "--app-name goes with --push: it names what is pushed");
	if (o->every && !st->nr_out && !st->push_url)
		return usage_error("%s", "--every writes a profile per period: give -o PATTERN "
				   "(a strftime pattern) or --push URL");
	if (o->every && st->push_url)
		o->lines = true;	/* pprof, as a pprof file */
	/* Files are made as the run goes: as the user we are, not uid 65534. */
	o->keep_uid = o->every && st->nr_out;
	if (!st->nr_out && !o->every)
		st->nr_out = 1;		/* standard output */
	for (int i = 0; i < st->nr_out; i++) {
		st->out[i].format = output_format(st->format, st->out[i].path);
		/* pprof keeps each frame's line where DWARF has one, asked or not. */
		if (st->out[i].format == FMT_PPROF)
			o->lines = true;
	}
	if (st->lines)
		o->lines = true;
	/* Time, not samples: the flame graph says so, as flamegraph.pl's off-CPU graphs do
	 * (--countname=us), unless told otherwise. */
	if ((o->off_cpu || o->wall) && !strcmp(st->fg.countname, "samples"))
		st->fg.countname = "us";
	/* Events that count (page faults, ...) sampled as often as perf does without -F: a
	 * sample weighs the events on its CPU since the last, and the events after a CPU's last
	 * sample are in no stack; at 99 Hz a 20 ms burst of 16,384 page faults was two
	 * samples. */
	if (!o->event_freq)
		o->event_freq = default_event_freq();
	if (counts_events(o->event) &&
	    !strcmp(st->fg.countname, "samples"))
		st->fg.countname = "events";
	if (o->off_cpu && !st->fg.title)
		st->fg.title = "Off-CPU Time Flame Graph";
	if (o->wall && !st->fg.title)
		st->fg.title = "Wall-Clock Time Flame Graph";
	return 0;
}

static double monotonic_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int exit_status(enum session_err_kind kind)
{
	switch (kind) {
	case SESSION_ERR_USAGE: return EXIT_USAGE;
	case SESSION_ERR_TARGET: return EXIT_TARGET;
	case SESSION_ERR_ENV: return EXIT_ENV;
	default: return EXIT_RUNTIME;
	}
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

/* What was lost, when something was: WHAT ("samples", "waits") the maps or the ring buffer
 * had no room for, stacks, mmap records. */
/* What debuginfod did, when it did anything. */
static void print_fetches(const struct session_stats *st)
{
	if (!st->fetched && !st->fetch_failed && !st->fetch_pending)
		return;
	fprintf(stderr, "profile: debuginfod: %u debug file%s fetched, %u not found or failed, "
		"%u given up on\n", st->fetched, st->fetched == 1 ? "" : "s", st->fetch_failed,
		st->fetch_pending);
}

static void print_lost(const struct session_stats *st, const char *what)
{
	uint64_t samples = st->bpf[STAT_COUNTS_FULL], events = st->bpf[STAT_EVENTS_LOST];
	uint64_t stacks = st->bpf[STAT_KSTACK_COLLIDE] + st->bpf[STAT_KSTACK_FULL] +
			  st->bpf[STAT_USTACK_COLLIDE] + st->bpf[STAT_USTACK_FULL];

	if (samples || events || stacks || st->mmap_lost)
		fprintf(stderr, "profile: lost %llu %s (count map full), %llu %s (ring buffer "
			"full), %llu stacks (map full or collision), %llu mmap records\n",
			(unsigned long long)samples, what, (unsigned long long)events, what,
			(unsigned long long)stacks, (unsigned long long)st->mmap_lost);
}

/* The end-of-run summary on stderr: what was sampled, how stacks were unwound, what was
 * lost (only when something was). */
static void print_summary(const struct session_stats *st, size_t nr_stacks,
			  const struct settings *set)
{
	char where[512] = "";

	for (int i = 0; i < set->nr_out; i++) {
		size_t n = strlen(where);

		snprintf(where + n, sizeof(where) - n, "%s%s", i ? ", " : "",
			 set->out[i].path ? set->out[i].path : "standard output");
	}
	if (set->push_url) {
		size_t n = strlen(where);

		snprintf(where + n, sizeof(where) - n, "%s%s", n ? ", " : "", set->push_url);
	}

	if (set->session.off_cpu || set->session.wall) {
		char min[64] = "";

		if (set->session.min_block_us)
			snprintf(min, sizeof(min), " of %u us or more", set->session.min_block_us);
		fprintf(stderr, "profile: %.3f s off the CPU in %llu waits%s, %.1f%% of it on "
			"truncated stacks\n", st->off_ns / 1e9,
			(unsigned long long)st->bpf[STAT_OFF_CPU], min,
			pct(st->off_truncated_ns, st->off_ns));
		if (st->off_unmatched)
			fprintf(stderr, "profile: lost %llu waits whose stacks were lost (ring "
				"buffer full, or past --max-memory)\n",
				(unsigned long long)st->off_unmatched);
	}
	if (set->session.off_cpu) {
		if (set->session.every)
			fprintf(stderr, "profile: off-CPU time over %.1f s, %u periods, written to "
				"%s\n", st->seconds, set->periods, where);
		else
			fprintf(stderr, "profile: off-CPU time over %.1f s, %zu distinct stacks, "
				"written to %s\n", st->seconds, nr_stacks, where);
		print_lost(st, "waits");
		print_fetches(st);
		limits__report(stderr, "profile");
		return;
	}
	const char *ev = set->session.event;
	/* -e EVENT other than the clocks: the counts are events, the samples BPF's count. */
	bool events = counts_events(ev);
	uint64_t nsamples = events ? st->bpf[STAT_SAMPLES] : st->samples;
	char what[128];

	if (events)
		snprintf(what, sizeof(what), "%llu %s (%llu samples)",
			 (unsigned long long)st->samples, ev, (unsigned long long)nsamples);
	else
		snprintf(what, sizeof(what), "%llu samples", (unsigned long long)st->samples);
	if (set->session.every)
		fprintf(stderr, "profile: %s in %.1f s on %d CPUs, %u periods, written to %s\n",
			what, st->seconds, st->nr_cpus, set->periods, where);
	else
		fprintf(stderr, "profile: %s in %.1f s on %d CPUs, %zu distinct stacks, written "
			"to %s\n", what, st->seconds, st->nr_cpus, nr_stacks, where);
	/* How far the counts may fall short: the events after each CPU's last sample. */
	if (events && st->ev_unsampled)
		fprintf(stderr, "profile: %llu %s came after the last sample on their CPU (any "
			"task's): in no stack\n", (unsigned long long)st->ev_unsampled,
			strchr(ev, ',') ? "events" : ev);
	fprintf(stderr, "profile: user stacks %.1f%% DWARF-unwound", pct(st->dwarf, nsamples));
	/* Walks that met a function keeping no frame record where it called: perf -g and bcc
	 * show those stacks with frames missing. */
	if (st->bpf[STAT_FP_NOREC])
		fprintf(stderr, " (%.1f%% where frame pointers could not be trusted)",
			pct(st->bpf[STAT_FP_NOREC], nsamples));
	fprintf(stderr, ", %.1f%% truncated", pct(st->truncated, st->samples));
	for (int i = 1, first = 1; i < UNWIND_STOP__MAX; i++) {
		if (!st->unwind_stop[i])
			continue;
		fprintf(stderr, "%s%s %llu", first ? " (DWARF stopped early: " : ", ",
			unwind_stop_names[i], (unsigned long long)st->unwind_stop[i]);
		first = 0;
	}
	for (int i = 1; i < UNWIND_STOP__MAX; i++)
		if (st->unwind_stop[i]) {
			fputc(')', stderr);
			break;
		}
	fputc('\n', stderr);
	print_lost(st, "samples");
	print_fetches(st);
	if (st->off_unmatched)
		fprintf(stderr, "profile: lost %llu samples whose stacks were lost (ring buffer "
			"full, or past --max-memory)\n", (unsigned long long)st->off_unmatched);
	/* What the profiled programs' files and stacks made us leave out. */
	limits__report(stderr, "profile");
	pr_info("memory for what grows with the input: at most %.1f MiB of %.1f MiB "
		"(--max-memory)", limits__peak() / 1048576.0, limits__budget() / 1048576.0);
	if (st->unwind_frames)
		pr_info("DWARF unwinding: %llu frames in %.1f ms, %.3f us per frame, %.1f%% of "
			"stacks by cached CFI rules; stack copies of %.1f KiB on average",
			(unsigned long long)st->unwind_frames, st->unwind_ns / 1e6,
			st->unwind_ns / 1e3 / st->unwind_frames,
			pct(st->unwind_fast, st->unwind_fast + st->unwind_slow),
			st->dwarf ? st->copy_bytes / 1024.0 / st->dwarf : 0.0);
	if (st->queued)
		pr_info("DWARF unwinding: %llu samples waited for the worker's unwind tables (at "
			"most %llu at once)", (unsigned long long)st->queued,
			(unsigned long long)st->queued_max);
	if (st->files_forgotten)
		pr_info("%llu files forgotten between periods once no process mapped them",
			(unsigned long long)st->files_forgotten);
	if (getenv("PROFILE_UNWIND_CHECK"))
		pr_info("unwind check: %llu of %llu fast-path stacks differ from libunwind's",
			(unsigned long long)st->unwind_mismatches,
			(unsigned long long)st->unwind_fast);
}

/* What --explain's shares are of: samples, or with --off-cpu/--wall nanoseconds (the
 * model's weights). */
static uint64_t explain_total(struct session *s, const struct settings *st)
{
	const struct session_stats *ss = session__stats(s);

	if (st->session.off_cpu)
		return ss->off_ns;
	if (st->session.wall)
		return ss->off_ns + ss->samples * (1000000000ull / st->session.freq);
	return ss->samples;
}

/* Open every -o file for writing (standard output otherwise). Returns 0 or EXIT_RUNTIME
 * after one sentence. */
static int open_outputs(struct settings *st)
{
	for (int i = 0; i < st->nr_out; i++) {
		struct output *o = &st->out[i];

		o->f = o->path ? fopen(o->path, "we") : stdout;
		if (!o->f) {
			pr_warn("cannot write '%s': %s", o->path, strerror(errno));
			return EXIT_RUNTIME;
		}
	}
	return 0;
}

/* The profile P (folded: F) into output O, open as OUT and called NAME, in its format; PO
 * says when it was sampled. Returns 0 or EXIT_RUNTIME after one sentence. */
static int write_output(const struct settings *st, const struct output *o, FILE *out,
			const char *name, const struct profile *p, const struct folded *f,
			const struct pprof_opts *po)
{
	static const char *const fmt_names[] = { "folded", "svg", "pprof" };
	double t = monotonic_seconds();
	long at = ftell(out);
	int err;

	switch (o->format) {
	case FMT_SVG: err = flamegraph__write_folded(f, out, &st->fg); break;
	case FMT_PPROF: err = pprof__write(p, po, out); break;
	default: err = folded__write(f, out); break;
	}
	if (!err && fflush(out))
		err = -errno;
	if (err) {
		pr_warn("cannot write %s: %s", name, strerror(-err));
		return EXIT_RUNTIME;
	}
	/* For bench/: what each format costs to make and how big it is. */
	if (at >= 0 && ftell(out) >= at)
		pr_info("wrote %s (%s): %ld bytes in %.3f s", name, fmt_names[o->format],
			ftell(out) - at, monotonic_seconds() - t);
	else
		pr_info("wrote %s (%s) in %.3f s", name, fmt_names[o->format],
			monotonic_seconds() - t);
	return 0;
}

static struct pprof_opts pprof_times(const struct timespec *started, double seconds)
{
	return (struct pprof_opts){
		.time_nanos = (int64_t)started->tv_sec * 1000000000 + started->tv_nsec,
		.duration_nanos = (int64_t)(seconds * 1e9),
	};
}

/* The profile P (folded: F) into every output, each in its format; STARTED and SECONDS say
 * when and how long it was sampled (pprof keeps them). Returns 0 or EXIT_RUNTIME after one
 * sentence. */
static int write_outputs(const struct settings *st, const struct profile *p,
			 const struct folded *f, const struct timespec *started, double seconds)
{
	struct pprof_opts po = pprof_times(started, seconds);

	for (int i = 0; i < st->nr_out; i++) {
		const struct output *o = &st->out[i];
		int err = write_output(st, o, o->f, o->path ? o->path : "standard output", p, f,
				       &po);

		if (err)
			return err;
	}
	return 0;
}

/* Close the -o files. Returns 0, or -1 after one sentence per file that failed. */
static int close_outputs(struct settings *st)
{
	int ret = 0;

	for (int i = 0; i < st->nr_out; i++) {
		struct output *o = &st->out[i];

		if (o->f && o->f != stdout && fclose(o->f)) {
			pr_warn("cannot write '%s': %s", o->path, strerror(errno));
			ret = -1;
		}
		o->f = NULL;
	}
	return ret;
}

/* --- continuous mode ------------------------------------------------------------------------ */

/* The -o PATTERN expanded (strftime, local time) for a period that began at T, into BUF
 * (SIZE bytes). Returns 0, or -1 when it names no file or one longer than SIZE - 1. */
static int expand_pattern(const char *pattern, time_t t, char *buf, size_t size)
{
	struct tm tm;

	if (!localtime_r(&t, &tm))
		return -1;
	return strftime(buf, size, pattern, &tm) ? 0 : -1;
}

/* Before sampling: each -o pattern names a file in a directory we may write. Returns 0, or an
 * exit status after one sentence. */
static int check_patterns(const struct settings *st)
{
	char name[PATH_MAX + 16];

	for (int i = 0; i < st->nr_out; i++) {
		const char *pat = st->out[i].path;
		char *dir;

		if (expand_pattern(pat, time(NULL), name, PATH_MAX))
			return usage_error("the output pattern '%s' names no file (or one too long)",
					   pat);
		dir = dirname(name);
		if (access(dir, W_OK)) {
			pr_warn("cannot write in '%s' (from -o %s): %s", dir, pat, strerror(errno));
			return EXIT_RUNTIME;
		}
		if (!strchr(pat, '%'))
			pr_info("-o %s has no %% in it: each period overwrites the last", pat);
	}
	return 0;
}

/* Output O's file for the period that began at T, with the profile P (folded: F): written to
 * NAME.partial, renamed to NAME once whole (a reader never sees half a file). Returns 0 or
 * -1 after one sentence. */
static int write_period_file(const struct settings *st, const struct output *o, time_t t,
			     const struct profile *p, const struct folded *f,
			     const struct pprof_opts *po)
{
	char name[PATH_MAX], part[PATH_MAX + 16];
	FILE *out;
	int err;

	if (expand_pattern(o->path, t, name, sizeof(name))) {
		pr_warn("the output pattern '%s' names no file: this period's profile is lost",
			o->path);
		return -1;
	}
	snprintf(part, sizeof(part), "%s.partial", name);
	out = fopen(part, "we");
	if (!out) {
		pr_warn("cannot write '%s': %s; this period's profile is lost", part,
			strerror(errno));
		return -1;
	}
	err = write_output(st, o, out, name, p, f, po);
	if (fclose(out) && !err) {
		pr_warn("cannot write '%s': %s", part, strerror(errno));
		err = -1;
	}
	if (!err && rename(part, name)) {
		pr_warn("cannot rename '%s' to '%s': %s", part, name, strerror(errno));
		err = -1;
	}
	if (err)
		unlink(part);
	return err ? -1 : 0;
}

/* The period's profile P (gzip'd pprof) queued for the server. */
static void push_period(struct settings *st, const struct profile *p,
			const struct pprof_opts *po, const struct timespec *start, double secs)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int64_t from = start->tv_sec, until = (int64_t)(start->tv_sec + start->tv_nsec / 1e9 +
							secs + 0.5);
	int err;

	if (!mem) {
		pr_warn("cannot push this period's profile: out of memory");
		return;
	}
	err = pprof__write(p, po, mem);
	if (fclose(mem) || err) {
		pr_warn("cannot push this period's profile: %s", strerror(err ? -err : ENOMEM));
		free(buf);
		return;
	}
	pusher__push(st->pusher, buf, len, from, until > from ? until : from + 1);
}

/* The period that just ended (session__build_profile takes it) into every -o file and to the
 * server. A period lost counts in st->period_failed; returns 0, or an exit status when the
 * session failed. */
static int take_period(struct settings *st, struct session *s)
{
	struct profile *p = profile__new();
	struct folded *f = NULL;
	enum session_err_kind kind;
	struct pprof_opts po;
	struct timespec start;
	double secs;
	bool folded = false;
	int ret = 0;

	for (int i = 0; i < st->nr_out; i++)
		folded |= st->out[i].format != FMT_PPROF;
	if (folded)
		f = folded__new();
	if (!p || (folded && !f)) {
		pr_warn("out of memory: this period's profile is lost");
		st->period_failed = true;
		goto out;
	}
	if (session__build_profile(s, p)) {
		pr_warn("%s", session__error(s, &kind));
		ret = exit_status(kind);
		goto out;
	}
	session__period(s, &start, &secs);
	po = pprof_times(&start, secs);
	if (f && folded__add_profile(f, p, st->lines ? FOLDED_LINES : 0)) {
		pr_warn("out of memory: this period's profile is lost");
		st->period_failed = true;
		goto out;
	}
	for (int i = 0; i < st->nr_out; i++)
		if (write_period_file(st, &st->out[i], start.tv_sec, p, f, &po))
			st->period_failed = true;
	if (st->pusher)
		push_period(st, p, &po, &start, secs);
	st->periods++;
out:
	folded__free(f);
	profile__free(p);
	return ret;
}

/* --app-name's default: profile.cpu{hostname=HOST}, HOST kept to what a label value takes
 * unquoted. */
static void default_app_name(char *buf, size_t size)
{
	char host[256] = "unknown";

	if (gethostname(host, sizeof(host) - 1))
		strcpy(host, "unknown");
	host[sizeof(host) - 1] = '\0';
	for (char *c = host; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '.' && *c != '-' && *c != '_')
			*c = '_';
	snprintf(buf, size, "profile.cpu{hostname=%s}", host);
}

/* Sample period after period until the run ends, then the last period; what was not pushed
 * after a short grace is dropped. Returns the exit status. */
static int run_continuous(struct settings *st, struct session *s)
{
	enum session_err_kind kind;
	int ret = 0, err;

	for (;;) {
		err = session__run(s);
		if (err != SESSION_PERIOD_END)
			break;
		ret = take_period(st, s);
		if (ret)
			return ret;
	}
	if (err) {
		pr_warn("%s", session__error(s, &kind));
		st->quiet = true;
		st->explain = false;
	}
	ret = take_period(st, s);
	if (st->pusher) {
		unsigned int lost = pusher__free(st->pusher, PUSH_GRACE_S);

		st->pusher = NULL;
		if (lost)
			pr_info("%u periods not pushed", lost);
	}
	if (!ret && session__error(s, &kind))
		ret = exit_status(kind);
	if (!ret && st->period_failed)
		ret = EXIT_RUNTIME;
	return ret;
}

/* Under sudo a command runs as root unless --user says otherwise: files it writes in the
 * user's tree become root's. One line says so (not with -q). */
static void sudo_notice(const struct settings *st)
{
	const char *uid = getenv("SUDO_UID"), *user = getenv("SUDO_USER");

	if (st->session.argv && !st->session.user && !st->quiet && uid && strcmp(uid, "0") &&
	    geteuid() == 0)
		pr_warn("the command runs as root; --user %s runs it as the user who ran sudo",
			user && *user ? user : uid);
}

int main(int argc, char **argv)
{
	struct settings st = { 0 };
	enum session_err_kind kind = 0;
	struct session *s = NULL;
	struct profile *profile = NULL;
	struct folded *folded = NULL;
	char *errmsg = NULL;
	double t_sampled;
	struct timespec started;
	int ret;

	if (argc > 1 && !strcmp(argv[1], "flamegraph"))
		return flamegraph_main(argc - 1, argv + 1);
	ret = parse_args(argc, argv, &st);
	if (ret)
		return ret;
	sudo_notice(&st);
	/* Open the outputs first: a path that cannot be written fails before any sampling. */
	ret = st.session.every ? check_patterns(&st) : open_outputs(&st);
	if (ret)
		goto out;
	if (st.push_url) {
		char app[300];
		const char *why;

		if (!st.app_name)
			default_app_name(app, sizeof(app));
		st.pusher = pusher__new(st.push_url, st.app_name ? st.app_name : app,
					st.session.freq, &why);
		if (!st.pusher) {
			ret = errno == EINVAL ? usage_error("--push: %s", why) : EXIT_RUNTIME;
			if (errno != EINVAL)
				pr_warn("cannot push: %s", strerror(errno));
			goto out;
		}
	}
	folded = folded__new();
	profile = profile__new();
	if (!folded || !profile) {
		fprintf(stderr, "profile: out of memory\n");
		ret = EXIT_RUNTIME;
		goto out;
	}
	st.session.status_line = !st.quiet && isatty(STDERR_FILENO);
	s = session__open(&st.session, &errmsg, &kind);
	if (!s) {
		pr_warn("%s", errmsg ? errmsg : "cannot start");
		ret = exit_status(kind);
		goto out;
	}
	if (st.session.every) {
		ret = run_continuous(&st, s);
		if (!st.quiet)
			print_summary(session__stats(s), 0, &st);
		/* --explain: over the whole run. */
		if (session__explain(s) && (st.explain || !st.quiet) &&
		    explain__write(session__explain(s), stderr, explain_total(s, &st),
				   st.session.off_cpu || st.session.wall,
				   st.explain ? EXPLAIN_LINES : EXPLAIN_LINES_VERBOSE)) {
			fprintf(stderr, "profile: out of memory\n");
			ret = EXIT_RUNTIME;
		}
		goto out;
	}
	clock_gettime(CLOCK_REALTIME, &started);
	/* Whatever run says, what was sampled is written. */
	if (session__run(s)) {
		pr_warn("%s", session__error(s, &kind));
		st.quiet = true;
		st.explain = false;
	}
	t_sampled = monotonic_seconds();
	if (session__build_profile(s, profile)) {
		pr_warn("%s", session__error(s, &kind));
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (folded__add_profile(folded, profile, st.lines ? FOLDED_LINES : 0)) {
		fprintf(stderr, "profile: out of memory\n");
		ret = EXIT_RUNTIME;
		goto out;
	}
	ret = write_outputs(&st, profile, folded, &started, session__stats(s)->seconds);
	if (ret)
		goto out;
	pr_info("end of sampling to output written: %.3f s (drain, unwind, symbolize, write)",
		monotonic_seconds() - t_sampled);
	if (session__error(s, &kind))
		ret = exit_status(kind);
	if (!st.quiet)
		print_summary(session__stats(s), folded__nr_stacks(folded), &st);
	if (session__explain(s) && (st.explain || !st.quiet) &&
	    explain__write(session__explain(s), stderr, explain_total(s, &st),
			   st.session.off_cpu || st.session.wall,
			   st.explain ? EXPLAIN_LINES : EXPLAIN_LINES_VERBOSE)) {
		fprintf(stderr, "profile: out of memory\n");
		ret = EXIT_RUNTIME;
	}
out:
	if (!st.session.every && close_outputs(&st) && !ret)
		ret = EXIT_RUNTIME;
	pusher__free(st.pusher, 0);
	session__free(s);
	folded__free(folded);
	profile__free(profile);
	free(errmsg);
	return ret;
}

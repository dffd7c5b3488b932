// SPDX-License-Identifier: GPL-3.0-or-later
/* profile: the options, as a table, and what they say together. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/limits.h"
#include "base/log.h"
#include "collect/events.h"
#include "cli.h"

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

/* Whether ARG is spelled as an option: "-x..." or "--x..." ("-", "--" and "-5" are not). */
static bool looks_like_option(const char *arg)
{
	const char *p = arg[0] == '-' ? (arg[1] == '-' ? arg + 2 : arg + 1) : NULL;

	return p && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'));
}

/* The option getopt stopped at: short OPT ("-F", even inside "-qF"), else ARG as given. */
static const char *option_name(int opt, const char *arg)
{
	static char buf[8];

	if (opt > 0 && opt < 128 && arg[0] == '-' && arg[1] != '-') {
		snprintf(buf, sizeof(buf), "-%c", opt);
		return buf;
	}
	return arg;
}

/* The sentence for option OPT whose value VALUE is another option. */
static const char *value_is_option(const char *opt, const char *value)
{
	static char msg[256];

	if (opt[0] == '-' && opt[1] == '-')
		snprintf(msg, sizeof(msg), "%s needs a value, and '%s' is an option (%s=%s "
			 "gives it a value that begins with '-')", opt, value, opt, value);
	else
		snprintf(msg, sizeof(msg), "%s needs a value, and '%s' is an option (%s%s "
			 "gives it a value that begins with '-')", opt, value, opt, value);
	return msg;
}

static int parse_every(const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || *end || end == arg || !isfinite(v) || v < 0.1 || v > 31536000)
		return usage_error("invalid period '%s': expected a number of seconds (10, or "
				   "2.5), from 0.1 to 31536000 (a year)", arg);
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
		return usage_error("invalid duration '%s': expected a number of seconds (10, or "
				   "2.5), more than 0 and at most 31536000 (a year)", arg);
	*out = v;
	return 0;
}

enum {
	OPT_IDLE = 256, OPT_THREADS, OPT_MAP_SIZE, OPT_UNWIND, OPT_STACK_COPY, OPT_NO_INLINE,
	OPT_NO_DEMANGLE, OPT_EXPLAIN, OPT_USER, OPT_MAX_MEMORY, OPT_LINES, OPT_EVERY, OPT_PUSH,
	OPT_APP_NAME, OPT_OFF_CPU, OPT_WALL, OPT_MIN_BLOCK, OPT_CGROUP, OPT_GROUP_BY,
	OPT_EVENT_LIST, OPT_NO_DEBUGINFOD, OPT_DEBUGINFOD_TIMEOUT, OPT_TOP, OPT_CHILDREN,
	OPT_NO_RUNTIME,
	OPT_SELF,
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
		       !strcmp(format, "speedscope") ? FMT_SPEEDSCOPE : FMT_FOLDED;
	if (path && ends_with(path, ".svg"))
		return FMT_SVG;
	if (path && ends_with(path, ".speedscope.json"))
		return FMT_SPEEDSCOPE;
	if (path && (ends_with(path, ".pb.gz") || ends_with(path, ".pb") ||
		     ends_with(path, ".pprof")))
		return FMT_PPROF;
	return FMT_FOLDED;
}

/* The format PATH's end names: FMT_SVG, FMT_PPROF, FMT_FOLDED for .folded and the like, or
 * no extension at all (/dev/null, "out": *NAMED false); -1 for an extension of another
 * format. */
static int format_of_name(const char *path, bool *named)
{
	static const char *const folded[] = { ".folded", ".txt", ".collapsed", ".stacks" };
	const char *base = strrchr(path, '/'), *dot;

	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	*named = dot && dot != base;
	if (!*named)
		return FMT_FOLDED;
	if (ends_with(base, ".svg"))
		return FMT_SVG;
	if (ends_with(base, ".speedscope.json"))
		return FMT_SPEEDSCOPE;
	if (ends_with(base, ".pb.gz") || ends_with(base, ".pb") || ends_with(base, ".pprof"))
		return FMT_PPROF;
	for (size_t i = 0; i < sizeof(folded) / sizeof(folded[0]); i++)
		if (!strcmp(dot, folded[i]))
			return FMT_FOLDED;
	return -1;
}

/* -o PATH with -f FORMAT (or none): an extension of no format of ours is refused unless -f
 * says one; one that says another than -f is a clash. Returns 0 or EXIT_USAGE. */
static int check_output_name(const char *path, const char *format)
{
	static const char *const names[] = { "folded", "svg", "pprof", "speedscope" };
	bool named;
	int by_name = format_of_name(path, &named);

	if (by_name < 0 && !format) {
		fprintf(stderr, "profile: -o %s: its name says no format of profile's; name it "
			"*.folded, *.svg, *.pb.gz or *.speedscope.json, or say which with -f "
			"folded, svg, pprof or speedscope\n",
			path);
		fputs("Try 'profile --help' for more information.\n", stderr);
		return EXIT_USAGE;
	}
	if (named && by_name >= 0 && format && strcmp(names[by_name], format)) {
		fprintf(stderr, "profile: -o %s is named as %s and -f says %s: one of them is "
			"wrong\n", path, names[by_name], format);
		fputs("Try 'profile --help' for more information.\n", stderr);
		return EXIT_USAGE;
	}
	return 0;
}

/* Whether -e's LIST (NULL: cpu-clock) names an event other than the clocks: the counts are
 * events, not samples of time. (A list that does not parse is refused by the session.) */
bool counts_events(const char *list)
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

/* The long options: ours, then the flame graph's (--title, --width, ...) in parse_args. */
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
	{ "children", no_argument, NULL, OPT_CHILDREN },
	{ "no-runtime", no_argument, NULL, OPT_NO_RUNTIME },
	{ "self", no_argument, NULL, OPT_SELF },
	{ "top", required_argument, NULL, OPT_TOP },
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

static int check_settings(struct settings *st, bool min_block);

int parse_args(int argc, char **argv, struct settings *st)
{
	/* Ours, then the flame graph's (--title, --width, ...), then the end. */
	static struct option longopts[sizeof(own) / sizeof(own[0]) + 32];
	struct session_opts *o = &st->session;
	size_t nopts = 0;
	char fgerr[256];
	int c, err;
	bool min_block = false;

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		longopts[nopts++] = own[i];
	nopts = fg_options__append(longopts, nopts, sizeof(longopts) / sizeof(longopts[0]));
	fg_opts__init(&st->fg);

	o->freq = 99;
	o->pids = st->pids;
	/* '+': stop at the first non-option, the command. */
	optind = 1;
	opterr = 0;	/* our own sentences, beginning "profile:" */
	while ((c = getopt_long(argc, argv, "+:p:aF:d:o:f:UKqvhVe:c:", longopts, NULL)) != -1) {
		err = 0;
		/* An option's value that is the next option ("--title -d 1"): refused; a value
		 * that begins with '-' goes as --title=-x. ("-" alone is standard output.) */
		if (c != '?' && c != ':' && optarg && optarg == argv[optind - 1] &&
		    looks_like_option(optarg))
			return usage_error("%s", value_is_option(argv[optind - 2], optarg));
		switch (c) {
		case '?':
		case ':':
			return usage_error(c == '?' ? "unknown option '%s'" : "%s needs a value",
					   option_name(optopt, argv[optind - 1]));
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
			/* "-": standard output, as for profile flamegraph. */
			st->out[st->nr_out++].path = strcmp(optarg, "-") ? optarg : NULL;
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
			/* 0: no copies at all. */
			o->no_copy = !strcmp(optarg, "0");
			if (!o->no_copy)
				err = parse_uint(optarg, "stack copy size", 512,
						 PROFILE_MAX_STACK_COPY, &o->stack_copy);
			break;
		case OPT_NO_INLINE: o->no_inline = true; break;
		case OPT_NO_DEMANGLE: o->no_demangle = true; break;
		case OPT_EXPLAIN: st->explain = true; break;
		case OPT_CHILDREN: o->children = true; break;
		case OPT_NO_RUNTIME: o->no_runtime = true; break;
		case OPT_SELF: o->self = true; break;
		case OPT_TOP:
			err = parse_uint(optarg, "--top", 0, 1000, &st->top);
			st->top_set = true;
			break;
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
		case 'h': print_usage(); exit(EXIT_OK);
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
	return check_settings(st, min_block);
}

/* What the options say together: the targets, what excludes what, the defaults that follow
 * from the others. Returns 0, or EXIT_USAGE with the message printed. */
static int check_settings(struct settings *st, bool min_block)
{
	struct session_opts *o = &st->session;
	int targets;

	/* -v shows the report's first lines after the summary. */
	/* Gathered always: the summary names the files without names; the report is shown
	 * with --explain, its first lines with -v. */
	o->explain = true;
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
	    strcmp(st->format, "pprof") && strcmp(st->format, "speedscope"))
		return usage_error("unknown format '%s': expected folded, svg, pprof or speedscope",
				   st->format);
	if (st->push_url && !o->every)
		return usage_error("%s", "--push goes with --every: it sends one profile per period");
	if ((o->off_cpu || o->wall) && (o->event || o->count))
		return usage_error("%s", "-e and -c go with on-CPU sampling, not --off-cpu or "
				   "--wall");
	if (o->no_copy && o->unwind_mode != UNWIND_AUTO)
		return usage_error("%s", "--stack-copy 0 goes with --unwind auto: without copies, "
				   "stacks are walked in BPF, by frame pointers and from the unwind "
				   "tables");
	if (o->off_cpu && o->wall)
		return usage_error("%s", "--off-cpu and --wall exclude each other: --wall has the "
				   "off-CPU time too");
	if (min_block && !o->off_cpu && !o->wall)
		return usage_error("%s", "--min-block goes with --off-cpu or --wall");
	if (st->app_name && !st->push_url)
		return usage_error("%s", "--app-name goes with --push: it names what is pushed");
	if (o->self && !o->all)
		return usage_error("%s", "--self goes with -a (profile's own processes are left "
				   "out of the whole system's unless asked for)");
	if (o->children && !o->nr_pids)
		return usage_error("%s", "--children goes with -p (a command's children are "
				   "profiled anyway, and -a has every process)");
	if (st->top_view && (st->nr_out || st->push_url || st->format))
		return usage_error("%s", "top shows the hottest functions and writes no file: "
				   "-o, -f and --push are for profile itself");
	if (st->top_view && !o->every)
		o->every = 1;		/* a refresh a second */
	if (o->every && !st->nr_out && !st->push_url && !st->top_view)
		return usage_error("%s", "--every writes a profile per period: give -o PATTERN "
				   "(a strftime pattern) or --push URL");
	if (o->every && st->push_url)
		o->lines = true;	/* pprof, as a pprof file */
	/* Files are made as the run goes: as the user we are, not uid 65534. */
	o->keep_uid = o->every && st->nr_out;
	if (!st->nr_out && !o->every && !st->top_view)
		st->nr_out = 1;		/* standard output */
	for (int i = 0; i < st->nr_out; i++) {
		/* (Continuous mode's names are strftime patterns: their ends say all the same.) */
		if (st->out[i].path && check_output_name(st->out[i].path, st->format))
			return EXIT_USAGE;
		st->out[i].format = output_format(st->format, st->out[i].path);
		/* pprof keeps each frame's line where DWARF has one, asked or not. */
		if (st->out[i].format == FMT_PPROF)
			o->lines = true;
		/* A timeline: each sample's time, which BPF then sends. */
		if (st->out[i].format == FMT_SPEEDSCOPE)
			o->timeline = true;
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
	/* (The graph's title says what was profiled, its subtitle what time: outputs.c.) */
	return 0;
}

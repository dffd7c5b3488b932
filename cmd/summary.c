// SPDX-License-Identifier: GPL-3.0-or-later
/* profile: the summary after a run, on stderr. */
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "base/limits.h"
#include "base/log.h"
#include "collect/explain.h"
#include "output/top.h"
#include "unwind/unwind.h"
#include "cli.h"

extern char **environ;

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

/* PART of WHOLE as "12.3%", "<0.1%" when some but under 0.05%, never over 100%. */
static const char *share(uint64_t part, uint64_t whole, char *buf, size_t len)
{
	double p = pct(part < whole ? part : whole, whole);

	if (part && p < 0.05)
		snprintf(buf, len, "<0.1%%");
	else
		snprintf(buf, len, "%.1f%%", p);
	return buf;
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

/* The upper edge in ns of `btimes` bucket I (the last's: its lower edge). */
static unsigned int bpf_time_edge(unsigned int i)
{
	if (i >= PROFILE_TIME_BUCKETS - 1)
		i = PROFILE_TIME_BUCKETS - 2;
	if (i < PROFILE_TIME_FINE)
		return (i + 1) * PROFILE_TIME_STEP;
	return PROFILE_TIME_FINE * PROFILE_TIME_STEP + (i + 1 - PROFILE_TIME_FINE) *
	       PROFILE_TIME_COARSE;
}

/* The time under which P percent of the N runs of BUCKETS (PROFILE_TIME_BUCKETS) took. */
static unsigned int bucket_share(const uint64_t *buckets, uint64_t n, unsigned int p)
{
	uint64_t seen = 0;
	unsigned int i;

	for (i = 0; i < PROFILE_TIME_BUCKETS; i++) {
		seen += buckets[i];
		if (seen * 100 >= n * p)
			break;
	}
	return bpf_time_edge(i);
}

/* PROFILE_BPF_TIMES: the distribution of the programs' run times (-v). */
static void print_bpf_times(const struct session_stats *st)
{
	static const char *const kinds[PROFILE_TIME_KINDS] = {
		"a profiled task's sample", "a switch taking a profiled task's stacks",
		"a sample of the first process profiled", "a sample of the second process",
	};

	for (int k = 0; k < PROFILE_TIME_KINDS; k++) {
		const uint64_t *b = st->bpf_times + k * PROFILE_TIME_BUCKETS;
		uint64_t n = 0;

		for (int i = 0; i < PROFILE_TIME_BUCKETS; i++)
			n += b[i];
		if (n)
			pr_info("BPF run time of %s: P50 <= %u ns, P90 <= %u ns, P99 <= %u ns, "
				"mean %.0f ns (%llu runs, PROFILE_BPF_TIMES)", kinds[k],
				bucket_share(b, n, 50), bucket_share(b, n, 90),
				bucket_share(b, n, 99),
				(double)st->bpf_times[PROFILE_TIME_KINDS * PROFILE_TIME_BUCKETS +
						      k] / (double)n,
				(unsigned long long)n);
	}
}

/* PROFILE_BPF_TIMES=parts: the ns a sample spent in each part of its run, on average (-v). */
static void print_bpf_parts(const struct session_stats *st)
{
	static const char *const parts[TPART__MAX] = {
		[TPART_START] = "start and kernel stack",
		[TPART_FP_WALK] = "frame-pointer walk",
		[TPART_TAB_SETUP] = "tables' walk setup",
		[TPART_TAB_FIRST] = "its first frame",
		[TPART_TAB_SECOND] = "its second",
		[TPART_TAB_REST] = "its others",
		[TPART_TAB_END] = "its end",
		[TPART_HASH] = "to the hash",
		[TPART_COUNTED] = "counted in the CPU's cache",
		[TPART_STORED] = "else stack stored",
		[TPART_COUNTED_NEW] = "counted in the map",
	};
	uint64_t n = st->bpf[STAT_SAMPLES], any = 0;
	char line[512];
	int len = 0;

	for (int k = 1; k < TPART__MAX; k++)
		any |= st->bpf_parts[k];
	if (!n || !any)
		return;
	for (int k = 1; k < TPART__MAX && len < (int)sizeof(line) - 64; k++)
		len += snprintf(line + len, sizeof(line) - (size_t)len, "%s%s %.0f", k > 1 ? ", " : "",
				parts[k], (double)st->bpf_parts[k] / (double)n);
	pr_info("BPF run time of a sample by part, ns on average over %llu samples "
		"(PROFILE_BPF_TIMES=parts; each part's clock read in it): %s",
		(unsigned long long)n, line);
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
	if (st->bpf[STAT_NESTED])
		fprintf(stderr, "profile: lost %llu samples that came while their CPU ran "
			"profile's switch program (an event's interrupt, or a tracepoint "
			"its reads hit)\n",
			(unsigned long long)st->bpf[STAT_NESTED]);
}

/* The end-of-run summary on stderr: what was sampled, how stacks were unwound, what was
 * lost (only when something was). */
void print_summary(const struct session_stats *st, size_t nr_stacks,
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
			(unsigned long long)(st->bpf[STAT_OFF_CPU] + st->off_waits_end), min,
			pct(st->off_truncated_ns, st->off_ns));
		if (st->off_unmatched)
			fprintf(stderr, "profile: lost %llu waits whose stacks were lost (ring "
				"buffer full, or past --max-memory)\n",
				(unsigned long long)st->off_unmatched);
		if (st->bpf[STAT_OFF_UNSEEN] || st->off_unseen)
			pr_info("off-CPU waits whose end no switch showed (the task left again, "
				"or exited, with the wait under way), ended when its CPU time says "
				"it came back: %llu", (unsigned long long)
				(st->bpf[STAT_OFF_UNSEEN] + st->off_unseen));
		/* (--off-cpu's summary ends below: the programs' times said here.) */
		if (set->session.off_cpu)
			print_bpf_times(st);
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
	/* The samples taken: those BPF took (some may be lost on the way), or those in the
	 * profile if more (the shares below are of them, and add up). */
	uint64_t nsamples = st->bpf[STAT_SAMPLES] > st->samples || events ?
			    st->bpf[STAT_SAMPLES] : st->samples;
	char what[128], b1[16], b2[16];

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
	/* A counted event sampled a few times: its stacks are a rough guide. */
	if (events && nsamples && nsamples < 50)
		fprintf(stderr, "profile: only %llu samples of %s: too few to trust its stacks' "
			"shares; -c N takes a sample every N events (-c 1: each), -F a higher rate\n",
			(unsigned long long)nsamples, ev);
	/* How far the counts may fall short: the events after each CPU's last sample. */
	if (events && st->ev_unsampled)
		fprintf(stderr, "profile: %llu %s came after the last sample on their CPU (any "
			"task's): in no stack\n", (unsigned long long)st->ev_unsampled,
			strchr(ev, ',') ? "events" : ev);
	fprintf(stderr, "profile: user stacks %s DWARF-unwound",
		share(st->dwarf, nsamples, b1, sizeof(b1)));
	/* Walks that met a function keeping no frame record where it called: perf -g and bcc
	 * show those stacks with frames missing. */
	if (st->bpf[STAT_FP_NOREC])
		fprintf(stderr, " (%s of all where frame pointers could not be trusted)",
			share(st->bpf[STAT_FP_NOREC], nsamples, b1, sizeof(b1)));
	/* Walked whole in BPF from the files' unwind tables: no copy left the kernel. */
	if (st->bpf[STAT_TAB_WHOLE])
		fprintf(stderr, ", %s walked from unwind tables in BPF",
			share(st->bpf[STAT_TAB_WHOLE], nsamples, b1, sizeof(b1)));
	fprintf(stderr, ", %s truncated", share(st->truncated, st->samples, b2, sizeof(b2)));
	/* Of the truncated ones: where their DWARF unwind stopped. */
	for (int i = 1, first = 1; i < UNWIND_STOP__MAX; i++) {
		if (!st->cut_stop[i])
			continue;
		fprintf(stderr, "%s%s %llu", first ? " (where DWARF stopped: " : ", ",
			unwind_stop_names[i], (unsigned long long)st->cut_stop[i]);
		first = 0;
	}
	for (int i = 1; i < UNWIND_STOP__MAX; i++)
		if (st->cut_stop[i]) {
			fputc(')', stderr);
			break;
		}
	fputc('\n', stderr);
	if (st->scanned)
		fprintf(stderr, "profile: %s of the stacks went through code without unwind info "
			"by a stack scan, checked (--explain)\n",
			share(st->scanned, st->samples, b1, sizeof(b1)));
	print_lost(st, "samples");
	if (st->timeline_lost)
		fprintf(stderr, "profile: %llu samples left out of the speedscope timeline "
			"(--max-memory; they are in the other outputs)\n",
			(unsigned long long)st->timeline_lost);
	if (st->bpf[STAT_FORKS_LEFT])
		fprintf(stderr, "profile: %llu process%s forked by the pids %s not profiled "
			"(--children follows them)\n",
			(unsigned long long)st->bpf[STAT_FORKS_LEFT],
			st->bpf[STAT_FORKS_LEFT] == 1 ? "" : "es",
			st->bpf[STAT_FORKS_LEFT] == 1 ? "was" : "were");
	print_fetches(st);
	if (st->py_procs) {
		char v[64] = "";

		for (int m = 0; m < 32; m++)
			if (st->py_minors >> m & 1)
				snprintf(v + strlen(v), sizeof(v) - strlen(v), "%s3.%d",
					 v[0] ? ", " : "", m);
		fprintf(stderr, "profile: Python frames read at the sample in %llu process%s "
			"(CPython %s): %.1f%% of the samples in its loop have them, %.1f%% every "
			"one named%s\n", (unsigned long long)st->py_procs,
			st->py_procs == 1 ? "" : "es", v, pct(st->py_read, st->py_ran),
			pct(st->py_whole, st->py_ran),
			st->py_unreadable ? " (some code objects could not be read: --explain)" :
					    "");
	}
	if (st->rb_procs)
		fprintf(stderr, "profile: Ruby frames read at the sample in %llu process%s "
			"(CRuby 3.1; --no-runtime reads none)\n", (unsigned long long)st->rb_procs,
			st->rb_procs == 1 ? "" : "es");
	if (st->perf_maps && st->runtime_env && st->runtime_env[0])
		fprintf(stderr, "profile: the command's runtimes were asked for perf maps of "
			"their JIT code, a JVM for frame records in it (%s); --no-runtime "
			"leaves its environment as it is\n",
			st->runtime_env);
	/* The JVMs asked for perf maps (or why not), a line each. */
	for (const char *l = st->jvm_said; l && *l;) {
		const char *nl = strchrnul(l, '\n');

		fprintf(stderr, "profile: %.*s\n", (int)(nl - l), l);
		l = *nl ? nl + 1 : nl;
	}
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
	/* (How many samples carry the whole copy before their process's unwinds say what they
	 * need depends on how fast the worker keeps up: the later ones, what copies come to.) */
	if (st->copies_learnt)
		pr_info("DWARF unwinding: %llu stack copies of %.1f KiB on average once their "
			"process's unwinds said what they need",
			(unsigned long long)st->copies_learnt,
			st->copies_learnt_bytes / 1024.0 / st->copies_learnt);
	if (st->queued)
		pr_info("DWARF unwinding: %llu samples waited for the worker's unwind tables (at "
			"most %llu at once)", (unsigned long long)st->queued,
			(unsigned long long)st->queued_max);
	if (st->files_forgotten)
		pr_info("%llu files forgotten between periods once no process mapped them",
			(unsigned long long)st->files_forgotten);
	if (st->bpf_files)
		pr_info("unwind tables in BPF: %u files in %u shards (%.1f MiB), %llu given back "
			"while sampling (no live process mapped them); walks from them "
			"whole %llu, left to userspace: no table %llu, a rule not followed %llu, "
			"a word not read %llu, too deep %llu (%llu of all these past the leaf: "
			"the frames walked and a copy from where the walk stopped)", st->bpf_files,
			st->bpf_shards,
			st->bpf_shards * (double)sizeof(struct ushard) / 1048576.0,
			(unsigned long long)st->bpf_evicted,
			(unsigned long long)st->bpf[STAT_TAB_WHOLE],
			(unsigned long long)st->bpf[STAT_TAB_NO_TABLE],
			(unsigned long long)st->bpf[STAT_TAB_NO_RULE],
			(unsigned long long)st->bpf[STAT_TAB_NO_MEMORY],
			(unsigned long long)st->bpf[STAT_TAB_DEPTH],
			(unsigned long long)st->bpf[STAT_TAB_RESUMED]);
	if (st->bpf[STAT_TAB_ROWS])
		pr_info("unwind tables in BPF: %.1f%% of the %llu rows the walks looked for found "
			"in the CPUs' row caches; %llu searched kept for their pc alone",
			100.0 * (double)(st->bpf[STAT_TAB_ROWS] - st->bpf[STAT_TAB_ROW_MISSES]) /
			(double)st->bpf[STAT_TAB_ROWS], (unsigned long long)st->bpf[STAT_TAB_ROWS],
			(unsigned long long)st->bpf[STAT_TAB_ROW_CUT]);
	if (st->bpf[STAT_TAB_WHOLE])
		pr_info("unwind tables in BPF: %.1f%% of the whole walks ended from their thread's "
			"last one (a frame of it reached, its words where they were)",
			100.0 * (double)st->bpf[STAT_TAB_MEMO] / (double)st->bpf[STAT_TAB_WHOLE]);
	if (st->bpf[STAT_PROC_TORN])
		pr_info("%llu copies of a process's code kinds (`procs`) were read while "
			"userspace rewrote them, and read again", (unsigned long long)
			st->bpf[STAT_PROC_TORN]);
	if (st->bpf[STAT_PROC_STALE])
		pr_info("%llu copies of a process's code kinds (`procs`) were of its program before "
			"an exec, written from what was known before it: not used (its stacks "
			"taken as of a process not described yet)",
			(unsigned long long)st->bpf[STAT_PROC_STALE]);
	if (st->bpf[STAT_LEAF_SCAN_PLACED] || st->bpf[STAT_LEAF_SCAN_CUT])
		pr_info("JIT leaves in a prologue or an epilogue: %llu placed by their code "
			"(their caller not left out), %llu cut at the leaf (code not followed)",
			(unsigned long long)st->bpf[STAT_LEAF_SCAN_PLACED],
			(unsigned long long)st->bpf[STAT_LEAF_SCAN_CUT]);
	if (st->bpf[STAT_FP_LEAF_NOREC])
		pr_info("frame-pointer walks from a leaf that returns into code without frame "
			"records (its callers left out), walked again from the tables: %llu",
			(unsigned long long)st->bpf[STAT_FP_LEAF_NOREC]);
	if (st->table_checked)
		pr_info("table walk check: %llu of %llu stacks walked in BPF differ from "
			"userspace's unwind of their copies; %llu went on where that unwind "
			"stopped short, the same frames up to there",
			(unsigned long long)st->table_differ,
			(unsigned long long)st->table_checked,
			(unsigned long long)st->table_further);
	print_bpf_times(st);
	print_bpf_parts(st);
	if (getenv("PROFILE_UNWIND_CHECK"))
		pr_info("unwind check: %llu of %llu fast-path stacks differ from libunwind's",
			(unsigned long long)st->unwind_mismatches,
			(unsigned long long)st->unwind_fast);
}

void print_table_walk(const struct session_stats *st)
{
	uint64_t whole = st->bpf[STAT_TAB_WHOLE], table = st->bpf[STAT_TAB_NO_TABLE],
		 rule = st->bpf[STAT_TAB_NO_RULE], mem = st->bpf[STAT_TAB_NO_MEMORY],
		 deep = st->bpf[STAT_TAB_DEPTH], all = whole + table + rule + mem + deep,
		 rest = st->bpf[STAT_TAB_RESUMED];
	char b[6][16];

	if (!all)
		return;
	fprintf(stderr, "profile: of the stacks frame pointers could not take, %s "
		"walked whole from unwind tables in BPF; left to userspace with a copy: %s no "
		"table in BPF (JIT or anonymous code, a file whose table had not come or did not "
		"fit), %s a rule BPF does not follow (signal frames, a frame from another "
		"register, a return address of 0), %s a word of the stack not read, %s deeper "
		"than %d frames; of all these, %s past the leaf with the frames walked and a "
		"copy from the frame where the walk stopped (userspace goes on from there)\n",
		share(whole, all, b[0], sizeof(b[0])),
		share(table, all, b[1], sizeof(b[1])), share(rule, all, b[2], sizeof(b[2])),
		share(mem, all, b[3], sizeof(b[3])), share(deep, all, b[4], sizeof(b[4])),
		PROFILE_MAX_DEPTH, share(rest, all - whole, b[5], sizeof(b[5])));
}

/* What --explain's shares are of: samples, or with --off-cpu/--wall nanoseconds (the
 * model's weights). */
uint64_t explain_total(struct session *s, const struct settings *st)
{
	const struct session_stats *ss = session__stats(s);

	if (st->session.off_cpu)
		return ss->off_ns;
	if (st->session.wall)
		return ss->off_ns + ss->samples * (1000000000ull / st->session.freq);
	return ss->samples;
}

int print_top(const struct folded *f, const struct settings *set)
{
	size_t n = set->top_set ? set->top : (isatty(STDERR_FILENO) ? 10 : 0);
	struct top *t;
	uint64_t total;
	char unit[160];
	int err;

	if (!n)
		return 0;
	t = top__new(TOP_ROOT_IS_PROCESS);
	if (!t || top__add_folded(t, f)) {
		top__free(t);
		fprintf(stderr, "profile: out of memory\n");
		return EXIT_RUNTIME;
	}
	total = top__total(t);
	if (!total) {
		top__free(t);
		return 0;
	}
	/* What the folded counts are: samples, events, or microseconds. */
	if (set->session.off_cpu || set->session.wall)
		snprintf(unit, sizeof(unit), "%.3f s%s", total / 1e6,
			 set->session.off_cpu ? " off the CPU" : "");
	else if (set->session.event && counts_events(set->session.event))
		snprintf(unit, sizeof(unit), "%llu %s", (unsigned long long)total,
			 set->session.event);
	else
		snprintf(unit, sizeof(unit), "%llu sample%s", (unsigned long long)total,
			 total == 1 ? "" : "s");
	fprintf(stderr, "profile: hottest functions by self time (of %s):\n", unit);
	err = top__write(t, stderr, TOP_BY_SELF, n, 120);
	top__free(t);
	return err ? EXIT_RUNTIME : 0;
}

/* The Debian package that has file PATH (dpkg-query -S; also as /lib for /usr/lib, merged
 * /usr), into PKG (LEN bytes, without its ":arch"); false when none says so. */
static bool package_of(const char *path, char *pkg, size_t len)
{
	const char *try[2] = { path, !strncmp(path, "/usr/lib/", 9) ? path + 4 : NULL };

	if (access("/usr/bin/dpkg-query", X_OK))
		return false;
	for (int i = 0; i < 2 && try[i]; i++) {
		char *argv[] = { "dpkg-query", "-S", "--", (char *)try[i], NULL };
		char out[512];
		posix_spawn_file_actions_t fa;
		int p[2];
		pid_t pid;
		ssize_t n = 0, got;
		bool ok;

		if (pipe2(p, O_CLOEXEC))
			return false;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, p[1], 1);
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
		ok = !posix_spawn(&pid, "/usr/bin/dpkg-query", &fa, NULL, argv, environ);
		posix_spawn_file_actions_destroy(&fa);
		close(p[1]);
		while (ok && n < (ssize_t)sizeof(out) - 1 &&
		       (got = read(p[0], out + n, sizeof(out) - 1 - (size_t)n)) > 0)
			n += got;
		close(p[0]);
		if (ok)
			waitpid(pid, NULL, 0);
		out[n > 0 ? n : 0] = '\0';
		/* "liblzma5:amd64: /lib/x86_64-linux-gnu/liblzma.so.5.4.1" */
		if (n > 0 && strchr(out, ':') && !strchr(out, ',')) {
			size_t k = strcspn(out, ":");

			if (k && k < len) {
				memcpy(pkg, out, k);
				pkg[k] = '\0';
				return true;
			}
		}
	}
	return false;
}

/* What would name the frames of FILE, unnamed for REASON. */
static void naming_hint(const char *file, enum explain_reason reason, char *buf, size_t len)
{
	char pkg[128];
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (reason == EXPLAIN_UNNAMED_JIT || reason == EXPLAIN_UNNAMED_JIT_MISSING) {
		snprintf(buf, len, "JIT code: have the runtime write a perf map (node "
			 "--perf-basic-prof, python3.12 -X perf, a JVM's jcmd PID Compiler.perfmap or "
			 "perf-map-agent)");
		return;
	}
	if (package_of(file, pkg, sizeof(pkg)))
		snprintf(buf, len, "install %s-dbgsym (Debian's debug archive)%s", pkg,
			 urls && *urls ? "" : ", or set DEBUGINFOD_URLS=https://debuginfod.debian.net");
	else
		snprintf(buf, len, "install its debug symbols%s",
			 urls && *urls ? "" : ", or set DEBUGINFOD_URLS to a debuginfod server");
}

/* Share at and over which a file's unnamed frames are named in the summary. */
#define UNNAMED_SHARE	5.0

void print_unnamed(const struct explain *ex, uint64_t total)
{
	struct explain_line *lines = NULL;
	int n = ex && total ? explain__lines(ex, &lines) : 0, said = 0;

	/* Most samples first: the first three files at UNNAMED_SHARE or more. */
	for (int i = 0; i < n && said < 3; i++) {
		const struct explain_line *l = &lines[i];
		char hint[512];

		if (l->reason != EXPLAIN_UNNAMED_NO_SYMS && l->reason != EXPLAIN_UNNAMED_NO_DEBUG &&
		    l->reason != EXPLAIN_UNNAMED_JIT && l->reason != EXPLAIN_UNNAMED_JIT_MISSING)
			continue;
		if (pct(l->count, total) < UNNAMED_SHARE)
			break;
		naming_hint(l->file, l->reason, hint, sizeof(hint));
		fprintf(stderr, "profile: %.1f%% of samples have frames without names in ",
			pct(l->count, total));
		for (const char *c = l->file; *c; c++)
			fputc((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c, stderr);
		fprintf(stderr, ": %s\n", hint);
		said++;
	}
	free(lines);
}

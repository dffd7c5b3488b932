// SPDX-License-Identifier: GPL-3.0-or-later
/* profile: where the profile goes: -o's files or standard output, continuous mode's periods
 * and --push. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>
#include <libgen.h>
#include "output/folded.h"
#include "output/pprof.h"
#include "output/push.h"
#include "output/speedscope.h"
#include "base/log.h"
#include "profile/profile.h"
#include "cli.h"

/*
 * The file beside existing regular file PATH (its status SB) that its profile is written to:
 * ".NAME.profile-PID-N" in its folder, with its owner and mode, its name into *TMP (malloc'd).
 * Returns the open descriptor, or -1 (errno set) when it cannot be made as PATH is (another
 * folder's rules, an owner we may not give): PATH is then written in place.
 */
static int make_beside(const char *path, const struct stat *sb, char **tmp)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	size_t len = strlen(path) + 48;
	char *name = malloc(len);
	int fd = -1;

	for (int n = 0; name && fd < 0 && n < 100; n++) {
		snprintf(name, len, "%.*s.%s.profile-%d-%d", dirlen, path, slash ? slash + 1 : path,
			 (int)getpid(), n);
		fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd >= 0 && (fchown(fd, sb->st_uid, sb->st_gid) || fchmod(fd, sb->st_mode & 07777))) {
		close(fd);
		unlink(name);
		fd = -1;
	}
	if (fd < 0) {
		free(name);
		return -1;
	}
	*tmp = name;
	return fd;
}

/* Open every -o file for writing (standard output otherwise), before sampling (a path that
 * cannot be written fails first; later profile may run as another user): an existing regular
 * file gets a file beside it, renamed over it once its profile is written whole (janitor.c),
 * another existing file is not truncated until its profile is written (write_output), and one
 * made here is removed again when nothing is written to it. Returns 0 or EXIT_RUNTIME after
 * one sentence. */
int open_outputs(struct settings *st)
{
	for (int i = 0; i < st->nr_out; i++) {
		struct output *o = &st->out[i];
		struct stat sb;
		int fd = -1, beside;

		o->f = o->path ? NULL : stdout;
		if (o->path) {
			fd = open(o->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
			o->made = fd >= 0;
			if (fd < 0 && errno == EEXIST)
				fd = open(o->path, O_WRONLY | O_CLOEXEC);
			/* Writable, regular, not a link: replaced whole, or not at all. */
			if (fd >= 0 && !o->made && !lstat(o->path, &sb) && S_ISREG(sb.st_mode) &&
			    (beside = make_beside(o->path, &sb, &o->tmp)) >= 0) {
				close(fd);
				fd = beside;
			}
			o->f = fd >= 0 ? fdopen(fd, "w") : NULL;
		}
		if (!o->f) {
			pr_warn("cannot write '%s': %s", o->path, strerror(errno));
			if (fd >= 0)
				close(fd);
			discard_outputs(st);
			return EXIT_RUNTIME;
		}
	}
	return 0;
}

void discard_outputs(struct settings *st)
{
	for (int i = 0; i < st->nr_out; i++) {
		struct output *o = &st->out[i];

		if (o->f && o->f != stdout)
			fclose(o->f);
		o->f = NULL;
	}
	/* Those made here and those beside: removed (by the janitor, who is root still). */
	settle_outputs(st, false);
}

void describe_target(const struct settings *st, char *buf, size_t len)
{
	const struct session_opts *o = &st->session;

	if (o->argv) {
		/* The command's name and arguments, as far as they fit. */
		const char *base = strrchr(o->argv[0], '/');
		size_t n = (size_t)snprintf(buf, len, "%s", base ? base + 1 : o->argv[0]);

		for (int i = 1; o->argv[i] && n + 1 < len && n < 60; i++)
			n += (size_t)snprintf(buf + n, len - n, " %s", o->argv[i]);
	} else if (o->nr_pids) {
		char path[64], comm[64] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", (int)o->pids[0]);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		snprintf(buf, len, "pid %d%s%s%s%s", (int)o->pids[0], *comm ? " (" : "", comm,
			 *comm ? ")" : "", o->nr_pids > 1 ? " and more" : "");
	} else if (o->nr_cgroups) {
		snprintf(buf, len, "cgroup %s%s", o->cgroups[0], o->nr_cgroups > 1 ? " and more" : "");
	} else {
		snprintf(buf, len, "the whole system");
	}
}

/* The flame graph's default title and subtitle (--title and --subtitle say otherwise): what
 * was profiled; what was sampled, how often, how long, when and where (PO). */
static void graph_titles(const struct settings *st, const struct pprof_opts *po,
			 struct fg_opts *fo, char *title, size_t tl, char *sub, size_t sl)
{
	const struct session_opts *o = &st->session;
	time_t when = (time_t)(po->time_nanos / 1000000000);
	char what[128], host[128] = "", date[64] = "";
	struct tm tm;

	if (!fo->title) {
		describe_target(st, what, sizeof(what));
		snprintf(title, tl, "%s: %s", o->off_cpu ? "Off-CPU time" : o->wall ?
			 "Wall-clock time" : "profile", what);
		fo->title = title;
	}
	if (fo->subtitle)
		return;
	if (o->off_cpu)
		snprintf(what, sizeof(what), "time off the CPU");
	else if (o->wall)
		snprintf(what, sizeof(what), "wall-clock time (on-CPU at %u Hz)", o->freq);
	else if (o->event && counts_events(o->event))
		snprintf(what, sizeof(what), "%s, %s", o->event, o->count ? "every Nth" :
			 "sampled");
	else
		snprintf(what, sizeof(what), "%s at %u Hz", o->event ? o->event : "cpu-clock",
			 o->freq);
	if (o->event && counts_events(o->event) && !o->count)
		snprintf(what + strlen(what), sizeof(what) - strlen(what), " at %u Hz",
			 o->event_freq ? o->event_freq : o->freq);
	else if (o->count)
		snprintf(what, sizeof(what), "%s, a sample every %llu", o->event ? o->event :
			 "cpu-clock", (unsigned long long)o->count);
	gethostname(host, sizeof(host) - 1);
	if (when && localtime_r(&when, &tm))
		strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %Z", &tm);
	snprintf(sub, sl, "%s, %.1f s from %s on %s", what, po->duration_nanos / 1e9, date,
		 *host ? host : "this host");
	fo->subtitle = sub;
}

/* The profile P (folded: F) into output O, open as OUT and called NAME, in its format; PO
 * says when it was sampled. Returns 0 or EXIT_RUNTIME after one sentence. */
static int write_output(const struct settings *st, const struct output *o, FILE *out,
			const char *name, const struct profile *p, const struct folded *f,
			const struct pprof_opts *po)
{
	static const char *const fmt_names[] = { "folded", "svg", "pprof", "speedscope" };
	double t = monotonic_seconds();
	long at;
	int err;

	/* What the file held is replaced now (a pipe or a device has nothing to cut; a file
	 * beside is new). */
	if (o->path && !o->made && !o->tmp && ftruncate(fileno(out), 0) && errno != EINVAL) {
		pr_warn("cannot write %s: %s", name, strerror(errno));
		return EXIT_RUNTIME;
	}
	at = ftell(out);

	switch (o->format) {
	case FMT_SVG: {
		struct fg_opts fo = st->fg;
		char title[256], sub[512];

		graph_titles(st, po, &fo, title, sizeof(title), sub, sizeof(sub));
		err = flamegraph__write_folded(f, out, &fo);
		break;
	}
	case FMT_PPROF: err = pprof__write(p, po, out); break;
	case FMT_SPEEDSCOPE: {
		struct speedscope_opts so = { .name = name };

		err = speedscope__write(p, &so, out);
		break;
	}
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
int write_outputs(struct settings *st, const struct profile *p,
			 const struct folded *f, const struct timespec *started, double seconds)
{
	struct pprof_opts po = pprof_times(started, seconds);
	int ret = 0;

	/* One that cannot be written (a full disk) costs only itself. */
	for (int i = 0; i < st->nr_out; i++) {
		struct output *o = &st->out[i];
		int err = write_output(st, o, o->f, o->path ? o->path : "standard output", p, f,
				       &po);

		o->failed = err != 0;
		if (err && !ret)
			ret = err;
	}
	return ret;
}

/* Close the -o files, and settle them: those written whole kept (over the files they
 * replace), the others removed. Returns 0, or -1 after one sentence per file that failed. */
int close_outputs(struct settings *st)
{
	int ret = 0;

	for (int i = 0; i < st->nr_out; i++) {
		struct output *o = &st->out[i];

		if (o->f && o->f != stdout && fclose(o->f)) {
			pr_warn("cannot write '%s': %s", o->path, strerror(errno));
			o->failed = true;
			ret = -1;
		}
		o->f = NULL;
	}
	if (settle_outputs(st, true))
		ret = -1;
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
int check_patterns(const struct settings *st)
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

/* NAME (SIZE bytes) made NAME_N, _N before the first dot of its last component (p-%s.folded:
 * p-1795855593_1.folded, listed after p-1795855593.folded; its format is the pattern's).
 * Returns 0, or -1 when that is too long. */
static int name_again(char *name, size_t size, unsigned int n)
{
	char *base = strrchr(name, '/'), *dot, tail[PATH_MAX];

	base = base ? base + 1 : name;
	dot = strchr(base + strspn(base, "."), '.');
	if (!dot)
		dot = name + strlen(name);
	snprintf(tail, sizeof(tail), "%s", dot);
	*dot = '\0';
	return snprintf(dot, size - (size_t)(dot - name), "_%u%s", n, tail) <
	       (int)(size - (size_t)(dot - name)) ? 0 : -1;
}

/* Output O's file for the period that began at T, with the profile P (folded: F): written to
 * NAME.partial, renamed to NAME once whole (a reader never sees half a file). Returns 0 or
 * -1 after one sentence. */
static int write_period_file(const struct settings *st, struct output *o, time_t t,
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
	/* A period that began in the second (the minute, the hour: as the pattern names them)
	 * the last one did (SIGHUP, --every under a second, a pattern without %S): its file
	 * beside the last one's, not over it. (A pattern without % overwrites: it says so.) */
	if (strchr(o->path, '%')) {
		if (o->last && !strcmp(o->last, name)) {
			if (name_again(name, sizeof(name), ++o->again)) {
				pr_warn("the output pattern '%s' names a file too long: this "
					"period's profile is lost", o->path);
				return -1;
			}
		} else {
			free(o->last);
			o->last = strdup(name);
			o->again = 0;
		}
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

int build_period(struct session *s, struct profile *p, struct folded *f, unsigned int flags,
		 struct timespec *start, double *secs)
{
	enum session_err_kind kind;

	if (session__build_profile(s, p)) {
		pr_warn("%s", session__error(s, &kind));
		return exit_status(kind);
	}
	session__period(s, start, secs);
	if (f && folded__add_profile(f, p, flags)) {
		pr_warn("out of memory: this period's profile is lost");
		return -1;
	}
	return 0;
}

/* The period that just ended (session__build_profile takes it) into every -o file and to the
 * server. A period lost counts in st->period_failed; returns 0, or an exit status when the
 * session failed. */
static int take_period(struct settings *st, struct session *s)
{
	struct profile *p = profile__new();
	struct folded *f = NULL;
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
	ret = build_period(s, p, f, st->lines ? FOLDED_LINES : 0, &start, &secs);
	if (ret < 0) {
		st->period_failed = true;
		ret = 0;
	}
	if (ret || st->period_failed)
		goto out;
	po = pprof_times(&start, secs);
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
void default_app_name(char *buf, size_t size)
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
int run_continuous(struct settings *st, struct session *s)
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
	for (int i = 0; i < st->nr_out; i++) {
		free(st->out[i].last);
		st->out[i].last = NULL;
	}
	return ret;
}

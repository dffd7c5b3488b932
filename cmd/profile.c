// SPDX-License-Identifier: GPL-3.0-or-later
/* profile: the command line. It parses options and calls lib/; nothing else. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "diff_cmd.h"
#include "flamegraph_cmd.h"
#include "report_cmd.h"
#include "top_cmd.h"
#include "output/folded.h"
#include "output/push.h"
#include "base/log.h"
#include "collect/explain.h"
#include "profile/profile.h"
#include "cli.h"

double monotonic_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int exit_status(enum session_err_kind kind)
{
	switch (kind) {
	case SESSION_ERR_USAGE: return EXIT_USAGE;
	case SESSION_ERR_TARGET: return EXIT_TARGET;
	case SESSION_ERR_ENV: return EXIT_ENV;
	case SESSION_ERR_INTERRUPTED: return EXIT_INTERRUPTED;
	default: return EXIT_RUNTIME;
	}
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

/* --explain's report: asked for, or its first lines with -v (it is gathered always: the
 * summary names the files without names). */
static bool show_explain(const struct settings *st)
{
	return st->explain || (log_level >= LOG_INFO && !st->quiet);
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
	long long cpu_before[MAX_PIDS];
	struct timespec started;
	int ret;

	if (argc > 1 && !strcmp(argv[1], "flamegraph"))
		return flamegraph_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "diff"))
		return diff_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "report"))
		return report_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "top"))
		return top_main(argc - 1, argv + 1);
	ret = parse_args(argc, argv, &st);
	if (ret)
		return ret;
	sudo_notice(&st);
	/* Ctrl-C from here until sampling begins ends it at once, with a sentence. */
	session__signals_starting();
	/* Open the outputs first: a path that cannot be written fails before any sampling. */
	ret = st.session.every ? check_patterns(&st) : open_outputs(&st);
	if (ret)
		goto out;
	if (!st.session.every)
		janitor_start(&st);
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
			goto discard;
		}
	}
	folded = folded__new();
	profile = profile__new();
	if (!folded || !profile) {
		fprintf(stderr, "profile: out of memory\n");
		ret = EXIT_RUNTIME;
		goto discard;
	}
	st.session.status_line = !st.quiet && isatty(STDERR_FILENO);
	s = session__open(&st.session, &errmsg, &kind);
	if (!s) {
		pr_warn("%s", errmsg ? errmsg : "cannot start");
		ret = exit_status(kind);
		goto discard;
	}
	if (st.session.every) {
		ret = run_continuous(&st, s);
		if (!st.quiet)
			print_summary(session__stats(s), 0, &st);
		/* --explain: over the whole run. */
		if (session__explain(s) && show_explain(&st) &&
		    explain__write(session__explain(s), stderr, explain_total(s, &st),
				   st.session.off_cpu || st.session.wall,
				   st.explain ? EXPLAIN_LINES : EXPLAIN_LINES_VERBOSE)) {
			fprintf(stderr, "profile: out of memory\n");
			ret = EXIT_RUNTIME;
		}
		if (st.explain)
			print_table_walk(session__stats(s));
		goto out;
	}
	cpu_snapshot(&st, cpu_before);
	clock_gettime(CLOCK_REALTIME, &started);
	/* Whatever run says, what was sampled is written; a run that failed before sampling
	 * (the events refused) writes nothing, and the -o files are left as they were. */
	if (session__run(s)) {
		pr_warn("%s", session__error(s, &kind));
		if (!session__sampled(s)) {
			ret = exit_status(kind);
			goto discard;
		}
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
	/* Nothing sampled: why, when it can be told; the -o files stay as they were. */
	if (!folded__nr_stacks(folded)) {
		ret = say_why_nothing(&st, session__stats(s), cpu_before);
		goto discard;
	}
	ret = write_outputs(&st, profile, folded, &started, session__stats(s)->seconds);
	if (ret)
		goto out;
	pr_info("end of sampling to output written: %.3f s (drain, unwind, symbolize, write)",
		monotonic_seconds() - t_sampled);
	if (session__error(s, &kind))
		ret = exit_status(kind);
	if (!st.quiet) {
		print_summary(session__stats(s), folded__nr_stacks(folded), &st);
		print_unnamed(session__explain(s), explain_total(s, &st));
		if (print_top(folded, &st))
			ret = EXIT_RUNTIME;
	}
	if (session__explain(s) && show_explain(&st) &&
	    explain__write(session__explain(s), stderr, explain_total(s, &st),
			   st.session.off_cpu || st.session.wall,
			   st.explain ? EXPLAIN_LINES : EXPLAIN_LINES_VERBOSE)) {
		fprintf(stderr, "profile: out of memory\n");
		ret = EXIT_RUNTIME;
	}
	if (st.explain)
		print_table_walk(session__stats(s));
	goto out;
discard:
	if (!st.session.every)
		discard_outputs(&st);
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

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * `profile report`: the hottest functions of folded or pprof files as text, as perf report
 * --stdio and pprof -top give them; --tree, the call tree from the roots down. Only the
 * command line; the counting is output/top.c's.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "output/folded.h"
#include "output/top.h"
#include "inputs.h"
#include "report_cmd.h"

#define WHO "profile report"

static void usage(FILE *f)
{
	fputs(
"Usage: profile report [OPTIONS] FILE...\n"
"\n"
"The hottest functions of folded stacks (profile -o x.folded, stackcollapse-*.pl) or pprof\n"
"profiles (profile -o x.pb.gz, Go's, any tool's) as text: each function's self share\n"
"(samples it is the leaf of) and total share (samples it is in, once however deep it\n"
"recurses), as pprof -top's flat and cum; or, with --tree, the call tree from the roots\n"
"down. The stacks of all FILEs are merged; \"-\" reads folded stacks from stdin. A folded\n"
"stack's first frame is its process, as profile and stackcollapse-perf.pl write them\n"
"(--no-process when it is a function); kernel frames are [k], inlined [i], JIT [j].\n"
"\n"
"Options:\n"
"  -n, --rows N        the N hottest functions (default 20; 0: all)\n"
"  -s, --sort KEY      self (default) or total\n"
"  -t, --tree          the call tree instead, each node's total share\n"
"      --min PERCENT   with --tree: nodes under PERCENT of the total summed on one line\n"
"                      (default 1)\n"
"      --no-process    a folded stack's first frame is a function, not the process\n"
"  -h, --help          this help\n"
"\n"
"Examples:\n"
"  profile -o app.folded -- ./app && profile report app.folded\n"
"  profile report --sort total -n 40 app.pb.gz\n"
"  profile report --tree --min 5 app.folded\n"
"  perf script | stackcollapse-perf.pl | profile report -\n"
"\n"
"Exit status: 0 written, 1 unreadable, malformed or empty input, 2 bad usage.\n", f);
}

static int bad_usage(const char *what, const char *arg)
{
	fprintf(stderr, WHO ": %s '%s'; see 'profile report --help'.\n", what, arg);
	return 2;
}

int report_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rows", required_argument, NULL, 'n' },
		{ "sort", required_argument, NULL, 's' },
		{ "tree", no_argument, NULL, 't' },
		{ "min", required_argument, NULL, 'm' },
		{ "no-process", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum top_sort by = TOP_BY_SELF;
	bool tree = false, no_process = false, pprof_process = true, any_pprof = false;
	bool any_folded = false;
	unsigned long rows = 20;
	double min = 1.0;
	struct folded *folded = NULL;
	struct top *t = NULL;
	char *end;
	int c, ret = 1;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:s:th", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			errno = 0;
			rows = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || optarg[0] == '-' || rows > 100000)
				return bad_usage("-n takes a number of rows from 0 to 100000, not",
						 optarg);
			break;
		case 's':
			if (!strcmp(optarg, "self"))
				by = TOP_BY_SELF;
			else if (!strcmp(optarg, "total"))
				by = TOP_BY_TOTAL;
			else
				return bad_usage("--sort takes self or total, not", optarg);
			break;
		case 't': tree = true; break;
		case 'm':
			errno = 0;
			min = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(min >= 0 && min <= 100))
				return bad_usage("--min takes a percentage from 0 to 100, not", optarg);
			break;
		case 'P': no_process = true; break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			return bad_usage("a value is missing after", argv[optind - 1]);
		default:
			return bad_usage("unknown option", argv[optind - 1]);
		}
	}
	if (optind == argc) {
		fprintf(stderr, WHO ": no file given (\"-\" reads stdin); see "
			"'profile report --help'.\n");
		return 2;
	}
	folded = folded__new();
	if (!folded) {
		fprintf(stderr, WHO ": out of memory.\n");
		return 1;
	}
	for (int i = optind; i < argc; i++) {
		struct pprof_info info = { .process = true };

		if (input_is_pprof(argv[i])) {
			any_pprof = true;
			if (input_read_pprof(WHO, argv[i], folded, &info))
				goto out;
			pprof_process = pprof_process && info.process;
		} else {
			any_folded = true;
			if (input_read_folded(WHO, argv[i], folded))
				goto out;
		}
	}
	/* Whether the first frame is the process: as the pprof files say, and --no-process
	 * for folded ones. (Both kinds at once: what the folded files take.) */
	t = top__new((any_folded ? !no_process : pprof_process || !any_pprof) ?
		     TOP_ROOT_IS_PROCESS : 0);
	if (!t || top__add_folded(t, folded)) {
		fprintf(stderr, WHO ": out of memory.\n");
		goto out;
	}
	if (!top__total(t) || top__total(t) == top__no_function(t)) {
		fprintf(stderr, WHO ": no stacks with functions in %s%s.\n", argv[optind],
			argc - optind > 1 ? " and the other files" : "");
		goto out;
	}
	/* (The unit is the file's: samples, events, or microseconds off the CPU.) */
	printf("%llu counted in %zu stacks", (unsigned long long)top__total(t),
	       folded__nr_stacks(folded));
	if (top__no_function(t))
		printf(", %.1f%% of it with no function (a process alone)",
		       100.0 * top__no_function(t) / top__total(t));
	printf("\n");
	c = tree ? top__write_tree(t, stdout, min, 0) :
		   top__write(t, stdout, by, rows ? rows : (size_t)-1, 0);
	if (c || fflush(stdout)) {
		fprintf(stderr, WHO ": cannot write the report: %s.\n", strerror(c ? -c : errno));
		goto out;
	}
	ret = 0;
out:
	top__free(t);
	folded__free(folded);
	return ret;
}

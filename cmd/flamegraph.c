// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * `profile flamegraph`: folded files in, one SVG out. Only the command line, messages and
 * exit codes; the drawing is flamegraph/'s.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "flamegraph.h"
#include "flamegraph_cmd.h"
#include "inputs.h"
#include "output/folded.h"
#include "output/folded_read.h"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: profile flamegraph [OPTIONS] [FILE...]\n"
"\n"
"Draw an interactive SVG flame graph from folded stacks (\"frame;frame;...;frame COUNT\",\n"
"as written by profile, stackcollapse-*.pl or inferno), or from pprof profiles\n"
"(profile.proto, gzip'd or not: profile -o x.pb.gz, Go's, any tool's; the first sample\n"
"value counts, and a sample's own event's in a profile of several, under its name).\n"
"Stacks of all FILEs are merged; with no FILE, or FILE \"-\", stdin is read\n"
"(folded). Lines with two counts make a differential graph: width from the second count,\n"
"red where it grew, blue where it shrank.\n"
"\n"
"Options:\n"
"  -o, --output FILE   write the SVG to FILE instead of stdout\n"
"%s"
"  -h, --help          this help\n"
"\n"
"Examples:\n"
"  profile -p 1234 -d 10 -o app.folded && profile flamegraph app.folded > app.svg\n"
"  profile flamegraph --title \"xz -6\" --width 1800 --colors mem a.folded -o a.svg\n"
"  profile flamegraph --minwidth 0.5%% --inverted big.folded -o icicle.svg\n"
"  profile flamegraph app.pb.gz > app.svg\n"
"  stackcollapse-perf.pl perf.script | profile flamegraph > perf.svg\n"
"\n"
"Exit status: 0 written, 1 unreadable, malformed or empty input or a write error, 2 bad\n"
"usage.\n",
		FG_OPTIONS_HELP);
}

/* The pprof file PATH into FG. Returns 0, or 1 after one sentence. */
static int read_pprof(struct flamegraph *fg, const char *path)
{
	struct folded *folded = folded__new();
	int e = folded ? input_read_pprof("profile flamegraph", path, folded, NULL) : 1;

	if (!folded)
		fprintf(stderr, "profile flamegraph: out of memory.\n");
	else if (!e && flamegraph__add_folded(fg, folded)) {
		fprintf(stderr, "profile flamegraph: out of memory.\n");
		e = 1;
	}
	folded__free(folded);
	return e;
}

int flamegraph_main(int argc, char **argv)
{
	struct option opts[32] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
	};
	struct fg_opts o;
	struct flamegraph *fg = NULL;
	const char *output = NULL;
	FILE *out = stdout;
	char err[256];
	int c, ret = 1;

	fg_opts__init(&o);
	fg_options__append(opts, 2, sizeof(opts) / sizeof(opts[0]));

	optind = 0;	/* a fresh scan: the caller may have used getopt already */
	opterr = 0;	/* our own one-sentence messages */
	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "profile flamegraph: %s needs a value; see "
				"'profile flamegraph --help'.\n", argv[optind - 1]);
			return 2;
		case '?':
			fprintf(stderr, "profile flamegraph: unknown option '%s'; see "
				"'profile flamegraph --help'.\n", argv[optind - 1]);
			return 2;
		default:
			if (fg_opts__parse_opt(&o, c, optarg, err, sizeof(err))) {
				fprintf(stderr, "profile flamegraph: %s.\n", err);
				return 2;
			}
		}
	}

	fg = flamegraph__new(&o);
	if (!fg) {
		fprintf(stderr, "profile flamegraph: out of memory.\n");
		return 1;
	}
	for (int i = optind; i < argc || i == optind; i++) {
		const char *path = i < argc ? argv[i] : "-";
		struct folded_reader *r;
		int e;

		if (input_is_pprof(path)) {
			if (read_pprof(fg, path))
				goto out;
			continue;
		}
		r = folded_reader__open(path);
		if (!r) {
			fprintf(stderr, "profile flamegraph: cannot read %s: %s.\n", path,
				strerror(errno));
			goto out;
		}
		e = flamegraph__read(fg, r);
		if (e) {
			if (*folded_reader__error(r))
				fprintf(stderr, "profile flamegraph: %s.\n", folded_reader__error(r));
			else
				fprintf(stderr, "profile flamegraph: %s: %s.\n", path, strerror(-e));
			folded_reader__free(r);
			goto out;
		}
		folded_reader__free(r);
	}
	/* Nothing to draw: a sentence and status 1, as for any input that is not stacks. */
	if (flamegraph__total(fg) <= 0) {
		fprintf(stderr, "profile flamegraph: no stacks in %s (an empty file?); nothing "
			"written.\n", optind < argc ? argv[optind] : "the standard input");
		goto out;
	}
	if (output && strcmp(output, "-")) {
		out = fopen(output, "w");
		if (!out) {
			fprintf(stderr, "profile flamegraph: cannot write %s: %s.\n", output,
				strerror(errno));
			goto out;
		}
	}
	c = flamegraph__write(fg, out);
	if (out != stdout && fclose(out) && !c)
		c = -(errno ? errno : EIO);
	if (c) {
		fprintf(stderr, "profile flamegraph: cannot write %s: %s.\n",
			output ? output : "the SVG", strerror(-c));
		goto out;
	}
	ret = 0;
out:
	flamegraph__free(fg);
	return ret;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * `profile diff BEFORE AFTER`: two profiles compared stack by stack. Each is folded stacks
 * (ours or any tool's) or pprof; out comes every stack with its count in each, as
 * difffolded.pl writes them ("STACK BEFORE AFTER", 0 where a profile lacks it), with
 * -o FILE.pb.gz as pprof (AFTER minus BEFORE per stack), or with
 * -o FILE.svg a flame graph drawn on AFTER coloured by the change (red where it grew, blue
 * where it shrank; --negate: drawn on BEFORE, the hues switched), as flamegraph.pl draws
 * difffolded.pl's lines. Only the command line, the pairing and messages; reading is
 * inputs.c's, drawing flamegraph/'s.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/grow.h"
#include "base/htab.h"
#include "diff_cmd.h"
#include "flamegraph.h"
#include "inputs.h"
#include "output/folded.h"
#include "output/pprof.h"
#include "profile/profile.h"

#define WHO "profile diff"

struct row {
	char *stack;
	double count[2];	/* BEFORE's, AFTER's */
};

struct pairs {
	struct row *v;
	size_t nr, cap;
	struct htab index;
	double total[2];
	bool strip_hex;
	int side;		/* the profile being added: 0 BEFORE, 1 AFTER */
	char type[2][64];	/* each one's sample type when it is pprof ("": not known) */
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: profile diff [OPTIONS] BEFORE AFTER\n"
"\n"
"Compare two profiles stack by stack: folded stacks (profile's, stackcollapse-*.pl's,\n"
"inferno's) or pprof (profile -o x.pb.gz, Go's, any tool's). Writes every stack with its\n"
"count in each, as difffolded.pl does (\"STACK BEFORE AFTER\", 0 where one lacks it), or\n"
"with -o FILE.svg a differential flame graph: widths from AFTER, red where a stack grew,\n"
"blue where it shrank (--negate: widths from BEFORE, the same colours for the change).\n"
"A subcommand only as the first word: profile -- diff a b profiles the diff program.\n"
"\n"
"Options:\n"
"  -o, --output FILE   write to FILE instead of stdout: an SVG when it ends in .svg,\n"
"                      pprof (AFTER minus BEFORE, as pprof -diff_base shows it) when\n"
"                      in .pb.gz, else the three columns\n"
"  -n, --normalize     scale BEFORE's counts to AFTER's total (difffolded.pl -n)\n"
"  -s, --strip-hex     0x... for hex numbers in frame names (difffolded.pl -s)\n"
"      --negate        the SVG drawn on BEFORE (flamegraph.pl --negate's hues)\n"
"%s"
"  -h, --help          this help\n"
"\n"
"Examples:\n"
"  profile -o before.folded -- ./app-1.0 && profile -o after.folded -- ./app-1.1\n"
"  profile diff before.folded after.folded -o diff.svg\n"
"  profile diff -n before.pb.gz after.pb.gz | sort -k3 -n | tail\n"
"  profile diff -o diff.pb.gz before.pb.gz after.pb.gz && go tool pprof -top diff.pb.gz\n"
"\n"
"Exit status: 0 written, 1 a write error, 2 bad usage or an input that is not a profile\n"
"(unreadable, empty, not stacks), or two pprof profiles of different sample types.\n",
		FG_OPTIONS_HELP);
}

/* STACK with every 0x-prefixed hex number made "0x..." (difffolded.pl -s), malloc'd. */
static char *strip_hex(const char *stack)
{
	/* "0x1" (3 bytes) becomes 5: at most twice as long. */
	char *out = malloc(2 * strlen(stack) + 1), *o = out;

	if (!out)
		return NULL;
	for (const char *p = stack; *p;) {
		if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && isxdigit((unsigned char)p[2])) {
			memcpy(o, "0x...", 5);
			o += 5;
			for (p += 2; isxdigit((unsigned char)*p); p++)
				;
			continue;
		}
		*o++ = *p++;
	}
	*o = '\0';
	return out;
}

static int add_stack(const char *stack, uint64_t count, void *ctx)
{
	struct pairs *d = ctx;
	char *key = d->strip_hex ? strip_hex(stack) : strdup(stack);
	uint64_t h;
	uint32_t pos, id;

	if (!key)
		return -ENOMEM;
	h = hash_bytes(HASH_SEED, key, strlen(key));
	for (id = htab__first(&d->index, h, &pos); id != HTAB_NONE;
	     id = htab__next(&d->index, h, &pos))
		if (!strcmp(d->v[id].stack, key))
			break;
	if (id == HTAB_NONE) {
		if (array_grow(&d->v, &d->cap, sizeof(*d->v), d->nr) ||
		    htab__insert(&d->index, h, (uint32_t)d->nr)) {
			free(key);
			return -ENOMEM;
		}
		id = (uint32_t)d->nr++;
		d->v[id] = (struct row){ .stack = key };
	} else {
		free(key);
	}
	d->v[id].count[d->side] += (double)count;
	d->total[d->side] += (double)count;
	return 0;
}

/* Profile PATH into side SIDE of D. Returns 0, or 2 after one sentence. */
static int read_side(struct pairs *d, int side, const char *path)
{
	struct folded *f = folded__new();
	struct pprof_info info = { 0 };
	int e;

	if (!f) {
		fprintf(stderr, WHO ": out of memory.\n");
		return 2;
	}
	e = input_is_pprof(path) ? input_read_pprof(WHO, path, f, &info) :
				   input_read_folded(WHO, path, f);
	memcpy(d->type[side], info.type, sizeof(info.type));
	if (!e && !folded__nr_stacks(f)) {
		fprintf(stderr, WHO ": no stacks in %s (an empty file?).\n", path);
		e = 1;
	}
	d->side = side;
	if (!e && folded__for_each(f, add_stack, d)) {
		fprintf(stderr, WHO ": out of memory.\n");
		e = 1;
	}
	folded__free(f);
	return e ? 2 : 0;
}

static int row_cmp(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->stack, ((const struct row *)b)->stack);
}

static void pairs__free(struct pairs *d)
{
	for (size_t i = 0; i < d->nr; i++)
		free(d->v[i].stack);
	free(d->v);
	htab__free(&d->index);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* The three columns of D to OUT. Returns 0 or -errno. */
static int write_columns(const struct pairs *d, FILE *out)
{
	for (size_t i = 0; i < d->nr; i++)
		if (fprintf(out, "%s %.0f %.0f\n", d->v[i].stack, d->v[i].count[0],
			    d->v[i].count[1]) < 0)
			return -errno;
	return 0;
}

/* A differential flame graph of D to OUT, drawn with O (on AFTER, or BEFORE when negated).
 * Returns 0 or -errno. */
static int write_svg(const struct pairs *d, const struct fg_opts *o, FILE *out)
{
	struct flamegraph *fg = flamegraph__new(o);
	int err = fg ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < d->nr; i++) {
		const struct row *r = &d->v[i];

		err = o->negate ?
		      flamegraph__add(fg, r->stack, strlen(r->stack), r->count[1], r->count[0], true) :
		      flamegraph__add(fg, r->stack, strlen(r->stack), r->count[0], r->count[1], true);
	}
	if (!err)
		err = flamegraph__write(fg, out);
	flamegraph__free(fg);
	return err;
}

/* Stack STACK (root first, ';'-joined) of P: its frames as locations named by them, leaf
 * first. Returns the stack's id or a negative errno. */
static int pprof_stack(struct profile *p, const char *stack)
{
	uint32_t *locs = NULL, n = 0, cap = 0;
	const char *s = stack;
	int id = 0;

	while (id >= 0) {
		const char *end = strchr(s, ';');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		struct profile_frame f = { .kind = PROFILE_FRAME_USER };
		struct profile_location loc = { .kind = PROFILE_LOC_USER,
						.mapping = PROFILE_NONE, .nr_frames = 1,
						.frames = &f };

		id = profile__intern(p, s, len);
		if (id >= 0) {
			f.name = (uint32_t)id;
			id = profile__add_location(p, &loc);
		}
		if (id >= 0 && array_grow(&locs, &cap, sizeof(*locs), n))
			id = -ENOMEM;
		if (id >= 0)
			locs[n++] = (uint32_t)id;
		if (!end)
			break;
		s = end + 1;
	}
	/* Leaf first. */
	for (uint32_t i = 0; id >= 0 && i < n / 2; i++) {
		uint32_t t = locs[i];

		locs[i] = locs[n - 1 - i];
		locs[n - 1 - i] = t;
	}
	if (id >= 0)
		id = profile__add_stack(p, locs, n);
	free(locs);
	return id;
}

/*
 * D as pprof to OUT: each stack's AFTER minus BEFORE (negative where it shrank, as pprof
 * -diff_base shows a profile against its base), its frames named as in the stacks. Returns
 * 0 or -errno.
 */
static int write_pprof(const struct pairs *d, FILE *out)
{
	struct profile *p = profile__new();
	struct profile_meta meta = { .weight_type = "samples", .weight_unit = "count" };
	struct pprof_opts po = { 0 };
	struct profile_labels none = { .comm = PROFILE_NONE, .thread_comm = PROFILE_NONE };
	int err = p ? profile__set_meta(p, &meta) : -ENOMEM;

	for (size_t i = 0; err >= 0 && i < d->nr; i++) {
		int64_t delta = (int64_t)d->v[i].count[1] - (int64_t)d->v[i].count[0];
		int stack;

		if (!delta)
			continue;
		stack = pprof_stack(p, d->v[i].stack);
		/* (A weight is stored as the 64 bits of its two's complement: protobuf's int64.) */
		err = stack < 0 ? stack : profile__add_sample(p, (uint32_t)stack, (uint64_t)delta,
							      &none);
	}
	if (err >= 0)
		err = pprof__write(p, &po, out);
	profile__free(p);
	return err < 0 ? err : 0;
}

int diff_main(int argc, char **argv)
{
	struct option opts[40] = {
		{ "output", required_argument, NULL, 'o' },
		{ "normalize", no_argument, NULL, 'n' },
		{ "strip-hex", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
	};
	struct pairs d = { 0 };
	struct fg_opts o;
	const char *output = NULL;
	bool normalize = false;
	FILE *out = stdout;
	char err[256];
	int c, ret = 2;

	fg_opts__init(&o);
	fg_options__append(opts, 4, sizeof(opts) / sizeof(opts[0]));

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:nsh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'n':
			normalize = true;
			break;
		case 's':
			d.strip_hex = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, WHO ": %s needs a value; see 'profile diff --help'.\n",
				argv[optind - 1]);
			return 2;
		case '?':
			fprintf(stderr, WHO ": unknown option '%s'; see 'profile diff --help'.\n",
				argv[optind - 1]);
			return 2;
		default:
			if (fg_opts__parse_opt(&o, c, optarg, err, sizeof(err))) {
				fprintf(stderr, WHO ": %s.\n", err);
				return 2;
			}
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, WHO ": give two profiles, BEFORE and AFTER; see 'profile diff "
			"--help'.\n");
		return 2;
	}
	/* (A timeline needs each sample's time: two profiles' differences have none.) */
	if (output && ends_with(output, ".speedscope.json")) {
		fprintf(stderr, WHO ": -o %s: a difference has no timeline for speedscope; write "
			"it as *.svg, *.pb.gz or the three columns.\n", output);
		return 2;
	}
	if (read_side(&d, 0, argv[optind]) || read_side(&d, 1, argv[optind + 1]))
		goto out;
	/* Samples against nanoseconds off the CPU, one event against another: no difference
	 * means anything (pprof files say what they count; folded ones do not). */
	if (d.type[0][0] && d.type[1][0] && strcmp(d.type[0], d.type[1])) {
		fprintf(stderr, WHO ": %s counts %s and %s counts %s: not the same kind of "
			"profile.\n", argv[optind], d.type[0], argv[optind + 1], d.type[1]);
		goto out;
	}
	/* difffolded.pl -n: BEFORE's counts as if it had AFTER's total (truncated, as it
	 * does). */
	if (normalize && d.total[0] != d.total[1] && d.total[0] > 0)
		for (size_t i = 0; i < d.nr; i++)
			d.v[i].count[0] = floor(d.v[i].count[0] * d.total[1] / d.total[0]);
	qsort(d.v, d.nr, sizeof(*d.v), row_cmp);
	ret = 1;
	if (output && strcmp(output, "-")) {
		out = fopen(output, "w");
		if (!out) {
			fprintf(stderr, WHO ": cannot write %s: %s.\n", output, strerror(errno));
			goto out;
		}
	}
	c = output && ends_with(output, ".svg") ? write_svg(&d, &o, out) :
	    output && (ends_with(output, ".pb.gz") || ends_with(output, ".pb")) ?
	    write_pprof(&d, out) : write_columns(&d, out);
	if (out != stdout && fclose(out) && !c)
		c = -(errno ? errno : EIO);
	if (c) {
		fprintf(stderr, WHO ": cannot write %s: %s.\n", output ? output : "the output",
			strerror(-c));
		goto out;
	}
	ret = 0;
out:
	pairs__free(&d);
	return ret;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * flamegraph options: flamegraph.pl's defaults, the option table and help text of
 * `profile flamegraph`, and parsing of one option at a time (fg_opts__*).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "flamegraph.h"

static const char *const palette_names[] = {
	[FG_HOT] = "hot", [FG_MEM] = "mem", [FG_IO] = "io", [FG_RED] = "red",
	[FG_GREEN] = "green", [FG_BLUE] = "blue", [FG_AQUA] = "aqua", [FG_YELLOW] = "yellow",
	[FG_PURPLE] = "purple", [FG_ORANGE] = "orange",
};

void fg_opts__init(struct fg_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->width = 1200;
	o->height = 16;
	o->minwidth = 0.1;
	o->colors = FG_HOT;
	o->countname = "samples";
	o->nametype = "Function:";
	o->fonttype = "Verdana";
	o->fontsize = 12;
}

const struct option fg_options[] = {
	{ "title",	required_argument, NULL, FG_OPTION_BASE + 0 },
	{ "subtitle",	required_argument, NULL, FG_OPTION_BASE + 1 },
	{ "width",	required_argument, NULL, FG_OPTION_BASE + 2 },
	{ "height",	required_argument, NULL, FG_OPTION_BASE + 3 },
	{ "minwidth",	required_argument, NULL, FG_OPTION_BASE + 4 },
	{ "colors",	required_argument, NULL, FG_OPTION_BASE + 5 },
	{ "reverse",	no_argument,	   NULL, FG_OPTION_BASE + 6 },
	{ "inverted",	no_argument,	   NULL, FG_OPTION_BASE + 7 },
	{ "countname",	required_argument, NULL, FG_OPTION_BASE + 8 },
	{ "nametype",	required_argument, NULL, FG_OPTION_BASE + 9 },
	{ "fonttype",	required_argument, NULL, FG_OPTION_BASE + 10 },
	{ "fontsize",	required_argument, NULL, FG_OPTION_BASE + 11 },
	{ "negate",	no_argument,	   NULL, FG_OPTION_BASE + 12 },
	{ NULL, 0, NULL, 0 },
};

size_t fg_options__append(struct option *dst, size_t n, size_t cap)
{
	for (size_t i = 0; fg_options[i].name && n + 1 < cap; i++)
		dst[n++] = fg_options[i];
	dst[n] = (struct option){ 0 };
	return n;
}

const char FG_OPTIONS_HELP[] =
"  --title TEXT        title (default \"Flame Graph\", \"Icicle Graph\" with --inverted)\n"
"  --subtitle TEXT     second line under the title\n"
"  --width PIXELS      image width (default 1200)\n"
"  --height PIXELS     height of one frame (default 16)\n"
"  --minwidth N[%]     leave out frames narrower than N pixels, or N% of the samples\n"
"                      (default 0.1 pixels)\n"
"  --colors PALETTE    hot (default), mem, io, red, green, blue, aqua, yellow, purple,\n"
"                      orange; with hot, kernel (_[k]), inline (_[i]), JIT (_[j]),\n"
"                      Python (\"f (x.py:3)\") and Ruby (\"m (x.rb:3)\") frames get\n"
"                      colours of their own\n"
"  --reverse           reverse the stacks: merge from the leaves\n"
"  --inverted          icicle graph: the root at the top\n"
"  --countname NAME    what the counts are (default \"samples\")\n"
"  --nametype TEXT     what the names are, in the details line (default \"Function:\")\n"
"  --fonttype FONT     font family (default \"Verdana\")\n"
"  --fontsize SIZE     font size in pixels (default 12)\n"
"  --negate            differential lines: switch the hues (blue where the second count\n"
"                      grew), for a graph drawn on the first profile (flamegraph.pl's)\n";

static int bad(char *err, size_t errsz, const char *name, const char *what, const char *value)
{
	if (err && errsz)
		snprintf(err, errsz, "--%s: expected %s, not '%.60s'", name, what, value);
	return -EINVAL;
}

static int parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned int *v)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || n < lo || n > hi)
		return -1;
	*v = (unsigned int)n;
	return 0;
}

static int parse_double(const char *s, double lo, double hi, double *v)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(d) || d < lo || d > hi)
		return -1;
	*v = d;
	return 0;
}

int fg_opts__parse_arg(struct fg_opts *o, const char *name, const char *value, char *err,
		       size_t errsz)
{
	const char *v = value ? value : "";

	if (!strcmp(name, "reverse")) {
		o->reverse = true;
	} else if (!strcmp(name, "inverted")) {
		o->inverted = true;
	} else if (!strcmp(name, "negate")) {
		o->negate = true;
	} else if (!strcmp(name, "title")) {
		o->title = v;
	} else if (!strcmp(name, "subtitle")) {
		o->subtitle = v;
	} else if (!strcmp(name, "countname")) {
		o->countname = v;
	} else if (!strcmp(name, "nametype")) {
		o->nametype = v;
	} else if (!strcmp(name, "fonttype")) {
		if (!*v)
			return bad(err, errsz, name, "a font family", v);
		o->fonttype = v;
	} else if (!strcmp(name, "width")) {
		if (parse_uint(v, 10, 1000000, &o->width))
			return bad(err, errsz, name, "a whole number of pixels from 10 to 1000000", v);
	} else if (!strcmp(name, "height")) {
		if (parse_uint(v, 1, 1000, &o->height))
			return bad(err, errsz, name, "a whole number of pixels from 1 to 1000", v);
	} else if (!strcmp(name, "fontsize")) {
		if (parse_double(v, 1, 1000, &o->fontsize))
			return bad(err, errsz, name, "a size in pixels from 1 to 1000", v);
	} else if (!strcmp(name, "minwidth")) {
		size_t n = strlen(v);
		char num[64];
		bool pct = n > 0 && v[n - 1] == '%';

		if (pct)
			n--;
		if (n == 0 || n >= sizeof(num))
			return bad(err, errsz, name, "pixels (0.1) or a percentage (0.5%)", v);
		memcpy(num, v, n);
		num[n] = '\0';
		if (parse_double(num, 0, pct ? 100 : 1e9, &o->minwidth))
			return bad(err, errsz, name, "pixels (0.1) or a percentage (0.5%)", v);
		o->minwidth_pct = pct;
	} else if (!strcmp(name, "colors") || !strcmp(name, "colours")) {
		size_t i;

		for (i = 0; i < sizeof(palette_names) / sizeof(palette_names[0]); i++)
			if (!strcmp(v, palette_names[i]))
				break;
		if (i == sizeof(palette_names) / sizeof(palette_names[0]))
			return bad(err, errsz, "colors",
				   "hot, mem, io, red, green, blue, aqua, yellow, purple or orange", v);
		o->colors = (enum fg_palette)i;
	} else {
		return -ENOENT;
	}
	return 0;
}

int fg_opts__parse_opt(struct fg_opts *o, int val, const char *arg, char *err, size_t errsz)
{
	int i = val - FG_OPTION_BASE;

	if (i < 0 || i >= (int)(sizeof(fg_options) / sizeof(fg_options[0])) - 1)
		return -ENOENT;
	return fg_opts__parse_arg(o, fg_options[i].name, arg, err, errsz);
}

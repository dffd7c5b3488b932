/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * flamegraph: folded stacks -> call tree -> a self-contained interactive SVG, in the look
 * and behaviour of flamegraph.pl (click to zoom, Reset Zoom, regex search with "Matched: P%",
 * tooltips "NAME (N samples, P%)", a details line on hover).
 *
 * Frames are merged by name under the same parent (a real tree merge: flamegraph.pl merges
 * only adjacent sorted lines, so siblings "foo" and "foo.bar" can split "foo" in two there).
 * Children are drawn in bytewise name order. Frame suffixes _[k] (kernel), _[i] (inline),
 * _[j] (JIT) and _[w] are colour hints, never shown.
 */
#ifndef FLAMEGRAPH_H
#define FLAMEGRAPH_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct folded;
struct folded_reader;

enum fg_palette {
	FG_HOT, FG_MEM, FG_IO, FG_RED, FG_GREEN, FG_BLUE, FG_AQUA, FG_YELLOW, FG_PURPLE,
	FG_ORANGE,
};

/* Longest frame name shown, in characters; longer names end in "...". */
#define FG_NAME_MAX 2000

/* The options of flamegraph.pl that people use. Strings are borrowed, not copied. */
struct fg_opts {
	const char *title;	/* NULL: "Flame Graph", or "Icicle Graph" when inverted */
	const char *subtitle;	/* NULL: none */
	unsigned int width;	/* image width in pixels (1200) */
	unsigned int height;	/* frame height in pixels (16) */
	double minwidth;	/* leave out frames narrower than this (0.1 pixels) */
	bool minwidth_pct;	/* minwidth is a percentage of all samples */
	enum fg_palette colors;	/* FG_HOT */
	bool reverse;		/* stacks reversed: merged from the leaves */
	bool inverted;		/* icicle graph: root at the top */
	bool negate;		/* differential: the hues switched (blue where it grew) */
	const char *countname;	/* "samples" */
	const char *nametype;	/* "Function:" */
	const char *fonttype;	/* "Verdana" */
	double fontsize;	/* 12 */
};

/* Fill *O with flamegraph.pl's defaults. */
void fg_opts__init(struct fg_opts *o);

/*
 * Set option NAME (the long name without "--": "title", "width", "minwidth", "colors",
 * "reverse", ...) from VALUE (NULL for the flags "reverse" and "inverted"). VALUE is
 * borrowed for string options: it must outlive *O. Returns 0; -ENOENT when NAME is not a
 * flame graph option; -EINVAL for a bad value, with one sentence in ERR (ERRSZ bytes),
 * e.g. "--width: expected a whole number of pixels from 10 to 1000000, not 'x'".
 */
int fg_opts__parse_arg(struct fg_opts *o, const char *name, const char *value, char *err,
		       size_t errsz);

/*
 * getopt_long entries for the options above (terminated by a zero entry), for a command
 * line of its own: each entry's val is FG_OPTION_BASE + its index. fg_opts__parse_opt takes
 * such a val and optarg and calls fg_opts__parse_arg; same returns. FG_OPTIONS_HELP is the
 * options part of a usage text.
 */
#define FG_OPTION_BASE 0x4600
extern const struct option fg_options[];
/* A command's option table: its N own entries in DST (CAP entries), then fg_options, then
 * the zero entry (as many as fit). Returns the number of entries before the zero one. */
size_t fg_options__append(struct option *dst, size_t n, size_t cap);
int fg_opts__parse_opt(struct fg_opts *o, int val, const char *arg, char *err, size_t errsz);
extern const char FG_OPTIONS_HELP[];

struct flamegraph;

/* An empty graph drawn with *O (copied; its strings stay borrowed). NULL on ENOMEM. */
struct flamegraph *flamegraph__new(const struct fg_opts *o);
void flamegraph__free(struct flamegraph *fg);

/*
 * Add one stack: STACK (LEN bytes, ';'-joined, root first) with COUNT samples. For a
 * differential line DIFF is true and COUNT2 is the second count: the width comes from
 * COUNT2 and the colour from COUNT2 - COUNT. Returns 0, -EINVAL for a negative count, or
 * -ENOMEM.
 */
int flamegraph__add(struct flamegraph *fg, const char *stack, size_t len, double count,
		    double count2, bool diff);

/* Add every stack of R until its end. Returns 0 or the reader's error (message in R). */
int flamegraph__read(struct flamegraph *fg, struct folded_reader *r);

/* Add every stack of F. Returns 0 or -ENOMEM. */
int flamegraph__add_folded(struct flamegraph *fg, const struct folded *f);

/* Sum of the widths of all stacks added so far. */
double flamegraph__total(const struct flamegraph *fg);

/*
 * Write the SVG to OUT. A graph without samples is a valid SVG saying so. Returns 0 or a
 * negative errno (write error, ENOMEM). Can be called more than once.
 */
int flamegraph__write(struct flamegraph *fg, FILE *out);

/*
 * For the profiler: render the stacks of F with options O (NULL: defaults) to OUT.
 * Returns 0 or a negative errno.
 */
int flamegraph__write_folded(const struct folded *f, FILE *out, const struct fg_opts *o);

#endif

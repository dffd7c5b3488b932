/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * flamegraph internals shared by its files, not part of the API: the call tree that tree.c
 * builds and svg.c draws, and the colours of colors.c. Only flamegraph/'s files include it.
 */
#ifndef FLAMEGRAPH_INTERNAL_H
#define FLAMEGRAPH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "flamegraph.h"

/* --- the call tree (tree.c) ------------------------------------------------------------ */

/*
 * Names are interned once (NAMES, an arena of bytes, and a hash table of ids); nodes are
 * found by (parent, name id) in a second hash table that holds its keys, so that a lookup
 * touches one cache line. Node 0 is the root. The frames of the previous stack are kept:
 * sorted input shares long prefixes from line to line, and those are not looked up again.
 */
struct name {
	size_t off;		/* in the arena */
	uint32_t len;
	uint32_t rank;		/* position in bytewise order, set before drawing */
	uint64_t hash;
};

struct node {
	uint32_t name, parent;
	double value;		/* width: samples of this frame and everything above it */
	double delta;		/* differential: COUNT2 - COUNT of stacks ending here */
};

/* tree.c's own: the slots of its node hash table, the frames of the stack being added. */
struct slot;
struct frame;

/*
 * Everything below is owned by the graph: made by tree.c, freed by flamegraph__free. svg.c
 * reads it and sets names[].rank when it draws.
 */
struct flamegraph {
	struct fg_opts o;
	char *arena;
	size_t arena_len, arena_cap;
	struct name *names;
	uint32_t nr_names, names_cap;
	uint32_t *name_tab;	/* name ids + 1, 0 = empty */
	uint32_t name_tab_cap;
	struct node *nodes;
	uint32_t nr_nodes, nodes_cap;
	struct slot *node_tab;
	uint32_t node_tab_cap;
	bool diff;
	struct frame *path;	/* frames of the previous stack */
	size_t path_nr, path_cap;
	char *prev;		/* the previous stack (not in --reverse) */
	size_t prev_len, prev_cap;
};

/* --- colours (colors.c) ---------------------------------------------------------------- */

enum hint { HINT_NONE, HINT_KERNEL, HINT_INLINE, HINT_JIT, HINT_WAKER, HINT_PYTHON, HINT_RUBY };

struct rgb {
	unsigned int r, g, b;
};

/*
 * The length of NAME (LEN bytes) without its _[k]/_[i]/_[j]/_[w] suffix; *HINT says which
 * suffix it had (HINT_NONE: none, or one of another letter, which is kept). A name without
 * one that ends in " (FILE:LINE)" or " (FILE)" is an interpreter's frame: HINT_RUBY for a
 * FILE ending in .rb or starting "<internal:", HINT_PYTHON for one ending in .py or starting
 * "<" (<string>, <frozen ...>), as profile and py-spy write them.
 */
size_t colors__strip_hint(const char *name, size_t len, enum hint *hint);

/*
 * The fill of frame NAME (LEN bytes, suffix already stripped, HINT from colors__strip_hint)
 * in palette O->colors: the same name, the same colour; with FG_HOT the hints pick
 * palettes of their own, and "-" and "--" are grey.
 */
struct rgb colors__frame(const struct fg_opts *o, const char *name, size_t len,
			 enum hint hint);

/* The colour that stands for frames of HINT (or off the CPU) in the legend: the middle of
 * their palette in O->colors. */
struct rgb colors__legend(const struct fg_opts *o, enum hint hint, bool off_cpu);

/*
 * flamegraph.pl's differential scale: DELTA (COUNT2 - COUNT) clamped to +-MAXDELTA, red for
 * more samples, blue for fewer, white for none or when MAXDELTA is not positive.
 */
struct rgb colors__diff(double delta, double maxdelta);

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
/* flamegraph: folded stacks -> call tree -> interactive SVG. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "flamegraph.h"
#include "output/folded.h"
#include "output/folded_read.h"
#include "fg_assets.h"

/*
 * Layout constants of flamegraph.pl, so that graphs look the same: average character
 * width relative to the font size, padding, a pixel between frames.
 */
#define FONTWIDTH	0.59
#define XPAD		10
#define FRAMEPAD	1

/* --- options --------------------------------------------------------------------------- */

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
	{ NULL, 0, NULL, 0 },
};

const char FG_OPTIONS_HELP[] =
"  --title TEXT        title (default \"Flame Graph\", \"Icicle Graph\" with --inverted)\n"
"  --subtitle TEXT     second line under the title\n"
"  --width PIXELS      image width (default 1200)\n"
"  --height PIXELS     height of one frame (default 16)\n"
"  --minwidth N[%]     leave out frames narrower than N pixels, or N% of the samples\n"
"                      (default 0.1 pixels)\n"
"  --colors PALETTE    hot (default), mem, io, red, green, blue, aqua, yellow, purple,\n"
"                      orange; with hot, kernel (_[k]), inline (_[i]) and JIT (_[j])\n"
"                      frames get colours of their own\n"
"  --reverse           reverse the stacks: merge from the leaves\n"
"  --inverted          icicle graph: the root at the top\n"
"  --countname NAME    what the counts are (default \"samples\")\n"
"  --nametype TEXT     what the names are, in the details line (default \"Function:\")\n"
"  --fonttype FONT     font family (default \"Verdana\")\n"
"  --fontsize SIZE     font size in pixels (default 12)\n";

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

/* --- the call tree --------------------------------------------------------------------- */

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

struct slot {
	uint32_t parent, name;
	uint32_t id;		/* node id + 1, 0 = empty */
};

/* One frame of the stack being added: where it ends in the stack, and its node. */
struct frame {
	uint32_t start, len;
	uint32_t node;
};

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

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	return h;
}

/* A faster hash for interning: eight bytes at a time. */
static uint64_t hash_fast(const char *s, size_t len)
{
	uint64_t h = len * 0x9e3779b97f4a7c15ULL, w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, s, len);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 32);
}

static uint64_t hash_node(uint32_t parent, uint32_t name)
{
	uint64_t h = ((uint64_t)parent << 32 | name) * 0x9e3779b97f4a7c15ULL;

	return h ^ (h >> 29);
}

static int grow(void **p, uint32_t *cap, size_t size, uint32_t need)
{
	uint32_t ncap = *cap ? *cap : 1024;
	void *np;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > UINT32_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	np = realloc(*p, (size_t)ncap * size);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

/* Double the name table (a power of two) and re-insert every name. */
static int rehash_names(struct flamegraph *fg)
{
	uint32_t cap = fg->name_tab_cap ? fg->name_tab_cap * 2 : 4096;
	uint32_t *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (uint32_t i = 0; i < fg->nr_names; i++) {
		uint32_t j = (uint32_t)fg->names[i].hash & (cap - 1);

		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = i + 1;
	}
	free(fg->name_tab);
	fg->name_tab = t;
	fg->name_tab_cap = cap;
	return 0;
}

/*
 * Zeroed memory for a node table. Lookups in a large table miss the cache at random; on
 * huge pages they at least do not miss the TLB too (about a third faster on 2M nodes).
 */
static struct slot *slots_alloc(uint32_t cap)
{
	size_t size = (size_t)cap * sizeof(struct slot);
	void *p;

	if (size < (4u << 20))
		return calloc(cap, sizeof(struct slot));
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, size, MADV_HUGEPAGE);
	return p;
}

static void slots_free(struct slot *t, uint32_t cap)
{
	size_t size = (size_t)cap * sizeof(struct slot);

	if (size < (4u << 20))
		free(t);
	else if (t)
		munmap(t, size);
}

/* Double the node table and re-insert every node but the root (never looked up). */
static int rehash_nodes(struct flamegraph *fg)
{
	uint32_t cap = fg->node_tab_cap ? fg->node_tab_cap * 2 : 4096;
	struct slot *t = slots_alloc(cap);

	if (!t)
		return -ENOMEM;
	for (uint32_t i = 1; i < fg->nr_nodes; i++) {
		const struct node *n = &fg->nodes[i];
		uint32_t j = (uint32_t)hash_node(n->parent, n->name) & (cap - 1);

		while (t[j].id)
			j = (j + 1) & (cap - 1);
		t[j] = (struct slot){ n->parent, n->name, i + 1 };
	}
	slots_free(fg->node_tab, fg->node_tab_cap);
	fg->node_tab = t;
	fg->node_tab_cap = cap;
	return 0;
}

/* The id of name S (LEN bytes), interned on first sight; negative errno on failure. */
static int64_t intern(struct flamegraph *fg, const char *s, size_t len)
{
	uint64_t h = hash_fast(s, len);
	uint32_t j, id;
	struct name *nm;

	if (len > UINT32_MAX)
		return -E2BIG;
	if (2 * ((uint64_t)fg->nr_names + 1) > fg->name_tab_cap && rehash_names(fg))
		return -ENOMEM;
	for (j = (uint32_t)h & (fg->name_tab_cap - 1); fg->name_tab[j];
	     j = (j + 1) & (fg->name_tab_cap - 1)) {
		nm = &fg->names[fg->name_tab[j] - 1];
		if (nm->hash == h && nm->len == len && !memcmp(fg->arena + nm->off, s, len))
			return fg->name_tab[j] - 1;
	}
	if (grow((void **)&fg->names, &fg->names_cap, sizeof(*fg->names), fg->nr_names + 1))
		return -ENOMEM;
	if (fg->arena_len + len > fg->arena_cap) {
		size_t cap = fg->arena_cap ? fg->arena_cap : 1 << 16;
		char *a;

		while (cap < fg->arena_len + len)
			cap *= 2;
		a = realloc(fg->arena, cap);
		if (!a)
			return -ENOMEM;
		fg->arena = a;
		fg->arena_cap = cap;
	}
	memcpy(fg->arena + fg->arena_len, s, len);
	id = fg->nr_names++;
	fg->names[id] = (struct name){ .off = fg->arena_len, .len = (uint32_t)len, .hash = h };
	fg->arena_len += len;
	fg->name_tab[j] = id + 1;
	return id;
}

/* The child NAME of PARENT, created on first sight; negative errno on failure. */
static int64_t child(struct flamegraph *fg, uint32_t parent, uint32_t name)
{
	uint64_t h = hash_node(parent, name);
	uint32_t j, id;

	if (2 * ((uint64_t)fg->nr_nodes + 1) > fg->node_tab_cap && rehash_nodes(fg))
		return -ENOMEM;
	for (j = (uint32_t)h & (fg->node_tab_cap - 1); fg->node_tab[j].id;
	     j = (j + 1) & (fg->node_tab_cap - 1)) {
		const struct slot *sl = &fg->node_tab[j];

		if (sl->parent == parent && sl->name == name)
			return sl->id - 1;
	}
	if (grow((void **)&fg->nodes, &fg->nodes_cap, sizeof(*fg->nodes), fg->nr_nodes + 1))
		return -ENOMEM;
	id = fg->nr_nodes++;
	fg->nodes[id] = (struct node){ .name = name, .parent = parent };
	fg->node_tab[j] = (struct slot){ parent, name, id + 1 };
	return id;
}

struct flamegraph *flamegraph__new(const struct fg_opts *o)
{
	struct flamegraph *fg = calloc(1, sizeof(*fg));

	if (!fg)
		return NULL;
	if (o)
		fg->o = *o;
	else
		fg_opts__init(&fg->o);
	if (grow((void **)&fg->nodes, &fg->nodes_cap, sizeof(*fg->nodes), 1) ||
	    intern(fg, "all", 3) < 0) {
		flamegraph__free(fg);
		return NULL;
	}
	fg->nodes[0] = (struct node){ .name = 0 };
	fg->nr_nodes = 1;
	return fg;
}

void flamegraph__free(struct flamegraph *fg)
{
	if (!fg)
		return;
	free(fg->arena);
	free(fg->names);
	free(fg->name_tab);
	free(fg->nodes);
	slots_free(fg->node_tab, fg->node_tab_cap);
	free(fg->path);
	free(fg->prev);
	free(fg);
}

/*
 * Split STACK into frames in fg->path after its first KEEP frames (those of the previous
 * stack, nodes known); the nodes of the new frames are found later.
 */
static int split_frames(struct flamegraph *fg, const char *stack, size_t len, size_t keep)
{
	size_t start = 0;

	fg->path_nr = keep;
	if (keep) {
		start = fg->path[keep - 1].start + fg->path[keep - 1].len;
		if (start == len)
			return 0;
		start++;
	} else if (!len) {
		return 0;
	}
	for (;;) {
		const char *semi = memchr(stack + start, ';', len - start);
		size_t end = semi ? (size_t)(semi - stack) : len;

		if (fg->path_nr == fg->path_cap) {
			size_t cap = fg->path_cap ? fg->path_cap * 2 : 128;
			struct frame *p = realloc(fg->path, cap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			fg->path = p;
			fg->path_cap = cap;
		}
		fg->path[fg->path_nr++] = (struct frame){ (uint32_t)start, (uint32_t)(end - start), 0 };
		if (!semi)
			return 0;
		start = end + 1;
	}
}

/* How many leading frames STACK shares with the previous stack (whose frames are known). */
static size_t shared_frames(const struct flamegraph *fg, const char *stack, size_t len)
{
	size_t n = len < fg->prev_len ? len : fg->prev_len, same = 0, k = 0;

	while (same < n && stack[same] == fg->prev[same])
		same++;
	for (; k < fg->path_nr; k++) {
		size_t end = fg->path[k].start + fg->path[k].len;

		if (end > same || (end < len && stack[end] != ';'))
			break;
	}
	return k;
}

int flamegraph__add(struct flamegraph *fg, const char *stack, size_t len, double count,
		    double count2, bool diff)
{
	double width = diff ? count2 : count;
	size_t keep = 0, nr;
	uint32_t cur = 0;
	int err;

	if (!(count >= 0) || !(count2 >= 0))
		return -EINVAL;
	if (len > UINT32_MAX)
		return -E2BIG;
	if (!fg->o.reverse && fg->prev_len)
		keep = shared_frames(fg, stack, len);
	fg->prev_len = 0;	/* set again when this stack is in */
	err = split_frames(fg, stack, len, keep);
	if (err)
		return err;
	nr = fg->path_nr;
	/*
	 * Names first, then nodes: the name table is small and cached; the node table is not,
	 * and a loop of lookups alone lets the CPU overlap the misses of new nodes.
	 */
	for (size_t k = keep; k < nr; k++) {
		size_t f = fg->o.reverse ? nr - 1 - k : k;
		int64_t name = intern(fg, stack + fg->path[f].start, fg->path[f].len);

		if (name < 0)
			return (int)name;
		fg->path[f].node = (uint32_t)name;
	}
	fg->nodes[0].value += width;
	for (size_t k = 0; k < nr; k++) {
		size_t f = fg->o.reverse ? nr - 1 - k : k;
		int64_t id;

		if (k < keep) {
			cur = fg->path[k].node;
		} else {
			id = child(fg, cur, fg->path[f].node);
			if (id < 0)
				return (int)id;
			cur = (uint32_t)id;
			fg->path[f].node = cur;
		}
		fg->nodes[cur].value += width;
	}
	if (diff) {
		fg->diff = true;
		fg->nodes[cur].delta += count2 - count;
	}
	if (!fg->o.reverse && len) {
		if (len > fg->prev_cap) {
			char *p = realloc(fg->prev, len);

			if (!p)
				return -ENOMEM;
			fg->prev = p;
			fg->prev_cap = len;
		}
		memcpy(fg->prev, stack, len);
		fg->prev_len = len;
	}
	return 0;
}

int flamegraph__read(struct flamegraph *fg, struct folded_reader *r)
{
	struct folded_rec rec;
	int ret;

	while ((ret = folded_reader__next(r, &rec)) > 0) {
		ret = flamegraph__add(fg, rec.stack, rec.len, rec.count, rec.count2, rec.diff);
		if (ret)
			return ret;
	}
	return ret;
}

static int add_one(const char *stack, uint64_t count, void *ctx)
{
	return flamegraph__add(ctx, stack, strlen(stack), (double)count, (double)count, false);
}

int flamegraph__add_folded(struct flamegraph *fg, const struct folded *f)
{
	return folded__for_each(f, add_one, fg);
}

double flamegraph__total(const struct flamegraph *fg)
{
	return fg->nodes[0].value;
}

/* --- output buffer --------------------------------------------------------------------- */

struct out {
	FILE *f;
	char buf[1 << 16];
	size_t len;
	int err;
};

static void out_flush(struct out *o)
{
	if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len && !o->err)
		o->err = -(errno ? errno : EIO);
	o->len = 0;
}

static void out_mem(struct out *o, const char *s, size_t n)
{
	if (o->len + n > sizeof(o->buf)) {
		out_flush(o);
		if (n > sizeof(o->buf)) {
			if (fwrite(s, 1, n, o->f) != n && !o->err)
				o->err = -(errno ? errno : EIO);
			return;
		}
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static void out_str(struct out *o, const char *s)
{
	out_mem(o, s, strlen(s));
}

static void out_fmt(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_fmt(struct out *o, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		out_mem(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static void out_u64(struct out *o, uint64_t v)
{
	char tmp[24];
	int i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	out_mem(o, tmp + i, sizeof(tmp) - i);
}

/* X rounded to one decimal, without the ".0" of whole numbers. */
static void out_tenths(struct out *o, double x)
{
	long long t = llround(x * 10);

	if (t < 0) {
		out_mem(o, "-", 1);
		t = -t;
	}
	out_u64(o, (uint64_t)t / 10);
	if (t % 10) {
		char d[2] = { '.', (char)('0' + t % 10) };

		out_mem(o, d, 2);
	}
}

/* A count as flamegraph.pl prints it: whole numbers with thousands separators. */
static void out_count(struct out *o, double v)
{
	char tmp[64];
	int n, lead;

	if (fabs(v - nearbyint(v)) > 1e-9 || v >= 1e18) {
		out_fmt(o, "%.2f", v);
		return;
	}
	n = snprintf(tmp, sizeof(tmp), "%.0f", v);
	lead = n % 3 ? n % 3 : 3;
	out_mem(o, tmp, lead);
	for (int i = lead; i < n; i += 3) {
		out_mem(o, ",", 1);
		out_mem(o, tmp + i, 3);
	}
}

/* --- text: UTF-8 checked, XML-escaped, bounded ----------------------------------------- */

/*
 * The code point at S[*I] (LEN bytes), advancing *I. Invalid or overlong sequences,
 * surrogates and characters XML does not allow come back as U+FFFD, one byte consumed;
 * control characters as '?'.
 */
static uint32_t next_cp(const unsigned char *s, size_t len, size_t *i)
{
	unsigned char c = s[*i];
	uint32_t cp, min;
	size_t n;

	if (c < 0x80) {
		(*i)++;
		return c < 0x20 && c != '\t' ? '?' : c;
	}
	if (c >= 0xc2 && c <= 0xdf)
		n = 1, cp = c & 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		n = 2, cp = c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 3, cp = c & 0x07, min = 0x10000;
	else
		goto bad;
	if (*i + n >= len)
		goto bad;
	for (size_t k = 1; k <= n; k++) {
		if ((s[*i + k] & 0xc0) != 0x80)
			goto bad;
		cp = cp << 6 | (s[*i + k] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe ||
	    cp == 0xffff)
		goto bad;
	*i += n + 1;
	return cp;
bad:
	(*i)++;
	return 0xfffd;
}

static void out_cp(struct out *o, uint32_t cp)
{
	char b[4];

	switch (cp) {
	case '&': out_mem(o, "&amp;", 5); return;
	case '<': out_mem(o, "&lt;", 4); return;
	case '>': out_mem(o, "&gt;", 4); return;
	case '"': out_mem(o, "&quot;", 6); return;
	case '\'': out_mem(o, "&#39;", 5); return;
	}
	if (cp < 0x80) {
		b[0] = (char)cp;
		out_mem(o, b, 1);
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		out_mem(o, b, 2);
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		out_mem(o, b, 3);
	} else {
		b[0] = (char)(0xf0 | cp >> 18);
		b[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		b[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		out_mem(o, b, 4);
	}
}

/* Whether S is plain ASCII that needs no escaping (the common case, written as is). */
static bool plain(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c < 0x20 || c >= 0x7f || c == '&' || c == '<' || c == '>' || c == '"' ||
		    c == '\'')
			return false;
	}
	return true;
}

/*
 * S (LEN bytes) as XML text: at most MAX characters, and when S has more, its first
 * MAX - KEEP characters followed by MORE ("..." or "..").
 */
static void out_text(struct out *o, const char *s, size_t len, size_t max, size_t keep,
		     const char *more)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, n = 0;

	if (len <= max && plain(s, len)) {
		out_mem(o, s, len);
		return;
	}
	/* count up to MAX + 1 characters to know whether it fits */
	while (i < len && n <= max) {
		next_cp(u, len, &i);
		n++;
	}
	if (n <= max) {
		for (i = 0; i < len;)
			out_cp(o, next_cp(u, len, &i));
		return;
	}
	for (i = 0, n = 0; n + keep < max; n++)
		out_cp(o, next_cp(u, len, &i));
	out_str(o, more);
}

static void out_text_str(struct out *o, const char *s)
{
	out_text(o, s, strlen(s), FG_NAME_MAX, 3, "...");
}

/* S as the contents of a JavaScript string literal inside CDATA: only [A-Za-z0-9 ] as is. */
static void out_js_str(struct out *o, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strlen(s);

	for (size_t i = 0; i < len;) {
		uint32_t cp = next_cp(u, len, &i);

		if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
		    (cp >= '0' && cp <= '9') || cp == ' ') {
			char c = (char)cp;

			out_mem(o, &c, 1);
		} else if (cp < 0x10000) {
			out_fmt(o, "\\u%04x", cp);
		} else {
			cp -= 0x10000;
			out_fmt(o, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
		}
	}
}

/* --- colours --------------------------------------------------------------------------- */

enum hint { HINT_NONE, HINT_KERNEL, HINT_INLINE, HINT_JIT, HINT_WAKER };

/* The length of NAME without its _[k]/_[i]/_[j]/_[w] suffix, and which one it had. */
static size_t strip_hint(const char *name, size_t len, enum hint *hint)
{
	*hint = HINT_NONE;
	if (len >= 4 && name[len - 4] == '_' && name[len - 3] == '[' && name[len - 1] == ']') {
		switch (name[len - 2]) {
		case 'k': *hint = HINT_KERNEL; break;
		case 'i': *hint = HINT_INLINE; break;
		case 'j': *hint = HINT_JIT; break;
		case 'w': *hint = HINT_WAKER; break;
		default: return len;
		}
		return len - 4;
	}
	return len;
}

struct rgb {
	unsigned int r, g, b;
};

/* flamegraph.pl's palettes, with three values in [0, 1) from a hash of the name. */
static struct rgb palette(enum fg_palette p, double v1, double v2, double v3)
{
	unsigned int x;

	switch (p) {
	case FG_HOT:
		return (struct rgb){ 205 + (int)(50 * v3), (int)(230 * v1), (int)(55 * v2) };
	case FG_MEM:
		return (struct rgb){ 0, 190 + (int)(50 * v2), (int)(210 * v1) };
	case FG_IO:
		x = 80 + (int)(60 * v1);
		return (struct rgb){ x, x, 190 + (int)(55 * v2) };
	case FG_RED:
		x = 50 + (int)(80 * v1);
		return (struct rgb){ 200 + (int)(55 * v1), x, x };
	case FG_GREEN:
		x = 50 + (int)(60 * v1);
		return (struct rgb){ x, 200 + (int)(55 * v1), x };
	case FG_BLUE:
		x = 80 + (int)(60 * v1);
		return (struct rgb){ x, x, 205 + (int)(50 * v1) };
	case FG_AQUA:
		return (struct rgb){ 50 + (int)(60 * v1), 165 + (int)(55 * v1),
				     165 + (int)(55 * v1) };
	case FG_YELLOW:
		x = 175 + (int)(55 * v1);
		return (struct rgb){ x, x, 50 + (int)(20 * v1) };
	case FG_PURPLE:
		x = 190 + (int)(65 * v1);
		return (struct rgb){ x, 80 + (int)(60 * v1), x };
	case FG_ORANGE:
		return (struct rgb){ 190 + (int)(65 * v1), 90 + (int)(65 * v1), 0 };
	}
	return (struct rgb){ 0, 0, 0 };
}

/* The colour of frame NAME (suffix stripped, hint given): the same name, the same colour. */
static struct rgb frame_color(const struct fg_opts *o, const char *name, size_t len,
			      enum hint hint)
{
	uint64_t h = hash_bytes(name, len);
	enum fg_palette p = o->colors;
	double v1, v2, v3;

	h ^= h >> 33;	/* mix the high bits into the low ones (murmur3's finalizer) */
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	v1 = (double)(h & 0xffff) / 65536;
	v2 = (double)(h >> 16 & 0xffff) / 65536;
	v3 = (double)(h >> 32 & 0xffff) / 65536;

	if ((len == 1 && name[0] == '-') || (len == 2 && !memcmp(name, "--", 2)))
		return (struct rgb){ 160, 160, 160 };	/* separators, as flamegraph.pl */
	if (p == FG_HOT) {
		if (hint == HINT_KERNEL)
			p = FG_ORANGE;
		else if (hint == HINT_INLINE)
			p = FG_AQUA;
		else if (hint == HINT_JIT)
			p = FG_GREEN;
	}
	return palette(p, v1, v2, v3);
}

/* flamegraph.pl's differential scale: red for more samples, blue for fewer. */
static struct rgb diff_color(double delta, double maxdelta)
{
	struct rgb c = { 255, 255, 255 };

	if (!(maxdelta > 0))
		return c;
	delta = fmax(-maxdelta, fmin(maxdelta, delta));
	if (delta > 0)
		c.g = c.b = (unsigned int)(210 * (maxdelta - delta) / maxdelta);
	else if (delta < 0)
		c.r = c.g = (unsigned int)(210 * (maxdelta + delta) / maxdelta);
	return c;
}

/* --- drawing --------------------------------------------------------------------------- */

struct layout {
	double total, wpt;	/* samples, pixels per sample */
	double minvalue;	/* frames below this many samples are left out */
	double fw;		/* average character width */
	double ypad1, ypad2;
	unsigned int depthmax;
	double imageheight;
	double maxdelta;
	uint32_t *kids;		/* children of every node, sorted, grouped by parent */
	uint32_t *first;	/* node -> index of its first child in KIDS; first[n + 1] ends */
};

static int rank_cmp(const void *a, const void *b, void *ctx)
{
	const struct flamegraph *fg = ctx;
	const struct name *x = &fg->names[*(const uint32_t *)a];
	const struct name *y = &fg->names[*(const uint32_t *)b];
	int c = memcmp(fg->arena + x->off, fg->arena + y->off, x->len < y->len ? x->len : y->len);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int kid_cmp(const void *a, const void *b, void *ctx)
{
	const struct flamegraph *fg = ctx;
	uint32_t x = fg->names[fg->nodes[*(const uint32_t *)a].name].rank;
	uint32_t y = fg->names[fg->nodes[*(const uint32_t *)b].name].rank;

	return (x > y) - (x < y);
}

/* Sort the names bytewise, then every node's children by name. */
static int sort_tree(struct flamegraph *fg, struct layout *l)
{
	uint32_t *order = malloc((size_t)fg->nr_names * sizeof(*order));
	uint32_t n = fg->nr_nodes;

	l->kids = malloc((size_t)(n ? n : 1) * sizeof(*l->kids));
	l->first = calloc((size_t)n + 2, sizeof(*l->first));
	if (!order || !l->kids || !l->first) {
		free(order);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < fg->nr_names; i++)
		order[i] = i;
	qsort_r(order, fg->nr_names, sizeof(*order), rank_cmp, fg);
	for (uint32_t i = 0; i < fg->nr_names; i++)
		fg->names[order[i]].rank = i;
	free(order);
	/* counting sort by parent, then each group by name */
	for (uint32_t i = 1; i < n; i++)
		l->first[fg->nodes[i].parent + 2]++;
	for (uint32_t i = 2; i < n + 2; i++)
		l->first[i] += l->first[i - 1];
	for (uint32_t i = 1; i < n; i++)
		l->kids[l->first[fg->nodes[i].parent + 1]++] = i;
	for (uint32_t i = 0; i < n; i++)
		if (l->first[i + 1] - l->first[i] > 1)
			qsort_r(l->kids + l->first[i], l->first[i + 1] - l->first[i],
				sizeof(*l->kids), kid_cmp, fg);
	return 0;
}

/* A depth-first walk over the frames that are drawn, without recursion. */
struct walk {
	uint32_t node;
	uint32_t next;		/* index in kids of the next child to visit */
	double start;		/* in samples, from the left edge */
	double cstart;		/* where the next child starts */
};

static int walk_push(struct walk **st, size_t *nr, size_t *cap, uint32_t node, uint32_t next,
		     double start)
{
	if (*nr == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		struct walk *p = realloc(*st, ncap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*st = p;
		*cap = ncap;
	}
	(*st)[(*nr)++] = (struct walk){ node, next, start, start };
	return 0;
}

static void frame_open(struct flamegraph *fg, struct layout *l, struct out *o, uint32_t id,
		       unsigned int depth, double start)
{
	const struct fg_opts *opt = &fg->o;
	const struct node *n = &fg->nodes[id];
	const struct name *nm = &fg->names[n->name];
	const char *name = fg->arena + nm->off;
	double x1 = XPAD + start * l->wpt, x2 = XPAD + (start + n->value) * l->wpt;
	double rx1 = llround(x1 * 10) / 10.0, rx2 = llround(x2 * 10) / 10.0, y1, pct;
	size_t len = nm->len;
	enum hint hint;
	struct rgb c;
	long chars;

	len = strip_hint(name, len, &hint);
	if (!opt->inverted)
		y1 = l->imageheight - l->ypad2 - (depth + 1.0) * opt->height + FRAMEPAD;
	else
		y1 = l->ypad1 + (double)depth * opt->height;
	if (fg->diff)
		c = diff_color(n->delta, l->maxdelta);
	else
		c = frame_color(opt, name, len, hint);

	out_mem(o, "\n<g><title>", 11);
	out_text(o, name, len, FG_NAME_MAX, 3, "...");
	out_mem(o, " (", 2);
	out_count(o, n->value);
	out_mem(o, " ", 1);
	out_text_str(o, opt->countname);
	pct = l->total > 0 ? 100 * n->value / l->total : 0;
	if (id == 0)
		out_mem(o, ", 100%", 6);
	else
		out_fmt(o, ", %.2f%%", pct);
	if (fg->diff)
		out_fmt(o, "; %s%.2f%%", n->delta > 0 ? "+" : "",
			l->total > 0 ? 100 * n->delta / l->total : 0);
	out_mem(o, ")</title><rect x=\"", 18);
	out_tenths(o, rx1);
	out_mem(o, "\" y=\"", 5);
	out_tenths(o, y1);
	out_mem(o, "\" width=\"", 9);
	out_tenths(o, rx2 - rx1);
	out_mem(o, "\" height=\"", 10);
	out_u64(o, opt->height - FRAMEPAD);
	out_fmt(o, "\" fill=\"#%02x%02x%02x\"/>", c.r, c.g, c.b);

	chars = (long)((x2 - x1) / l->fw);
	if (chars >= 3) {
		out_mem(o, "<text x=\"", 9);
		out_tenths(o, rx1 + 3);
		out_mem(o, "\" y=\"", 5);
		out_tenths(o, y1 + (opt->height - FRAMEPAD) / 2.0 + 3);
		out_mem(o, "\">", 2);
		out_text(o, name, len, chars < FG_NAME_MAX ? (size_t)chars : FG_NAME_MAX, 2, "..");
		out_mem(o, "</text>", 7);
	}
}

/*
 * Visit the drawn frames depth first: open each frame, then its children, then close it.
 * With DRAW false only the maximum depth is measured.
 */
static int walk_tree(struct flamegraph *fg, struct layout *l, struct out *o, bool draw)
{
	struct walk *st = NULL;
	size_t nr = 0, cap = 0;
	int err;

	err = walk_push(&st, &nr, &cap, 0, l->first[0], 0);
	if (err)
		return err;
	if (draw)
		frame_open(fg, l, o, 0, 0, 0);
	while (nr) {
		struct walk *w = &st[nr - 1];
		uint32_t id, depth = (uint32_t)nr;

		if (w->next == l->first[w->node + 1]) {
			if (draw)
				out_mem(o, "</g>", 4);
			nr--;
			continue;
		}
		id = l->kids[w->next++];
		w->cstart += fg->nodes[id].value;
		if (fg->nodes[id].value < l->minvalue || fg->nodes[id].value <= 0)
			continue;
		if (depth > l->depthmax)
			l->depthmax = depth;
		if (draw)
			frame_open(fg, l, o, id, depth, w->cstart - fg->nodes[id].value);
		err = walk_push(&st, &nr, &cap, id, l->first[id], w->cstart - fg->nodes[id].value);
		if (err)
			break;
		if (draw && o->err)
			break;
	}
	free(st);
	return err ? err : o ? o->err : 0;
}

static void write_header(struct flamegraph *fg, struct layout *l, struct out *o)
{
	const struct fg_opts *opt = &fg->o;
	const char *title = opt->title ? opt->title
				       : opt->inverted ? "Icicle Graph" : "Flame Graph";
	unsigned int w = opt->width;
	double h = l->imageheight, fs = opt->fontsize;
	const char *bg2 = opt->colors == FG_MEM ? "#e0e0ff"
			: opt->colors == FG_IO ? "#e8e8e8" : "#eeeeb0";
	const char *bg1 = opt->colors == FG_IO ? "#f8f8f8" : "#eeeeee";

	out_str(o, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
	out_fmt(o, "<svg version=\"1.1\" width=\"%u\" height=\"", w);
	out_tenths(o, h);
	out_fmt(o, "\" viewBox=\"0 0 %u ", w);
	out_tenths(o, h);
	out_str(o, "\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"");
	out_text_str(o, opt->fonttype);
	out_str(o, "\" font-size=\"");
	out_tenths(o, fs);
	out_str(o, "\">\n<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">");
	out_fmt(o, "<stop stop-color=\"%s\" offset=\"5%%\"/><stop stop-color=\"%s\" offset=\"95%%\"/>",
		bg1, bg2);
	out_str(o, "</linearGradient></defs>\n<style type=\"text/css\">\n");
	out_str(o, fg_style);
	out_str(o, "</style>\n<script type=\"text/ecmascript\"><![CDATA[\nvar fg = {W: ");
	out_u64(o, w);
	out_fmt(o, ", xpad: %d, fw: %.17g, ty: %.17g, total: %.17g, nametype: \"", XPAD, l->fw,
		(opt->height - FRAMEPAD) / 2.0 + 3, l->total);
	out_js_str(o, opt->nametype);
	out_str(o, "\"};\n");
	out_str(o, fg_script);
	out_str(o, "]]></script>\n");
	out_fmt(o, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"", w);
	out_tenths(o, h);
	out_str(o, "\" fill=\"url(#background)\"/>\n");
	out_fmt(o, "<text id=\"title\" x=\"%u\" y=\"", w / 2);
	out_tenths(o, fs * 2);
	out_str(o, "\" font-size=\"");
	out_tenths(o, fs + 5);
	out_str(o, "\">");
	out_text_str(o, title);
	out_str(o, "</text>\n");
	if (opt->subtitle && *opt->subtitle) {
		out_fmt(o, "<text id=\"subtitle\" x=\"%u\" y=\"", w / 2);
		out_tenths(o, fs * 4);
		out_str(o, "\">");
		out_text_str(o, opt->subtitle);
		out_str(o, "</text>\n");
	}
	out_fmt(o, "<text id=\"details\" x=\"%d\" y=\"", XPAD);
	out_tenths(o, h - l->ypad2 / 2);
	out_str(o, "\"> </text>\n");
	out_fmt(o, "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"", XPAD);
	out_tenths(o, fs * 2);
	out_str(o, "\">Reset Zoom</text>\n");
	out_fmt(o, "<text id=\"search\" x=\"%d\" y=\"", (int)w - XPAD - 100);
	out_tenths(o, fs * 2);
	out_str(o, "\">Search</text>\n");
	out_fmt(o, "<text id=\"matched\" class=\"hide\" x=\"%d\" y=\"", (int)w - XPAD - 100);
	out_tenths(o, h - l->ypad2 / 2);
	out_str(o, "\"> </text>\n<g id=\"frames\">");
}

int flamegraph__write(struct flamegraph *fg, FILE *f)
{
	const struct fg_opts *opt = &fg->o;
	struct layout l = { 0 };
	struct out *o = calloc(1, sizeof(*o));
	int err;

	if (!o)
		return -ENOMEM;
	o->f = f;
	err = sort_tree(fg, &l);
	if (err)
		goto out;
	l.total = fg->nodes[0].value;
	l.wpt = l.total > 0 ? (opt->width - 2.0 * XPAD) / l.total : 0;
	if (opt->minwidth_pct)
		l.minvalue = l.total * opt->minwidth / 100;
	else
		l.minvalue = l.wpt > 0 ? opt->minwidth / l.wpt : 0;
	l.fw = opt->fontsize * FONTWIDTH;
	l.ypad1 = opt->fontsize * 3 + (opt->subtitle && *opt->subtitle ? opt->fontsize * 2 : 0);
	l.ypad2 = opt->fontsize * 2 + 10;
	for (uint32_t i = 0; i < fg->nr_nodes; i++)
		if (fabs(fg->nodes[i].delta) > l.maxdelta)
			l.maxdelta = fabs(fg->nodes[i].delta);
	err = walk_tree(fg, &l, NULL, false);
	if (err)
		goto out;
	l.imageheight = (l.depthmax + 1.0) * opt->height + l.ypad1 + l.ypad2;
	write_header(fg, &l, o);
	if (l.total > 0) {
		err = walk_tree(fg, &l, o, true);
	} else {
		out_fmt(o, "</g>\n<text x=\"%u\" y=\"", opt->width / 2);
		out_tenths(o, l.imageheight / 2);
		out_str(o, "\" text-anchor=\"middle\">No stack counts found</text>");
		err = 0;
	}
	if (!err)
		out_str(o, l.total > 0 ? "\n</g>\n</svg>\n" : "\n</svg>\n");
	out_flush(o);
	if (!err && (fflush(f) || ferror(f)))
		err = -(errno ? errno : EIO);
	if (!err)
		err = o->err;
out:
	free(l.kids);
	free(l.first);
	free(o);
	return err;
}

int flamegraph__write_folded(const struct folded *f, FILE *out, const struct fg_opts *o)
{
	struct flamegraph *fg = flamegraph__new(o);
	int err;

	if (!fg)
		return -ENOMEM;
	err = flamegraph__add_folded(fg, f);
	if (!err)
		err = flamegraph__write(fg, out);
	flamegraph__free(fg);
	return err;
}

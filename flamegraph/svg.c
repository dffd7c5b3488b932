// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * flamegraph SVG: children sorted by name, the layout, a depth-first walk that draws the
 * frames, the header with the embedded script and style (flamegraph__write,
 * flamegraph__write_folded).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/grow.h"
#include "flamegraph.h"
#include "internal.h"
#include "out.h"
#include "fg_assets.h"

/* A frame's kind in its tooltip, after its count (enum hint). */
static const char *const hint_words[] = { "", ", kernel", ", inlined", ", JIT", ", waker",
					     ", Python", ", Ruby" };
_Static_assert(sizeof(hint_words) / sizeof(hint_words[0]) == HINT_RUBY + 1, "a word per hint");

/*
 * Layout constants of flamegraph.pl, so that graphs look the same: average character
 * width relative to the font size, padding, a pixel between frames.
 */
#define FONTWIDTH	0.59
#define XPAD		10
#define FRAMEPAD	1

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
	if (array_grow(st, cap, sizeof(**st), *nr))
		return -ENOMEM;
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

	len = colors__strip_hint(name, len, &hint);
	if (!opt->inverted)
		y1 = l->imageheight - l->ypad2 - (depth + 1.0) * opt->height + FRAMEPAD;
	else
		y1 = l->ypad1 + (double)depth * opt->height;
	if (fg->diff)
		c = colors__diff(opt->negate ? -n->delta : n->delta, l->maxdelta);
	else
		c = colors__frame(opt, name, len, hint);

	out_mem(o, "\n<g><title>", 11);
	out_text(o, name, len, FG_NAME_MAX, 3, "...");
	out_mem(o, " (", 2);
	out_count(o, n->value);
	out_mem(o, " ", 1);
	/* "1 sample", not "1 samples". */
	if (n->value == 1 && !strcmp(opt->countname, "samples"))
		out_mem(o, "sample", 6);
	else
		out_text_str(o, opt->countname);
	pct = l->total > 0 ? 100 * n->value / l->total : 0;
	if (id == 0)
		out_mem(o, ", 100%", 6);
	else
		out_fmt(o, ", %.2f%%", pct);
	if (fg->diff) {
		/* (--negate: drawn on the first profile, the change still as the second's.) */
		double d = opt->negate ? -n->delta : n->delta;

		out_fmt(o, "; %s%.2f%%", d > 0 ? "+" : "", l->total > 0 ? 100 * d / l->total : 0);
	}
	/* What kind of frame, which the colour says too (the legend). */
	if (hint != HINT_NONE)
		out_str(o, hint_words[hint]);
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

/* The kinds of frame FG has (1 << enum hint; [off-cpu]: LEGEND_OFF_CPU). */
#define LEGEND_OFF_CPU	(1u << 8)

static unsigned int kinds_of(const struct flamegraph *fg)
{
	unsigned int kinds = 0;

	for (uint32_t i = 0; i < fg->nr_names; i++) {
		const char *name = fg->arena + fg->names[i].off;
		size_t len = fg->names[i].len;
		enum hint h;

		len = colors__strip_hint(name, len, &h);
		kinds |= 1u << h;
		if (len == 9 && !memcmp(name, "[off-cpu]", 9))
			kinds |= LEGEND_OFF_CPU;
	}
	return kinds;
}

/*
 * The legend of the colours, left of Search, when they say a frame's kind (the hot palette,
 * not a differential graph) and there is more than one kind: a swatch and a word each.
 */
static void write_legend(const struct flamegraph *fg, const struct layout *l, struct out *o)
{
	static const struct { unsigned int bit; enum hint hint; const char *word; } items[] = {
		{ 1u << HINT_NONE, HINT_NONE, "user" },
		{ 1u << HINT_KERNEL, HINT_KERNEL, "kernel" },
		{ 1u << HINT_INLINE, HINT_INLINE, "inlined" },
		{ 1u << HINT_JIT, HINT_JIT, "JIT" },
		{ 1u << HINT_PYTHON, HINT_PYTHON, "Python" },
		{ 1u << HINT_RUBY, HINT_RUBY, "Ruby" },
		{ LEGEND_OFF_CPU, HINT_NONE, "off-CPU" },
	};
	const struct fg_opts *opt = &fg->o;
	unsigned int kinds = kinds_of(fg), n = 0;
	double fs = opt->fontsize, x;

	if (opt->colors != FG_HOT || fg->diff)
		return;
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++)
		n += !!(kinds & items[i].bit);
	if (n < 2)
		return;
	x = opt->width - XPAD - 110.0 - n * 70.0;
	out_str(o, "\n<g id=\"legend\">");
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++) {
		struct rgb c;

		if (!(kinds & items[i].bit))
			continue;
		c = colors__legend(opt, items[i].hint, items[i].bit == LEGEND_OFF_CPU);
		out_fmt(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			"fill=\"#%02x%02x%02x\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>", x,
			fs * 2 - fs + 2, fs - 2, fs - 2, c.r, c.g, c.b, x + fs + 1, fs * 2,
			items[i].word);
		x += 70;
	}
	out_str(o, "</g>");
	(void)l;
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
	if (!err && l.total > 0) {
		out_str(o, "\n</g>");
		write_legend(fg, &l, o);
		out_str(o, "\n</svg>\n");
	} else if (!err) {
		out_str(o, "\n</svg>\n");
	}
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

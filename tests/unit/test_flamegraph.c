// SPDX-License-Identifier: GPL-3.0-or-later
/* flamegraph: tree merge, widths, pruning, reverse/inverted, escaping, options. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "flamegraph.h"
#include "output/folded.h"
#include "suites.h"

/* Render the folded TEXT (lines "stack count") with O; the SVG, or NULL. Caller frees. */
static char *render(const char *text, const struct fg_opts *o)
{
	struct flamegraph *fg = flamegraph__new(o);
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	if (!fg)
		return NULL;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n'), *sp;
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		double c1, c2;
		char *end;

		sp = memrchr(p, ' ', n);
		c2 = strtod(sp + 1, &end);
		c1 = c2;
		CU_ASSERT_EQUAL(flamegraph__add(fg, p, (size_t)(sp - p), c1, c2, false), 0);
		p += n + (nl ? 1 : 0);
	}
	out = open_memstream(&buf, &len);
	if (out) {
		CU_ASSERT_EQUAL(flamegraph__write(fg, out), 0);
		fclose(out);
	}
	flamegraph__free(fg);
	return buf;
}

static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The rect of the frame whose title starts with TITLE: its x and width. */
static int rect_of(const char *svg, const char *title, double *x, double *w, double *y)
{
	char key[256];
	const char *p;

	snprintf(key, sizeof(key), "<title>%s", title);
	p = strstr(svg, key);
	if (!p || !(p = strstr(p, "<rect x=\"")))
		return -1;
	if (sscanf(p, "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\"", x, y, w) != 3)
		return -1;
	return 0;
}

static void test_tree_merge(void)
{
	/* flamegraph.pl merges adjacent sorted lines only: there, "foo" splits around
	 * "foo.bar" ('.' sorts before ';'). Here "foo" is one frame of 3 samples. */
	char *svg = render("a;foo 2\na;foo.bar;y 4\na;foo;x 1\na;b;c 5\nb;c 1\na;b;c 2\n", NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
	CU_ASSERT_EQUAL(count_of(svg, "<title>foo ("), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>foo (3 samples, 20.00%)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>foo.bar (4 samples, 26.67%)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>all (15 samples, 100%)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>c (7 samples, 46.67%)"));	/* a;b;c twice */
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>c (1 sample, 6.67%)"));	/* b;c */
	CU_ASSERT_EQUAL(count_of(svg, "<g><title>"), 10);
	free(svg);
}

static void test_widths(void)
{
	char *svg = render("a;b 1\na;c 3\n", NULL);
	double x, w, y, x2, w2, y2;

	CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
	CU_ASSERT_EQUAL(rect_of(svg, "all (", &x, &w, &y), 0);
	CU_ASSERT_DOUBLE_EQUAL(x, 10, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(w, 1180, 1e-9);
	CU_ASSERT_EQUAL(rect_of(svg, "b (", &x, &w, &y), 0);
	CU_ASSERT_EQUAL(rect_of(svg, "c (", &x2, &w2, &y2), 0);
	CU_ASSERT_DOUBLE_EQUAL(x, 10, 1e-9);		/* b before c: name order */
	CU_ASSERT_DOUBLE_EQUAL(w, 295, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(x2, 305, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(w2, 885, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(y, y2, 1e-9);
	CU_ASSERT_EQUAL(rect_of(svg, "a (", &x, &w, &y2), 0);
	CU_ASSERT_DOUBLE_EQUAL(y2 - y, 16, 1e-9);	/* one frame height below */
	free(svg);
}

static void test_minwidth(void)
{
	struct fg_opts o;
	char err[256];
	char *svg;

	fg_opts__init(&o);
	/* 1 sample of 10000 is 0.118 pixels: kept at 0.1 pixels, left out at 0.5 */
	svg = render("a;big 9999\na;tiny;child 1\n", &o);
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>tiny ("));
	free(svg);
	CU_ASSERT_EQUAL(fg_opts__parse_arg(&o, "minwidth", "0.5", err, sizeof(err)), 0);
	svg = render("a;big 9999\na;tiny;child 1\n", &o);
	CU_ASSERT_PTR_NULL(strstr(svg, "<title>tiny ("));
	CU_ASSERT_PTR_NULL(strstr(svg, "<title>child ("));
	free(svg);
	/* percent: 2% of 100 samples */
	CU_ASSERT_EQUAL(fg_opts__parse_arg(&o, "minwidth", "2%", err, sizeof(err)), 0);
	CU_ASSERT(o.minwidth_pct);
	svg = render("a;big 97\na;two 2\na;one 1\n", &o);
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>two ("));
	CU_ASSERT_PTR_NULL(strstr(svg, "<title>one ("));
	free(svg);
}

static void test_reverse_inverted(void)
{
	struct fg_opts o;
	double x, w, y, x2, w2, y2;
	char *svg;

	fg_opts__init(&o);
	o.reverse = true;
	svg = render("main;f;leaf 3\nmain;g;leaf 2\nmain;g;other 1\n", &o);
	/* the leaves become roots: leaf (5) with f and g above it */
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>leaf (5 samples"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>other (1 sample"));
	CU_ASSERT_EQUAL(count_of(svg, "<title>main ("), 3);	/* under leaf;f, leaf;g, other;g */
	free(svg);

	fg_opts__init(&o);
	o.inverted = true;
	svg = render("a;b 1\n", &o);
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, ">Icicle Graph</text>"));
	CU_ASSERT_EQUAL(rect_of(svg, "all (", &x, &w, &y), 0);
	CU_ASSERT_EQUAL(rect_of(svg, "b (", &x2, &w2, &y2), 0);
	CU_ASSERT_DOUBLE_EQUAL(y2 - y, 32, 1e-9);	/* root at the top, b two below */
	free(svg);
}

static void test_escaping(void)
{
	char *svg, *name = malloc(20001), *text;
	size_t len;

	CU_ASSERT_PTR_NOT_NULL_FATAL(name);
	svg = render("<script>alert(1)</script>;a&b;\"q\" 'x';]]>;bad\xff\xfe utf8;ok\xc3\xa9 1\n",
		     NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
	CU_ASSERT_PTR_NULL(strstr(svg, "<script>alert"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "&lt;script&gt;alert(1)&lt;/script&gt;"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>a&amp;b ("));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "&quot;q&quot; &#39;x&#39;"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "]]&gt;"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "bad\xef\xbf\xbd\xef\xbf\xbd utf8"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "ok\xc3\xa9 ("));
	CU_ASSERT_PTR_NULL(strstr(svg, "\xff"));
	CU_ASSERT_EQUAL(count_of(svg, "]]>"), 1);		/* the end of the script's CDATA */
	free(svg);

	/* a 20,000-character name is bounded in the title and the label */
	memset(name, 'n', 20000);
	name[20000] = '\0';
	len = strlen("main;") + 20000 + 4;
	text = malloc(len + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	snprintf(text, len + 1, "main;%s 1\n", name);
	svg = render(text, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
	CU_ASSERT(strlen(svg) < 20000);
	name[FG_NAME_MAX - 3] = '\0';
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, name));
	strcat(name, "...");
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, name));
	free(svg);
	free(text);
	free(name);
}

static void test_hints_and_colors(void)
{
	char *svg = render("p;read_[k] 1\np;inl_[i] 1\np;jit_[j] 1\np;rd 1\nq;rd 1\n", NULL);
	const char *a, *b;
	double x, w, y;

	CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
	CU_ASSERT_PTR_NULL(strstr(svg, "_[k]"));
	CU_ASSERT_PTR_NULL(strstr(svg, "_[i]"));
	CU_ASSERT_EQUAL(rect_of(svg, "read (1 sample", &x, &w, &y), 0);	/* shown bare */
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, ">read</text>"));
	/* the same name, the same colour: "rd" under p and under q */
	a = strstr(svg, "<title>rd (1 sample,");
	b = a ? strstr(a + 1, "<title>rd (1 sample,") : NULL;
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_NSTRING_EQUAL(strstr(a, "fill="), strstr(b, "fill="), 14);
	/* The kind in the tooltip, and a legend of the kinds there are. */
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>read (1 sample, 20.00%, kernel)</title>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>inl (1 sample, 20.00%, inlined)</title>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>jit (1 sample, 20.00%, JIT)</title>"));
	a = strstr(svg, "<g id=\"legend\">");
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT(strstr(a, ">user<") && strstr(a, ">kernel<") && strstr(a, ">inlined<") &&
		  strstr(a, ">JIT<") && !strstr(a, ">off-CPU<"));
	free(svg);
	/* One kind only: no legend. */
	svg = render("p;a 1\np;b 2\n", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
	CU_ASSERT_PTR_NULL(strstr(svg, "id=\"legend\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>b (2 samples, 66.67%)</title>"));
	free(svg);

	/* Interpreters' frames (as profile and py-spy write them): a colour and a word of their
	 * own; the name shown whole. Not a C frame with a line (--lines). */
	svg = render("p;main (app.c:3);leaf (app.py:18) 1\np;<module> (<string>:3) 1\n"
		     "p;third (x.rb:7) 1\np;then (<internal:kernel>:124) 1\np;f (y) 1\n", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>leaf (app.py:18) (1 sample, 20.00%, Python)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>&lt;module&gt; (&lt;string&gt;:3) (1 sample, "
				     "20.00%, Python)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>third (x.rb:7) (1 sample, 20.00%, Ruby)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>then (&lt;internal:kernel&gt;:124) (1 sample, "
				     "20.00%, Ruby)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>main (app.c:3) (1 sample, 20.00%)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>f (y) (1 sample, 20.00%)"));
	a = strstr(svg, "<g id=\"legend\">");
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT(strstr(a, ">Python<") && strstr(a, ">Ruby<") && strstr(a, ">user<"));
	a = strstr(svg, "<title>leaf (app.py:18)");
	a = a ? strstr(a, "fill=\"#") : NULL;
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	{
		unsigned int r, g, bl;

		/* flamegraph.pl's yellow */
		CU_ASSERT_EQUAL(sscanf(a, "fill=\"#%2x%2x%2x", &r, &g, &bl), 3);
		CU_ASSERT(r >= 175 && g == r && bl <= 70);
	}
	free(svg);

	/* Time off the CPU (--wall's [off-cpu] leaves): blue, in the hot palette. */
	svg = render("p;main;[off-cpu] 1\np;main 1\n", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
	a = strstr(svg, "<title>[off-cpu] (1 sample,");
	a = a ? strstr(a, "fill=\"#") : NULL;
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	{
		unsigned int r, g, bl;

		CU_ASSERT_EQUAL(sscanf(a, "fill=\"#%2x%2x%2x", &r, &g, &bl), 3);
		CU_ASSERT(bl >= 190 && bl > r && bl > g);
	}
	free(svg);
}

static void test_differential(void)
{
	struct flamegraph *fg = flamegraph__new(NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	CU_ASSERT_PTR_NOT_NULL_FATAL(fg);
	CU_ASSERT_EQUAL(flamegraph__add(fg, "a;grew", 6, 1, 5, true), 0);
	CU_ASSERT_EQUAL(flamegraph__add(fg, "a;shrank", 8, 4, 1, true), 0);
	CU_ASSERT_EQUAL(flamegraph__add(fg, "a;x", 3, -1, 1, true), -EINVAL);
	CU_ASSERT_DOUBLE_EQUAL(flamegraph__total(fg), 6, 1e-12);	/* second counts */
	out = open_memstream(&buf, &len);
	CU_ASSERT_EQUAL(flamegraph__write(fg, out), 0);
	fclose(out);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "<title>grew (5 samples, 83.33%; +66.67%)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "<title>shrank (1 sample, 16.67%; -50.00%)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "fill=\"#ff0000\""));	/* +4 of max 4: red */
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "fill=\"#3434ff\""));	/* -3: blue */
	free(buf);
	flamegraph__free(fg);
}

static void test_empty_and_folded(void)
{
	struct folded *f = folded__new();
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	out = open_memstream(&buf, &len);
	CU_ASSERT_EQUAL(flamegraph__write_folded(f, out, NULL), 0);
	fclose(out);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "No stack counts found"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "</svg>\n"));
	free(buf);
	buf = NULL;
	CU_ASSERT_EQUAL(folded__add(f, "proc;main;work", 7), 0);
	CU_ASSERT_EQUAL(folded__add(f, "proc;main", 3), 0);
	out = open_memstream(&buf, &len);
	CU_ASSERT_EQUAL(flamegraph__write_folded(f, out, NULL), 0);
	fclose(out);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "<title>main (10 samples, 100.00%)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "<title>work (7 samples, 70.00%)"));
	free(buf);
	folded__free(f);
}

static void test_options(void)
{
	static const struct {
		const char *name, *value;
		int ret;
	} cases[] = {
		{ "width", "1800", 0 }, { "width", "0", -EINVAL }, { "width", "12x", -EINVAL },
		{ "width", "-5", -EINVAL }, { "height", "24", 0 }, { "height", "", -EINVAL },
		{ "minwidth", "0.1", 0 }, { "minwidth", "0.5%", 0 }, { "minwidth", "%", -EINVAL },
		{ "minwidth", "101%", -EINVAL }, { "minwidth", "x", -EINVAL },
		{ "colors", "mem", 0 }, { "colors", "orange", 0 }, { "colors", "pink", -EINVAL },
		{ "fontsize", "10.5", 0 }, { "fontsize", "0", -EINVAL },
		{ "title", "T", 0 }, { "reverse", NULL, 0 }, { "inverted", NULL, 0 },
		{ "bogus", "1", -ENOENT },
	};
	struct fg_opts o;
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fg_opts__init(&o);
		err[0] = '\0';
		CU_ASSERT_EQUAL(fg_opts__parse_arg(&o, cases[i].name, cases[i].value, err,
						   sizeof(err)), cases[i].ret);
		if (cases[i].ret == -EINVAL)
			CU_ASSERT_EQUAL(strncmp(err, "--", 2), 0);
	}
	fg_opts__init(&o);
	CU_ASSERT_EQUAL(fg_opts__parse_opt(&o, fg_options[2].val, "640", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(o.width, 640);
	CU_ASSERT_EQUAL(fg_opts__parse_opt(&o, 'x', "1", err, sizeof(err)), -ENOENT);
}

int register_flamegraph_suite(void)
{
	CU_pSuite s = CU_add_suite("flamegraph", NULL, NULL);

	if (!s || !CU_add_test(s, "tree merge, foo vs foo.bar", test_tree_merge) ||
	    !CU_add_test(s, "widths and positions", test_widths) ||
	    !CU_add_test(s, "minwidth pruning", test_minwidth) ||
	    !CU_add_test(s, "reverse and inverted", test_reverse_inverted) ||
	    !CU_add_test(s, "hostile names escaped and bounded", test_escaping) ||
	    !CU_add_test(s, "hints and colours", test_hints_and_colors) ||
	    !CU_add_test(s, "differential", test_differential) ||
	    !CU_add_test(s, "empty graph and struct folded", test_empty_and_folded) ||
	    !CU_add_test(s, "options", test_options))
		return -1;
	return 0;
}

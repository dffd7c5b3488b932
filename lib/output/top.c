// SPDX-License-Identifier: GPL-3.0-or-later
/* output/top: the hottest functions and the call tree of folded stacks (see top.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "base/grow.h"
#include "base/htab.h"
#include "output/folded.h"
#include "output/top.h"

struct func {
	char *name;
	size_t len;
	enum top_kind kind;
	uint64_t self, total;
	uint64_t stamp;		/* the last stack counted in total (once per stack) */
};

struct node {
	uint32_t parent;	/* NODE_ROOT for a root */
	uint32_t func;
	uint64_t total;
};

#define NODE_ROOT	UINT32_MAX

struct top {
	unsigned int flags;
	struct func *f;
	size_t nr_f, cap_f;
	struct htab fidx;
	struct node *n;
	size_t nr_n, cap_n;
	struct htab nidx;
	uint64_t total, no_function, stacks;
	uint32_t *path;		/* the function ids of the stack being added */
	size_t cap_path;
};

struct top *top__new(unsigned int flags)
{
	struct top *t = calloc(1, sizeof(*t));

	if (t)
		t->flags = flags;
	return t;
}

void top__free(struct top *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nr_f; i++)
		free(t->f[i].name);
	free(t->f);
	free(t->n);
	free(t->path);
	htab__free(&t->fidx);
	htab__free(&t->nidx);
	free(t);
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

/* The function of frame S (LEN bytes): its kind from the suffix, *LEN cut to its name. */
static enum top_kind frame_kind(const char *s, size_t *len)
{
	static const struct { const char *suffix; enum top_kind kind; } kinds[] = {
		{ "_[k]", TOP_KERNEL }, { "_[i]", TOP_INLINE }, { "_[j]", TOP_JIT },
	};
	enum top_kind kind = TOP_USER;
	size_t n = *len, i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (n > 4 && ends_with(s, n, kinds[i].suffix)) {
			kind = kinds[i].kind;
			n -= 4;
			break;
		}
	}
	/* " (FILE:LINE)": the function's lines are one function here. */
	if (n > 4 && s[n - 1] == ')') {
		size_t j = n - 1;

		while (j > 0 && s[j - 1] >= '0' && s[j - 1] <= '9')
			j--;
		if (j < n - 1 && j > 0 && s[j - 1] == ':') {
			while (j > 1 && !(s[j - 1] == '(' && s[j - 2] == ' '))
				j--;
			if (j > 2)
				n = j - 2;
		}
	}
	*len = n;
	return kind;
}

static uint64_t func_hash(const char *name, size_t len, enum top_kind kind)
{
	return hash_u64(hash_bytes(HASH_SEED, name, len), kind);
}

/* The id of function NAME (LEN bytes) of KIND, added when new; -ENOMEM. */
static long func_id(struct top *t, const char *name, size_t len, enum top_kind kind)
{
	uint64_t h = func_hash(name, len, kind);
	uint32_t pos, id;
	struct func *f;

	for (id = htab__first(&t->fidx, h, &pos); id != HTAB_NONE;
	     id = htab__next(&t->fidx, h, &pos)) {
		f = &t->f[id];
		if (f->kind == kind && f->len == len && !memcmp(f->name, name, len))
			return id;
	}
	if (t->nr_f >= UINT32_MAX - 1 || array_grow(&t->f, &t->cap_f, sizeof(*t->f), t->nr_f))
		return -ENOMEM;
	f = &t->f[t->nr_f];
	f->name = malloc(len + 1);
	if (!f->name)
		return -ENOMEM;
	memcpy(f->name, name, len);
	f->name[len] = '\0';
	f->len = len;
	f->kind = kind;
	if (htab__insert(&t->fidx, h, (uint32_t)t->nr_f)) {
		free(f->name);
		return -ENOMEM;
	}
	return (long)t->nr_f++;
}

static uint64_t node_hash(uint32_t parent, uint32_t func)
{
	return hash_u64(HASH_SEED, (uint64_t)parent << 32 | func);
}

/* The node of FUNC under PARENT, added when new; -ENOMEM. */
static long node_id(struct top *t, uint32_t parent, uint32_t func)
{
	uint64_t h = node_hash(parent, func);
	uint32_t pos, id;

	for (id = htab__first(&t->nidx, h, &pos); id != HTAB_NONE;
	     id = htab__next(&t->nidx, h, &pos))
		if (t->n[id].parent == parent && t->n[id].func == func)
			return id;
	if (t->nr_n >= UINT32_MAX - 1 || array_grow(&t->n, &t->cap_n, sizeof(*t->n), t->nr_n) ||
	    htab__insert(&t->nidx, h, (uint32_t)t->nr_n))
		return -ENOMEM;
	t->n[t->nr_n] = (struct node){ parent, func, 0 };
	return (long)t->nr_n++;
}

static bool is_thread(const char *s, size_t len)
{
	size_t i = len;

	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	return i < len && i > 1 && s[i - 1] == '/';
}

static bool is_marker(const char *s, size_t len)
{
	return (len == 11 && !memcmp(s, "[truncated]", 11)) ||
	       (len == 9 && !memcmp(s, "[off-cpu]", 9));
}

int top__add(struct top *t, const char *stack, size_t len, uint64_t count)
{
	size_t at = 0, nf = 0, frame = 0;
	uint32_t node = NODE_ROOT;

	t->total += count;
	t->stacks++;
	while (at <= len && len) {
		const char *semi = memchr(stack + at, ';', len - at);
		size_t end = semi ? (size_t)(semi - stack) : len, n = end - at;
		const char *s = stack + at;
		bool prefix = false;

		if (t->flags & TOP_ROOT_IS_PROCESS) {
			/* [CGROUP;]PROCESS;[THREAD/TID;] */
			if (frame == 0 && semi && n && s[0] == '/' && memchr(semi + 1, ';',
									      len - end - 1))
				prefix = true, frame--;	/* a cgroup: the process is next */
			else if (frame == 0)
				prefix = true;
			else if (frame == 1 && is_thread(s, n))
				prefix = true;
		}
		frame++;
		if (!prefix && !is_marker(s, n) && n) {
			enum top_kind kind = frame_kind(s, &n);
			long id = func_id(t, s, n, kind), nd;

			if (id < 0 || array_grow(&t->path, &t->cap_path, sizeof(*t->path), nf))
				return -ENOMEM;
			t->path[nf++] = (uint32_t)id;
			nd = node_id(t, node, (uint32_t)id);
			if (nd < 0)
				return -ENOMEM;
			node = (uint32_t)nd;
			t->n[node].total += count;
		}
		if (!semi)
			break;
		at = end + 1;
	}
	if (!nf) {
		t->no_function += count;
		return 0;
	}
	t->f[t->path[nf - 1]].self += count;
	for (size_t i = 0; i < nf; i++) {
		struct func *f = &t->f[t->path[i]];

		if (f->stamp != t->stacks) {
			f->stamp = t->stacks;
			f->total += count;
		}
	}
	return 0;
}

static int add_one(const char *stack, uint64_t count, void *ctx)
{
	return top__add(ctx, stack, strlen(stack), count);
}

int top__add_folded(struct top *t, const struct folded *f)
{
	return folded__for_each(f, add_one, t);
}

uint64_t top__total(const struct top *t)
{
	return t->total;
}

uint64_t top__no_function(const struct top *t)
{
	return t->no_function;
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a != b ? (a > b ? -1 : 1) : 0;
}

static int by_self(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	int c = cmp_u64_desc(x->self, y->self);

	if (!c)
		c = cmp_u64_desc(x->total, y->total);
	return c ? c : strcmp(x->name, y->name);
}

static int by_total(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	int c = cmp_u64_desc(x->total, y->total);

	if (!c)
		c = cmp_u64_desc(x->self, y->self);
	return c ? c : strcmp(x->name, y->name);
}

long top__rows(const struct top *t, enum top_sort by, struct top_row **rows)
{
	*rows = NULL;
	if (!t->nr_f)
		return 0;
	*rows = malloc(t->nr_f * sizeof(**rows));
	if (!*rows)
		return -ENOMEM;
	for (size_t i = 0; i < t->nr_f; i++)
		(*rows)[i] = (struct top_row){ t->f[i].name, t->f[i].kind, t->f[i].self,
					       t->f[i].total };
	qsort(*rows, t->nr_f, sizeof(**rows), by == TOP_BY_SELF ? by_self : by_total);
	return (long)t->nr_f;
}

const char *top__kind_tag(enum top_kind kind)
{
	switch (kind) {
	case TOP_KERNEL: return "[k]";
	case TOP_INLINE: return "[i]";
	case TOP_JIT: return "[j]";
	default: return "[.]";
	}
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* NAME on OUT, control characters as '?', MAX characters at most (0: all; "..." past it). */
static void put_name(FILE *out, const char *name, size_t max)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < len && (!max || i < max); i++) {
		unsigned char c = (unsigned char)name[i];

		fputc(c < 0x20 || c == 0x7f ? '?' : c, out);
	}
	if (max && len > max)
		fputs("...", out);
}

int top__write(const struct top *t, FILE *out, enum top_sort by, size_t n, size_t name_max)
{
	struct top_row *rows;
	long nr = top__rows(t, by, &rows);

	if (nr < 0)
		return (int)nr;
	fprintf(out, "  %6s %6s      %s\n", "self", "total", "function");
	for (long i = 0; i < nr && (size_t)i < n; i++) {
		fprintf(out, "  %5.1f%% %5.1f%%  %s ", share(rows[i].self, t->total),
			share(rows[i].total, t->total), top__kind_tag(rows[i].kind));
		put_name(out, rows[i].name, name_max);
		fputc('\n', out);
	}
	free(rows);
	return ferror(out) ? -EIO : 0;
}

/* The children of each node, sorted by total: node ids in KIDS, those of node i from
 * FIRST[i] to FIRST[i + 1] (index nr_n: the roots). */
struct kids {
	uint32_t *ids;
	size_t *first;
};

static const struct top *sort_top;

static int kid_cmp(const void *a, const void *b)
{
	const struct node *x = &sort_top->n[*(const uint32_t *)a];
	const struct node *y = &sort_top->n[*(const uint32_t *)b];
	uint32_t px = x->parent == NODE_ROOT ? (uint32_t)sort_top->nr_n : x->parent;
	uint32_t py = y->parent == NODE_ROOT ? (uint32_t)sort_top->nr_n : y->parent;
	int c;

	if (px != py)
		return px < py ? -1 : 1;
	c = cmp_u64_desc(x->total, y->total);
	return c ? c : strcmp(sort_top->f[x->func].name, sort_top->f[y->func].name);
}

static void write_level(const struct top *t, const struct kids *k, FILE *out, size_t parent,
			int depth, uint64_t min, size_t name_max)
{
	uint64_t rest = 0;
	size_t more = 0;

	for (size_t i = k->first[parent]; i < k->first[parent + 1]; i++) {
		const struct node *nd = &t->n[k->ids[i]];
		const struct func *f = &t->f[nd->func];

		if (nd->total < min) {
			rest += nd->total;
			more++;
			continue;
		}
		fprintf(out, "%5.1f%% %*s%s ", share(nd->total, t->total), 2 * depth, "",
			top__kind_tag(f->kind));
		put_name(out, f->name, name_max);
		fputc('\n', out);
		write_level(t, k, out, k->ids[i], depth + 1, min, name_max);
	}
	if (more)
		fprintf(out, "%5.1f%% %*s(%zu more)\n", share(rest, t->total), 2 * depth, "", more);
}

int top__write_tree(const struct top *t, FILE *out, double min_share, size_t name_max)
{
	struct kids k = { malloc((t->nr_n ? t->nr_n : 1) * sizeof(*k.ids)),
			  calloc(t->nr_n + 2, sizeof(*k.first)) };
	uint64_t min = (uint64_t)(min_share / 100.0 * (double)t->total + 0.5);
	size_t i;

	if (!k.ids || !k.first) {
		free(k.ids);
		free(k.first);
		return -ENOMEM;
	}
	for (i = 0; i < t->nr_n; i++)
		k.ids[i] = (uint32_t)i;
	sort_top = t;
	qsort(k.ids, t->nr_n, sizeof(*k.ids), kid_cmp);
	/* Counts per parent (the roots' under index nr_n), then where each parent's begin. */
	for (i = 0; i < t->nr_n; i++) {
		uint32_t p = t->n[i].parent;

		k.first[(p == NODE_ROOT ? t->nr_n : p) + 1]++;
	}
	for (i = 1; i <= t->nr_n + 1; i++)
		k.first[i] += k.first[i - 1];
	write_level(t, &k, out, t->nr_n, 0, min ? min : 1, name_max);
	free(k.ids);
	free(k.first);
	return ferror(out) ? -EIO : 0;
}

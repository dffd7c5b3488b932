// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * flamegraph call tree: names interned in an arena, nodes found by (parent, name) in a hash
 * table, stacks added one by one or from a folded reader (flamegraph__new/free/add/read/
 * add_folded/total).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "base/grow.h"
#include "flamegraph.h"
#include "output/folded.h"
#include "output/folded_read.h"
#include "internal.h"

struct slot {
	uint32_t parent, name;
	uint32_t id;		/* node id + 1, 0 = empty */
};

/* One frame of the stack being added: where it ends in the stack, and its node. */
struct frame {
	uint32_t start, len;
	uint32_t node;
};

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
	if (array_grow(&fg->names, &fg->names_cap, sizeof(*fg->names), fg->nr_names))
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
	if (array_grow(&fg->nodes, &fg->nodes_cap, sizeof(*fg->nodes), fg->nr_nodes))
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
	if (array_grow(&fg->nodes, &fg->nodes_cap, sizeof(*fg->nodes), 0) ||
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

		if (array_grow(&fg->path, &fg->path_cap, sizeof(*fg->path), fg->path_nr))
			return -ENOMEM;
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

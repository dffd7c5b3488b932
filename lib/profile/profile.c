// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * profile: the model's tables. Each kind of entry lives in a growing array, indexed by id,
 * with a base/htab index from its hash to its id; frames and stack entries live in two
 * shared pools that locations and stacks point into by offset.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base/htab.h"
#include "base/grow.h"
#include "profile/profile.h"

struct str {
	char *s;
	size_t len;
};

struct loc {
	enum profile_loc_kind kind;
	uint32_t mapping;
	uint64_t address, offset;
	uint32_t frame0, nr_frames;	/* in the frame pool */
};

struct stack {
	uint32_t first, n;		/* in the stack pool */
};

/* A growing array of entries of one size; nr used, cap allocated. */
struct vec {
	void *a;
	size_t nr, cap;
};

struct profile {
	struct vec strs, maps, locs, frames, stacks, stack_locs, samples, timed;
	struct htab str_index, map_index, loc_index, stack_index, sample_index;
	struct profile_meta meta;
	uint64_t total;
};

#define AT(v, type, i) (&((type *)(v).a)[i])

/* Room for N more entries of SIZE bytes in V. Returns 0 or -ENOMEM. */
static int vec__reserve(struct vec *v, size_t n, size_t size)
{
	if (!n || v->nr + n <= v->cap)
		return 0;
	if (v->nr + n - 1 >= UINT32_MAX)	/* ids are 32-bit */
		return -E2BIG;
	return array_grow(&v->a, &v->cap, size, v->nr + n - 1);
}

typedef bool (*equal_fn)(const struct profile *p, uint32_t id, const void *key);

/* The id of the entry of INDEX with hash H that EQUAL says is KEY, or HTAB_NONE. */
static uint32_t find(const struct profile *p, const struct htab *index, uint64_t h,
		     equal_fn equal, const void *key)
{
	uint32_t pos, id;

	for (id = htab__first(index, h, &pos); id != HTAB_NONE; id = htab__next(index, h, &pos))
		if (equal(p, id, key))
			return id;
	return HTAB_NONE;
}

struct profile *profile__new(void)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->meta.weight_type = "samples";
	p->meta.weight_unit = "count";
	return p;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->strs.nr; i++)
		free(AT(p->strs, struct str, i)->s);
	free(p->strs.a);
	free(p->maps.a);
	free(p->locs.a);
	free(p->frames.a);
	free(p->stacks.a);
	free(p->stack_locs.a);
	free(p->samples.a);
	free(p->timed.a);
	htab__free(&p->str_index);
	htab__free(&p->map_index);
	htab__free(&p->loc_index);
	htab__free(&p->stack_index);
	htab__free(&p->sample_index);
	free(p);
}

/* --- strings and meta ------------------------------------------------------------------- */

static bool str_equal(const struct profile *p, uint32_t id, const void *key)
{
	const struct str *a = AT(p->strs, struct str, id), *b = key;

	return a->len == b->len && !memcmp(a->s, b->s, b->len);
}

int profile__intern(struct profile *p, const char *s, size_t len)
{
	struct str key = { (char *)s, len }, *e;
	uint64_t h = hash_bytes(HASH_SEED, s, len);
	uint32_t id = find(p, &p->str_index, h, str_equal, &key);
	int err;

	if (id != HTAB_NONE)
		return id;
	err = vec__reserve(&p->strs, 1, sizeof(struct str));
	if (err)
		return err;
	id = p->strs.nr;
	e = AT(p->strs, struct str, id);
	e->s = malloc(len + 1);
	if (!e->s)
		return -ENOMEM;
	memcpy(e->s, s, len);
	e->s[len] = '\0';
	e->len = len;
	err = htab__insert(&p->str_index, h, id);
	if (err) {
		free(e->s);
		return err;
	}
	p->strs.nr++;
	return id;
}

const char *profile__string(const struct profile *p, uint32_t id)
{
	return AT(p->strs, struct str, id)->s;
}

size_t profile__nr_strings(const struct profile *p)
{
	return p->strs.nr;
}

/* *OUT = the interned copy of S (NULL stays NULL). Returns 0 or -ENOMEM. */
static int intern_str(struct profile *p, const char *s, const char **out)
{
	int id;

	if (!s) {
		*out = NULL;
		return 0;
	}
	id = profile__intern(p, s, strlen(s));
	if (id < 0)
		return id;
	*out = profile__string(p, id);
	return 0;
}

int profile__set_meta(struct profile *p, const struct profile_meta *m)
{
	struct profile_meta n = *m;
	int err = 0;

	if (m->weight_type)
		err = intern_str(p, m->weight_type, &n.weight_type);
	else
		n.weight_type = p->meta.weight_type;
	if (!err && m->weight_unit)
		err = intern_str(p, m->weight_unit, &n.weight_unit);
	else if (!err)
		n.weight_unit = p->meta.weight_unit;
	if (!err)
		err = intern_str(p, m->period_type, &n.period_type);
	if (!err)
		err = intern_str(p, m->period_unit, &n.period_unit);
	if (!err)
		p->meta = n;
	return err;
}

const struct profile_meta *profile__meta(const struct profile *p)
{
	return &p->meta;
}

/* --- mappings and locations ------------------------------------------------------------- */

static uint64_t mapping_hash(const struct profile_mapping *m)
{
	uint64_t h = hash_u64(HASH_SEED, m->start);

	h = hash_u64(h, m->end);
	h = hash_u64(h, m->pgoff);
	return hash_u64(h, (uint64_t)m->path << 32 | m->build_id);
}

static bool mapping_equal(const struct profile *p, uint32_t id, const void *key)
{
	const struct profile_mapping *a = AT(p->maps, struct profile_mapping, id), *b = key;

	return a->start == b->start && a->end == b->end && a->pgoff == b->pgoff &&
	       a->path == b->path && a->build_id == b->build_id;
}

int profile__add_mapping(struct profile *p, const struct profile_mapping *m)
{
	uint64_t h = mapping_hash(m);
	uint32_t id = find(p, &p->map_index, h, mapping_equal, m);
	int err;

	if (id != HTAB_NONE)
		return id;
	if (m->path >= p->strs.nr || (m->build_id != PROFILE_NONE && m->build_id >= p->strs.nr))
		return -EINVAL;
	err = vec__reserve(&p->maps, 1, sizeof(*m));
	if (err)
		return err;
	id = p->maps.nr;
	*AT(p->maps, struct profile_mapping, id) = *m;
	err = htab__insert(&p->map_index, h, id);
	if (err)
		return err;
	p->maps.nr++;
	return id;
}

const struct profile_mapping *profile__mapping(const struct profile *p, uint32_t id)
{
	return AT(p->maps, struct profile_mapping, id);
}

size_t profile__nr_mappings(const struct profile *p)
{
	return p->maps.nr;
}

static uint64_t location_hash(const struct profile_location *l)
{
	uint64_t h = hash_u64(HASH_SEED, (uint64_t)l->kind << 32 | l->mapping);

	h = hash_u64(h, l->address);
	h = hash_u64(h, l->offset);
	for (uint32_t i = 0; i < l->nr_frames; i++)
		h = hash_u64(h, ((uint64_t)l->frames[i].kind << 32 | l->frames[i].name) ^
			     ((uint64_t)l->frames[i].line << 40) ^
			     (l->frames[i].line ? l->frames[i].file : 0));
	return h;
}

static bool location_equal(const struct profile *p, uint32_t id, const void *key)
{
	const struct loc *a = AT(p->locs, struct loc, id);
	const struct profile_location *b = key;
	const struct profile_frame *f = AT(p->frames, struct profile_frame, a->frame0);

	if (a->kind != b->kind || a->mapping != b->mapping || a->address != b->address ||
	    a->offset != b->offset || a->nr_frames != b->nr_frames)
		return false;
	for (uint32_t i = 0; i < b->nr_frames; i++)
		if (f[i].name != b->frames[i].name || f[i].kind != b->frames[i].kind ||
		    f[i].line != b->frames[i].line ||
		    (f[i].line && f[i].file != b->frames[i].file))
			return false;
	return true;
}

int profile__add_location(struct profile *p, const struct profile_location *loc)
{
	uint64_t h = location_hash(loc);
	uint32_t id = find(p, &p->loc_index, h, location_equal, loc);
	struct loc *l;
	int err;

	if (id != HTAB_NONE)
		return id;
	if ((loc->mapping != PROFILE_NONE && loc->mapping >= p->maps.nr) ||
	    (unsigned int)loc->kind > PROFILE_LOC_JIT)
		return -EINVAL;
	for (uint32_t i = 0; i < loc->nr_frames; i++)
		if (loc->frames[i].name >= p->strs.nr ||
		    (unsigned int)loc->frames[i].kind > PROFILE_FRAME_RUBY)
			return -EINVAL;
	err = vec__reserve(&p->locs, 1, sizeof(struct loc));
	if (!err)
		err = vec__reserve(&p->frames, loc->nr_frames, sizeof(struct profile_frame));
	if (err)
		return err;
	id = p->locs.nr;
	l = AT(p->locs, struct loc, id);
	*l = (struct loc){ loc->kind, loc->mapping, loc->address, loc->offset, p->frames.nr,
			   loc->nr_frames };
	if (loc->nr_frames)
		memcpy(AT(p->frames, struct profile_frame, l->frame0), loc->frames,
		       loc->nr_frames * sizeof(*loc->frames));
	err = htab__insert(&p->loc_index, h, id);
	if (err)
		return err;
	p->frames.nr += loc->nr_frames;
	p->locs.nr++;
	return id;
}

void profile__location(const struct profile *p, uint32_t id, struct profile_location *loc)
{
	const struct loc *l = AT(p->locs, struct loc, id);

	*loc = (struct profile_location){
		.kind = l->kind, .mapping = l->mapping, .address = l->address,
		.offset = l->offset, .nr_frames = l->nr_frames,
		.frames = AT(p->frames, struct profile_frame, l->frame0),
	};
}

size_t profile__nr_locations(const struct profile *p)
{
	return p->locs.nr;
}

/* --- stacks and samples ----------------------------------------------------------------- */

struct stack_key {
	const uint32_t *locs;
	uint32_t n;
};

static bool stack_equal(const struct profile *p, uint32_t id, const void *key)
{
	const struct stack *a = AT(p->stacks, struct stack, id);
	const struct stack_key *b = key;

	if (a->n != b->n)
		return false;
	return !b->n ||
	       !memcmp(AT(p->stack_locs, uint32_t, a->first), b->locs, b->n * sizeof(*b->locs));
}

int profile__add_stack(struct profile *p, const uint32_t *locs, uint32_t n)
{
	struct stack_key key = { locs, n };
	uint64_t h = hash_u64(HASH_SEED, n);
	uint32_t id;
	int err;

	for (uint32_t i = 0; i < n; i++)
		h = hash_u64(h, locs[i]);
	id = find(p, &p->stack_index, h, stack_equal, &key);
	if (id != HTAB_NONE)
		return id;
	for (uint32_t i = 0; i < n; i++)
		if (locs[i] >= p->locs.nr)
			return -EINVAL;
	err = vec__reserve(&p->stacks, 1, sizeof(struct stack));
	if (!err)
		err = vec__reserve(&p->stack_locs, n, sizeof(*locs));
	if (err)
		return err;
	id = p->stacks.nr;
	*AT(p->stacks, struct stack, id) = (struct stack){ p->stack_locs.nr, n };
	if (n)
		memcpy(AT(p->stack_locs, uint32_t, p->stack_locs.nr), locs, n * sizeof(*locs));
	err = htab__insert(&p->stack_index, h, id);
	if (err)
		return err;
	p->stack_locs.nr += n;
	p->stacks.nr++;
	return id;
}

const uint32_t *profile__stack(const struct profile *p, uint32_t id, uint32_t *n)
{
	const struct stack *s = AT(p->stacks, struct stack, id);

	*n = s->n;
	return AT(p->stack_locs, uint32_t, s->first);
}

size_t profile__nr_stacks(const struct profile *p)
{
	return p->stacks.nr;
}

static uint64_t sample_hash(uint32_t stack, const struct profile_labels *l)
{
	uint64_t h = hash_u64(HASH_SEED, (uint64_t)stack << 32 | l->truncated | l->off_cpu << 1);

	h = hash_u64(h, (uint64_t)l->pid << 32 | l->tid);
	h = hash_u64(h, (uint64_t)l->event << 32 | l->cgroup);
	return hash_u64(h, (uint64_t)l->comm << 32 | l->thread_comm);
}

static bool sample_equal(const struct profile *p, uint32_t id, const void *key)
{
	const struct profile_sample *a = AT(p->samples, struct profile_sample, id), *b = key;

	return a->stack == b->stack && a->labels.pid == b->labels.pid &&
	       a->labels.tid == b->labels.tid && a->labels.comm == b->labels.comm &&
	       a->labels.thread_comm == b->labels.thread_comm &&
	       a->labels.truncated == b->labels.truncated &&
	       a->labels.off_cpu == b->labels.off_cpu && a->labels.cgroup == b->labels.cgroup &&
	       a->labels.event == b->labels.event;
}

int profile__add_sample(struct profile *p, uint32_t stack, uint64_t weight,
			const struct profile_labels *labels)
{
	struct profile_sample key = { .stack = stack, .weight = weight, .labels = *labels };
	uint64_t h = sample_hash(stack, labels);
	uint32_t id = find(p, &p->sample_index, h, sample_equal, &key);
	int err;

	if (id == HTAB_NONE) {
		if (stack >= p->stacks.nr ||
		    (labels->comm != PROFILE_NONE && labels->comm >= p->strs.nr) ||
		    (labels->thread_comm != PROFILE_NONE && labels->thread_comm >= p->strs.nr) ||
		    labels->cgroup > p->strs.nr || labels->event > p->strs.nr)
			return -EINVAL;
		err = vec__reserve(&p->samples, 1, sizeof(key));
		if (err)
			return err;
		id = p->samples.nr;
		key.weight = 0;
		*AT(p->samples, struct profile_sample, id) = key;
		err = htab__insert(&p->sample_index, h, id);
		if (err)
			return err;
		p->samples.nr++;
	}
	AT(p->samples, struct profile_sample, id)->weight += weight;
	p->total += weight;
	return id;
}

const struct profile_sample *profile__sample(const struct profile *p, uint32_t id)
{
	return AT(p->samples, struct profile_sample, id);
}

size_t profile__nr_samples(const struct profile *p)
{
	return p->samples.nr;
}

uint64_t profile__total(const struct profile *p)
{
	return p->total;
}

int profile__add_timed(struct profile *p, const struct profile_timed *t)
{
	int err;

	if (t->sample >= p->samples.nr ||
	    (t->thread_comm != PROFILE_NONE && t->thread_comm >= p->strs.nr))
		return -EINVAL;
	err = vec__reserve(&p->timed, 1, sizeof(*t));
	if (err)
		return err;
	*AT(p->timed, struct profile_timed, p->timed.nr++) = *t;
	return 0;
}

const struct profile_timed *profile__timed(const struct profile *p, size_t *n)
{
	*n = p->timed.nr;
	return p->timed.nr ? AT(p->timed, struct profile_timed, 0) : NULL;
}

// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/htab.h"
#include "base/grow.h"
#include "output/folded.h"
#include "profile/profile.h"

struct entry {
	char *stack;
	uint64_t count;
};

/* The stacks in order of first addition, found through one htab by their hash. */
struct folded {
	struct entry *ents;
	size_t nr, cap;
	struct htab index;
	uint64_t total;
};

struct folded *folded__new(void)
{
	return calloc(1, sizeof(struct folded));
}

void folded__free(struct folded *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nr; i++)
		free(f->ents[i].stack);
	free(f->ents);
	htab__free(&f->index);
	free(f);
}

int folded__add(struct folded *f, const char *stack, uint64_t count)
{
	size_t len = strlen(stack);
	uint64_t h = hash_bytes(HASH_SEED, stack, len);
	uint32_t pos, id;
	struct entry *e;

	for (id = htab__first(&f->index, h, &pos); id != HTAB_NONE;
	     id = htab__next(&f->index, h, &pos)) {
		if (!strcmp(f->ents[id].stack, stack)) {
			f->ents[id].count += count;
			f->total += count;
			return 0;
		}
	}
	if (array_grow(&f->ents, &f->cap, sizeof(*f->ents), f->nr))
		return -ENOMEM;
	e = &f->ents[f->nr];
	e->stack = strdup(stack);
	if (!e->stack)
		return -ENOMEM;
	if (htab__insert(&f->index, h, (uint32_t)f->nr)) {
		free(e->stack);
		return -ENOMEM;
	}
	e->count = count;
	f->nr++;
	f->total += count;
	return 0;
}

size_t folded__nr_stacks(const struct folded *f)
{
	return f->nr;
}

uint64_t folded__total(const struct folded *f)
{
	return f->total;
}

int folded__for_each(const struct folded *f, int (*fn)(const char *stack, uint64_t count,
						       void *ctx), void *ctx)
{
	for (size_t i = 0; i < f->nr; i++) {
		int ret = fn(f->ents[i].stack, f->ents[i].count, ctx);

		if (ret)
			return ret;
	}
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *const *x = a, *const *y = b;

	return strcmp((*x)->stack, (*y)->stack);
}

int folded__write(const struct folded *f, FILE *out)
{
	const struct entry **sorted = malloc((f->nr ? f->nr : 1) * sizeof(*sorted));
	size_t n = 0;

	if (!sorted)
		return -ENOMEM;
	for (size_t i = 0; i < f->nr; i++)
		sorted[n++] = &f->ents[i];
	qsort(sorted, n, sizeof(*sorted), entry_cmp);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s %llu\n", sorted[i]->stack, (unsigned long long)sorted[i]->count);
	free(sorted);
	if (fflush(out) || ferror(out))
		return -(errno ? errno : EIO);
	return 0;
}

int folded__push_frame(char **buf, size_t *len, size_t *cap, const char *name,
		       const char *suffix)
{
	size_t nlen = strlen(name), slen = suffix ? strlen(suffix) : 0;
	size_t need = *len + 1 + nlen + slen + 1;
	char *p;

	if (array_grow(buf, cap, 1, need - 1))
		return -ENOMEM;
	p = *buf + *len;
	if (*len)
		*p++ = ';';
	for (size_t i = 0; i < nlen; i++) {
		unsigned char c = name[i];

		*p++ = c == ';' ? ':' : (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	memcpy(p, suffix ? suffix : "", slen);
	p += slen;
	*p = '\0';
	*len = p - *buf;
	return 0;
}

/* --- from the profile model ------------------------------------------------------------- */

#define FOLD_MARK_OFF_CPU	(1u << 16)	/* a leaf frame [off-cpu] on off-CPU samples */

static const char *const frame_suffix[] = {
	[PROFILE_FRAME_USER] = NULL,
	[PROFILE_FRAME_KERNEL] = "_[k]",
	[PROFILE_FRAME_INLINE] = "_[i]",
	[PROFILE_FRAME_JIT] = "_[j]",
	[PROFILE_FRAME_PYTHON] = NULL,	/* "name (file.py:line)", as py-spy writes them */
	[PROFILE_FRAME_RUBY] = NULL,	/* "label (file.rb:line)" */
};

static const char *label_name(const struct profile *p, uint32_t id)
{
	return id == PROFILE_NONE ? "[unknown]" : profile__string(p, id);
}

/* Frame FR of P into BUF (as folded__push_frame), with its source line (FOLDED_LINES). */
static int fold_frame(const struct profile *p, const struct profile_frame *fr,
		      unsigned int flags, char **buf, size_t *len, size_t *cap)
{
	const char *name = profile__string(p, fr->name), *file, *base;
	char *s;
	int err;

	if ((!(flags & FOLDED_LINES) && fr->kind != PROFILE_FRAME_PYTHON &&
	     fr->kind != PROFILE_FRAME_RUBY) || !fr->line)
		return folded__push_frame(buf, len, cap, name, frame_suffix[fr->kind]);
	file = profile__string(p, fr->file);
	base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	if (asprintf(&s, "%s (%s:%u)", name, base, fr->line) < 0)
		return -ENOMEM;
	err = folded__push_frame(buf, len, cap, s, frame_suffix[fr->kind]);
	free(s);
	return err;
}

/* The folded stack of sample S of P into BUF (LEN, CAP as folded__push_frame's). */
static int fold_sample(const struct profile *p, const struct profile_sample *s,
		       unsigned int flags, char **buf, size_t *len, size_t *cap)
{
	const struct profile_labels *l = &s->labels;
	const uint32_t *locs;
	char tid[16];
	uint32_t n;
	int err;

	*len = 0;
	err = l->event ? folded__push_frame(buf, len, cap, profile__string(p, l->event - 1),
					    NULL) : 0;
	if (!err && l->cgroup)
		err = folded__push_frame(buf, len, cap, profile__string(p, l->cgroup - 1), NULL);
	if (!err)
		err = folded__push_frame(buf, len, cap, label_name(p, l->comm), NULL);
	if (!err && l->tid) {
		snprintf(tid, sizeof(tid), "/%u", l->tid);
		err = folded__push_frame(buf, len, cap, label_name(p, l->thread_comm), tid);
	}
	if (!err && l->truncated)
		err = folded__push_frame(buf, len, cap, "[truncated]", NULL);
	locs = profile__stack(p, s->stack, &n);
	for (uint32_t i = n; i-- > 0 && !err;) {
		struct profile_location loc;

		profile__location(p, locs[i], &loc);
		for (uint32_t j = 0; j < loc.nr_frames && !err; j++) {
			err = fold_frame(p, &loc.frames[j], flags, buf, len, cap);
		}
	}
	if (!err && l->off_cpu && (flags & FOLD_MARK_OFF_CPU))
		err = folded__push_frame(buf, len, cap, "[off-cpu]", NULL);
	return err;
}

int folded__add_profile(struct folded *f, const struct profile *p, unsigned int flags)
{
	const struct profile_meta *m = profile__meta(p);
	bool ns = m->weight_unit && !strcmp(m->weight_unit, "nanoseconds");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int err = 0;

	/* On- and off-CPU time in one profile: the off-CPU stacks end in a frame of their own. */
	if (m->weight_type && !strcmp(m->weight_type, "wall"))
		flags |= FOLD_MARK_OFF_CPU;
	for (uint32_t i = 0; i < profile__nr_samples(p) && !err; i++) {
		const struct profile_sample *s = profile__sample(p, i);
		uint64_t w = ns ? (s->weight + 500) / 1000 : s->weight;

		if (!w)
			continue;
		err = fold_sample(p, s, flags, &buf, &len, &cap);
		if (!err)
			err = folded__add(f, buf, w);
	}
	free(buf);
	return err;
}

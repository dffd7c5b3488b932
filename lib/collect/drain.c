// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/drain: after sampling, what BPF counted (the per-CPU slots, `counts`, `ustacks`)
 * and what was unwound here (ucounts) -> the profile model, one counted stack at a time
 * (model.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect/fixup.h"
#include "collect/session_int.h"
#include "collect/ucounts.h"
#include "profile/profile.h"
#include "proc/procmaps.h"
#include "sandbox/symbolizer.h"
#include "unwind/unwind.h"
#include "profile.skel.h"

/*
 * The caller of a leaf that keeps no frame, which a frame-pointer walk skips: when BPF kept
 * WORDS at sp that may be its return address, the leaf's CFI says whether one is. That
 * caller must keep a frame record where it called, or the walk from rbp skipped its callers
 * too: then the stack ends there, truncated (or whole, when the caller is where the thread
 * began). Go's prologues and epilogues, where the walk goes wrong otherwise, are put right by
 * the unwinder, or the stack is only its leaf, truncated. Returns the new number of the NU
 * addresses of IPS (room for NU + 1); KEY's flags say whether the stack is truncated;
 * PID is the pid whose mappings are the sampled program's (procmaps__incarnation).
 */
static int add_leaf_caller(struct session *s, struct count_key *key, pid_t pid,
			   const __u64 *words, uint64_t *ips, int nu)
{
	struct unwind_sample us = {
		.pid = pid, .ip = ips[0], .sp = 0x100000, .bp = 0,
		.stack = words, .stack_len = 2 * sizeof(*words),
	};
	uint64_t ret;
	int n;

	n = nu >= 1 ? unwinder__fp_window(s->unw, pid, ips, nu) : nu;
	if (n < 0) {
		key->flags |= COUNT_F_USER_TRUNCATED;
		return 1;
	}
	if (n != nu)
		return n;
	if (nu < 1 || (!words[0] && !words[1]))
		return nu;
	/* Only the words matter: the CFI at ip says at which offset from sp the return address
	 * is; rbp-based rules read outside the copy and fail, as they should. */
	if (unwinder__leaf_return(s->unw, &us, &ret))
		return nu;
	n = fixup__add_leaf_caller(ips, nu, ret);
	if (n == nu)
		return n;
	switch (session__span_kind(s, key->pid, ret - 1)) {
	case SPAN_TRUSTED:
		return n;
	case SPAN_BOTTOM:
		key->flags &= ~COUNT_F_USER_TRUNCATED;
		return 2;
	default:
		key->flags |= COUNT_F_USER_TRUNCATED;
		return 2;
	}
}

/*
 * The stacks BPF counted, read out of the maps before any is symbolized: the symbolizer
 * names all their addresses at once, per file (a batch for the worker each), not a stack at
 * a time.
 */
struct drained {
	struct drained_stack {
		struct count_key key;
		uint64_t count;
		size_t ips;		/* index of its first address in IPS */
		int nr;
	} *v;
	size_t nr, cap;
	uint64_t *ips;
	size_t nr_ips, cap_ips;
};

/* Keep KEY's COUNT samples with the NR addresses IPS; noted for the symbolizer. Returns 0 or
 * -ENOMEM. */
static int drained__add(struct drained *d, struct builder *b, const struct count_key *key,
			const uint64_t *ips, int nr, uint64_t count)
{
	if (d->nr == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 1024;
		struct drained_stack *v = realloc(d->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		d->v = v;
		d->cap = cap;
	}
	if (d->nr_ips + (size_t)nr > d->cap_ips) {
		size_t cap = d->cap_ips ? 2 * d->cap_ips : 16384;
		uint64_t *p;

		while (cap < d->nr_ips + (size_t)nr)
			cap *= 2;
		p = realloc(d->ips, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		d->ips = p;
		d->cap_ips = cap;
	}
	if (nr)			/* none yet: d->ips may be NULL */
		memcpy(d->ips + d->nr_ips, ips, (size_t)nr * sizeof(*ips));
	d->v[d->nr++] = (struct drained_stack){ *key, count, d->nr_ips, nr };
	d->nr_ips += (size_t)nr;
	builder__want(b, key, ips, nr);
	return 0;
}

static void drained__free(struct drained *d)
{
	free(d->v);
	free(d->ips);
}

/* The samples of KEY (COUNT of them), its user stack from `ustacks`, kept in D. */
static int drain_key(struct session *s, struct builder *b, struct drained *d,
		     const struct count_key *bpf_key, uint64_t count)
{
	uint64_t ips[PROFILE_MAX_DEPTH + 1];
	struct count_key key = *bpf_key;
	struct ustack us;
	int nr = 0;

	if (key.ustack_hash &&
	    bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.ustacks), &key.ustack_hash, &us) == 0) {
		nr = us.nr < PROFILE_MAX_DEPTH ? (int)us.nr : PROFILE_MAX_DEPTH;
		memcpy(ips, us.ips, nr * sizeof(*ips));
		/* The mappings of the program sampled (an earlier one under the pid, kept
		 * apart). */
		pid_t pid = procmaps__incarnation(s->maps, (pid_t)key.pid, key.gen);

		procmaps__ensure(s->maps, pid);
		nr = add_leaf_caller(s, &key, pid, us.sp_words, ips, nr);
	}
	if (drained__add(d, b, &key, ips, nr, count))
		return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	return 0;
}

/*
 * Move what the per-CPU `cached` tables still hold into `counts` (sampling has stopped). A
 * key that no longer fits there goes straight into D.
 */
static int drain_slots(struct session *s, struct builder *b, struct drained *d)
{
	int sfd = bpf_map__fd(s->skel->maps.cached), cfd = bpf_map__fd(s->skel->maps.counts);
	struct count_slots *tables = calloc(s->nr_cpus, sizeof(*tables));
	__u32 zero = 0;
	int err = 0;

	if (!tables)
		return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	if (bpf_map_lookup_elem(sfd, &zero, tables)) {
		free(tables);
		return session__fail(s, SESSION_ERR_RUNTIME, -errno,
				     "cannot read the sample cache: %s", strerror(errno));
	}
	for (int c = 0; !err && c < s->nr_cpus; c++) {
		for (int i = 0; !err && i < PROFILE_CACHE_SLOTS; i++) {
			struct count_slot *sl = &tables[c].s[i];
			__u64 count;

			if (!sl->count)
				continue;
			if (bpf_map_lookup_elem(cfd, &sl->key, &count) == 0)
				count += sl->count;
			else
				count = sl->count;
			if (bpf_map_update_elem(cfd, &sl->key, &count, BPF_ANY))
				err = drain_key(s, b, d, &sl->key, sl->count);
		}
	}
	/* Emptied: a second collection does not count them again. */
	memset(tables, 0, s->nr_cpus * sizeof(*tables));
	if (!err && bpf_map_update_elem(sfd, &zero, tables, BPF_ANY))
		err = session__fail(s, SESSION_ERR_RUNTIME, -errno,
				    "cannot empty the sample cache: %s", strerror(errno));
	free(tables);
	return err;
}

/* What the samples of the model are: on-CPU samples, one every 1/freq s of CPU time. */
static int set_meta(struct session *s, struct profile *p)
{
	struct profile_meta m = {
		.weight_type = "samples", .weight_unit = "count",
		.period_type = "cpu", .period_unit = "nanoseconds",
		.period = 1000000000ull / s->opts.freq, .frequency = s->opts.freq,
	};

	if (profile__set_meta(p, &m))
		return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	return 0;
}

int session__build_profile(struct session *s, struct profile *p)
{
	int fd = bpf_map__fd(s->skel->maps.counts);
	struct builder *b = builder__new(s, p);
	struct drained d = { 0 };
	const struct ucount *e;
	struct count_key key, next;
	void *prev = NULL;
	size_t pos = 0;
	int err;

	if (!b)
		return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	session__read_stats(s);
	err = set_meta(s, p);
	if (!err)
		err = drain_slots(s, b, &d);
	while (!err && bpf_map_get_next_key(fd, prev, &next) == 0) {
		__u64 count;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &count))
			continue;
		err = drain_key(s, b, &d, &key, count);
	}
	while (!err && (e = ucounts__next(s->unwound, &pos)))
		builder__want(b, &e->key, e->ips, e->nr);
	/* Every user address noted: named now, per file. */
	if (!err && symbolizer__resolve(s->sym))
		err = session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	for (size_t i = 0; !err && i < d.nr; i++)
		err = builder__add(b, &d.v[i].key, d.ips + d.v[i].ips, d.v[i].nr, d.v[i].count);
	pos = 0;
	while (!err && (e = ucounts__next(s->unwound, &pos)))
		err = builder__add(b, &e->key, e->ips, e->nr, e->count);
	drained__free(&d);
	builder__free(b);
	return err;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/drain: after sampling, what BPF counted (the per-CPU slots, `counts`, `ustacks`)
 * and what was unwound here (ucounts) -> the profile model, one counted stack at a time
 * (model.c). In continuous mode, at the end of each period while sampling goes on: the
 * period's parity of the BPF maps read and cleared (see `period` in bpf/profile.bpf.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/clock.h"
#include "base/grow.h"
#include "base/limits.h"
#include "base/log.h"
#include "dso/dsos.h"
#include "collect/fixup.h"
#include "collect/session_int.h"
#include "collect/ucounts.h"
#include "profile/profile.h"
#include "proc/procmaps.h"
#include "sandbox/symbolizer.h"
#include "unwind/unwind.h"
#include "profile.skel.h"

/*
 * The stacks BPF counted, read out of the maps before any is symbolized: the symbolizer
 * names all their addresses at once, per file (a batch for the worker each), not a stack at
 * a time.
 */
struct drained {
	struct drained_stack {
		struct stack_key key;
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
static int drained__add(struct drained *d, struct builder *b, const struct stack_key *key,
			const uint64_t *ips, int nr, uint64_t count)
{
	if (array_grow(&d->v, &d->cap, sizeof(*d->v), d->nr) ||
	    (nr && array_grow(&d->ips, &d->cap_ips, sizeof(*d->ips), d->nr_ips + (size_t)nr - 1)))
		return -ENOMEM;
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

/* Whether US has words at sp (a stack walked from the tables has them only where its leaf
 * went by its frame record: tab_at.leaf_rec). */
static bool sp_words_kept(const struct ustack *us)
{
	for (int i = 0; i < PROFILE_SP_WORDS; i++)
		if (us->sp_words[i])
			return true;
	return false;
}

/* The samples of KEY (COUNT of them), its user stack from `ustacks`, kept in D. */
static int drain_key(struct session *s, struct builder *b, struct drained *d,
		     const struct count_key *bpf_key, uint64_t count)
{
	uint64_t ips[PROFILE_MAX_DEPTH + 1];
	struct stack_env env = session__stack_env(s);
	struct stack_key key;
	struct ustack us;
	int nr = 0, all = 0, py = 0;

	stack_key__decode(&key, bpf_key);
	if (bpf_key->ustack_hash &&
	    bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.ustacks), &bpf_key->ustack_hash,
				&us) == 0) {
		all = us.nr < PROFILE_MAX_DEPTH ? (int)us.nr : PROFILE_MAX_DEPTH;
		/* (Its Python frames, behind PY_MARK, put back behind the native ones.) */
		nr = py = python_split((const uint64_t *)us.ips, all);
		memcpy(ips, us.ips, nr * sizeof(*ips));
		/* The mappings of the program sampled (an earlier one under the pid, kept
		 * apart). */
		pid_t pid = procmaps__incarnation(s->maps, key.pid, key.gen);

		procmaps__ensure(s->maps, pid);
		/* (A walk from the tables has every frame: no leaf's caller to find; but
		 * for a leaf it went by its frame record in code without a table, whose
		 * words at sp it kept, as the frame-pointer walk's.) */
		if (!(bpf_key->flags & COUNT_F_TABLE_WALK) || sp_words_kept(&us))
			nr = stacks__leaf_caller(&env, s->unw, key.pid, pid,
						 (const uint64_t *)us.sp_words, ips, nr,
						 &key.truncated);
		if (all > py && nr + all - py <= PROFILE_MAX_DEPTH + 1) {
			memcpy(ips + nr, us.ips + py, (all - py) * sizeof(*ips));
			nr += all - py;
		}
	}
	if (drained__add(d, b, &key, ips, nr, count))
		return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	return 0;
}

/*
 * What the per-CPU `cached` tables of parity PAR hold (nothing writes them now: sampling
 * stopped, or the period moved on) into D, then emptied. A key may also be in `counts`
 * (evicted from a slot earlier): the model merges the two.
 */
static int drain_slots(struct session *s, struct builder *b, struct drained *d, uint32_t par)
{
	int sfd = bpf_map__fd(s->skel->maps.cached);
	struct count_slots *tables = calloc(s->nr_cpus, sizeof(*tables));
	int err = 0;

	if (!tables)
		return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	for (uint32_t t = 0; !err && t < PROFILE_CACHE_TABLES; t++) {
		uint32_t idx = par * PROFILE_CACHE_TABLES + t;

		if (bpf_map_lookup_elem(sfd, &idx, tables)) {
			err = session__fail(s, SESSION_ERR_RUNTIME, -errno,
					    "cannot read the sample cache: %s", strerror(errno));
			break;
		}
		for (int c = 0; !err && c < s->nr_cpus; c++) {
			for (int i = 0; !err && i < PROFILE_CACHE_SLOTS; i++) {
				struct count_slot *sl = &tables[c].s[i];

				if (sl->count)
					err = drain_key(s, b, d, &sl->key, sl->count);
			}
		}
		/* Emptied: a second collection does not count them again. */
		memset(tables, 0, s->nr_cpus * sizeof(*tables));
		if (!err && bpf_map_update_elem(sfd, &idx, tables, BPF_ANY))
			err = session__fail(s, SESSION_ERR_RUNTIME, -errno,
					    "cannot empty the sample cache: %s", strerror(errno));
	}
	free(tables);
	return err;
}

/* --- timeline ------------------------------------------------------------------------------ */

int timeline__take(struct session *s, struct builder *b, uint32_t par)
{
	struct timeline *t = &s->tl;
	struct drained d = { 0 };
	size_t kept = 0, i;
	int err = 0;

	/* The period's counted keys: their samples, as drained above (no weight added). */
	for (i = 0; !err && i < t->nr_keys; i++) {
		struct tl_key *k = &t->keys[i];

		k->sample = UINT32_MAX;
		if (k->key.period != par)
			continue;
		d.nr = d.nr_ips = 0;
		err = drain_key(s, b, &d, &k->key, 0);
		if (!err && d.nr)
			err = builder__add(b, &d.v[0].key, d.ips + d.v[0].ips, d.v[0].nr, 0,
					   &k->sample);
	}
	/* Each timed sample whose stack the model has now; the others are a later period's. */
	for (i = 0; !err && i < t->nr; i++) {
		const struct tl_ent *e = &t->v[i];
		uint32_t sample = e->u ? e->u->sample : t->keys[e->key].sample;
		uint64_t gen = e->u ? e->u->key.gen : t->keys[e->key].key.gen;
		bool off = e->u ? e->u->key.off_cpu :
			   !!(t->keys[e->key].key.flags & COUNT_F_OFF_CPU);

		if (sample == UINT32_MAX)
			t->v[kept++] = *e;
		else if (sample != TL_NO_SAMPLE)
			err = builder__timed(b, sample, e->tid, gen, e->time, e->weight, off);
	}
	if (!err) {
		limits__release((t->nr - kept) * sizeof(struct tl_ent));
		t->bytes -= (t->nr - kept) * sizeof(struct tl_ent);
		t->nr = kept;
	}
	drained__free(&d);
	return err;
}

/* --- continuous mode: periods ------------------------------------------------------------- */

/* Keys read out of a map, to delete once the period's profile is made. */
struct keys {
	void *v;
	size_t size, nr, cap;
};

static int keys__add(struct keys *k, const void *key)
{
	if (array_grow(&k->v, &k->cap, k->size, k->nr))
		return -ENOMEM;
	memcpy((char *)k->v + k->nr++ * k->size, key, k->size);
	return 0;
}

/* Delete the keys K of map FD (those already gone are fine), and forget them. */
static void keys__delete(struct keys *k, int fd)
{
	for (size_t i = 0; i < k->nr; i++)
		bpf_map_delete_elem(fd, (char *)k->v + i * k->size);
	k->nr = 0;
}

/*
 * The period ends now, sampling goes on: BPF counts the next one in the maps of the other
 * parity from here on. Once the kernel says that every sampling program that began before
 * has returned, nothing writes this period's maps; the DWARF samples it sent are read, into
 * the ucounts the period's profile takes (*MINE); the next period gets a new one. Returns 0
 * or negative errno with the error set.
 */
static int end_period(struct session *s, struct ucounts **mine)
{
	int outer = bpf_map__fd(s->skel->maps.period_sync);
	int inner = bpf_map__fd(s->skel->maps.sync_inner);
	struct ucounts *next = ucounts__new();
	struct timespec real;
	uint64_t end_ns;
	double now;
	__u32 zero = 0;

	if (!next)
		return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	s->period++;
	__atomic_store_n(&s->skel->bss->period, s->period, __ATOMIC_SEQ_CST);
	end_ns = clock_mono_ns();
	/* (The next period's start, by the clock its files are named by: now, not once this
	 * one's records are read and its waits split, which takes long under load.) */
	clock_gettime(CLOCK_REALTIME, &real);
	now = end_ns / 1e9;
	/* The update of a map of maps returns after an RCU grace period: every program that
	 * may have read the old period has returned. */
	if (bpf_map_update_elem(outer, &zero, &inner, BPF_ANY)) {
		pr_debug("period sync: %s; waiting 50 ms instead", strerror(errno));
		usleep(50000);
	}
	/* The records and samples sent up to now, the period's. */
	session__read_sideband(s);
	session__flush_procstate(s);
	ring_buffer__consume(s->events);
	/* ... and those that waited for a file's table: waited for now. */
	if (session__retry_queued(s, true))
		return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	/* Waits going on: the time so far is this period's. */
	if ((s->opts.off_cpu || s->opts.wall) &&
	    session__split_off_cpu(s, end_ns, (s->period - 1) & 1))
		return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	*mine = s->unwound;
	s->unwound = next;
	s->taken_real = s->period_real;
	s->taken_seconds = now - s->period_mono;
	s->period_mono = now;
	s->period_real = real;
	/* The next period: a whole one from the last one's planned end, unless SIGHUP ended
	 * it early, or making its profile took longer. */
	if (now < s->period_due - 0.001 || now >= s->period_due + s->opts.every)
		s->period_due = now + s->opts.every;
	else
		s->period_due += s->opts.every;
	/* A period that would end just before the duration does not: the last one is longer
	 * by that much, rather than one more of a few milliseconds. */
	if (s->deadline && s->period_due > s->deadline - 0.25 * s->opts.every)
		s->period_due = s->deadline;
	return 0;
}

/* Whether process or thread ID is gone (a name of it is no longer needed). */
static bool id_gone(__u32 id)
{
	return kill((pid_t)id, 0) && errno == ESRCH;
}

/* Period ends in a row at which no process mapped a file before it is forgotten: a program
 * run now and then (a shell script's, cron's) is not read again each time. */
#define FORGET_AFTER	2

/*
 * The files no process maps any more (the processes forgotten: the NP of PIDS) at the last
 * FORGET_AFTER period ends, forgotten by all that keep something per file (the unwinder, the
 * symbolizer and its worker, the dsos: descriptors closed), their ids for files opened later;
 * the perf maps of PIDS, and the names of addresses not sampled lately. Else a week-long run
 * keeps every file every program that ran in it mapped (a deleted one's disk space too) and
 * the names of every address. In this order: the unwinder first (its tables are the
 * symbolizer's, freed there), then the symbolizer and its worker (which reach a file
 * through its dso), the dsos last: only then may an id go to a file opened later.
 */
static void forget_files(struct session *s, const pid_t *pids, size_t np)
{
	uint32_t nr = dsos__count(s->dsos), *ids;
	uint8_t *used = calloc(nr ? nr : 1, 1);
	size_t n = 0, nl;
	pid_t *live;

	ids = malloc((nr ? nr : 1) * sizeof(*ids));
	live = procmaps__pids(s->maps, &nl);
	if (!used || !ids || (nl && !live) ||
	    (nr && array_grow(&s->unmapped, &s->cap_unmapped, sizeof(*s->unmapped), nr - 1))) {
		free(used);
		free(ids);
		free(live);
		return;		/* out of memory: all kept, as before */
	}
	for (size_t i = 0; i < nl; i++) {
		size_t nm;
		const struct map *m = procmaps__maps(s->maps, live[i], &nm);

		for (size_t j = 0; j < nm; j++) {
			uint32_t id = dsos__find(s->dsos, &m[j]);

			if (id < nr)
				used[id] = 1;
		}
	}
	for (uint32_t id = 0; id < nr; id++) {
		if (used[id] || !dsos__known(s->dsos, id)) {
			s->unmapped[id] = 0;
			continue;
		}
		if (s->unmapped[id] < FORGET_AFTER)
			s->unmapped[id]++;
		if (s->unmapped[id] >= FORGET_AFTER && !symbolizer__file_busy(s->sym, id)) {
			s->unmapped[id] = 0;	/* for the file its id goes to */
			ids[n++] = id;
		}
	}
	session__bpftabs_forget(s, ids, n);
	unwinder__forget_files(s->unw, ids, n);
	symbolizer__forget(s->sym, ids, n, pids, np);
	dsos__forget(s->dsos, ids, n);
	s->stats.files_forgotten += n;
	{
		uint32_t names, maps;

		symbolizer__sizes(s->sym, &names, &maps);
		pr_debug("period end: %zu files no process maps forgotten of %u ids; %zu "
			 "processes' mappings kept, %u names, %u perf map slots", n, nr, nl,
			 names, maps);
	}
	free(used);
	free(ids);
	free(live);
}

/*
 * The processes found gone at the last period's end, gone still (their pid not taken again),
 * forgotten: their mappings, what the unwinder and BPF knew of them, and the files only they
 * mapped; those gone now are forgotten at the next period's end, once its samples are named.
 */
static void forget_gone(struct session *s)
{
	size_t n, k = 0, np = 0;
	pid_t *now;

	for (size_t i = 0; i < s->nr_gone; i++) {
		if (!id_gone((__u32)s->gone[i]))
			continue;
		procmaps__forget(s->maps, s->gone[i]);
		unwinder__forget(s->unw, s->gone[i]);
		session__forget_proc(s, s->gone[i]);
		s->gone[np++] = s->gone[i];
	}
	forget_files(s, s->gone, np);
	free(s->gone);
	s->gone = NULL;
	s->nr_gone = 0;
	now = procmaps__pids(s->maps, &n);
	for (size_t i = 0; i < n; i++)
		if (id_gone((__u32)now[i]))
			now[k++] = now[i];
	s->gone = now;
	s->nr_gone = now ? k : 0;
}

/*
 * After a period's profile: the maps of parity PAR emptied (the sample cache was in
 * drain_slots; COUNTS holds the `counts` keys read), and the names of processes and threads
 * gone since, all of which would otherwise grow with the run.
 */
static void clear_period(struct session *s, uint32_t par, struct keys *counts)
{
	struct profile_bpf *skel = s->skel;
	int kfd[2] = {
		bpf_map__fd(par ? skel->maps.kstacks_b : skel->maps.kstacks),
		bpf_map__fd(par ? skel->maps.kstacks2_b : skel->maps.kstacks2),
	};
	int ufd = bpf_map__fd(skel->maps.ustacks), cfd = bpf_map__fd(skel->maps.comms);
	struct keys k32 = { .size = sizeof(__u32) }, k64 = { .size = sizeof(__u64) };
	__u64 hash, *prev64 = NULL;
	__u32 id, *prev32 = NULL;

	keys__delete(counts, bpf_map__fd(skel->maps.counts));
	/* Only this period's stacks: the next period stores its own (the parity in the hash's
	 * low bit, its kernel stacks in the other maps). */
	while (bpf_map_get_next_key(ufd, prev64, &hash) == 0) {
		prev64 = &hash;
		if ((hash & 1) == par && keys__add(&k64, &hash))
			break;
	}
	keys__delete(&k64, ufd);
	for (int m = 0; m < 2; m++) {
		prev32 = NULL;
		while (bpf_map_get_next_key(kfd[m], prev32, &id) == 0) {
			prev32 = &id;
			if (keys__add(&k32, &id))
				break;
		}
		keys__delete(&k32, kfd[m]);
	}
	/* The names of ids found gone at the last period's end, gone still: a process that
	 * exits just after a period ended has its last samples in the next one, named after
	 * this one's profile is made. Those gone now leave at the next period's end. */
	for (size_t i = 0; i < s->nr_comms_gone; i++)
		if (id_gone(s->comms_gone[i]) && keys__add(&k32, &s->comms_gone[i]))
			break;
	keys__delete(&k32, cfd);
	prev32 = NULL;
	while (bpf_map_get_next_key(cfd, prev32, &id) == 0) {
		prev32 = &id;
		if (id_gone(id) && keys__add(&k32, &id))
			break;
	}
	free(s->comms_gone);
	s->comms_gone = k32.v;
	s->nr_comms_gone = k32.nr;
	free(k64.v);
	forget_gone(s);
}

/* What the samples of the model are: on-CPU samples, one every 1/freq s of CPU time; or
 * nanoseconds off the CPU (--off-cpu); or both as nanoseconds (--wall). */
static int set_meta(struct session *s, struct profile *p)
{
	struct profile_meta m = {
		.weight_type = "samples", .weight_unit = "count",
		.period_type = "cpu", .period_unit = "nanoseconds",
		.period = 1000000000ull / s->opts.freq, .frequency = s->opts.freq,
	};

	/* -e: events, a sample standing for its period's (a tracepoint's: -c, or each one);
	 * several: each sample's event is its label (and the folded root frame). */
	if (s->counted || s->nr_evs > 1) {
		m = (struct profile_meta){
			.weight_type = s->nr_evs > 1 ? "events" : s->evs[0].name,
			.weight_unit = "count",
			.frequency = s->opts.count || s->nr_evs > 1 ||
				     s->evs[0].kind == EVENT_TRACEPOINT ? 0 :
				     session__event_rate(s, 0),
		};
	}
	if (s->opts.off_cpu || s->opts.wall) {
		m = (struct profile_meta){
			.weight_type = s->opts.wall ? "wall" : "off_cpu",
			.weight_unit = "nanoseconds",
			.frequency = s->opts.wall ? s->opts.freq : 0,
		};
	}

	if (profile__set_meta(p, &m))
		return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	/* Several events: their names first, in the order given (pprof's sample types). */
	for (unsigned int i = 0; s->nr_evs > 1 && i < s->nr_evs; i++)
		if (profile__intern(p, s->evs[i].name, strlen(s->evs[i].name)) < 0)
			return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	return 0;
}

/*
 * A profile of what was counted, in this order, each step needing the one before: the
 * period flipped (continuous mode: BPF counts into the other parity from here on, and what
 * was sent before the flip is read: end_period); what BPF counted read out of the slots and
 * `counts` (drain_slots, drain_key), and every user address of those and of the stacks
 * unwound here noted; all of them named at once, per file; each stack added to the model;
 * then the period's maps cleared, and the processes and files gone forgotten (clear_period,
 * forget_gone, forget_files), after their last samples were named.
 */
int session__build_profile(struct session *s, struct profile *p)
{
	int fd = bpf_map__fd(s->skel->maps.counts);
	bool continuous = s->opts.every > 0, live = continuous && s->running;
	struct builder *b = builder__new(s, p);
	struct keys counted = { .size = sizeof(struct count_key) };
	struct ucounts *unwound = s->unwound;
	struct drained d = { 0 };
	struct ucount *e;
	struct count_key key, next;
	void *prev = NULL;
	size_t pos = 0;
	uint32_t par;
	int err;

	if (!b)
		return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	/* Names and stacks are wanted now: the unwinder waits for the tables it needs. */
	s->tables_wait = true;
	session__read_stats(s);
	err = set_meta(s, p);
	if (live) {
		/* Interrupted system calls restart while the profile is made. */
		session__signals_restart(true);
		if (!err)
			err = end_period(s, &unwound);
	}
	/* The period that ended: the parity before the flip (or the current one, sampling
	 * stopped). */
	par = (live ? s->period - 1 : s->period) & 1;
	if (!err)
		err = drain_slots(s, b, &d, par);
	while (!err && bpf_map_get_next_key(fd, prev, &next) == 0) {
		__u64 count;

		key = next;
		prev = &key;
		if (key.period != par || bpf_map_lookup_elem(fd, &key, &count))
			continue;
		err = drain_key(s, b, &d, &key, count);
		if (!err && continuous && keys__add(&counted, &key))
			err = session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	}
	while (!err && (e = ucounts__next(unwound, &pos)))
		builder__want(b, &e->key, e->ips, e->nr);
	/* Every user address noted: named now, per file (with the debug files fetched so far
	 * while sampling goes on; at the end, those under way waited for). */
	symbolizer__fetch_wait(s->sym, !live);
	if (!err && (symbolizer__resolve(s->sym) || python__resolve(s)))
		err = session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	symbolizer__fetch_counts(s->sym, &s->stats.fetched, &s->stats.fetch_failed,
				 &s->stats.fetch_pending);
	for (size_t i = 0; !err && i < d.nr; i++)
		err = builder__add(b, &d.v[i].key, d.ips + d.v[i].ips, d.v[i].nr, d.v[i].count,
				   NULL);
	pos = 0;
	while (!err && (e = ucounts__next(unwound, &pos)))
		err = builder__add(b, &e->key, e->ips, e->nr, e->count, &e->sample);
	if (!err && s->opts.timeline)
		err = timeline__take(s, b, par);
	/* A perf map the command wrote as it ended (a JVM's, DumpPerfMapAtExit): one found. */
	if (!err && !s->stats.perf_maps && s->command_pid && !s->opts.no_runtime &&
	    symbolizer__has_perfmap(s->sym, s->command_pid))
		s->stats.perf_maps = 1;
	if (continuous) {
		clear_period(s, par, &counted);
		python__period_named(s);
	}
	if (unwound != s->unwound)
		ucounts__free(unwound);
	if (live)
		session__signals_restart(false);
	free(counted.v);
	drained__free(&d);
	builder__free(b);
	return err;
}

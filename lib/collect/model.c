// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/model: one counted stack (a count_key, its user addresses, its kernel stack id, a
 * count) -> a sample of the profile model: addresses symbolized into locations (each
 * distinct (process, address) once, cached here), the fix-ups of fixup.h applied, the labels
 * read from the BPF `comms` map. With --explain, what each stack says of where stacks are cut,
 * untrusted or left unnamed goes to the session's explain (collect/explain.h), once per
 * counted stack.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/bsearch.h"
#include "base/htab.h"
#include "base/grow.h"
#include "collect/explain.h"
#include "collect/fixup.h"
#include "collect/session_int.h"
#include "dso/dso.h"
#include "dso/dsos.h"
#include "profile/profile.h"
#include "proc/cgroup.h"
#include "proc/procmaps.h"
#include "sandbox/symbolizer.h"
#include "profile.skel.h"

/* Frame names a stack may hold (as many as the folded stacks of old had room for): the
 * addresses past them get no frames. */
#define MAX_STACK_NAMES	(USER_MAX_DEPTH * 4)
#define MAX_ADDR_NAMES	SYMFILE_MAX_FRAMES

/* A symbolized address: its location, and what the fix-ups need to know of it. */
struct addr_ent {
	uint64_t addr;
	uint32_t pid;		/* 0 for kernel addresses */
	bool kernel, is_return;
	uint32_t loc;		/* location id */
	uint32_t nr;		/* its frames */
	const char *outer;	/* the outermost function's name, as the symbolizer gave it */
	int32_t file;		/* with --explain: the explain's id of its file, else -1 */
	int32_t unnamed;	/* with --explain: why it has no name (enum explain_reason),
				 * -1 when it has one */
};

struct builder {
	struct session *s;
	struct profile *p;
	struct htab index;	/* (pid, addr, kernel, is_return) -> ents[] */
	struct addr_ent *ents;
	size_t nr, cap;
	uint32_t locs[PROFILE_MAX_DEPTH + USER_MAX_DEPTH];
	uint32_t ustack[USER_MAX_DEPTH];	/* the entries of the stack's user addresses */
	int nr_ustack;
	const char *louter[USER_MAX_DEPTH];	/* the outermost function of each user
						 * location of the stack, */
	uint32_t lent[USER_MAX_DEPTH];		/* and its entry */
	int py_left, py_unnamed;		/* python_merge: loop frames left as they
						 * were, Python frames without a name */
	uint32_t pylocs[PROFILE_MAX_DEPTH + USER_MAX_DEPTH];	/* python_merge's */
	bool cgnames_fresh;	/* the session's cgroup names were read for this profile */
	struct rename *renames;	/* BPF's `renames`, by thread and time; read when first asked */
	size_t nr_renames;
	bool renames_read;
};

struct builder *builder__new(struct session *s, struct profile *p)
{
	struct builder *b = calloc(1, sizeof(*b));

	if (b) {
		b->s = s;
		b->p = p;
		/* Files rewritten in place since they were mapped: looked at once per profile. */
		dsos__check(s->dsos);
	}
	return b;
}

void builder__free(struct builder *b)
{
	if (!b)
		return;
	htab__free(&b->index);
	free(b->ents);
	free(b->renames);
	free(b);
}

/* --- addresses -> locations ------------------------------------------------------------- */

static uint64_t addr_hash(uint32_t pid, uint64_t addr, bool kernel, bool is_return)
{
	return hash_u64(hash_u64(HASH_SEED, addr), (uint64_t)pid << 2 | kernel << 1 | is_return);
}

/* The model's kind of a user frame of kind KIND, the INDEXth of its address's. */
static enum profile_frame_kind frame_kind(uint8_t kind, int index)
{
	if (kind == SYM_JIT)
		return PROFILE_FRAME_JIT;
	return kind == SYM_INLINE && index > 0 ? PROFILE_FRAME_INLINE : PROFILE_FRAME_USER;
}

/* The location of the frames FR[0..NR) (as the symbolizer gave them) of ADDR in PID, found
 * in mapping M (NULL: none); kernel frames with KERNEL. Returns its id or -errno. */
static int add_location(struct profile *p, const struct map *m, const char *build_id,
			uint64_t addr, bool kernel, const struct sym_frame *fr, int nr)
{
	struct profile_frame frames[MAX_ADDR_NAMES];
	struct profile_location loc = {
		.kind = kernel ? PROFILE_LOC_KERNEL : PROFILE_LOC_USER, .mapping = PROFILE_NONE,
		.address = addr, .frames = frames,
	};
	int id;

	for (int i = 0; i < nr && i < MAX_ADDR_NAMES; i++) {
		frames[i] = (struct profile_frame){
			.kind = kernel ? PROFILE_FRAME_KERNEL : frame_kind(fr[i].kind, i),
		};
		id = profile__intern(p, fr[i].name, strlen(fr[i].name));
		if (id < 0)
			return id;
		frames[i].name = id;
		if (fr[i].line && fr[i].file) {
			id = profile__intern(p, fr[i].file, strlen(fr[i].file));
			if (id < 0)
				return id;
			frames[i].line = fr[i].line;
			frames[i].file = id;
		}
		loc.nr_frames++;
	}
	if (loc.nr_frames && frames[0].kind == PROFILE_FRAME_JIT)
		loc.kind = PROFILE_LOC_JIT;
	if (m) {
		struct profile_mapping pm = { m->start, m->end, m->pgoff, 0, PROFILE_NONE };

		id = profile__intern(p, m->path, strlen(m->path));
		if (id < 0)
			return id;
		pm.path = id;
		if (build_id) {
			id = profile__intern(p, build_id, strlen(build_id));
			if (id < 0)
				return id;
			pm.build_id = id;
		}
		id = profile__add_mapping(p, &pm);
		if (id < 0)
			return id;
		loc.mapping = id;
		loc.offset = map__file_offset(m, addr);
	}
	return profile__add_location(p, &loc);
}

/* --- what --explain is told --------------------------------------------------------------- */

/* Whether mapping M holds anonymous memory: JIT code, if code. */
static bool map_is_anon(const struct map *m)
{
	return !m->path[0] || !strcmp(m->path, "//anon") || !strncmp(m->path, "[anon:", 6);
}

/* The explain's id of the file of mapping M (NULL: none). Returns it or -ENOMEM. */
static int explain_file(struct explain *ex, const struct map *m)
{
	if (!m)
		return explain__file(ex, EXPLAIN_NO_MAPPING);
	return explain__file(ex, map_is_anon(m) ? EXPLAIN_ANON_CODE : m->path);
}

/* Why an address of PID in mapping M (NULL: none) has no name (enum explain_reason). */
static int unnamed_reason(struct session *s, pid_t pid, const struct map *m)
{
	size_t nr_syms;
	bool debug;

	if (!m)
		return EXPLAIN_UNNAMED_NO_MAPPING;
	if (map_is_anon(m))
		return symbolizer__has_perfmap(s->sym, pid) ? EXPLAIN_UNNAMED_JIT_MISSING :
							     EXPLAIN_UNNAMED_JIT;
	if (map__is_vdso(m))
		return EXPLAIN_UNNAMED_VDSO;
	if (!map__is_dso(m))
		return EXPLAIN_UNNAMED_SPECIAL;
	/* As the worker found the file: the privileged side reads no symbols. */
	switch (symbolizer__file_info(s->sym, pid, m, &nr_syms, &debug)) {
	case 0:
		break;
	case -ESTALE:
		return EXPLAIN_UNNAMED_REPLACED;
	case -ENOENT:
		return EXPLAIN_UNNAMED_UNREADABLE;
	case -EIO:
		return EXPLAIN_UNNAMED_WORKER;
	default:
		return EXPLAIN_UNNAMED_NO_SYMS;
	}
	if (debug)
		return EXPLAIN_UNNAMED_DEBUG;
	return nr_syms ? EXPLAIN_UNNAMED_NO_DEBUG : EXPLAIN_UNNAMED_NO_SYMS;
}

/* The build id of the file of mapping M of PID (hex), or NULL when it has none or cannot be
 * read. Owned by the session's dso table. */
static const char *mapping_build_id(struct session *s, pid_t pid, const struct map *m)
{
	struct dso *dso = map__is_dso(m) ? dsos__get(s->dsos, pid, m, NULL) : NULL;

	return dso ? dso__build_id(dso) : NULL;
}

/* The entry of ADDR (a return address when IS_RETURN) in PID, or in the kernel: symbolized
 * and added to the model at the first time. Returns its index in B->ents or -errno. */
static int builder__addr(struct builder *b, uint32_t pid, uint64_t addr, bool kernel,
			 bool is_return)
{
	struct session *s = b->s;
	uint64_t h = addr_hash(pid, addr, kernel, is_return);
	struct sym_frame fr[MAX_ADDR_NAMES];
	const struct map *m = NULL;
	struct addr_ent *e;
	uint32_t pos, id;
	int nr, loc, err, file = -1, unnamed = -1;

	for (id = htab__first(&b->index, h, &pos); id != HTAB_NONE;
	     id = htab__next(&b->index, h, &pos)) {
		e = &b->ents[id];
		if (e->addr == addr && e->pid == pid && e->kernel == kernel &&
		    e->is_return == is_return)
			return id;
	}
	if (kernel) {
		fr[0] = (struct sym_frame){ .name = symbolizer__kernel(s->sym, addr, is_return) };
		loc = add_location(b->p, NULL, NULL, addr, true, fr, 1);
		nr = 1;
	} else {
		nr = symbolizer__user_frames(s->sym, pid, addr, is_return, fr, MAX_ADDR_NAMES);
		/* The mapping the symbolizer used: a return address is looked up inside the call. */
		m = procmaps__find(s->maps, pid, is_return && addr ? addr - 1 : addr);
		loc = add_location(b->p, m, m ? mapping_build_id(s, pid, m) : NULL, addr, false,
				   fr, nr);
		if (loc >= 0 && s->explain) {
			file = explain_file(s->explain, m);
			if (file < 0)
				loc = file;
			if (fr[0].kind == SYM_UNNAMED)
				unnamed = unnamed_reason(s, pid, m);
		}
	}
	if (loc < 0)
		return loc;
	if (array_grow(&b->ents, &b->cap, sizeof(*b->ents), b->nr))
		return -ENOMEM;
	id = b->nr;
	b->ents[id] = (struct addr_ent){ addr, pid, kernel, is_return, loc, nr, fr[0].name, file,
					 unnamed };
	err = htab__insert(&b->index, h, id);
	if (err)
		return err;
	b->nr++;
	return id;
}

/* The location of entry E with only its first KEEP frames (< E->nr). Returns its id or
 * -errno. */
static int cut_location(struct builder *b, const struct addr_ent *e, uint32_t keep)
{
	struct profile_frame frames[MAX_ADDR_NAMES];
	struct profile_location loc;

	profile__location(b->p, e->loc, &loc);
	memcpy(frames, loc.frames, keep * sizeof(*frames));
	loc.frames = frames;
	loc.nr_frames = keep;
	return profile__add_location(b->p, &loc);
}

/* --- stacks -> samples ------------------------------------------------------------------ */

/* A kernel stack that could not be kept (both stack-map buckets taken, a map full): one
 * kernel frame that says so, into LOCS. Returns 1 or -errno. */
static int lost_kernel_location(struct builder *b, uint32_t *locs)
{
	static const struct sym_frame lost = { .name = "[kernel stack lost]" };
	int loc = add_location(b->p, NULL, NULL, 0, true, &lost, 1);

	if (loc < 0)
		return loc;
	locs[0] = loc;
	return 1;
}

/* The kernel locations of KSTACK_ID (in the maps of the period parity PERIOD) into LOCS,
 * leaf first; *IN_EXEC: one of them runs an execve (fixup__is_exec). Returns how many, or
 * -errno. */
static int kernel_locations(struct builder *b, __s32 kstack_id, uint32_t period, uint32_t *locs,
			    bool *in_exec)
{
	uint64_t kips[PROFILE_MAX_DEPTH];
	struct profile_bpf *skel = b->s->skel;
	struct bpf_map *map = period ? skel->maps.kstacks_b : skel->maps.kstacks;
	int n, nk, id;

	if (kstack_id == KSTACK_LOST)
		return lost_kernel_location(b, locs);
	if (kstack_id < 0)
		return 0;
	if (kstack_id & KSTACK_SECOND) {
		kstack_id &= ~KSTACK_SECOND;
		map = period ? skel->maps.kstacks2_b : skel->maps.kstacks2;
	}
	if (kstack_id & KSTACK_TASK) {
		struct ktask_stack ks;
		uint32_t key = (uint32_t)kstack_id & ~(uint32_t)KSTACK_TASK;

		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.ktasks), &key, &ks))
			return lost_kernel_location(b, locs);
		memset(kips, 0, sizeof(kips));
		memcpy(kips, ks.ips, (ks.nr < PROFILE_TASK_KDEPTH ? ks.nr : PROFILE_TASK_KDEPTH) *
		       sizeof(*kips));
	} else if (kstack_id & KSTACK_EXTRA) {
		if (session__extra_kstack(b->s, kstack_id, kips))
			return lost_kernel_location(b, locs);
	} else if (bpf_map_lookup_elem(bpf_map__fd(map), &kstack_id, kips)) {
		return lost_kernel_location(b, locs);
	}
	nk = fixup__kernel_depth(kips, PROFILE_MAX_DEPTH);
	n = 0;
	for (int i = 0, cut = 0; i < nk; i++) {
		id = builder__addr(b, 0, kips[i], true, i > 0);
		if (id < 0)
			return id;
		/* A task's own stack (KSTACK_TASK): the sampling's frames first, cut. */
		if ((kstack_id & KSTACK_TASK) && i == cut &&
		    fixup__is_sampling_frame(b->ents[id].outer)) {
			cut++;
			continue;
		}
		locs[i - cut] = b->ents[id].loc;
		*in_exec |= fixup__is_exec(b->ents[id].outer);
		n = i - cut + 1;
	}
	return n;
}

/*
 * The user locations of the NU addresses IPS of PID into LOCS, leaf first, trimmed at a stack
 * bottom; *OUTER gets the outermost function of the last address kept (NULL: none). Returns
 * how many, or -errno.
 */
static int user_locations(struct builder *b, pid_t pid, const uint64_t *ips, int nu,
			  uint32_t *locs, const char **outer)
{
	int n = 0, used = 0;

	*outer = NULL;
	b->nr_ustack = 0;
	if (nu > USER_MAX_DEPTH)
		nu = USER_MAX_DEPTH;
	if (nu)
		procmaps__ensure(b->s->maps, pid);
	for (int i = 0; i < nu; i++) {
		int id = builder__addr(b, pid, ips[i], false, i > 0);
		uint32_t keep, room = MAX_STACK_NAMES - used;
		const struct addr_ent *e;

		if (id < 0)
			return id;
		e = &b->ents[id];
		b->ustack[b->nr_ustack++] = id;
		keep = e->nr < room ? e->nr : room;
		used += keep;
		*outer = keep ? e->outer : NULL;
		if (keep) {
			id = keep == e->nr ? (int)e->loc : cut_location(b, e, keep);
			if (id < 0)
				return id;
			b->louter[n] = e->outer;
			b->lent[n] = b->ustack[b->nr_ustack - 1];
			locs[n++] = id;
		}
		if (fixup__ends_at(i, *outer))
			break;
	}
	return n;
}

/* Unnamed (file, reason) pairs told per stack at most; more are rare and left out. */
#define EXPLAIN_STACK_UNNAMED	16

/* The pid whose mappings name KEY's user frames: the program that ran under KEY->pid when
 * it was sampled (an earlier one kept apart after an exec or a pid used again), or that pid
 * itself. */
static pid_t key_pid(const struct builder *b, const struct stack_key *key)
{
	return procmaps__incarnation(b->s->maps, key->pid, key->gen);
}

/*
 * Tell the session's explain about the COUNT samples of KEY, whose user stack was the NU
 * addresses IPS, B->ustack the entries of those kept, TRUNCATED whether it is marked so: the
 * file of its outermost address kept where it was cut, the file where a frame-pointer walk
 * met a function without a frame record, the files where its frames have no name (once
 * each). Returns 0 or -errno.
 */
static int builder__explain(struct builder *b, const struct stack_key *key, pid_t pid,
			    const uint64_t *ips, int nu, uint64_t count, bool truncated)
{
	struct explain *ex = b->s->explain;
	int32_t seen[EXPLAIN_STACK_UNNAMED][2];
	int file, nseen = 0, err = 0;

	if (truncated) {
		file = b->nr_ustack ? b->ents[b->ustack[b->nr_ustack - 1]].file :
				      explain__file(ex, EXPLAIN_NO_USER);
		err = file < 0 ? file :
				 explain__add(ex, file, explain__cut_reason(key->no_stack, key->stop),
					      count, 0);
	}
	if (!err && key->sent == STACK_SENT_NOREC && key->walk_end) {
		/* The walk's last address: a return address (looked up inside the call) unless
		 * it is the leaf. */
		uint64_t at = nu && ips[0] == key->walk_end ? key->walk_end : key->walk_end - 1;

		file = explain_file(ex, procmaps__find(b->s->maps, pid, at));
		err = file < 0 ? file : explain__add(ex, file, EXPLAIN_NOREC, count,
						     truncated ? 0 : count);
	}
	if (!err && key->scan_pc) {
		file = explain_file(ex, procmaps__find(b->s->maps, pid, key->scan_pc));
		err = file < 0 ? file : explain__add(ex, file, EXPLAIN_SCANNED, count,
						     truncated ? 0 : count);
	}
	for (int i = 0; !err && i < b->nr_ustack; i++) {
		const struct addr_ent *e = &b->ents[b->ustack[i]];
		int j;

		if (e->unnamed < 0)
			continue;
		for (j = 0; j < nseen; j++)
			if (seen[j][0] == e->file && seen[j][1] == e->unnamed)
				break;
		if (j < nseen || nseen == EXPLAIN_STACK_UNNAMED)
			continue;
		seen[nseen][0] = e->file;
		seen[nseen++][1] = e->unnamed;
		err = explain__add(ex, e->file, e->unnamed, count, truncated ? 0 : count);
	}
	return err;
}

/* One comm from the BPF `comms` map (ID: a pid or tid) as a string id of P. */
static int comm_of(struct builder *b, __u32 id)
{
	char buf[PROFILE_COMM_LEN];

	if (bpf_map_lookup_elem(bpf_map__fd(b->s->skel->maps.comms), &id, buf) == 0) {
		buf[PROFILE_COMM_LEN - 1] = '\0';
		if (buf[0])
			return profile__intern(b->p, buf, strlen(buf));
	}
	return profile__intern(b->p, "[unknown]", 9);
}

/* A rename, as BPF recorded it (struct rename_key, struct rename_val). */
struct rename {
	uint32_t tid;
	uint64_t time;
	char before[PROFILE_COMM_LEN], after[PROFILE_COMM_LEN];
};

static int rename_cmp(const void *x, const void *y)
{
	const struct rename *a = x, *b = y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->time < b->time ? -1 : a->time > b->time;
}

/* BPF's renames, sorted by thread and time, into B (once per profile). */
static void read_renames(struct builder *b)
{
	int fd = bpf_map__fd(b->s->skel->maps.renames);
	struct rename_key k, next, *prev = NULL;
	struct rename_val v;
	size_t cap = 0;

	b->renames_read = true;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v) ||
		    array_grow(&b->renames, &cap, sizeof(*b->renames), b->nr_renames))
			continue;
		struct rename *r = &b->renames[b->nr_renames++];

		r->tid = k.tid;
		r->time = k.time;
		memcpy(r->before, v.before, sizeof(r->before));
		memcpy(r->after, v.after, sizeof(r->after));
		r->before[PROFILE_COMM_LEN - 1] = r->after[PROFILE_COMM_LEN - 1] = '\0';
	}
	if (b->nr_renames)
		qsort(b->renames, b->nr_renames, sizeof(*b->renames), rename_cmp);
}

/*
 * The name thread (or process) ID had at GEN, a sample's gen (a rename begins one, BPF's
 * on_rename and on_exec), from its renames while profiling: the name after the last one at
 * or before GEN, else the name before the first. NULL when it was not renamed (or that is not
 * known): its name is the one BPF remembers.
 */
static const char *name_at(struct builder *b, uint32_t id, uint64_t gen)
{
	const char *name = NULL;
	size_t lo, i;

	if (!b->renames_read)
		read_renames(b);
	lo = BSEARCH_PREFIX(b->nr_renames, mid, b->renames[mid].tid < id);
	for (i = lo; i < b->nr_renames && b->renames[i].tid == id; i++) {
		if (b->renames[i].time > gen) {
			if (i == lo)
				name = b->renames[i].before;
			break;
		}
		name = b->renames[i].after;
	}
	return name && name[0] ? name : NULL;
}

/* --group-by cgroup: the path of process PID's cgroup (as BPF noted it when it was first
 * sampled) into L; "[unknown cgroup]" when it was not noted, or is gone. Returns 0 or
 * -ENOMEM. */
static int cgroup_label(struct builder *b, uint32_t pid, struct profile_labels *l)
{
	struct session *s = b->s;
	const char *path = NULL;
	__u64 id;
	int sid;

	if (!bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.cgroup_of), &pid, &id)) {
		path = cgroup_names__find(s->cgnames, id);
		/* A cgroup made since they were read: read them again (once per profile). */
		if (!path && !b->cgnames_fresh) {
			cgroup_names__free(s->cgnames);
			s->cgnames = cgroup_names__read(s->cgroot);
			b->cgnames_fresh = true;
			path = cgroup_names__find(s->cgnames, id);
		}
	}
	if (!path)
		path = "[unknown cgroup]";
	sid = profile__intern(b->p, path, strlen(path));
	if (sid < 0)
		return sid;
	l->cgroup = (uint32_t)sid + 1;
	return 0;
}

static int builder__labels(struct builder *b, const struct stack_key *key, pid_t as,
			   struct profile_labels *l)
{
	/* The name it ran under (renamed while profiling); else an earlier program's under the
	 * pid, its own name; else the name BPF remembers. */
	const char *comm = name_at(b, key->pid, key->gen);
	int id;

	if (!comm && as != key->pid)
		comm = procmaps__comm(b->s->maps, as);
	id = comm ? profile__intern(b->p, comm, strlen(comm)) : comm_of(b, key->pid);

	*l = (struct profile_labels){ .pid = key->pid, .comm = id, .thread_comm = PROFILE_NONE };
	/* Several events: which one, as its name (the folded root frame, pprof's label). */
	if (id >= 0 && b->s->nr_evs > 1) {
		unsigned int i = key->event;
		const char *ev = b->s->evs[i < b->s->nr_evs ? i : 0].name;
		int sid = profile__intern(b->p, ev, strlen(ev));

		if (sid < 0)
			id = sid;
		else
			l->event = (uint32_t)sid + 1;
	}
	if (id >= 0 && b->s->opts.group_cgroup)
		id = cgroup_label(b, key->pid, l);
	if (id >= 0 && b->s->opts.threads && key->tid) {
		const char *tcomm = name_at(b, key->tid, key->gen);

		l->tid = key->tid;
		id = tcomm ? profile__intern(b->p, tcomm, strlen(tcomm)) : comm_of(b, key->tid);
		l->thread_comm = id;
	}
	return id < 0 ? id : 0;
}

/* --- Python frames -------------------------------------------------------------------- */

/* CPython's interpreter loop: each of its frames ran one or more Python frames; CRuby's
 * entry to its VM's loop: each ran one or more Ruby frames. */
#define PY_EVAL_LOOP	"_PyEval_EvalFrameDefault"
#define RB_VM_EXEC	"rb_vm_exec"

/* The location of Python frame WORD of PID (its code object and instruction). Returns its id
 * or -errno. */
static int python_location(struct builder *b, pid_t pid, uint64_t word, bool ruby)
{
	uint64_t addr = word & ~PY_WORD_ENTRY;
	/* (Kept beside the native addresses as a kernel address of a process: never one.) */
	uint64_t h = addr_hash((uint32_t)pid, addr, true, true);
	struct profile_frame fr = { .kind = ruby ? PROFILE_FRAME_RUBY : PROFILE_FRAME_PYTHON };
	struct profile_location loc = {
		.kind = PROFILE_LOC_USER, .mapping = PROFILE_NONE, .address = addr,
		.frames = &fr, .nr_frames = 1,
	};
	struct python_frame pf;
	uint32_t pos, id;
	int l, err;
	bool bad;

	for (id = htab__first(&b->index, h, &pos); id != HTAB_NONE;
	     id = htab__next(&b->index, h, &pos))
		if (b->ents[id].addr == addr && b->ents[id].pid == (uint32_t)pid &&
		    b->ents[id].kernel && b->ents[id].is_return) {
			b->py_unnamed += b->ents[id].unnamed >= 0;
			return (int)b->ents[id].loc;
		}
	bad = python__frame(b->s, pid, word, ruby, &pf) != 0;
	b->py_unnamed += bad;
	l = profile__intern(b->p, pf.name, strlen(pf.name));
	if (l < 0)
		return l;
	fr.name = (uint32_t)l;
	if (pf.file && pf.line) {
		l = profile__intern(b->p, pf.file, strlen(pf.file));
		if (l < 0)
			return l;
		fr.file = (uint32_t)l;
		fr.line = (uint32_t)pf.line;
	}
	l = profile__add_location(b->p, &loc);
	if (l < 0)
		return l;
	if (array_grow(&b->ents, &b->cap, sizeof(*b->ents), b->nr))
		return -ENOMEM;
	b->ents[b->nr] = (struct addr_ent){ addr, (uint32_t)pid, true, true, (uint32_t)l, 1,
					    NULL, -1, bad ? 1 : -1 };
	err = htab__insert(&b->index, h, (uint32_t)b->nr);
	if (err)
		return err;
	b->nr++;
	return l;
}

/* The location of a frame that only says something (NAME): no address, no file. Returns
 * its id or -errno. */
static int marker_location(struct builder *b, const char *name)
{
	struct profile_frame fr = { .kind = PROFILE_FRAME_USER };
	struct profile_location loc = {
		.kind = PROFILE_LOC_USER, .mapping = PROFILE_NONE, .frames = &fr, .nr_frames = 1,
	};
	int id = profile__intern(b->p, name, strlen(name));

	if (id < 0)
		return id;
	fr.name = (uint32_t)id;
	return profile__add_location(b->p, &loc);
}

/*
 * The N user locations LOCS (leaf first; B->louter their outermost functions) with the NW
 * Python frames WORDS of PID in place of the interpreter's frames that ran them, into
 * B->pylocs: the frames each run of the loop ran end at one with PY_WORD_ENTRY; the runs go
 * to the loop's frames from the root (from the leaf when the native stack was cut, TRUNCATED).
 * Runs with no loop frame left go with the leaf-most one; loop frames with no run stay as
 * they are. Returns how many locations, or -errno.
 */
static int python_merge(struct builder *b, pid_t pid, const uint64_t *words, int nw,
			const uint32_t *locs, int n, bool truncated, const char *loop, bool ruby,
			bool cut)
{
	int rs[PROFILE_MAX_DEPTH], re[PROFILE_MAX_DEPTH], nr = 0, start = 0, ne = 0, k, out = 0;
	const int max = (int)(sizeof(b->pylocs) / sizeof(b->pylocs[0]));

	if (nw > PROFILE_MAX_DEPTH)
		nw = PROFILE_MAX_DEPTH;
	for (int i = 0; i < nw; i++)
		if ((words[i] & PY_WORD_ENTRY) || i == nw - 1) {
			rs[nr] = start;
			re[nr++] = i + 1;
			start = i + 1;
		}
	for (int i = 0; i < n; i++)
		ne += b->louter[i] && !strcmp(b->louter[i], loop);
	/* Runs with no loop frame to go in (a native stack cut below them): not shown. */
	if (nr > ne && (truncated || !ne))
		b->py_left += nr - ne;
	k = 0;
	for (int i = 0; i < n; i++) {
		int first, last;

		if (!b->louter[i] || strcmp(b->louter[i], loop) || !nr) {
			b->py_left += b->louter[i] && !strcmp(b->louter[i], loop);
			if (out < max)
				b->pylocs[out++] = locs[i];
			continue;
		}
		/* Loop frame K (from the leaf): run K, or from the root K - (ne - nr). */
		first = last = truncated ? k : k - (ne - nr);
		if (k == 0)
			first = 0;	/* the runs left over go with the leaf-most */
		k++;
		if (last < 0 || last >= nr) {
			b->py_left++;
			if (out < max)
				b->pylocs[out++] = locs[i];
			continue;
		}
		for (int r = first; r <= last; r++) {
			for (int j = rs[r]; j < re[r] && out < max; j++) {
				int l = python_location(b, pid, words[j], ruby);

				if (l < 0)
					return l;
				b->pylocs[out++] = (uint32_t)l;
			}
			/* The outermost run read, when more frames were there than were read:
			 * said below it, not shown whole. */
			if (cut && r == nr - 1 && out < max) {
				int l = marker_location(b, ruby ? "[ruby: more frames not read]" :
							"[python: more frames not read]");

				if (l < 0)
					return l;
				b->pylocs[out++] = (uint32_t)l;
				b->py_left++;
			}
		}
	}
	return out;
}

/* --explain told of a stack's interpreter frames (WEIGHT): READ when frames were read for
 * it (whole when every loop frame was replaced by named ones: B's py_left, py_unnamed),
 * else MISSING, at the file of its loop frame LOOP (-1: none: nothing told). */
static int builder__explain_runtime(struct builder *b, int loop, bool read, uint64_t weight,
				    enum explain_reason ok, enum explain_reason missing)
{
	struct explain *ex = b->s->explain;
	int file = ex && loop >= 0 ? b->ents[b->lent[loop]].file : -1;

	if (file < 0)
		return 0;
	return read ? explain__add(ex, file, ok, weight,
				   !b->py_left && !b->py_unnamed ? weight : 0) :
		      explain__add(ex, file, missing, weight, 0);
}

/*
 * The stack's Python frames (PY: PY_MARK and NPY - 1 words; NPY 0: none) in place of the
 * loop's frames among its *N user locations (in B->locs past PROFILE_MAX_DEPTH), *N updated;
 * counted for the summary (on-CPU samples, WEIGHT of them) and told to --explain (at the
 * file of the loop's first frame). Returns 0 or -errno.
 */
static int builder__python(struct builder *b, const struct stack_key *key, const uint64_t *py,
			   int npy, int *n, bool truncated, uint64_t weight, bool off)
{
	struct session *s = b->s;
	uint32_t *locs = b->locs + PROFILE_MAX_DEPTH;
	bool ruby = npy > 0 && (py[0] & ~(RB_MARK_NOGVL | RB_MARK_CUT)) == RB_MARK;
	/* Not every frame read: the runs read are the leaf's (aligned from the leaf). */
	bool cut = npy > 0 && (ruby ? (py[0] & RB_MARK_CUT) : (py[0] & PY_MARK_CUT));
	const char *name = ruby ? RB_VM_EXEC : PY_EVAL_LOOP;
	uint64_t words[PROFILE_MAX_DEPTH];
	int loop = -1, m, nw = 0;

	for (int i = 0; i < *n && loop < 0; i++)
		if (b->louter[i] && !strcmp(b->louter[i], PY_EVAL_LOOP))
			loop = i;
	/* (Ruby's: its C methods' frames are the native ones already.) */
	for (int i = 1; i < npy && nw < PROFILE_MAX_DEPTH; i++)
		if (!ruby || !(py[i] & RB_WORD_CFUNC))
			words[nw++] = py[i];
	if (ruby) {
		for (int i = 0; i < *n && loop < 0; i++)
			if (b->louter[i] && !strcmp(b->louter[i], RB_VM_EXEC))
				loop = i;
		/* Ruby's frames are not counted with Python's in the summary. */
		b->py_left = b->py_unnamed = 0;
		if (nw && *n > 0) {
			m = python_merge(b, key->pid, words, nw, locs, *n, truncated || cut, name,
					 true, cut);
			if (m < 0)
				return m;
			*n = m < USER_MAX_DEPTH ? m : USER_MAX_DEPTH;
			memcpy(locs, b->pylocs, *n * sizeof(*locs));
		}
		return builder__explain_runtime(b, loop, nw > 0, weight, EXPLAIN_RB_READ,
						EXPLAIN_RB_MISSING);
	}
	if (npy <= 1) {
		/* No frames read: said at the VM's entry frames (Ruby's thread waiting for its
		 * lock, say), or at the loop's. */
		for (int i = 0; i < *n; i++)
			if (b->louter[i] && !strcmp(b->louter[i], RB_VM_EXEC))
				return builder__explain_runtime(b, i, false, weight, EXPLAIN_RB_READ,
								EXPLAIN_RB_MISSING);
		if (loop < 0)
			return 0;
	}
	b->py_left = b->py_unnamed = 0;
	if (nw && *n > 0) {
		m = python_merge(b, key->pid, words, nw, locs, *n, truncated || cut, name, false,
				 cut);
		if (m < 0)
			return m;
		*n = m < USER_MAX_DEPTH ? m : USER_MAX_DEPTH;
		memcpy(locs, b->pylocs, *n * sizeof(*locs));
	} else {
		b->py_left = 1;
	}
	if (!off) {
		s->stats.py_ran += weight;
		s->stats.py_read += npy > 1 ? weight : 0;
		s->stats.py_whole += npy > 1 && !b->py_left && !b->py_unnamed ? weight : 0;
	}
	return builder__explain_runtime(b, loop, npy > 1, weight, EXPLAIN_PY_READ,
					EXPLAIN_PY_MISSING);
}

void builder__want(struct builder *b, const struct stack_key *key, const uint64_t *ips, int nu)
{
	struct session *s = b->s;
	pid_t pid = key_pid(b, key);

	/* Its Python frames, behind PY_MARK. */
	for (int i = python_split(ips, nu) + 1; i < nu; i++)
		python__want(s, key->pid, ips[i]);
	nu = python_split(ips, nu);
	if (nu > USER_MAX_DEPTH)
		nu = USER_MAX_DEPTH;
	if (nu)
		procmaps__ensure(s->maps, pid);
	for (int i = 0; i < nu; i++)
		symbolizer__want(s->sym, pid, ips[i], i > 0);
}

int builder__add(struct builder *b, const struct stack_key *key, const uint64_t *ips, int nu,
		 uint64_t count, uint32_t *sample)
{
	struct session *s = b->s;
	struct profile_labels labels;
	pid_t pid = key_pid(b, key);
	bool in_exec = false, off = key->off_cpu;
	/* --wall: an on-CPU sample weighs its period. */
	uint64_t weight = off || !s->opts.wall ? count : count * (1000000000ull / s->opts.freq);
	const char *outer;
	int nk, n, err, all = nu;

	if (sample)
		*sample = TL_NO_SAMPLE;
	/* Its Python frames, behind PY_MARK. */
	nu = python_split(ips, nu);
	/* The command's waits before its exec (gen 0: forked before the profile began) are
	 * profile's own, held until sampling began. */
	if (off && key->gen == 0 && s->command_pid && key->pid == s->command_pid)
		return 0;
	nk = kernel_locations(b, key->kstack_id, key->period, b->locs, &in_exec);
	if (nk < 0) {
		err = nk;
		goto fail;
	}
	/* In an execve, with a user ip or stack the process no longer maps: no user frames. */
	if (in_exec && nu) {
		procmaps__ensure(s->maps, pid);
		if (key->no_stack || !procmaps__find(s->maps, pid, ips[0]))
			nu = 0;
	}
	n = user_locations(b, pid, ips, nu, b->locs + PROFILE_MAX_DEPTH, &outer);
	err = n < 0 ? n : builder__labels(b, key, pid, &labels);
	if (err)
		goto fail;
	labels.truncated = fixup__truncated(key->truncated, outer);
	if (in_exec && !nu)
		labels.truncated = false;
	labels.off_cpu = off;
	if (s->explain) {
		err = builder__explain(b, key, pid, ips, nu, weight, labels.truncated);
		if (err)
			goto fail;
	}
	err = builder__python(b, key, ips + nu, all - nu, &n, labels.truncated, weight, off);
	if (err)
		goto fail;
	memmove(b->locs + nk, b->locs + PROFILE_MAX_DEPTH, n * sizeof(*b->locs));
	err = profile__add_stack(b->p, b->locs, nk + n);
	if (err >= 0)
		err = profile__add_sample(b->p, err, weight, &labels);
	if (err < 0)
		goto fail;
	if (sample)
		*sample = (uint32_t)err;
	if (off) {
		s->stats.off_ns += count;
		if (labels.truncated)
			s->stats.off_truncated_ns += count;
	} else {
		s->stats.samples += count;
		if (key->scan_pc)
			s->stats.scanned += count;
		if (labels.truncated) {
			s->stats.truncated += count;
			s->stats.cut_stop[key->stop] += count;
		}
	}
	return 0;
fail:
	return session__fail(s, SESSION_ERR_RUNTIME, err, "out of memory");
}

int builder__timed(struct builder *b, uint32_t sample, pid_t tid, uint64_t gen, uint64_t time,
		   uint64_t weight, bool off)
{
	const char *name = name_at(b, (uint32_t)tid, gen);
	int id = name ? profile__intern(b->p, name, strlen(name)) : comm_of(b, (uint32_t)tid);
	/* (As the sample's weight counts it: --wall's on-CPU samples weigh their period.) */
	struct profile_timed t = {
		.time = time, .sample = sample, .tid = (uint32_t)tid,
		.weight = off || !b->s->opts.wall ? weight :
			  weight * (1000000000ull / b->s->opts.freq),
	};

	if (id >= 0) {
		t.thread_comm = (uint32_t)id;
		id = profile__add_timed(b->p, &t);
	}
	return id < 0 ? session__fail(b->s, SESSION_ERR_RUNTIME, id, "out of memory") : 0;
}

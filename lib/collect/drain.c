// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/drain: after sampling, what BPF counted (the per-CPU slots, `counts`, `ustacks`,
 * `kstacks`) and what was unwound here (ucounts) -> symbolized, fixed-up folded stacks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect/fixup.h"
#include "collect/session_int.h"
#include "collect/ucounts.h"
#include "output/folded.h"
#include "proc/procmaps.h"
#include "symbolize/symbolize.h"
#include "unwind/unwind.h"
#include "profile.skel.h"

static const char *comm_of(struct session *s, __u32 id, char *buf)
{
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.comms), &id, buf) == 0) {
		buf[PROFILE_COMM_LEN - 1] = '\0';
		if (buf[0])
			return buf;
	}
	return "[unknown]";
}

/*
 * A frame-pointer walk starts at rbp and so skips the caller of a leaf that keeps no frame.
 * When BPF kept words at sp that may be that return address, ask the leaf's CFI: if it puts
 * the return address there and the walk does not have it already, put it in IPS (which has
 * room for NU + 1 frames). Returns the new number of frames.
 */
static int add_leaf_caller(struct session *s, const struct count_key *key, const __u64 *words,
			   uint64_t *ips, int nu)
{
	struct unwind_sample us = {
		.pid = key->pid, .ip = ips[0], .sp = 0x100000, .bp = 0,
		.stack = words, .stack_len = 2 * sizeof(*words),
	};
	uint64_t ret;

	if (nu < 1 || (!words[0] && !words[1]))
		return nu;
	/* Only the words matter: the CFI at ip says at which offset from sp the return address
	 * is; rbp-based rules read outside the copy and fail, as they should. */
	if (unwinder__leaf_return(s->unw, &us, &ret) || !ret || (nu > 1 && ips[1] == ret))
		return nu;
	memmove(&ips[2], &ips[1], (nu - 1) * sizeof(*ips));
	ips[1] = ret;
	return nu + 1;
}

static int fold_key(struct session *s, struct symbolizer *sym, const struct count_key *key,
		    const uint64_t *ips, int nu, char **buf, size_t *len, size_t *cap,
		    bool *truncated)
{
	char comm[PROFILE_COMM_LEN], tcomm[PROFILE_COMM_LEN], tframe[PROFILE_COMM_LEN + 16];
	/* Frames of every address, root first within an address: first[i] is where address
	 * i's frames start in names[], nframes[i] how many. */
	static const char *names[USER_MAX_DEPTH * 4];
	static int first[USER_MAX_DEPTH], nframes[USER_MAX_DEPTH];
	__u64 kips[PROFILE_MAX_DEPTH];
	int err, n, used = 0;

	if (nu > USER_MAX_DEPTH)
		nu = USER_MAX_DEPTH;
	if (nu)
		procmaps__ensure(s->maps, key->pid);
	for (int i = 0; i < nu; i++) {
		int room = (int)(sizeof(names) / sizeof(names[0])) - used;

		first[i] = used;
		nframes[i] = symbolizer__user_frames(sym, key->pid, ips[i], i > 0, &names[used],
						     room > 0 ? room : 0);
		used += nframes[i];
		/* Frames outside the stack-bottom function (_start, __libc_start_main, clone3) are
		 * dropped, so that DWARF- and frame-pointer-unwound stacks share one root. */
		if (i > 0 && nframes[i] && fixup__is_stack_bottom(names[first[i]])) {
			nu = i + 1;
			break;
		}
	}
	*truncated = (key->flags & COUNT_F_USER_TRUNCATED) &&
		     !(nu > 0 && nframes[nu - 1] && fixup__is_stack_bottom(names[first[nu - 1]]));

	*len = 0;
	err = folded__push_frame(buf, len, cap, comm_of(s, key->pid, comm), NULL);
	if (!err && s->opts.threads && key->tid) {
		snprintf(tframe, sizeof(tframe), "%s/%u", comm_of(s, key->tid, tcomm), key->tid);
		err = folded__push_frame(buf, len, cap, tframe, NULL);
	}
	if (!err && *truncated)
		err = folded__push_frame(buf, len, cap, "[truncated]", NULL);
	for (int i = nu - 1; i >= 0 && !err; i--)
		for (int j = 0; j < nframes[i] && !err; j++)
			err = folded__push_frame(buf, len, cap, names[first[i] + j], NULL);
	if (!err && key->kstack_id >= 0 &&
	    bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.kstacks), &key->kstack_id, kips) == 0) {
		for (n = 0; n < PROFILE_MAX_DEPTH && kips[n]; n++)
			;
		for (int i = n - 1; i >= 0 && !err; i--)
			err = folded__push_frame(buf, len, cap,
						 symbolizer__kernel(sym, kips[i], i > 0), "_[k]");
	}
	return err;
}

static int collect_stack(struct session *s, const struct count_key *key, const uint64_t *ips,
			 int nr, uint64_t count, struct folded *out, char **buf, size_t *len,
			 size_t *cap)
{
	bool truncated;
	int err;

	err = fold_key(s, s->sym, key, ips, nr, buf, len, cap, &truncated);
	if (!err)
		err = folded__add(out, *buf, count);
	if (err)
		return session__fail(s, SESSION_ERR_RUNTIME, err, "out of memory");
	s->stats.samples += count;
	if (truncated)
		s->stats.truncated += count;
	return 0;
}

/* The samples of KEY (COUNT of them) into OUT. */
static int collect_key(struct session *s, const struct count_key *key, uint64_t count,
		       struct folded *out, char **buf, size_t *len, size_t *cap)
{
	uint64_t ips[PROFILE_MAX_DEPTH + 1];
	struct ustack us;
	int nr = 0;

	if (key->ustack_hash &&
	    bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.ustacks), &key->ustack_hash, &us) == 0) {
		nr = us.nr < PROFILE_MAX_DEPTH ? (int)us.nr : PROFILE_MAX_DEPTH;
		memcpy(ips, us.ips, nr * sizeof(*ips));
		procmaps__ensure(s->maps, key->pid);
		nr = add_leaf_caller(s, key, us.sp_words, ips, nr);
	}
	return collect_stack(s, key, ips, nr, count, out, buf, len, cap);
}

/*
 * Move what the per-CPU `cached` tables still hold into `counts` (sampling has stopped). A
 * key that no longer fits there goes straight into OUT.
 */
static int drain_slots(struct session *s, struct folded *out, char **buf, size_t *len,
		       size_t *cap)
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
				err = collect_key(s, &sl->key, sl->count, out, buf, len, cap);
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

int session__collect(struct session *s, struct folded *out)
{
	int fd = bpf_map__fd(s->skel->maps.counts);
	const struct ucount *e;
	struct count_key key, next;
	char *buf = NULL;
	size_t len = 0, cap = 0, pos = 0;
	void *prev = NULL;
	int err;

	session__read_stats(s);
	err = drain_slots(s, out, &buf, &len, &cap);
	while (!err && bpf_map_get_next_key(fd, prev, &next) == 0) {
		__u64 count;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &count))
			continue;
		err = collect_key(s, &key, count, out, &buf, &len, &cap);
	}
	while (!err && (e = ucounts__next(s->unwound, &pos)))
		err = collect_stack(s, &e->key, e->ips, e->nr, e->count, out, &buf, &len, &cap);
	free(buf);
	return err;
}

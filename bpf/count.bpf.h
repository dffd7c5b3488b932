/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Counting in BPF: the names of processes and threads, the per-CPU cache of the last count
 * keys and the `counts` map behind it, the process cache of each CPU (current_proc), a
 * page fault's kernel stack (task_kstack). Included by profile.bpf.c only.
 */
#ifndef PROFILE_COUNT_BPF_H
#define PROFILE_COUNT_BPF_H

static __always_inline void remember_comm(__u32 id, struct task_struct *task)
{
	char name[PROFILE_COMM_LEN];
	char *old = bpf_map_lookup_elem(&comms, &id);

	BPF_CORE_READ_STR_INTO(&name, task, comm);
	/* Names change at exec and prctl(PR_SET_NAME): compare the first 8 bytes. */
	if (old && *(__u64 *)old == *(__u64 *)name)
		return;
	bpf_map_update_elem(&comms, &id, name, BPF_ANY);
}

/* Add N samples of KEY to `counts`. */
static __always_inline void count_add(const struct count_key *key, __u64 n)
{
	__u64 *count = bpf_map_lookup_elem(&counts, key);
	long err;

	if (count) {
		__sync_fetch_and_add(count, n);
		return;
	}
	err = bpf_map_update_elem(&counts, key, &n, BPF_NOEXIST);
	if (err == -17 /* EEXIST: another CPU added it first */) {
		count = bpf_map_lookup_elem(&counts, key);
		if (count)
			__sync_fetch_and_add(count, n);
	} else if (err) {
		stat_add(STAT_COUNTS_FULL, n);
	}
}

static __always_inline bool same_key(const struct count_key *a, const struct count_key *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3] && x[4] == y[4];
}

/*
 * Count one sample of KEY in its pair of slots of this CPU's `cached` tables of its period;
 * returns true. When neither slot holds KEY, returns false with *VICTIM the slot to give it
 * (or NULL): the one with the smaller count.
 */
static __always_inline bool count_cached(const struct count_key *key, struct count_slot **victim,
					 __u64 n)
{
	const __u64 *x = (const __u64 *)key;
	__u64 h = (x[0] ^ x[1] * 0x9e3779b97f4a7c15ULL ^ x[2]) * 0xbf58476d1ce4e5b9ULL;
	__u32 tab = (key->period & 1) * PROFILE_CACHE_TABLES +
		    ((__u32)(h >> 32) & (PROFILE_CACHE_TABLES - 1));
	__u32 i = ((__u32)(h >> 40) & (PROFILE_CACHE_SLOTS / 2 - 1)) * 2;
	struct count_slots *t = bpf_map_lookup_elem(&cached, &tab);
	struct count_slot *a, *b;

	*victim = NULL;
	if (!t || i > PROFILE_CACHE_SLOTS - 2)
		return false;
	a = &t->s[i];
	b = &t->s[i + 1];
	if (a->count && same_key(&a->key, key)) {
		a->count += n;
		return true;
	}
	if (b->count && same_key(&b->key, key)) {
		b->count += n;
		return true;
	}
	*victim = b->count > a->count ? a : b;
	return false;
}

/* Give SLOT to KEY, with one sample, after moving what it held to `counts`. */
static __always_inline void count_new(struct count_slot *slot, const struct count_key *key,
				      __u64 n)
{
	if (!slot) {
		count_add(key, n);
		return;
	}
	if (slot->count)
		count_add(&slot->key, slot->count);
	slot->key = *key;
	slot->count = n;
}

/* The process TGID's `incarns` value T (NULL: none), marked sampled in the map when it was
 * not (once per program and CPU cache miss). Returns the value with the mark. */
static __always_inline __u64 note_sampled(__u32 tgid, const __u64 *t)
{
	__u64 v = t ? *t : 0;

	if (!(v & INCARN_SAMPLED)) {
		v |= INCARN_SAMPLED;
		bpf_map_update_elem(&incarns, &tgid, &v, BPF_ANY);
	}
	return v;
}

/*
 * The process TGID's `procs` entry, from this CPU's copy when it is the last one sampled
 * here (NULL when it has none). A process new to the CPU has its name recorded.
 */
static __always_inline const struct proc_ranges *current_proc(__u32 tgid,
							      struct task_struct *task,
							      __u64 *since)
{
	__u64 gen = procs_gen;
	const struct exec_seen *ex;
	struct proc_ranges *pr;
	struct cpu_proc *cp;
	__u32 zero = 0;

	cp = bpf_map_lookup_elem(&cur_proc, &zero);
	if (!cp) {
		*since = note_sampled(tgid, bpf_map_lookup_elem(&incarns, &tgid)) & ~INCARN_FLAGS;
		return bpf_map_lookup_elem(&procs, &tgid);
	}
	if (cp->tgid_1 == tgid + 1 && cp->gen == gen) {
		*since = cp->since & ~INCARN_FLAGS;
		return cp->has_ranges ? &cp->pr : NULL;
	}
	if (cp->tgid_1 != tgid + 1) {
		remember_comm(tgid, BPF_CORE_READ(task, group_leader));
		if (group_cgroup) {
			__u64 cg = task_cgroup(task);

			bpf_map_update_elem(&cgroup_of, &tgid, &cg, BPF_ANY);
		}
	}
	cp->tgid_1 = tgid + 1;
	cp->gen = gen;
	cp->tabs = CPU_TABS_UNKNOWN;
	cp->since = note_sampled(tgid, bpf_map_lookup_elem(&incarns, &tgid));
	*since = cp->since & ~INCARN_FLAGS;
	/* (Read again when the copy was of an element being reused for another process;
	 * twice so, none this time: the next sample reads it again.) */
	for (int i = 0; i < 2; i++) {
		pr = bpf_map_lookup_elem(&procs, &tgid);
		cp->has_ranges = pr != NULL;
		if (!pr)
			return NULL;
		__builtin_memcpy(&cp->pr, pr, sizeof(cp->pr));
		if (cp->pr.tgid == tgid && cp->pr.tgid_end == tgid) {
			/* Of the program the process runs now, not of one before its exec. */
			ex = bpf_map_lookup_elem(&execs, &tgid);
			if (cp->pr.exec_seq == (ex ? ex->seq : 0))
				return &cp->pr;
			/* (Until the next write of either: procs_gen.) */
			stat_inc(STAT_PROC_STALE);
			cp->has_ranges = 0;
			return NULL;
		}
		stat_inc(STAT_PROC_TORN);
	}
	cp->tgid_1 = 0;
	cp->has_ranges = 0;
	return NULL;
}

/* The kernel stack of TASK (current) as it runs now, in `ktasks`: its id (KSTACK_TASK),
 * KSTACK_LOST (a collision, no scratch), or -1 (none). */
static __always_inline __s32 task_kstack(struct task_struct *task)
{
	__u32 zero = 0, id;
	struct ktask_stack *r = bpf_map_lookup_elem(&kscratch, &zero), *old;
	__u64 h = 0xcbf29ce484222325ULL;
	long len;

	if (!r)
		return KSTACK_LOST;
	len = bpf_get_task_stack(task, r->ips, sizeof(r->ips), 0);
	if (len <= 0)
		return -1;
	r->nr = (__u32)(len / 8);
	for (int i = 0; i < PROFILE_TASK_KDEPTH; i++) {
		if (i >= r->nr)
			break;
		h = hash_mix(h, r->ips[i], i);
	}
	id = (__u32)(h >> 36) & (KSTACK_TASK - 1);
	r->check = (__u32)h;
	old = bpf_map_lookup_elem(&ktasks, &id);
	if (old)
		return old->check == r->check ? (__s32)(KSTACK_TASK | id) : KSTACK_LOST;
	if (bpf_map_update_elem(&ktasks, &id, r, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&ktasks, &id))
		return KSTACK_LOST;
	return (__s32)(KSTACK_TASK | id);
}

#endif

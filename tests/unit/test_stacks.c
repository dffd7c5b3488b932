// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/stacks: the stack stage driven with recorded samples and a fake collector, without
 * BPF or root: samples of this very process (registers and a copy of the top of its stack,
 * as BPF takes them), and mappings of earlier programs under a pid. What the fake collector
 * was asked is checked with what the stage made.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/limits.h"
#include "collect/parking.h"
#include "collect/stacks.h"
#include "collect/ucounts.h"
#include "dso/dsos.h"
#include "proc/procmaps.h"
#include "unwind/utab.h"
#include "self.h"
#include "suites.h"

static struct procmaps *pm;
static struct dsos *dsos;
static struct unwinder *unw;

/* The fake collector: what it was asked, and what it answers. */
struct fake {
	int prepared, records_read, learnt;
	bool records_come;		/* more_records says some came */
	uint64_t bottom;		/* the one address where a stack begins (0: none) */
	uint64_t trusted;		/* the one address in code with frame records (0: none) */
	int bottoms_asked;
	bool ran;			/* still says the task ran since its sample */
	int still_asked;
	uint64_t deep[UNWIND_DEEP_WORDS];	/* what deep_words was told last */
	int nr_deep, deep_told;
	size_t used;
	enum unwind_stop stop;
};

static void fake_prepare(void *ctx, pid_t pid)
{
	struct fake *f = ctx;

	(void)pid;
	f->prepared++;
}

static bool fake_more_records(void *ctx)
{
	struct fake *f = ctx;

	f->records_read++;
	return f->records_come;
}

static enum stack_place fake_place(void *ctx, pid_t pid, uint64_t addr)
{
	struct fake *f = ctx;

	(void)pid;
	f->bottoms_asked++;
	if (f->bottom && addr == f->bottom)
		return STACK_PLACE_BOTTOM;
	return f->trusted && addr == f->trusted ? STACK_PLACE_TRUSTED : STACK_PLACE_OTHER;
}

static void fake_learn_copy(void *ctx, pid_t pid, size_t used, enum unwind_stop stop)
{
	struct fake *f = ctx;

	(void)pid;
	f->learnt++;
	f->used = used;
	f->stop = stop;
}

static bool fake_still(void *ctx, const struct sample *smp)
{
	struct fake *f = ctx;

	(void)smp;
	f->still_asked++;
	return !f->ran;
}

static void fake_deep_words(void *ctx, const struct sample *smp, const uint64_t *addrs, int n)
{
	struct fake *f = ctx;

	(void)smp;
	f->deep_told++;
	f->nr_deep = n;
	memcpy(f->deep, addrs, (size_t)n * sizeof(*addrs));
}

static struct stack_env env_of(struct fake *f)
{
	return (struct stack_env){ f, fake_prepare, fake_more_records, fake_place,
				   fake_learn_copy, fake_still, fake_deep_words };
}

static int setup(void)
{
	return self_unwinder_open(&pm, &dsos, &unw);
}

static int teardown(void)
{
	self_unwinder_close(pm, dsos, unw);
	return 0;
}

/* A sample of this process as BPF records it: this frame's registers and COPY bytes of the
 * stack from sp. */
struct recorded {
	struct sample smp;
	unsigned char stack[8192];
	uint64_t ret0;		/* the return address of record(), from the compiler */
};

__attribute__((noinline)) static void record(size_t copy, struct recorded *r)
{
	uint64_t ip, sp, bp;

	__asm__ volatile("lea (%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	self_copy_stack(r->stack, (void *)sp, copy);
	r->smp = (struct sample){ .pid = getpid(), .tid = getpid(), .weight = 1, .ip = ip,
				  .sp = sp, .bp = bp, .stack = r->stack,
				  .stack_len = (uint32_t)copy };
	r->ret0 = (uint64_t)__builtin_return_address(0);
}

__attribute__((noinline)) static void record_in_middle(size_t copy, struct recorded *r)
{
	record(copy, r);
	__asm__ volatile("" ::: "memory");
}

/* DWARF from a recorded sample: record's caller is the compiler's return address, the stack
 * whole; the collector prepared the process and learnt how much of the copy the unwind
 * read. No mapping records were read: the leaf's mapping was known. */
static void test_dwarf_from_a_recorded_sample(void)
{
	static struct recorded r;
	struct fake f = { 0 };
	struct stack_env env = env_of(&f);
	uint64_t ips[128];
	struct user_stack us = { .ips = ips };

	record_in_middle(4096, &r);
	CU_ASSERT_EQUAL_FATAL(stacks__unwind(&env, unw, pm, &r.smp, true, &us, 128), 0);
	CU_ASSERT(us.n >= 5);
	CU_ASSERT_EQUAL(ips[1], r.ret0);
	CU_ASSERT_EQUAL(us.stop, UNWIND_STOP_END);
	CU_ASSERT(!us.walked && !us.no_stack);
	CU_ASSERT_EQUAL(f.prepared, 1);
	CU_ASSERT_EQUAL(f.records_read, 0);
	CU_ASSERT_EQUAL(f.learnt, 1);
	CU_ASSERT(f.used > 0 && f.used == us.used && f.stop == UNWIND_STOP_END);
}

/*
 * A stack deeper than its copy (256 bytes: the recording's own frames): the words past it are
 * read from the live process (this one, whose callers are still the same) only for a sample
 * whose task may not have run since, and kept only if the collector says it has not (asked
 * after the reads); else the stack is cut where the copy ends, UNWIND_STOP_COPY, its first
 * frames still there.
 */
static void test_past_the_copy(void)
{
	static struct recorded r;
	struct fake f = { 0 };
	struct stack_env env = env_of(&f);
	uint64_t ips[128];
	struct user_stack us = { .ips = ips };

	record_in_middle(256, &r);
	/* Still off the CPU: read live, whole. */
	CU_ASSERT_EQUAL_FATAL(stacks__unwind(&env, unw, pm, &r.smp, true, &us, 128), 0);
	CU_ASSERT_EQUAL(us.stop, UNWIND_STOP_END);
	CU_ASSERT(us.n >= 5 && ips[1] == r.ret0);
	CU_ASSERT_EQUAL(f.still_asked, 1);
	CU_ASSERT(us.used > 256);
	/* It ran since: cut at the copy's end, learnt as such (the whole copy next time). */
	f.ran = true;
	CU_ASSERT_EQUAL_FATAL(stacks__unwind(&env, unw, pm, &r.smp, true, &us, 128), 0);
	CU_ASSERT_EQUAL(us.stop, UNWIND_STOP_COPY);
	CU_ASSERT(us.n >= 2 && us.n < 5 && ips[1] == r.ret0);
	CU_ASSERT_EQUAL(f.still_asked, 2);
	CU_ASSERT(f.stop == UNWIND_STOP_COPY && us.used <= 256);
	/* Taken on the CPU (copy_only): never read live, nobody asked. */
	r.smp.copy_only = true;
	f.ran = false;
	CU_ASSERT_EQUAL_FATAL(stacks__unwind(&env, unw, pm, &r.smp, true, &us, 128), 0);
	CU_ASSERT_EQUAL(us.stop, UNWIND_STOP_COPY);
	CU_ASSERT(us.n >= 2 && us.n < 5 && ips[1] == r.ret0);
	CU_ASSERT_EQUAL(f.still_asked, 2);
}

/*
 * Deep words: a sample taken on the CPU, deeper than its copy (256 bytes), is cut where the
 * copy ends and asks for the words it needed there; given them as BPF reads them with the
 * thread's next sample (here: this process's own words, its callers unchanged), each unwind
 * goes on further and asks for the next, until the stack is whole, with the frames the whole
 * copy gives; the words it took stay asked for.
 */
static void test_deep_words(void)
{
	static struct recorded r, full;
	static uint64_t addr[UNWIND_DEEP_WORDS], val[UNWIND_DEEP_WORDS], ips[128], want[128];
	struct fake f = { 0 };
	struct stack_env env = env_of(&f);
	struct user_stack us = { .ips = ips }, whole = { .ips = want };
	int rounds = 0;

	record_in_middle(256, &r);
	r.smp.copy_only = true;
	/* The whole stack, from the same frames (one call deeper, the same sp): read live past
	 * the copy (a task the collector says is still as it was), as far as it goes (ASan's
	 * frames are larger than any copy). */
	record_in_middle(4096, &full);
	full.smp.copy_only = false;
	CU_ASSERT_EQUAL_FATAL(stacks__unwind(&env, unw, pm, &full.smp, true, &whole, 128), 0);
	CU_ASSERT_EQUAL_FATAL(whole.stop, UNWIND_STOP_END);
	f.deep_told = 0;
	do {
		CU_ASSERT_EQUAL_FATAL(stacks__unwind(&env, unw, pm, &r.smp, true, &us, 128), 0);
		if (us.stop != UNWIND_STOP_COPY)
			break;
		/* It asked for words past the copy: read, as BPF would at the next sample. */
		CU_ASSERT_FATAL(f.nr_deep > (int)r.smp.nr_deep || f.deep_told > rounds);
		for (int i = 0; i < f.nr_deep; i++) {
			addr[i] = f.deep[i];
			CU_ASSERT_FATAL(addr[i] >= r.smp.sp + 256);
			memcpy(&val[i], (const void *)(uintptr_t)addr[i], sizeof(val[i]));
		}
		r.smp.deep_addr = addr;
		r.smp.deep_val = val;
		r.smp.nr_deep = (uint32_t)f.nr_deep;
		r.smp.deep_ok = (1u << f.nr_deep) - 1;
	} while (++rounds < UNWIND_DEEP_WORDS);
	CU_ASSERT_EQUAL(us.stop, UNWIND_STOP_END);
	CU_ASSERT(rounds >= 1);
	CU_ASSERT_EQUAL(us.n, whole.n);
	/* (The two recordings return to two places here: frame 2 differs.) */
	CU_ASSERT_EQUAL(ips[1], want[1]);
	CU_ASSERT(us.n == whole.n && us.n > 3 &&
		  !memcmp(ips + 3, want + 3, (size_t)(us.n - 3) * sizeof(*ips)));
	/* Unreadable at the sample: as if not read. */
	r.smp.deep_ok = 0;
	CU_ASSERT_EQUAL_FATAL(stacks__unwind(&env, unw, pm, &r.smp, true, &us, 128), 0);
	CU_ASSERT_EQUAL(us.stop, UNWIND_STOP_COPY);
}

/* Where the collector's spans say a thread's stack begins, the stack ends there, whole. */
static void test_ends_at_a_stack_bottom(void)
{
	static struct recorded r;
	struct fake f = { 0 };
	struct stack_env env = env_of(&f);
	uint64_t ips[128];
	struct user_stack us = { .ips = ips };

	record_in_middle(4096, &r);
	f.bottom = r.ret0 - 1;
	CU_ASSERT_EQUAL_FATAL(stacks__unwind(&env, unw, pm, &r.smp, true, &us, 128), 0);
	CU_ASSERT_EQUAL(us.n, 2);
	CU_ASSERT_EQUAL(ips[1], r.ret0);
	CU_ASSERT_EQUAL(us.stop, UNWIND_STOP_END);
}

/* A leaf in no mapping the process has: the mapping records that wait are read first, and
 * again after an unwind that found no unwind info (once more when some came); with no unwind
 * info at all, the frame-pointer walk's frames are the stack (still not whole). */
static void test_walk_frames_where_no_unwind_info(void)
{
	static const uint64_t walk[] = { 0x10, 0x2000, 0x3000 };
	uint64_t words[STACK_SP_WORDS] = { 0 }, ips[16];
	struct fake f = { .records_come = true };
	struct stack_env env = env_of(&f);
	struct user_stack us = { .ips = ips };
	struct sample smp = {
		.pid = getpid(), .ip = 0x10, .sp = 0x1000, .stack = words,
		.stack_len = sizeof(words), .walk = walk, .nr_walk = 3,
	};

	CU_ASSERT_EQUAL_FATAL(stacks__unwind(&env, unw, pm, &smp, true, &us, 16), 0);
	CU_ASSERT_EQUAL(f.records_read, 2);
	CU_ASSERT(us.walked);
	CU_ASSERT_EQUAL(us.n, 3);
	CU_ASSERT(!memcmp(ips, walk, sizeof(walk)));
	CU_ASSERT_NOT_EQUAL(us.stop, UNWIND_STOP_END);
	/* Only one frame walked: the unwind's own leaf is kept. */
	smp.nr_walk = 1;
	f = (struct fake){ 0 };
	CU_ASSERT_EQUAL_FATAL(stacks__unwind(&env, unw, pm, &smp, true, &us, 16), 0);
	CU_ASSERT(!us.walked && us.n == 1 && ips[0] == 0x10);
	CU_ASSERT_EQUAL(f.records_read, 2);	/* no record came: not unwound again */
}

/* Nothing readable at sp (a process between programs in an execve): said so, and nothing is
 * learnt of the copy size. */
static void test_no_stack_at_sp(void)
{
	uint64_t ips[16];
	struct fake f = { 0 };
	struct stack_env env = env_of(&f);
	struct user_stack us = { .ips = ips };
	struct sample smp = {
		.pid = getpid(), .ip = (uint64_t)(uintptr_t)&record, .sp = 0x1000, .holes = 1,
	};

	CU_ASSERT_EQUAL_FATAL(stacks__unwind(&env, unw, pm, &smp, true, &us, 16), 0);
	CU_ASSERT_EQUAL(us.n, 1);
	CU_ASSERT(us.no_stack);
	CU_ASSERT_EQUAL(us.used, 0);
	CU_ASSERT_EQUAL(f.learnt, 0);
}

/* A sample of the program a pid ran before its exec (its gen older than the exec): unwound
 * with that program's mappings, kept apart (here: this process's, and the new program maps
 * nothing), and the current program's stack bottoms are not asked about. A sample of the
 * new program, in none of its mappings, is the leaf alone. */
static void test_exec_between_samples(void)
{
	static struct recorded r;
	struct fake f = { 0 };
	struct stack_env env = env_of(&f);
	uint64_t ips[128];
	struct user_stack us = { .ips = ips };
	struct procmaps *two = procmaps__new();
	struct unwinder *u2;

	CU_ASSERT_FATAL(two && !procmaps__load(two, getpid()));
	u2 = unwinder__new(two, dsos);
	CU_ASSERT_FATAL(u2 != NULL);
	CU_ASSERT_EQUAL(procmaps__exec(two, getpid(), 1000, "next"), 0);
	record_in_middle(4096, &r);
	r.smp.gen = 500;	/* taken before the exec at 1000 */
	CU_ASSERT_EQUAL_FATAL(stacks__unwind(&env, u2, two, &r.smp, true, &us, 128), 0);
	CU_ASSERT(us.n >= 5 && ips[1] == r.ret0 && us.stop == UNWIND_STOP_END);
	CU_ASSERT_EQUAL(f.bottoms_asked, 0);
	r.smp.gen = 1500;	/* after it: the new program's mappings, which hold nothing */
	CU_ASSERT_EQUAL_FATAL(stacks__unwind(&env, u2, two, &r.smp, true, &us, 128), 0);
	CU_ASSERT_EQUAL(us.n, 1);
	CU_ASSERT_NOT_EQUAL(us.stop, UNWIND_STOP_END);
	unwinder__free(u2);
	procmaps__free(two);
}

/*
 * The caller of a leaf that keeps no frame: at record()'s first instruction its CFI finds
 * the return address at sp, in the words BPF kept there. Put after the leaf; the walk's
 * callers stay only where that caller keeps frame records; where the thread began the stack
 * is whole, else truncated. Already there: the walk as it was. No words (a caller skipped
 * and not found): only the leaf, truncated, never the walk's frames shown whole without it.
 */
static void test_leaf_caller(void)
{
	static struct recorded r;
	struct fake f = { 0 };
	struct stack_env env = env_of(&f);
	uint64_t leaf = (uint64_t)(uintptr_t)&record, words[STACK_SP_WORDS] = { 0 }, ips[8];
	bool truncated = false;

	record_in_middle(64, &r);
	words[0] = r.ret0;
	/* Code that keeps frame records: the walk's frames go on past it. */
	f.trusted = r.ret0 - 1;
	ips[0] = leaf, ips[1] = 0x1111, ips[2] = 0x2222;
	CU_ASSERT_EQUAL(stacks__leaf_caller(&env, unw, getpid(), getpid(), words, ips, 3,
					    &truncated), 4);
	CU_ASSERT(ips[0] == leaf && ips[1] == r.ret0 && ips[2] == 0x1111 && ips[3] == 0x2222);
	CU_ASSERT_FALSE(truncated);
	/* Code that does not: cut after it, truncated. */
	f.trusted = 0;
	ips[0] = leaf, ips[1] = 0x1111, ips[2] = 0x2222;
	CU_ASSERT_EQUAL(stacks__leaf_caller(&env, unw, getpid(), getpid(), words, ips, 3,
					    &truncated), 2);
	CU_ASSERT(ips[0] == leaf && ips[1] == r.ret0);
	CU_ASSERT_TRUE(truncated);
	/* Where the thread began: whole. */
	f.bottom = r.ret0 - 1;
	ips[0] = leaf, ips[1] = 0x1111;
	CU_ASSERT_EQUAL(stacks__leaf_caller(&env, unw, getpid(), getpid(), words, ips, 2,
					    &truncated), 2);
	CU_ASSERT_FALSE(truncated);
	/* The walk has it already: nothing changes. */
	truncated = true;
	ips[0] = leaf, ips[1] = r.ret0, ips[2] = 0x1111;
	CU_ASSERT_EQUAL(stacks__leaf_caller(&env, unw, getpid(), getpid(), words, ips, 3,
					    &truncated), 3);
	/* No words were kept (the caller skipped is not known): the leaf alone, truncated,
	 * even where the walk reached the thread's beginning. */
	words[0] = 0;
	ips[1] = 0x1111;
	truncated = false;
	CU_ASSERT_EQUAL(stacks__leaf_caller(&env, unw, getpid(), getpid(), words, ips, 2,
					    &truncated), 1);
	CU_ASSERT(ips[0] == leaf && truncated);
	/* Not the leaf's return address by its CFI (past record()'s prologue the return
	 * address is deeper than these words): nothing added. Built without frame pointers,
	 * record() keeps no record there, the caller the walk skipped is not known: the leaf
	 * alone, truncated; with them (the sanitizers' build), it keeps one: the walk stays. */
	words[0] = r.ret0;
	ips[0] = r.smp.ip;
	truncated = false;
	if (unwinder__leaf_frameless(unw, getpid(), r.smp.ip) == 1) {
		CU_ASSERT_EQUAL(stacks__leaf_caller(&env, unw, getpid(), getpid(), words, ips, 2,
						    &truncated), 1);
		CU_ASSERT_TRUE(truncated);
	} else {
		CU_ASSERT_EQUAL(stacks__leaf_caller(&env, unw, getpid(), getpid(), words, ips, 2,
						    &truncated), 2);
		CU_ASSERT_EQUAL(ips[1], 0x1111);
	}
}

/* A table source whose tables are still being made until READY: then built from the dsos. */
struct late_tables {
	bool ready;
	int asked;
	uint32_t ids[64];
	struct utab *t[64];
	int n;
};

static const struct utab *late_table(void *ctx, pid_t pid, const struct map *m, bool *later)
{
	struct late_tables *l = ctx;
	struct dso *d;
	uint32_t id;

	l->asked++;
	*later = !l->ready;
	if (!l->ready)
		return NULL;
	d = dsos__get(dsos, pid, m, &id);
	if (!d)
		return NULL;
	for (int i = 0; i < l->n; i++)
		if (l->ids[i] == id)
			return l->t[i];
	if (l->n == 64)
		return NULL;
	l->ids[l->n] = id;
	l->t[l->n] = utab__build(d, NULL, 0);
	return l->t[l->n++];
}

/*
 * A table that arrives late: while the leaf's file's table is still being made, a sample
 * that may wait is given back to wait (1, nothing said of it, nothing learnt); one that may
 * not is cut there, not whole. Once the table came, the same sample unwinds whole.
 */
static void test_table_arrives_late(void)
{
	static struct recorded r;
	struct late_tables l = { 0 };
	struct fake f = { 0 };
	struct stack_env env = env_of(&f);
	uint64_t ips[128];
	struct user_stack us = { .ips = ips };
	struct unwinder *u2 = unwinder__new(pm, dsos);

	CU_ASSERT_FATAL(u2 != NULL);
	unwinder__set_table_source(u2, late_table, &l);
	record_in_middle(4096, &r);
	CU_ASSERT_EQUAL(stacks__unwind(&env, u2, pm, &r.smp, true, &us, 128), 1);
	CU_ASSERT(l.asked > 0);
	CU_ASSERT_EQUAL(f.learnt, 0);
	CU_ASSERT_EQUAL_FATAL(stacks__unwind(&env, u2, pm, &r.smp, false, &us, 128), 0);
	CU_ASSERT_NOT_EQUAL(us.stop, UNWIND_STOP_END);
	CU_ASSERT(us.n <= 1);
	l.ready = true;
	CU_ASSERT_EQUAL_FATAL(stacks__unwind(&env, u2, pm, &r.smp, true, &us, 128), 0);
	CU_ASSERT(us.n >= 5 && ips[1] == r.ret0);
	CU_ASSERT_EQUAL(us.stop, UNWIND_STOP_END);
	unwinder__free(u2);
	for (int i = 0; i < l.n; i++)
		utab__free(l.t[i]);
}

static int raw_freed;

static void count_raw_free(void *raw)
{
	raw_freed++;
	free(raw);
}

/*
 * Off-CPU park and weight: the stacks a task left the CPU with (a recorded sample of seq 5,
 * no weight yet) wait parked until its weights come; each counts on those stacks with its
 * own kernel stack, a later wait at the same place too. An older wait's stacks do not
 * replace them; a weight of a wait whose stacks are gone matches nothing. A raw entry
 * (waiting for a table) gathers its time until it can be unwound; freed with the parking.
 */
static void test_off_cpu_park_and_weight(void)
{
	static struct recorded r;
	struct fake f = { 0 };
	struct stack_env env = env_of(&f);
	uint64_t ips[128];
	struct user_stack us = { .ips = ips };
	struct parking pk = { .free_raw = count_raw_free };
	struct ucounts *uc = ucounts__new();
	struct stack_key key = { .pid = getpid(), .kstack_id = -1, .off_cpu = true }, k7;
	const struct ucount *e;
	struct parked *p;
	struct ucount *counted;
	uint64_t used = limits__used();
	size_t pos = 0;
	int n = 0;

	CU_ASSERT_FATAL(uc != NULL);
	record_in_middle(4096, &r);
	r.smp.off_seq = 5;
	r.smp.weight = 0;
	CU_ASSERT_EQUAL_FATAL(stacks__unwind(&env, unw, pm, &r.smp, true, &us, 128), 0);
	CU_ASSERT_FATAL(us.n >= 5 && us.stop == UNWIND_STOP_END);
	CU_ASSERT_EQUAL(parking__park(&pk, r.smp.tid, 5, r.smp.pid, &key, ips, (uint32_t)us.n,
				      us.used, us.stop), 0);
	/* Its wait: 2 ms with kernel stack 7; later ones at the same place, 3 ms with 8 and
	 * 0.5 ms with 7. */
	CU_ASSERT_EQUAL(parking__weigh(&pk, uc, &counted, r.smp.tid, 5, 7, 2000000, &p), PARK_COUNTED);
	CU_ASSERT(p != NULL && p->used == us.used);
	CU_ASSERT_EQUAL(parking__weigh(&pk, uc, &counted, r.smp.tid, 5, 8, 3000000, &p), PARK_COUNTED);
	CU_ASSERT_EQUAL(parking__weigh(&pk, uc, &counted, r.smp.tid, 5, 7, 500000, &p), PARK_COUNTED);
	k7 = key;
	k7.kstack_id = 7;
	while ((e = ucounts__next(uc, &pos))) {
		n++;
		CU_ASSERT(e->nr == (uint32_t)us.n && !memcmp(e->ips, ips, e->nr * sizeof(*ips)));
		CU_ASSERT(e->key.off_cpu && e->key.pid == getpid());
		CU_ASSERT_EQUAL(e->count, stack_key__same(&e->key, &k7) ? 2500000 : 3000000);
		CU_ASSERT(e->key.kstack_id == 7 || e->key.kstack_id == 8);
	}
	CU_ASSERT_EQUAL(n, 2);
	/* An older wait's stacks come late: kept out; its weight matches nothing. */
	CU_ASSERT_EQUAL(parking__park(&pk, r.smp.tid, 4, r.smp.pid, &key, ips, 1, 0,
				      UNWIND_STOP_END), 0);
	CU_ASSERT_EQUAL(parking__find(&pk, r.smp.tid)->seq, 5);
	CU_ASSERT_EQUAL(parking__weigh(&pk, uc, &counted, r.smp.tid, 4, 7, 1000, &p), PARK_UNMATCHED);
	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_EQUAL(parking__weigh(&pk, uc, &counted, r.smp.tid + 1, 5, 7, 1000, &p), PARK_UNMATCHED);
	/* A raw entry of the next wait replaces them and gathers its time. */
	p = parked__new(r.smp.tid, 6, 0);
	CU_ASSERT_FATAL(p != NULL);
	p->raw = malloc(16);
	CU_ASSERT_EQUAL(parking__put(&pk, p), 0);
	CU_ASSERT_EQUAL(parking__weigh(&pk, uc, &counted, r.smp.tid, 5, 7, 1000, &p), PARK_UNMATCHED);
	CU_ASSERT_EQUAL(parking__weigh(&pk, uc, &counted, r.smp.tid, 6, 9, 1000, &p), PARK_RAW);
	CU_ASSERT_EQUAL(parking__weigh(&pk, uc, &counted, r.smp.tid, 6, 10, 500, &p), PARK_RAW);
	CU_ASSERT(p && p->pending_ns == 1500 && p->pending_kstack == 10);
	n = 0;
	for (pos = 0; ucounts__next(uc, &pos);)
		n++;
	CU_ASSERT_EQUAL(n, 2);
	raw_freed = 0;
	parking__clear(&pk);
	CU_ASSERT_EQUAL(raw_freed, 1);
	CU_ASSERT_PTR_NULL(parking__find(&pk, r.smp.tid));
	ucounts__free(uc);
	CU_ASSERT_EQUAL(limits__used(), used);
}

int register_stacks_suite(void)
{
	CU_pSuite s = CU_add_suite("stacks", setup, teardown);

	if (!s || !CU_add_test(s, "DWARF from a recorded sample", test_dwarf_from_a_recorded_sample) ||
	    !CU_add_test(s, "ends at a stack bottom", test_ends_at_a_stack_bottom) ||
	    !CU_add_test(s, "past the copy", test_past_the_copy) ||
	    !CU_add_test(s, "deep words", test_deep_words) ||
	    !CU_add_test(s, "the walk's frames where no unwind info",
			 test_walk_frames_where_no_unwind_info) ||
	    !CU_add_test(s, "no stack at sp", test_no_stack_at_sp) ||
	    !CU_add_test(s, "exec between samples", test_exec_between_samples) ||
	    !CU_add_test(s, "a leaf's caller", test_leaf_caller) ||
	    !CU_add_test(s, "a table that arrives late", test_table_arrives_late) ||
	    !CU_add_test(s, "off-CPU park and weight", test_off_cpu_park_and_weight))
		return CU_get_error();
	return 0;
}

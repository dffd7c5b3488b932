// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/stacks: a decoded sample -> its user stack (see stacks.h). No BPF here: what it
 * needs of the collector comes through struct stack_env.
 */
#include <string.h>
#include "base/clock.h"
#include "base/htab.h"
#include "collect/fixup.h"
#include "collect/stacks.h"
#include "proc/procmaps.h"

uint64_t stack_key__hash(uint64_t seed, const struct stack_key *k)
{
	uint64_t h = hash_u64(seed, (uint64_t)(uint32_t)k->pid << 32 | (uint32_t)k->tid);

	h = hash_u64(h, k->gen);
	h = hash_u64(h, (uint64_t)(uint32_t)k->kstack_id << 32 | k->period);
	h = hash_u64(h, (uint64_t)k->event << 32 | (uint64_t)k->stop << 16 |
			(uint64_t)k->sent << 8 | k->off_cpu << 2 | k->truncated << 1 | k->no_stack);
	h = hash_u64(h, k->scan_pc);
	return hash_u64(h, k->walk_end);
}

bool stack_key__same(const struct stack_key *a, const struct stack_key *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->gen == b->gen &&
	       a->kstack_id == b->kstack_id && a->period == b->period && a->event == b->event &&
	       a->off_cpu == b->off_cpu && a->truncated == b->truncated &&
	       a->no_stack == b->no_stack && a->stop == b->stop && a->sent == b->sent &&
	       a->walk_end == b->walk_end && a->scan_pc == b->scan_pc;
}

/*
 * A thread's stack begins where the process's spans say so (CFI's outermost frames, the
 * start functions found in its files, named or not, as musl's): the unwind of the N frames
 * of IPS ends at the first return address there, whole, whatever it made of the words past
 * it. Returns the new number of frames; *STOP set to UNWIND_STOP_END then.
 */
static int end_at_bottom(const struct stack_env *env, pid_t pid, const uint64_t *ips, int n,
			 enum unwind_stop *stop)
{
	for (int i = 1; i < n; i++) {
		if (env->place(env->ctx, pid, ips[i] - 1) == STACK_PLACE_BOTTOM) {
			*stop = UNWIND_STOP_END;
			return i + 1;
		}
	}
	/* A coroutine's first frame: makecontext makes its function "return" into the first
	 * instruction of glibc's __start_context, no call before it: the unwind stopped
	 * there (the byte before is another function's), at a bottom all the same. */
	if (n > 1 && *stop != UNWIND_STOP_END &&
	    env->place(env->ctx, pid, ips[n - 1]) == STACK_PLACE_BOTTOM &&
	    env->place(env->ctx, pid, ips[n - 1] - 1) != STACK_PLACE_BOTTOM)
		*stop = UNWIND_STOP_END;
	return n;
}

int stacks__unwind(const struct stack_env *env, struct unwinder *unw, struct procmaps *pm,
		   const struct sample *smp, bool may_wait, struct user_stack *out, int max)
{
	struct unwind_sample us;
	uint64_t t0;
	pid_t as;
	int n;

	/* Mapping records of a process that just started may still wait in their buffer. */
	if (!procmaps__find(pm, smp->pid, smp->ip))
		env->more_records(env->ctx);
	env->prepare(env->ctx, smp->pid);
	/* The mappings of the program sampled: an earlier one of the pid when it exec'd since
	 * (a fork's child sampled before its exec: bash's code, not the new program's), kept
	 * apart under a pid of their own. */
	as = procmaps__incarnation(pm, smp->pid, smp->gen);
	us = (struct unwind_sample){
		.pid = as, .prefix = smp->prefix, .nr_prefix = smp->prefix ? smp->nr_prefix : 0,
		.bp_ok = smp->bp_ok, .ip = smp->ip, .sp = smp->sp, .bp = smp->bp,
		.regs = smp->regs,
		.stack = smp->stack, .stack_len = smp->stack_len, .holes = smp->holes,
		.below = smp->below, .copy_only = smp->copy_only,
		.deep_addr = smp->deep_addr, .deep_val = smp->deep_val, .nr_deep = smp->nr_deep,
		.deep_ok = smp->deep_ok,
	};
	t0 = clock_mono_ns();
	n = unwinder__unwind(unw, &us, out->ips, max, &out->stop);
	out->ns = clock_mono_ns() - t0;
	/* A return address into a library whose mapping record still waits in another CPU's
	 * buffer (the leaf's program was known): read the records, and unwind again if any
	 * came. */
	if ((out->stop == UNWIND_STOP_BAD_FRAME || out->stop == UNWIND_STOP_NO_INFO) &&
	    env->more_records(env->ctx)) {
		t0 = clock_mono_ns();
		n = unwinder__unwind(unw, &us, out->ips, max, &out->stop);
		out->ns += clock_mono_ns() - t0;
	}
	/* Words read from the live process past the copy are the sample's only if its task
	 * has not run since, asked after they were read: else the unwind is done again from
	 * the copy alone, cut where it needs more (UNWIND_STOP_COPY). */
	if (!us.copy_only && unwinder__read_live(unw) &&
	    !(env->still && env->still(env->ctx, smp))) {
		us.copy_only = true;
		t0 = clock_mono_ns();
		n = unwinder__unwind(unw, &us, out->ips, max, &out->stop);
		out->ns += clock_mono_ns() - t0;
	}
	/* The words past the copy it took or needed, then the others the task's samples read
	 * (a thread's stack at a few places in turn): read with its next samples. */
	if (env->deep_words && as == smp->pid) {
		uint64_t deep[UNWIND_DEEP_WORDS];
		int nd = unwinder__deep_words(unw, deep), had = nd;

		for (uint32_t i = 0; i < smp->nr_deep && nd < UNWIND_DEEP_WORDS; i++) {
			int j = 0;

			while (j < had && deep[j] != smp->deep_addr[i])
				j++;
			if (j == had)
				deep[nd++] = smp->deep_addr[i];
		}

		if (nd != (int)smp->nr_deep ||
		    (nd && memcmp(deep, smp->deep_addr, (size_t)nd * sizeof(*deep))))
			env->deep_words(env->ctx, smp, deep, nd);
	}
	/* (What the unwinder keeps of a program that is gone is rebuilt if it is needed.) */
	if (as != smp->pid)
		unwinder__forget(unw, as);
	/* Cut where a table is still being made: again when it came. */
	if (may_wait && unwinder__met_later(unw, NULL))
		return 1;
	/* (The spans are the current program's.) */
	if (as == smp->pid)
		n = end_at_bottom(env, smp->pid, out->ips, n, &out->stop);
	/* A stack not readable at sp (a process between programs in an execve) says nothing of
	 * the copy it needs. */
	out->used = (us.holes & 1) ? 0 : unwinder__stack_used(unw);
	/* (A copy from a frame past the leaf says nothing of what the leaf's copies need.) */
	if (!(us.holes & 1) && !us.nr_prefix)
		env->learn_copy(env->ctx, smp->pid, out->used, out->stop);
	/* No unwind info even at the leaf (code without CFI, JIT code): the frames the
	 * frame-pointer walk found are the better stack; still truncated unless they reach a
	 * stack bottom, which the model's builder checks by name. */
	out->scan_pc = unwinder__scanned(unw);
	out->walked = fixup__prefer_walk(n, out->stop, smp->nr_walk);
	if (out->walked) {
		out->scan_pc = 0;
		n = (int)smp->nr_walk < max ? (int)smp->nr_walk : max;
		memcpy(out->ips, smp->walk, (size_t)n * sizeof(*out->ips));
	}
	/* (Not readable at sp when it was copied, whatever is there now: no stack.) */
	out->no_stack = (us.holes & 1) && n == 1 &&
			(out->stop == UNWIND_STOP_NO_MEMORY || out->stop == UNWIND_STOP_COPY);
	out->n = n;
	return 0;
}

int stacks__leaf_caller(const struct stack_env *env, struct unwinder *unw, pid_t pid, pid_t as,
			const uint64_t words[STACK_SP_WORDS], uint64_t *ips, int nu,
			bool *truncated)
{
	struct unwind_sample us = {
		.pid = as, .ip = nu ? ips[0] : 0, .sp = 0x100000, .bp = 0,
		.stack = words, .stack_len = 2 * sizeof(*words),
	};
	uint64_t ret;
	bool skipped;
	int n;

	n = nu >= 1 ? unwinder__fp_window(unw, as, ips, nu, words, STACK_SP_WORDS) : nu;
	if (n < 0) {
		*truncated = true;
		return 1;
	}
	if (n != nu)
		return n;
	if (nu < 1)
		return nu;
	/* A leaf whose CFI says it keeps no frame record (its return address at sp; not Go's,
	 * whose CFI is sp-based where it keeps records, its windows fp_window's): the walk
	 * from rbp skipped its caller, which must be found in the words, or the stack is cut
	 * there, marked. (No CFI at the leaf: the walk is all there is.) */
	skipped = unwinder__leaf_frameless(unw, as, ips[0]) == 1 &&
		  env->place(env->ctx, pid, ips[0]) != STACK_PLACE_BOTTOM;
	/* A caller skipped and not found: the frames past the leaf leave one out, and a stack
	 * that reaches a bottom all the same would be shown whole: cut after the leaf, marked,
	 * as an unwind would have it. */
	if (!words[0] && !words[1]) {
		if (skipped)
			*truncated = true;
		return skipped ? 1 : nu;
	}
	/* Only the words matter: the CFI at ip says at which offset from sp the return address
	 * is; rbp-based rules read outside the copy and fail, as they should. */
	if (unwinder__leaf_return(unw, &us, &ret)) {
		if (skipped)
			*truncated = true;
		return skipped ? 1 : nu;
	}
	n = fixup__add_leaf_caller(ips, nu, ret);
	if (n == nu)
		return n;
	switch (env->place(env->ctx, pid, ret - 1)) {
	case STACK_PLACE_TRUSTED:
		return n;
	case STACK_PLACE_BOTTOM:
		*truncated = false;
		return 2;
	default:
		*truncated = true;
		return 2;
	}
}

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * stacks: the stage that turns a decoded sample into a user stack, with no BPF in it: the
 * mappings caught up, the DWARF unwind (again once waiting mapping records are read), the
 * frame-pointer walk's frames where there was no unwind info at all, the thread's stack
 * bottom, the copy size learnt. What it needs of the collector comes through struct
 * stack_env, so that unit tests drive it with recorded samples and a fake collector.
 */
#ifndef COLLECT_STACKS_H
#define COLLECT_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "unwind/unwind.h"

struct procmaps;

/* A sample sent for DWARF unwinding, as plain data (samples.c decodes BPF's records into
 * it: nothing past here reads a BPF type). */
struct sample {
	pid_t pid, tid;
	pid_t ktid;		/* the kernel's tid (the same unless in a PID namespace) */
	uint64_t gen;		/* when the program sampled began (0: before the profile) */
	uint64_t weight;	/* what it weighs; 0: an off-CPU stack whose time comes later */
	uint64_t off_seq;	/* not 0: the stacks of a task leaving the CPU */
	bool copy_only;		/* its task may have run since: nothing read live past the
				 * copy (else read, and kept only if env->still says so) */
	const uint64_t *walk;	/* the frame-pointer walk's return addresses, leaf first */
	uint32_t nr_walk;
	const uint64_t *prefix;	/* not NULL: the first NR_PREFIX frames, walked in BPF from the
				 * tables; ip, sp, bp and the copy are the next frame's (ip a
				 * return address, bp its rbp only when BP_OK; no regs, below) */
	uint32_t nr_prefix;
	bool bp_ok;
	uint64_t ip, sp, bp;
	const uint64_t *regs;	/* UNWIND_NR_REGS, DWARF's numbering */
	const void *stack;	/* STACK_LEN bytes copied from sp */
	uint32_t stack_len;
	uint64_t holes;		/* pages of the copy that were not there (bit 0: sp's) */
	const uint64_t *below;	/* the red zone under sp, or NULL */
	const uint64_t *deep_addr, *deep_val;	/* words past the copy read at the sample */
	uint32_t nr_deep, deep_ok;
};

/* Why BPF sent a stack to userspace rather than counting it (its enum profile_send). */
enum stack_sent {
	STACK_COUNTED = 0,	/* not sent: the frame-pointer walk's, counted in BPF */
	STACK_SENT_WALK_BROKEN,	/* the walk broke off */
	STACK_SENT_NOREC,	/* the walk met a function that keeps no frame record there */
	STACK_SENT_NO_PROC,	/* the process was not described to BPF yet */
	STACK_SENT_DWARF,	/* --unwind dwarf: every sample */
	STACK_SENT_TABLE_REST,	/* walked from the tables in BPF up to a frame it could not go
				 * past (no table there, the depth limit): the rest from a copy */
};

/*
 * What a stack is counted under past the BPF boundary (samples.c decodes BPF's count_key
 * into it): its process and program, thread, event, kernel stack, and what is known of how
 * its user stack was made.
 */
struct stack_key {
	pid_t pid;		/* the process (tgid) */
	pid_t tid;		/* the thread with per-thread output, else 0 */
	uint64_t gen;		/* which program under the pid (struct sample's gen) */
	int32_t kstack_id;	/* its kernel stack: an id in the maps of PERIOD, KSTACK_LOST,
				 * or -1 when none */
	uint32_t period;	/* continuous mode: the parity of those maps; 0 otherwise */
	unsigned int event;	/* the index of its -e event, in the order given */
	bool off_cpu;		/* counted in ns off the CPU, not samples */
	bool truncated;		/* the user stack did not end where the thread began */
	bool no_stack;		/* nothing was readable at sp */
	enum unwind_stop stop;	/* how its DWARF unwind stopped (UNWIND_STOP_END when none) */
	enum stack_sent sent;	/* why BPF sent it */
	uint64_t walk_end;	/* STACK_SENT_NOREC: the walk's last address, else 0 */
	uint64_t scan_pc;	/* struct user_stack's: a caller found by a stack scan */
};

/* A hash of KEY, and whether keys A and B are the same (field by field). */
uint64_t stack_key__hash(uint64_t seed, const struct stack_key *key);
bool stack_key__same(const struct stack_key *a, const struct stack_key *b);

/* What the collector knows of the code at an address, from the process's spans. */
enum stack_place {
	STACK_PLACE_OTHER = 0,	/* nothing that vouches for or ends a stack */
	STACK_PLACE_TRUSTED,	/* code that keeps frame records where it calls */
	STACK_PLACE_BOTTOM,	/* where a thread's stack begins */
};

/* What the stage asks of the collector (CTX is its). */
struct stack_env {
	void *ctx;
	/* PID's mappings known and the process described to the sampler, before its unwind. */
	void (*prepare)(void *ctx, pid_t pid);
	/* Read the mapping records that wait; whether any came (an unwind is then tried again). */
	bool (*more_records)(void *ctx);
	/* What ADDR (a return address less one) of PID is. */
	enum stack_place (*place)(void *ctx, pid_t pid, uint64_t addr);
	/* The unwind of PID read USED bytes of the stack, and stopped with STOP. */
	void (*learn_copy)(void *ctx, pid_t pid, size_t used, enum unwind_stop stop);
	/* Whether SMP's task (an off-CPU sample's) has stayed off the CPU since SMP was taken:
	 * its stack past the copy, read from the live process, is as it was then. NULL: never
	 * known, as if it had run. */
	bool (*still)(void *ctx, const struct sample *smp);
	/* The words past the copy SMP's task's next samples are to read: ADDRS (N of them;
	 * 0: none), as its unwind needed them. NULL: not asked. */
	void (*deep_words)(void *ctx, const struct sample *smp, const uint64_t *addrs, int n);
};

/* A user stack made of a sample. */
struct user_stack {
	uint64_t *ips;		/* the caller's room for MAX return addresses, leaf first */
	int n;
	enum unwind_stop stop;	/* UNWIND_STOP_END: whole */
	bool no_stack;		/* nothing was readable at sp (a process between programs) */
	bool walked;		/* the frame-pointer walk's frames (no unwind info at the leaf) */
	uint64_t scan_pc;	/* not 0: the frame at this pc, in code no CFI describes, had its
				 * caller found by a stack scan (unwinder__scanned) */
	size_t used;		/* bytes of the stack the unwind read; 0: nothing to learn from */
	uint64_t ns;		/* time spent unwinding */
};

/*
 * The user stack of sample SMP (unwound with UNW over the mappings of PM) into OUT, with
 * room for MAX frames. Returns 0; 1 when MAY_WAIT and the unwind met a file whose table is
 * still being made (OUT then says nothing: the sample is to be unwound again once it came);
 * or a negative errno.
 */
int stacks__unwind(const struct stack_env *env, struct unwinder *unw, struct procmaps *pm,
		   const struct sample *smp, bool may_wait, struct user_stack *out, int max);

/* Words at sp a counted walk keeps (BPF's PROFILE_SP_WORDS). */
#define STACK_SP_WORDS	8

/*
 * The caller of a leaf that keeps no frame, which a frame-pointer walk skips, put into the
 * walk's NU addresses IPS (room for NU + 1) of process PID (AS: the pid whose mappings are
 * the sampled program's, procmaps__incarnation): WORDS are the STACK_SP_WORDS words BPF kept
 * at sp (0 where not code; the first two only, unless the process has Go's windows) that
 * may be its return address, which the leaf's CFI (UNW's) picks or not. That caller
 * must keep a frame record where it called, or the walk from rbp skipped its callers too:
 * the stack then ends there, truncated (whole where the thread began). Where Go's
 * prologues and epilogues send the walk wrong it is put right, or only the leaf is left,
 * truncated; so it is when the caller skipped is not found in the words (the walk past the
 * leaf leaves a frame out, even where it reaches a bottom). Returns the new number of addresses; *TRUNCATED is set or cleared when that
 * changes what the stack is.
 */
int stacks__leaf_caller(const struct stack_env *env, struct unwinder *unw, pid_t pid, pid_t as,
			const uint64_t words[STACK_SP_WORDS], uint64_t *ips, int nu,
			bool *truncated);

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * fixup: the pure rules by which collect/ fixes up sampled stacks before they enter the
 * profile model. No BPF, no /proc, no symbolizer: unit tests call them directly. User
 * stacks here are arrays of addresses, leaf first.
 */
#ifndef COLLECT_FIXUP_H
#define COLLECT_FIXUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "unwind/unwind.h"
#include "profile/profile.h"
#include "unwind/utab.h"

/* Functions where a thread's stack begins (unwind/utab.h says which). */
#define fixup_stack_bottoms	utab_stack_bottoms
#define FIXUP_NR_STACK_BOTTOMS	UTAB_NR_STACK_BOTTOMS

/* Whether NAME (a frame name; NULL is fine) is one of fixup_stack_bottoms. */
bool fixup__is_stack_bottom(const char *name);

/*
 * Whether a user stack ends at its address I (0: the leaf), whose outermost function is NAME
 * (NULL when it has no name): a stack bottom past the leaf. The addresses after it (_start,
 * __libc_start_main, clone3) are dropped, so that DWARF- and frame-pointer-unwound stacks
 * share one root.
 */
bool fixup__ends_at(int i, const char *name);

/*
 * Whether a user stack is marked [truncated]: its walk or unwind did not end cleanly
 * (UNWIND_TRUNCATED) and OUTER, the outermost function of its last address kept (NULL: no
 * name, no user stack), is not a stack bottom, where walks that end cleanly stop.
 */
bool fixup__truncated(bool unwind_truncated, const char *outer);

/*
 * A frame-pointer walk starts at rbp and so skips the caller of a leaf that keeps no frame.
 * RET is that caller's return address when the leaf's CFI found one in the words at sp (0:
 * none): put it in IPS (N addresses, room for N + 1) after the leaf, unless the walk has it
 * there already. Returns the new number of addresses.
 */
int fixup__add_leaf_caller(uint64_t *ips, int n, uint64_t ret);

/*
 * Whether kernel function NAME (NULL is fine; ".isra.0"-like suffixes are ignored) runs an
 * execve. Past its point of no return the old program is gone and the new one has no stack
 * yet: a sample there whose user ip is in no mapping of the process has no user frames (the
 * ip is the old program's), and is whole.
 */
bool fixup__is_exec(const char *name);

/* Number of addresses of a kernel stack as `kstacks` holds it: MAX slots, leaf first, ended
 * by a 0 when shorter. */
int fixup__kernel_depth(const uint64_t *ips, int max);

/* Whether kernel function NAME is the sampling's own (perf's overflow path, the BPF program
 * and its stack helper): the first frames of a task's kernel stack taken while it is
 * sampled (KSTACK_TASK), cut before it is shown. */
bool fixup__is_sampling_frame(const char *name);

/*
 * Whether a DWARF unwind that found N frames and stopped as STOP should give way to the
 * NR_WALK frames the frame-pointer walk found: it had no unwind info even at the leaf (code
 * without CFI in no file: JIT code). A leaf whose unwind info led to a bad frame (a return
 * address of 0, CFI that does not follow its code) does not: the walk from rbp skips a
 * frameless leaf's caller, and would be shown whole.
 */
bool fixup__prefer_walk(int n, enum unwind_stop stop, uint32_t nr_walk);

#endif

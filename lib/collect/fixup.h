/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * fixup: the pure rules by which collect/ fixes up sampled stacks before they enter the
 * profile model. No BPF, no /proc, no symbolizer: unit tests call them directly.
 */
#ifndef COLLECT_FIXUP_H
#define COLLECT_FIXUP_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Functions of the C library where a thread's stack begins: __libc_start_call_main for the
 * main thread, start_thread for the others. glibc leaves a non-zero rbp in them (it uses rbp
 * as a general register), so a frame-pointer walk never ends at rbp == 0 on Debian: a walk
 * whose outermost frame is one of them reached the bottom all the same. BPF gets their
 * runtime ranges per process; userspace trims frames outside them.
 */
extern const char *const fixup_stack_bottoms[];
#define FIXUP_NR_STACK_BOTTOMS 2

/* Whether NAME (a frame name; NULL is fine) is one of fixup_stack_bottoms. */
bool fixup__is_stack_bottom(const char *name);

#endif

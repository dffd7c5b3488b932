/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shared by bench/fixedwork.c and bench/fixedwork_lib.c. */
#ifndef FIXEDWORK_H
#define FIXEDWORK_H
#include <stdint.h>

/* noclone too on GCC, so its IPA passes do not rename the functions (.constprop, .isra). */
#if defined(__clang__)
#define FW_NOINLINE __attribute__((noinline))
#else
#define FW_NOINLINE __attribute__((noinline, noclone))
#endif

/* Iterations of the innermost loops per work unit, half in the executable, half in the
 * shared library. */
#define FW_ITERS 20000

uint64_t fw_lib_stage(uint64_t x, int n);
#endif

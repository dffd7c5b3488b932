/* SPDX-License-Identifier: GPL-3.0-or-later */
/* clock: monotonic time, read through the vDSO without a system call (the thread's CPU
 * clock needs one, which cost more than a fast unwind). */
#ifndef BASE_CLOCK_H
#define BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds of CLOCK_MONOTONIC. */
static inline uint64_t clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Seconds of CLOCK_MONOTONIC. */
static inline double clock_mono_seconds(void)
{
	return clock_mono_ns() / 1e9;
}

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grow: arrays that double as they fill. */
#ifndef BASE_GROW_H
#define BASE_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* array_grow's work: *ARR, of CAP elements of SIZE bytes, made to hold index N, its new
 * capacity (at most MAX) into *GOT. Returns 0 or -ENOMEM (the array as it was). */
static inline int array_grow_to(void **arr, size_t cap, size_t size, size_t n, size_t max,
				size_t *got)
{
	size_t want = cap ? cap : 16;
	void *a;

	*got = cap;
	if (n < cap)
		return 0;
	while (want <= n) {
		if (want > max / 2)
			return -ENOMEM;
		want *= 2;
	}
	if (want > max || want > SIZE_MAX / size)
		return -ENOMEM;
	a = realloc(*arr, want * size);
	if (!a)
		return -ENOMEM;
	memset((char *)a + cap * size, 0, (want - cap) * size);
	*arr = a;
	*got = want;
	return 0;
}

/*
 * Make the array *P (P: a pointer to the pointer) of *CAP elements of SIZE bytes hold index
 * N: doubled (16 at first) until it does, the new elements zeroed. *CAP is any unsigned
 * integer, the capacity never past what it holds. Returns 0 or -ENOMEM (the array as it
 * was).
 */
#define array_grow(p, cap, size, n)                                                         \
	__extension__({                                                                     \
		size_t got_;                                                                \
		int err_ = array_grow_to((void **)(p), *(cap), (size), (n),                 \
					 (size_t)(__typeof__(*(cap)))-1, &got_);            \
		*(cap) = (__typeof__(*(cap)))got_;                                          \
		err_;                                                                       \
	})

#endif

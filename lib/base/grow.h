/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grow: arrays that double as they fill. */
#ifndef BASE_GROW_H
#define BASE_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Make the array *P (a pointer to the pointer) of *CAP elements of SIZE bytes hold index N:
 * doubled (16 at first) until it does, the new elements zeroed. Returns 0 or -ENOMEM (the
 * array as it was).
 */
static inline int array_grow(void *p, uint32_t *cap, size_t size, size_t n)
{
	void **arr = p;
	size_t want = *cap ? *cap : 16;
	void *a;

	if (n < *cap)
		return 0;
	while (want <= n)
		want *= 2;
	if (want > UINT32_MAX)
		return -ENOMEM;
	a = realloc(*arr, want * size);
	if (!a)
		return -ENOMEM;
	memset((char *)a + *cap * size, 0, (want - *cap) * size);
	*arr = a;
	*cap = (uint32_t)want;
	return 0;
}

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/* base/bsearch: the one binary search over sorted entries. */
#ifndef BASE_BSEARCH_H
#define BASE_BSEARCH_H

#include <stddef.h>

/*
 * The number of leading indices of [0, N) for which BELOW holds: BELOW is an expression of
 * the index variable named MID, true for a prefix of the indices and false for the rest (so
 * the result is the first index where it is false, or N). With entries sorted by start,
 * `start <= addr` gives one past the last entry starting at or before ADDR; `end <= addr` the
 * first entry ending after ADDR.
 */
#define BSEARCH_PREFIX(n, mid, below)                                    \
	__extension__({                                                  \
		size_t lo_ = 0, hi_ = (n);                               \
		while (lo_ < hi_) {                                      \
			size_t mid = lo_ + (hi_ - lo_) / 2;              \
			if (below)                                       \
				lo_ = mid + 1;                           \
			else                                             \
				hi_ = mid;                               \
		}                                                        \
		lo_;                                                     \
	})

#endif

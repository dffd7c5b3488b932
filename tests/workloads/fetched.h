/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * fetched_mix: inlined into both halves of the fetched workload. dwz (as Debian's -dbgsym
 * packages are made) moves its DWARF, the same in both debug files, into their common file:
 * its inline frames are named only with that file, fetched by its own build id.
 */
#ifndef FETCHED_H
#define FETCHED_H

static inline __attribute__((always_inline)) unsigned long fetched_mix(unsigned long x,
								       unsigned long i)
{
	x ^= x >> 31;
	x *= 0x94d049bb133111ebUL;
	return x + i;
}

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * The two plugins of swap.c: one function each, built twice (SWAP_NAME). The second
 * (SWAP_DEEP) runs its loop one call deeper, under frames of other sizes: at the offsets of
 * the first one's code its unwind rows are others, so that a walk with the rows of the plugin
 * mapped there before would go wrong.
 */
volatile unsigned long swap_sink;

#ifdef SWAP_DEEP
static __attribute__((noinline)) void swap_inner(long n)
{
	volatile char pad[3000];

	pad[n & 1023] = 1;
	for (long i = 0; i < n; i++)
		swap_sink = swap_sink * 31 + i + pad[i & 1023];
}

void SWAP_NAME(long n)
{
	volatile char pad[200];

	pad[n & 127] = 2;
	swap_inner(n);
	swap_sink += pad[n & 127];
}
#else
void SWAP_NAME(long n)
{
	for (long i = 0; i < n; i++)
		swap_sink = swap_sink * 31 + i;
}
#endif

// SPDX-License-Identifier: GPL-3.0-or-later
/* The two plugins of swap.c: one function each, built twice (SWAP_NAME). */
volatile unsigned long swap_sink;

void SWAP_NAME(long n)
{
	for (long i = 0; i < n; i++)
		swap_sink = swap_sink * 31 + i;
}

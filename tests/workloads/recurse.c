// SPDX-License-Identifier: GPL-3.0-or-later
/* 200 nested calls with 512-byte frames (about 110 KiB of stack), then a hot leaf. */
#include <string.h>
#include "spin.h"

#define DEPTH 200

volatile unsigned long recurse_sink;

__attribute__((noinline)) static void recurse_leaf(void)
{
	for (int i = 0; i < 200000; i++)
		recurse_sink = recurse_sink * 2862933555777941757UL + 3037000493UL;
}

__attribute__((noinline)) static void recurse(int depth, double end)
{
	volatile char pad[512];

	memset((char *)pad, depth, sizeof(pad));
	if (depth < DEPTH) {
		recurse(depth + 1, end);
	} else {
		while (spin_now() < end)
			recurse_leaf();
	}
	recurse_sink += pad[depth % 512];
}

int main(int argc, char **argv)
{
	recurse(1, spin_now() + spin_seconds(argc, argv));
	return 0;
}

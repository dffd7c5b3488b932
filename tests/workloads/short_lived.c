// SPDX-License-Identifier: GPL-3.0-or-later
/* About 20 ms of CPU in a named function, then exit: the short-lived-children test. */
#include "spin.h"

volatile unsigned long short_sink;

__attribute__((noinline)) static void short_lived_work(double seconds)
{
	double end = spin_now() + seconds;

	while (spin_now() < end)
		for (int i = 0; i < 10000; i++)
			short_sink = short_sink * 7 + i;
}

int main(void)
{
	short_lived_work(0.02);
	return 0;
}

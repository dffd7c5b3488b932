// SPDX-License-Identifier: GPL-3.0-or-later
/* Three functions of NASM (nasmleaf.asm: untyped, unsized symbols, no CFI) in turn, 30 ms of
 * CPU time each. nasmleaf SECONDS. */
#include <time.h>
#include "spin.h"

void nasm_one(long n);
void nasm_two(long n);
void nasm_three(long n);

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	void (*const fns[3])(long) = { nasm_one, nasm_two, nasm_three };
	double end = spin_now() + spin_seconds(argc, argv);

	for (int k = 0; spin_now() < end; k = (k + 1) % 3) {
		double t0 = cpu_ms();

		while (cpu_ms() - t0 < 30)
			fns[k](200000);
	}
	return 0;
}

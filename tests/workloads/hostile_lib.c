// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * The library of tests/workloads/hostile.c, of which tests/integration/hostile.py makes
 * crafted copies. Its code works in registers only (no data, no GOT), so that it also runs
 * from a plain mapping of the file at hostile_lib_spin's file offset; the loop is a static
 * function, named only by a symbol table a stripped copy has not (FILE+0xSTART from the FDEs).
 */
static inline unsigned long hostile_lib_mix(unsigned long x, long i)
{
	return (x ^ (unsigned long)i) * 0x9e3779b97f4a7c15ul;
}

__attribute__((noinline)) static unsigned long hostile_lib_loop(long n)
{
	unsigned long x = 1;

	for (long i = 0; i < n; i++)
		x = hostile_lib_mix(x, i);
	return x;
}

int hostile_lib_spin(long n);

__attribute__((noinline)) int hostile_lib_spin(long n)
{
	return (int)(hostile_lib_loop(n) >> 32) + 1;
}

/* Functions that only give .eh_frame room for the crafted records of hostile.py. */
int hostile_lib_room1(int x);
int hostile_lib_room2(int x);
int hostile_lib_room3(int x);
int hostile_lib_room4(int x);
int hostile_lib_room5(int x);
int hostile_lib_room6(int x);
int hostile_lib_room1(int x) { return x * 3 + 1; }
int hostile_lib_room2(int x) { return x * 5 + 2; }
int hostile_lib_room3(int x) { return x * 7 + 3; }
int hostile_lib_room4(int x) { return x * 11 + 4; }
int hostile_lib_room5(int x) { return x * 13 + 5; }
int hostile_lib_room6(int x) { return x * 17 + 6; }

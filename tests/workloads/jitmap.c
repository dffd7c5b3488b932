// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * JIT code without a JIT: a hot loop copied into an anonymous executable mapping, named in
 * /tmp/perf-PID.map as a JIT runtime names its code (PID as this process sees itself: inside
 * a container, its pid there and its own /tmp). main -> jit_hot_loop (keeps a frame).
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "spin.h"

/* push rbp; mov rbp, rsp; 1: dec rdi; jnz 1b; pop rbp; ret */
static const unsigned char code[] = {
	0x55, 0x48, 0x89, 0xe5, 0x48, 0xff, 0xcf, 0x75, 0xfb, 0x5d, 0xc3,
};

int main(int argc, char **argv)
{
	double end = spin_now() + spin_seconds(argc, argv);
	void (*hot)(unsigned long);
	char path[64];
	void *mem;
	FILE *f;

	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem, code, sizeof(code));
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC))
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx jit_hot_loop\n", (unsigned long)mem, sizeof(code));
	fclose(f);
	hot = (void (*)(unsigned long))mem;
	while (spin_now() < end)
		hot(10000000);
	return 0;
}

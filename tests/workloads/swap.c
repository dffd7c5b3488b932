// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * What a process maps and what it is called change while it runs (issue 27):
 *   swap dl SECONDS      two plugins (libswap_a.so, libswap_b.so, beside it) dlopen'ed and
 *                        dlclose'd in turn, 50 ms of CPU time each: the second one is mapped
 *                        where the first was. main -> swap_work_alpha / swap_work_beta.
 *   swap rename SECONDS  the process renames itself "swapd" at once (as servers do), then a
 *                        thread renames itself in turn "phase-one" and "phase-two", 50 ms
 *                        of CPU time under each name, beside the main thread asleep.
 *   swap jit SECONDS     JIT code rewritten in place: one page of anonymous code holds in
 *                        turn "jit_one" and "jit_two" (made writable, written, made
 *                        executable again), each named by a line appended to
 *                        /tmp/perf-PID.map when it is written, 50 ms of CPU time each
 *                        (the map is left behind, as runtimes leave theirs).
 *   swap patch SECONDS   a hot patch: patch_one, patch_two and patch_three, a page each, run
 *                        in turn; half-way, patch_two's page of the program's own text is
 *                        made writable, written (the same bytes) and made executable again
 *                        (mprotect splits the mapping in three).
 * At the end it prints (on stderr) its own count of CPU time, in ms: "alpha A beta B" (dl) or
 * "phase-one A phase-two B" (rename): the truth a profile is compared with.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <time.h>
#include "spin.h"

#define SLICE_MS 50.0

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static char dir[4096];
static double seconds, spent[2];

static int run_dl(void)
{
	static const char *const libs[2] = { "libswap_a.so", "libswap_b.so" };
	static const char *const fns[2] = { "swap_work_alpha", "swap_work_beta" };
	double end = spin_now() + seconds;

	for (int k = 0; spin_now() < end; k ^= 1) {
		char path[4200];
		void *h;
		void (*work)(long);
		double t0 = cpu_ms(), t;

		snprintf(path, sizeof(path), "%s/%s", dir, libs[k]);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "swap: %s\n", dlerror());
			return 1;
		}
		work = (void (*)(long))dlsym(h, fns[k]);
		if (!work)
			return 1;
		t0 = cpu_ms();
		do {
			work(20000);
			t = cpu_ms();
		} while (t - t0 < SLICE_MS && spin_now() < end);
		spent[k] += t - t0;
		dlclose(h);
	}
	fprintf(stderr, "alpha %.0f beta %.0f\n", spent[0], spent[1]);
	return 0;
}

static volatile unsigned long sink;

static __attribute__((noinline)) void phase_work(long n)
{
	for (long i = 0; i < n; i++)
		sink = sink * 31 + i;
}

static void *renamer(void *arg)
{
	static const char *const names[2] = { "phase-one", "phase-two" };
	double end = spin_now() + seconds;
	(void)arg;

	for (int k = 0; spin_now() < end; k ^= 1) {
		double t0, t;

		prctl(PR_SET_NAME, names[k]);
		t0 = cpu_ms();
		do {
			phase_work(20000);
			t = cpu_ms();
		} while (t - t0 < SLICE_MS && spin_now() < end);
		spent[k] += t - t0;
	}
	return NULL;
}

static int run_rename(void)
{
	pthread_t t;

	prctl(PR_SET_NAME, "swapd");
	if (pthread_create(&t, NULL, renamer, NULL))
		return 1;
	pthread_join(t, NULL);
	fprintf(stderr, "phase-one %.0f phase-two %.0f\n", spent[0], spent[1]);
	return 0;
}

/* push rbp; mov rbp, rsp; 1: dec rdi; jnz 1b; pop rbp; ret; and the same with a nop more, so
 * that the two differ. */
static const unsigned char jit_code[2][12] = {
	{ 0x55, 0x48, 0x89, 0xe5, 0x48, 0xff, 0xcf, 0x75, 0xfb, 0x5d, 0xc3 },
	{ 0x55, 0x48, 0x89, 0xe5, 0x90, 0x48, 0xff, 0xcf, 0x75, 0xfb, 0x5d, 0xc3 },
};

static int run_jit(void)
{
	static const char *const names[2] = { "jit_one", "jit_two" };
	double end = spin_now() + seconds;
	char path[64];
	FILE *map;
	unsigned char *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED)
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map)
		return 1;
	for (int k = 0; spin_now() < end; k ^= 1) {
		void (*fn)(unsigned long);
		double t0, t;

		if (mprotect(mem, 4096, PROT_READ | PROT_WRITE))
			return 1;
		memcpy(mem, jit_code[k], sizeof(jit_code[k]));
		if (mprotect(mem, 4096, PROT_READ | PROT_EXEC))
			return 1;
		fprintf(map, "%lx %zx %s\n", (unsigned long)mem, sizeof(jit_code[k]), names[k]);
		fflush(map);
		fn = (void (*)(unsigned long))mem;
		t0 = cpu_ms();
		do {
			fn(200000);
			t = cpu_ms();
		} while (t - t0 < SLICE_MS && spin_now() < end);
		spent[k] += t - t0;
	}
	fclose(map);	/* left behind, as runtimes leave theirs: named from it at the end */
	fprintf(stderr, "jit_one %.0f jit_two %.0f\n", spent[0], spent[1]);
	return 0;
}

static volatile unsigned long patch_sink;

#define PATCH_FN(name)							\
	static __attribute__((noinline, aligned(4096))) void name(long n)	\
	{								\
		for (long i = 0; i < n; i++)				\
			patch_sink = patch_sink * 31 + i;		\
	}
PATCH_FN(patch_one)
PATCH_FN(patch_two)
PATCH_FN(patch_three)

static int run_patch(void)
{
	void (*const fns[3])(long) = { patch_one, patch_two, patch_three };
	double start = spin_now(), end = start + seconds;
	bool patched = false;

	for (int k = 0; spin_now() < end; k = (k + 1) % 3) {
		double t0 = cpu_ms(), t;

		if (!patched && spin_now() >= start + seconds / 2) {
			unsigned char *page = (unsigned char *)((unsigned long)patch_two & ~4095ul);
			volatile unsigned char *p = page;

			if (mprotect(page, 4096, PROT_READ | PROT_WRITE))
				return 1;
			p[0] = p[0];
			if (mprotect(page, 4096, PROT_READ | PROT_EXEC))
				return 1;
			patched = true;
			fprintf(stderr, "patched\n");
		}
		do {
			fns[k](20000);
			t = cpu_ms();
		} while (t - t0 < 30 && spin_now() < end);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *slash = strrchr(argv[0], '/');

	if (argc < 2)
		return 2;
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - argv[0]) : 1,
		 slash ? argv[0] : ".");
	seconds = spin_seconds(argc - 1, argv + 1);
	if (!strcmp(argv[1], "dl"))
		return run_dl();
	if (!strcmp(argv[1], "rename"))
		return run_rename();
	if (!strcmp(argv[1], "jit"))
		return run_jit();
	if (!strcmp(argv[1], "patch"))
		return run_patch();
	return 2;
}

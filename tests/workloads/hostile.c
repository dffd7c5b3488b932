// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * hostile: a process that maps files crafted to hurt the profiler (tests/integration/
 * hostile.py makes them) while it spends half its time in code of its own, hostile_spin,
 * whose frames the profile must still name.
 *
 *   hostile SECONDS spin                 spin only (its debug link or perf map is crafted)
 *   hostile SECONDS dlopen LIB...        dlopen each LIB and call its hostile_lib_spin in
 *                                        turn; a LIB that raises SIGBUS (truncated under it)
 *                                        is left alone from then on
 *   hostile SECONDS mmap FILE@OFF...     map each FILE readable and executable, and call the
 *                                        code at its file offset OFF (hostile_lib_spin, which
 *                                        touches no data) in turn
 *   hostile SECONDS maps N               N one-page executable anonymous mappings, apart
 *
 * It prints "ready" once everything is mapped.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "spin.h"

#define MAX_CALLEES 16

typedef int (*spin_fn)(long);

static spin_fn callees[MAX_CALLEES];
static int nr_callees;
static sigjmp_buf bus_jmp;
static volatile unsigned long sink;	/* results kept: no call is dropped as useless */

__attribute__((noinline, noipa)) unsigned long hostile_work(unsigned long x);
__attribute__((noinline, noipa)) unsigned long hostile_spin(double end);

unsigned long hostile_work(unsigned long x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

/* Spin in our own code until END. */
unsigned long hostile_spin(double end)
{
	unsigned long x = 1;

	while (spin_now() < end)
		x = hostile_work(x);
	return x;
}

static void on_bus(int sig)
{
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

/* Call each callee for a while, then our own code as long; a callee that faults is dropped. */
static void run(double end)
{
	struct sigaction sa = { .sa_handler = on_bus };
	volatile int i = 0;

	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	while (spin_now() < end) {
		for (i = 0; i < nr_callees; i++) {
			if (!callees[i])
				continue;
			if (sigsetjmp(bus_jmp, 1)) {
				callees[i] = NULL;
				continue;
			}
			sink += callees[i](20000000);
		}
		sink += hostile_spin(spin_now() + 0.01 * (nr_callees ? nr_callees : 1));
	}
}

static int load_dlopen(int n, char **libs)
{
	for (int i = 0; i < n && nr_callees < MAX_CALLEES; i++) {
		void *h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
		spin_fn f = h ? (spin_fn)dlsym(h, "hostile_lib_spin") : NULL;

		if (!f) {
			fprintf(stderr, "hostile: %s: %s\n", libs[i], dlerror());
			return 1;
		}
		callees[nr_callees++] = f;
	}
	return 0;
}

static int load_mmap(int n, char **specs)
{
	for (int i = 0; i < n && nr_callees < MAX_CALLEES; i++) {
		char *at = strrchr(specs[i], '@');
		struct stat st;
		void *p;
		int fd;

		if (!at)
			return 1;
		*at = '\0';
		fd = open(specs[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st))
			return 1;
		p = mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		close(fd);
		if (p == MAP_FAILED)
			return 1;
		callees[nr_callees++] = (spin_fn)((char *)p + strtoul(at + 1, NULL, 0));
	}
	return 0;
}

static int load_maps(long n)
{
	long page = sysconf(_SC_PAGESIZE);
	/* A page mapped, a page not: neighbours would merge into one mapping. */
	char *area = mmap(NULL, 2 * n * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (area == MAP_FAILED)
		return 1;
	munmap(area, 2 * n * page);
	for (long i = 0; i < n; i++) {
		void *p = mmap(area + 2 * i * page, page, PROT_READ | PROT_EXEC,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

		if (p == MAP_FAILED) {
			perror("hostile: mmap");
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	double end = spin_now() + spin_seconds(argc, argv);
	const char *mode = argc > 2 ? argv[2] : "spin";
	int err = 0;

	if (!strcmp(mode, "dlopen"))
		err = load_dlopen(argc - 3, argv + 3);
	else if (!strcmp(mode, "mmap"))
		err = load_mmap(argc - 3, argv + 3);
	else if (!strcmp(mode, "maps"))
		err = load_maps(argc > 3 ? atol(argv[3]) : 1000);
	else if (strcmp(mode, "spin"))
		err = 1;
	if (err) {
		fprintf(stderr, "hostile: cannot set up '%s'\n", mode);
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	run(end);
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Known numbers of events from known functions, for -e:
 *   events faults MB      touch_pages touches MB MiB of fresh memory (no huge pages), one
 *                         fault a page; prints "pages N"
 *   events writes N       write_three writes 3N bytes and write_one N, one write(2) each,
 *                         to /dev/null; prints "writes 3N N"
 *   events steady SECONDS touch_pages on 4 MiB again and again for SECONDS of its CPU time, a
 *                         steady rate of faults; prints "pages N"
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

__attribute__((noinline)) long touch_pages(size_t bytes)
{
	long page = sysconf(_SC_PAGESIZE), n = 0;
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(1);
	madvise(p, bytes, MADV_NOHUGEPAGE);
	for (size_t off = 0; off < bytes; off += (size_t)page, n++)
		((volatile char *)p)[off] = 1;
	munmap(p, bytes);
	return n;
}

__attribute__((noinline)) void write_three(int fd, long n)
{
	for (long i = 0; i < 3 * n; i++)
		if (write(fd, "x", 1) != 1)
			exit(1);
}

__attribute__((noinline)) void write_one(int fd, long n)
{
	for (long i = 0; i < n; i++)
		if (write(fd, "y", 1) != 1)
			exit(1);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "faults")) {
		printf("pages %ld\n", touch_pages((size_t)atol(argv[2]) << 20));
	} else if (argc == 3 && !strcmp(argv[1], "writes")) {
		long n = atol(argv[2]);
		int fd = open("/dev/null", O_WRONLY);

		if (fd < 0)
			return 1;
		write_three(fd, n);
		write_one(fd, n);
		printf("writes %ld %ld\n", 3 * n, n);
	} else if (argc == 3 && !strcmp(argv[1], "steady")) {
		double until = atof(argv[2]);
		struct timespec ts;
		long n = 0;

		do {
			n += touch_pages(4 << 20);
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		} while (ts.tv_sec + ts.tv_nsec / 1e9 < until);
		printf("pages %ld\n", n);
	} else {
		fprintf(stderr, "usage: events faults MB | writes N | steady SECONDS\n");
		return 2;
	}
	return 0;
}

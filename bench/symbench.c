// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * symbench: symbolize the link-time addresses read from stdin (one hex address a line, with
 * or without 0x) in one ELF file, through the very code the profiler uses (the sandboxed
 * symbolizer of lib/sandbox: every address noted, then named by its worker process in
 * batches, as at the end of a profile), and print one line per address:
 *
 *     0xADDR<TAB>root;inlined_[i];...;innermost_[i]
 *
 * root first, as in folded stacks. The file is entered as the only process of a procmaps
 * cache of our own: one mapping per PT_LOAD segment at its link-time address, so the runtime
 * address is the link-time address and the symbolizer's mapping -> file offset -> vaddr path
 * gives the address back unchanged. Addresses are looked up as they are (not as return
 * addresses). The profiler's defaults apply: inline chains and demangling, unless -n (no
 * inline chains) or -m (no demangling).
 *
 * At the end it prints to stderr: addresses, wall and CPU seconds from start to end (reading
 * the program headers, starting the worker, opening the file and its debug file, every
 * lookup, writing), peak RSS; CPU seconds and peak RSS are ours and the workers' together.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "proc/procmaps.h"
#include "dso/dsos.h"
#include "sandbox/symbolizer.h"

/* No such process: map__file_path then reads FILE by its own path (inode checked). */
#define FAKE_PID 0x7ffffff0

static double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Add FILE's PT_LOAD segments to PM as mappings of FAKE_PID at their link-time addresses. */
static int add_segments(struct procmaps *pm, const char *file)
{
	Elf64_Ehdr eh;
	struct stat st;
	int fd, n = 0;

	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "symbench: %s: %s\n", file, strerror(errno));
		return -1;
	}
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr)) {
		fprintf(stderr, "symbench: %s: not a 64-bit ELF file\n", file);
		close(fd);
		return -1;
	}
	for (int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		struct map m = { 0 };

		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + (off_t)i * sizeof(ph)) != sizeof(ph))
			break;
		if (ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		m.start = ph.p_vaddr;
		m.end = ph.p_vaddr + ph.p_filesz;
		m.pgoff = ph.p_offset;
		m.dev = st.st_dev;
		m.ino = st.st_ino;
		m.path = (char *)file;
		if (procmaps__add(pm, FAKE_PID, &m) < 0)
			break;
		n++;
	}
	close(fd);
	if (!n)
		fprintf(stderr, "symbench: %s: no PT_LOAD segment\n", file);
	return n ? 0 : -1;
}

int main(int argc, char **argv)
{
	unsigned int flags = SYMBOLIZE_INLINE | SYMBOLIZE_DEMANGLE;
	double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
	static char outbuf[1 << 16];
	struct sym_frame names[SYMFILE_MAX_FRAMES];
	struct symbolizer *s;
	struct procmaps *pm;
	struct dsos *dsos;
	struct rusage ru, rc;
	char line[256], *file;
	uint64_t *addrs = NULL;
	size_t count = 0, cap = 0;
	int opt;

	while ((opt = getopt(argc, argv, "nm")) != -1) {
		switch (opt) {
		case 'n':
			flags &= ~SYMBOLIZE_INLINE;
			break;
		case 'm':
			flags &= ~SYMBOLIZE_DEMANGLE;
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1) {
usage:
		fprintf(stderr, "usage: symbench [-n] [-m] FILE < addresses\n"
				"  -n  no inline chains   -m  no demangling\n");
		return 2;
	}
	file = realpath(argv[optind], NULL);
	if (!file) {
		fprintf(stderr, "symbench: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	pm = procmaps__new();
	dsos = dsos__new();
	s = pm && dsos ? symbolizer__new(pm, dsos, flags) : NULL;
	if (!s || add_segments(pm, file) < 0)
		return 1;
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	while (fgets(line, sizeof(line), stdin)) {
		char *end;
		uint64_t addr = strtoull(line, &end, 16);

		if (end == line)
			continue;
		if (count == cap) {
			cap = cap ? 2 * cap : 4096;
			addrs = realloc(addrs, cap * sizeof(*addrs));
			if (!addrs)
				return 1;
		}
		addrs[count++] = addr;
		symbolizer__want(s, FAKE_PID, addr, false);
	}
	if (symbolizer__resolve(s))
		return 1;
	for (size_t i = 0; i < count; i++) {
		int nr = symbolizer__user_frames(s, FAKE_PID, addrs[i], false, names,
						 SYMFILE_MAX_FRAMES);

		printf("0x%" PRIx64 "\t", addrs[i]);
		for (int k = 0; k < nr; k++)
			printf("%s%s", k ? ";" : "", names[k].name);
		putchar('\n');
	}
	fflush(stdout);
	symbolizer__free(s);	/* the worker reaped: its time and memory count below */
	procmaps__free(pm);
	getrusage(RUSAGE_SELF, &ru);
	getrusage(RUSAGE_CHILDREN, &rc);
	fprintf(stderr, "symbench: %zu addresses in %.3f s (%.3f s CPU), peak RSS %ld KiB\n",
		count, now(CLOCK_MONOTONIC) - t0, now(CLOCK_PROCESS_CPUTIME_ID) - c0 +
		rc.ru_utime.tv_sec + rc.ru_utime.tv_usec / 1e6 + rc.ru_stime.tv_sec +
		rc.ru_stime.tv_usec / 1e6, ru.ru_maxrss > rc.ru_maxrss ? ru.ru_maxrss : rc.ru_maxrss);
	free(addrs);
	free(file);
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* perfmap: /tmp/perf-PID.map parsing and lookup. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/limits.h"
#include "symbolize/perfmap.h"
#include "suites.h"

static struct perfmap *parse_string(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct perfmap *pm;

	if (!f)
		return NULL;
	pm = perfmap__parse(f);
	fclose(f);
	return pm;
}

static void test_parse_lookup(void)
{
	static const char text[] =
		"3f0000 100 JS:*hot /app/x.js:4\n"
		"3f0200 80 LazyCompile:~cold\n"
		"not a line\n"
		"3f0400 0 zero size skipped\n"
		"3f1000 10\n"				/* no name: skipped */
		"3f0240 80 Stub:later\n";		/* overlaps cold, written later: wins where both are */
	static const struct { uint64_t addr; const char *name; } cases[] = {
		{ 0x3effff, NULL }, { 0x3f0000, "JS:*hot /app/x.js:4" }, { 0x3f00ff, "JS:*hot /app/x.js:4" },
		{ 0x3f0100, NULL }, { 0x3f0200, "LazyCompile:~cold" }, { 0x3f0290, "Stub:later" },
		{ 0x3f02c0, NULL }, { 0x3f0400, NULL }, { 0x3f1000, NULL },
	};
	struct perfmap *pm = parse_string(text);

	CU_ASSERT_PTR_NOT_NULL_FATAL(pm);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *name = perfmap__lookup(pm, cases[i].addr);

		if (cases[i].name) {
			CU_ASSERT(name && !strcmp(name, cases[i].name));
		} else {
			CU_ASSERT_PTR_NULL(name);
		}
	}
	perfmap__free(pm);
}

static void test_recompiled_in_place(void)
{
	struct perfmap *pm = parse_string("1000 100 old\n1000 100 new\n");

	CU_ASSERT_PTR_NOT_NULL_FATAL(pm);
	CU_ASSERT_STRING_EQUAL(perfmap__lookup(pm, 0x1050), "new");
	perfmap__free(pm);
}

/* As the file was at a size: "1000 100 one\n" is 13 bytes; the lines after it. */
static void test_lookup_at_a_size(void)
{
	struct perfmap *pm = parse_string("1000 100 one\n2000 10 other\n1000 100 two\n"
					  "1040 10 three\n5000 10 new\n");

	CU_ASSERT_PTR_NOT_NULL_FATAL(pm);
	CU_ASSERT_STRING_EQUAL(perfmap__lookup(pm, 0x1010), "two");	/* the latest */
	CU_ASSERT_STRING_EQUAL(perfmap__lookup_at(pm, 0x1010, UINT64_MAX), "two");
	CU_ASSERT_STRING_EQUAL(perfmap__lookup_at(pm, 0x1010, 13), "one");
	CU_ASSERT_STRING_EQUAL(perfmap__lookup_at(pm, 0x1010, 27), "one");
	CU_ASSERT_STRING_EQUAL(perfmap__lookup_at(pm, 0x1010, 40), "two");
	CU_ASSERT_STRING_EQUAL(perfmap__lookup_at(pm, 0x1045, 40), "two");
	CU_ASSERT_STRING_EQUAL(perfmap__lookup_at(pm, 0x1045, 54), "three");
	/* Before any line named it: the first that did (code new since). */
	CU_ASSERT_STRING_EQUAL(perfmap__lookup_at(pm, 0x1010, 0), "one");
	CU_ASSERT_STRING_EQUAL(perfmap__lookup_at(pm, 0x5000, 13), "new");
	CU_ASSERT_PTR_NULL(perfmap__lookup_at(pm, 0x3000, 13));
	perfmap__free(pm);
}

struct starts {
	uint64_t start[8];
	size_t off[8], n;
};

static void on_start(void *ctx, uint64_t start, size_t offset)
{
	struct starts *st = ctx;

	if (st->n < 8) {
		st->start[st->n] = start;
		st->off[st->n++] = offset;
	}
}

/* What the privileged process reads of a growing map: each whole line's start address. */
static void test_line_starts(void)
{
	static const char text[] = "1000 10 a\nnot hex\n0x2000 20 b\n3000 30 c";
	struct starts st = { 0 };
	size_t used = perfmap__line_starts(text, sizeof(text) - 1, on_start, &st);

	CU_ASSERT_EQUAL(used, 30);		/* "3000 30 c" waits for its newline */
	CU_ASSERT_EQUAL(st.n, 2);
	CU_ASSERT_EQUAL(st.start[0], 0x1000);
	CU_ASSERT_EQUAL(st.off[0], 0);
	CU_ASSERT_EQUAL(st.start[1], 0x2000);
	CU_ASSERT_EQUAL(st.off[1], 18);
	st.n = 0;
	CU_ASSERT_EQUAL(perfmap__line_starts("12345678", 8, on_start, &st), 8);	/* too long */
	CU_ASSERT_EQUAL(st.n, 0);
}

static void test_missing_file(void)
{
	CU_ASSERT_PTR_NULL(perfmap__load(999999999));
}

static void on_alarm(int sig)
{
	(void)sig;
	_exit(3);	/* a blocked open: fail the whole run loudly rather than hang */
}

/* Another user's /tmp/perf-PID.map may be a FIFO: loading it must not block. */
static void test_fifo_does_not_block(void)
{
	const pid_t pid = 4194500;	/* above pid_max: only /tmp is tried */
	char path[64];
	struct perfmap *pm;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", pid);
	unlink(path);
	CU_ASSERT_EQUAL_FATAL(mkfifo(path, 0600), 0);
	signal(SIGALRM, on_alarm);
	alarm(5);
	pm = perfmap__load(pid);
	alarm(0);
	CU_ASSERT_PTR_NULL(pm);
	CU_ASSERT_EQUAL(errno, EINVAL);
	perfmap__free(pm);
	unlink(path);
}

/* Lines longer than a name may be are skipped whole, however long (counted); the line after
 * one, and a last line without a newline, are read. */
static void test_long_lines(void)
{
	size_t huge = 1 << 20;
	char *text = malloc(huge + 4096), *p = text;
	struct perfmap *pm;

	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	limits__reset();
	p += sprintf(p, "1000 10 ");
	memset(p, 'x', huge);
	p += huge;
	p += sprintf(p, "\n2000 10 after\n3000 10 ");
	memset(p, 'y', 1024);		/* one byte too long */
	p += 1024;
	p += sprintf(p, "\n4000 10 0x\n0x5000 10 last");
	pm = parse_string(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(pm);
	CU_ASSERT_PTR_NULL(perfmap__lookup(pm, 0x1000));
	CU_ASSERT_STRING_EQUAL(perfmap__lookup(pm, 0x2000), "after");
	CU_ASSERT_PTR_NULL(perfmap__lookup(pm, 0x3000));
	CU_ASSERT_STRING_EQUAL(perfmap__lookup(pm, 0x4005), "0x");
	CU_ASSERT_STRING_EQUAL(perfmap__lookup(pm, 0x5000), "last");
	CU_ASSERT_EQUAL(limits__count(LIMIT_PERFMAP_LINES), 2);
	perfmap__free(pm);
	free(text);
	limits__reset();
}

/* A map past the memory budget is cut there, and said so. */
static void test_budget(void)
{
	size_t n = 100000;
	char *text = malloc(n * 32), *p = text;
	struct perfmap *pm;

	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%zx 10 f%zu\n", 0x10000 + 16 * i, i);
	limits__reset();
	limits__set_budget(256 << 10);
	limits__charge(16 << 10);
	pm = parse_string(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(pm);
	CU_ASSERT_PTR_NOT_NULL_FATAL(perfmap__lookup(pm, 0x10000));
	CU_ASSERT_STRING_EQUAL(perfmap__lookup(pm, 0x10000), "f0");
	CU_ASSERT_PTR_NULL(perfmap__lookup(pm, 0x10000 + 16 * (n - 1)));
	CU_ASSERT_EQUAL(limits__count(LIMIT_MEMORY_PERFMAP), 1);
	CU_ASSERT(limits__used() <= (256 << 10));
	perfmap__free(pm);
	CU_ASSERT_EQUAL(limits__used(), 16 << 10);
	free(text);
	limits__reset();
}

/* FILE's content made TEXT, in place (the same inode, as HotSpot rewrites its map), once a
 * map that follows it may read it again (FOLLOW_MIN_NS). */
static void write_file(const char *path, const char *text)
{
	FILE *f;

	usleep(250000);
	f = fopen(path, "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

/*
 * A map read from its descriptor follows its file: grown, the new lines named; written anew
 * without the lines of code freed since (HotSpot's Compiler.perfmap), those still named, and
 * where other code took their place, the new name for what was sampled after the new text
 * and the old one before it (upto 0). Before: the file was read once, so that lines added
 * later were never named, and a text written anew named nothing of what it dropped.
 */
static void test_follows_rewritten_file(void)
{
	char path[] = "/tmp/test-perfmap-XXXXXX";
	int fd = mkstemp(path);
	uint64_t used = limits__used();
	struct perfmap *pm;

	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	write_file(path, "1000 100 stub\n2000 100 Alpha.run\n3000 80 Alpha.work\n");
	pm = perfmap__read_fd(open(path, O_RDONLY));
	CU_ASSERT_PTR_NOT_NULL_FATAL(pm);
	CU_ASSERT_STRING_EQUAL(perfmap__lookup(pm, 0x2010), "Alpha.run");
	/* Grown: as read from the start. */
	write_file(path, "1000 100 stub\n2000 100 Alpha.run\n3000 80 Alpha.work\n"
			 "4000 10 Gamma.x\n");
	CU_ASSERT_STRING_EQUAL(perfmap__lookup(pm, 0x4000), "Gamma.x");
	CU_ASSERT_STRING_EQUAL(perfmap__lookup(pm, 0x3010), "Alpha.work");
	/* Written anew: Alpha unloaded, Beta compiled over part of its code, longer. */
	write_file(path, "1000 100 stub\n2040 100 Beta.run\n4000 10 Gamma.x\n"
			 "5000 100 Beta.work\n");
	CU_ASSERT_STRING_EQUAL(perfmap__lookup(pm, 0x5000), "Beta.work");
	CU_ASSERT_STRING_EQUAL(perfmap__lookup(pm, 0x3010), "Alpha.work");	/* freed */
	CU_ASSERT_STRING_EQUAL(perfmap__lookup(pm, 0x2010), "Alpha.run");	/* freed */
	CU_ASSERT_STRING_EQUAL(perfmap__lookup(pm, 0x2050), "Beta.run");	/* taken */
	CU_ASSERT_STRING_EQUAL(perfmap__lookup_at(pm, 0x2050, 0), "Alpha.run");
	CU_ASSERT_STRING_EQUAL(perfmap__lookup_at(pm, 0x2050, 31), "Alpha.run");
	CU_ASSERT_STRING_EQUAL(perfmap__lookup_at(pm, 0x2050, 32), "Beta.run");
	CU_ASSERT_STRING_EQUAL(perfmap__lookup_at(pm, 0x1010, 0), "stub");
	CU_ASSERT_PTR_NULL(perfmap__lookup(pm, 0x6000));
	/* Written anew again: what the first text named is kept through a second one. */
	write_file(path, "1000 100 stub\n7000 10 Delta.y\n");
	CU_ASSERT_STRING_EQUAL(perfmap__lookup(pm, 0x3010), "Alpha.work");
	CU_ASSERT_STRING_EQUAL(perfmap__lookup(pm, 0x2050), "Beta.run");
	CU_ASSERT_STRING_EQUAL(perfmap__lookup(pm, 0x2010), "Alpha.run");
	CU_ASSERT_STRING_EQUAL(perfmap__lookup(pm, 0x5000), "Beta.work");
	CU_ASSERT_STRING_EQUAL(perfmap__lookup(pm, 0x7000), "Delta.y");
	perfmap__free(pm);
	CU_ASSERT_EQUAL(limits__used(), used);
	unlink(path);
}

int register_perfmap_suite(void)
{
	CU_pSuite s = CU_add_suite("perfmap", NULL, NULL);

	if (!s || !CU_add_test(s, "parse and look up", test_parse_lookup) ||
	    !CU_add_test(s, "code recompiled at the same address", test_recompiled_in_place) ||
	    !CU_add_test(s, "names as the file was at a size", test_lookup_at_a_size) ||
	    !CU_add_test(s, "line starts of a growing map", test_line_starts) ||
	    !CU_add_test(s, "no map for the pid", test_missing_file) ||
	    !CU_add_test(s, "a FIFO in place of the map does not block", test_fifo_does_not_block) ||
	    !CU_add_test(s, "long lines skipped whole", test_long_lines) ||
	    !CU_add_test(s, "cut at the memory budget", test_budget) ||
	    !CU_add_test(s, "a file written anew followed", test_follows_rewritten_file))
		return -1;
	return 0;
}

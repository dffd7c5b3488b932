// SPDX-License-Identifier: GPL-3.0-or-later
/* procmaps: parsing /proc/PID/maps lines, address arithmetic, and the mapping cache. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "base/limits.h"
#include "proc/procmaps.h"
#include "suites.h"

static const struct {
	const char *line;
	int ret;
	uint64_t start, end, pgoff, ino;
	unsigned int maj, min;
	const char *path;
	bool deleted;
} parse_cases[] = {
	{ "55d4c8a00000-55d4c8a21000 r-xp 00002000 fd:01 1835013    /usr/bin/cat\n", 1,
	  0x55d4c8a00000, 0x55d4c8a21000, 0x2000, 1835013, 0xfd, 1, "/usr/bin/cat", false },
	{ "7f0000000000-7f0000001000 r--p 00000000 08:02 42 /lib/x.so\n", 0,
	  0x7f0000000000, 0x7f0000001000, 0, 42, 8, 2, "/lib/x.so", false },
	{ "7ffd1000-7ffd3000 r-xp 00000000 00:00 0                  [vdso]\n", 1,
	  0x7ffd1000, 0x7ffd3000, 0, 0, 0, 0, "[vdso]", false },
	{ "1000-2000 r-xp 00000000 00:00 0\n", 1, 0x1000, 0x2000, 0, 0, 0, 0, "", false },
	{ "1000-2000 r-xp 00001000 fd:01 77 /tmp/a b/prog (deleted)\n", 1, 0x1000, 0x2000,
	  0x1000, 77, 0xfd, 1, "/tmp/a b/prog", true },
	{ "1000-2000 r-xp 00000000 103:02 9 /usr/lib/libc.so.6", 1, 0x1000, 0x2000, 0, 9,
	  0x103, 2, "/usr/lib/libc.so.6", false },
	{ "garbage\n", -EINVAL, 0, 0, 0, 0, 0, 0, NULL, false },
	{ "2000-1000 r-xp 00000000 00:00 0\n", -EINVAL, 0, 0, 0, 0, 0, 0, NULL, false },
	{ "1000-2000 r-x 00000000 00:00 0\n", -EINVAL, 0, 0, 0, 0, 0, 0, NULL, false },
	{ "1000-2000 r-xp 0000zz00 00:00 0\n", -EINVAL, 0, 0, 0, 0, 0, 0, NULL, false },
	{ "1000-2000 r-xp 00000000 00:00 x\n", -EINVAL, 0, 0, 0, 0, 0, 0, NULL, false },
	{ "", -EINVAL, 0, 0, 0, 0, 0, 0, NULL, false },
};

static void test_parse_line(void)
{
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		char line[256];
		struct map m;
		bool deleted;
		int ret;

		snprintf(line, sizeof(line), "%s", parse_cases[i].line);
		ret = procmaps__parse_line(line, &m, &deleted);
		CU_ASSERT_EQUAL(ret, parse_cases[i].ret);
		if (ret < 0)
			continue;
		CU_ASSERT_EQUAL(m.start, parse_cases[i].start);
		CU_ASSERT_EQUAL(m.end, parse_cases[i].end);
		CU_ASSERT_EQUAL(m.pgoff, parse_cases[i].pgoff);
		CU_ASSERT_EQUAL(m.ino, parse_cases[i].ino);
		CU_ASSERT_EQUAL(m.dev, makedev(parse_cases[i].maj, parse_cases[i].min));
		CU_ASSERT_STRING_EQUAL(m.path, parse_cases[i].path);
		CU_ASSERT_EQUAL(deleted, parse_cases[i].deleted);
	}
}

static void test_file_offset(void)
{
	struct map m = { .start = 0x7f0000001000, .end = 0x7f0000005000, .pgoff = 0x3000,
			 .path = (char *)"/usr/lib/x.so" };

	CU_ASSERT_EQUAL(map__file_offset(&m, 0x7f0000001000), 0x3000);
	CU_ASSERT_EQUAL(map__file_offset(&m, 0x7f0000004fff), 0x6fff);
	/* The vDSO's image is read from memory, from its start, whatever its offset says. */
	m.path = (char *)"[vdso]";
	CU_ASSERT_EQUAL(map__file_offset(&m, 0x7f0000001010), 0x10);
}

static void test_add_find_overlap(void)
{
	struct procmaps *pm = procmaps__new();
	struct map a = { .start = 0x1000, .end = 0x3000, .ino = 1, .path = (char *)"/a" }, b = { .start = 0x5000, .end = 0x6000, .ino = 2, .path = (char *)"/b" };
	struct map c = { .start = 0x2000, .end = 0x5800, .pgoff = 0x10, .ino = 3, .path = (char *)"/c" };
	const struct map *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pm);
	CU_ASSERT_FALSE(procmaps__has(pm, 7));
	CU_ASSERT_EQUAL(procmaps__add(pm, 7, &b), 0);
	CU_ASSERT_EQUAL(procmaps__add(pm, 7, &a), 0);
	CU_ASSERT_TRUE(procmaps__has(pm, 7));
	/* Two mappings side by side: none put over another. */
	CU_ASSERT_EQUAL(procmaps__replaced(pm, 7), 0);
	f = procmaps__find(pm, 7, 0x1000);
	CU_ASSERT(f && !strcmp(f->path, "/a"));
	f = procmaps__find(pm, 7, 0x5fff);
	CU_ASSERT(f && !strcmp(f->path, "/b"));
	CU_ASSERT_PTR_NULL(procmaps__find(pm, 7, 0x3000));	/* end is exclusive */
	CU_ASSERT_PTR_NULL(procmaps__find(pm, 7, 0xfff));
	CU_ASSERT_PTR_NULL(procmaps__find(pm, 8, 0x1000));	/* another process */
	/* A new mapping replaces what it overlaps, like mmap(MAP_FIXED): what is left of the
	 * others outside it stays, at its own file offsets. */
	CU_ASSERT_EQUAL(procmaps__add(pm, 7, &c), 0);
	CU_ASSERT_EQUAL(procmaps__replaced(pm, 7), 1);	/* the unwinder learns again */
	CU_ASSERT_EQUAL(procmaps__replaced(pm, 8), 0);
	f = procmaps__find(pm, 7, 0x1000);
	CU_ASSERT(f && !strcmp(f->path, "/a") && f->end == 0x2000 && f->pgoff == 0);
	f = procmaps__find(pm, 7, 0x2000);
	CU_ASSERT(f && !strcmp(f->path, "/c") && f->pgoff == 0x10);
	f = procmaps__find(pm, 7, 0x5900);
	CU_ASSERT(f && !strcmp(f->path, "/b") && f->start == 0x5800 && f->pgoff == 0x800);
	CU_ASSERT_EQUAL(procmaps__maps(pm, 7, &(size_t){ 0 }), procmaps__find(pm, 7, 0x1000));
	/* One in the middle of another: the head and the tail stay. */
	struct map d = { .start = 0x5900, .end = 0x5a00, .ino = 4, .path = (char *)"/d" };
	size_t n;

	CU_ASSERT_EQUAL(procmaps__add(pm, 7, &d), 0);
	CU_ASSERT_EQUAL(procmaps__replaced(pm, 7), 2);
	procmaps__maps(pm, 7, &n);
	CU_ASSERT_EQUAL(n, 5);
	f = procmaps__find(pm, 7, 0x5a00);
	CU_ASSERT(f && !strcmp(f->path, "/b") && f->pgoff == 0xa00 && f->end == 0x6000);
	f = procmaps__find(pm, 7, 0x58ff);
	CU_ASSERT(f && !strcmp(f->path, "/b") && f->pgoff == 0x800 && f->end == 0x5900);
	/* Anonymous memory over anonymous memory (a JIT committing code in its reservation)
	 * moves no file: not counted. */
	struct map e = { .start = 0x8000, .end = 0x9000, .path = (char *)"" };
	struct map g = { .start = 0x8000, .end = 0x8800, .path = (char *)"[anon:jit]" };

	CU_ASSERT_EQUAL(procmaps__add(pm, 7, &e), 0);
	CU_ASSERT_EQUAL(procmaps__add(pm, 7, &g), 0);
	CU_ASSERT_EQUAL(procmaps__replaced(pm, 7), 2);
	procmaps__free(pm);
	procmaps__free(NULL);
}

/* Programs one after the other under a pid (exec; a pid used again after a fork): each
 * one's mappings kept apart for its own samples, found by when it began. */
static void test_incarnations(void)
{
	struct procmaps *pm = procmaps__new();
	struct map shell = { .start = 0x1000, .end = 0x2000, .path = (char *)"/bin/sh", .time = 50 };
	struct map prog = { .start = 0x4000, .end = 0x6000, .path = (char *)"/prog", .time = 150 };
	struct map lib = { .start = 0x8000, .end = 0x9000, .path = (char *)"/lib.so", .time = 160 };
	struct map other = { .start = 0x1000, .end = 0x2000, .path = (char *)"/other", .time = 300 };
	const struct map *f;
	pid_t as, as2;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pm);
	procmaps__set_comm(pm, 7, "sh");
	CU_ASSERT_EQUAL(procmaps__add(pm, 7, &shell), 0);
	/* The new program's first mapping, reported before its exec (another CPU's buffer). */
	CU_ASSERT_EQUAL(procmaps__add(pm, 7, &prog), 0);
	CU_ASSERT_EQUAL(procmaps__exec(pm, 7, 100, "prog"), 0);
	CU_ASSERT_EQUAL(procmaps__add(pm, 7, &lib), 0);
	/* Samples from before the profile (0) and before the exec: the shell's. */
	as = procmaps__incarnation(pm, 7, 0);
	CU_ASSERT(as >= PROCMAPS_ARCHIVED_PID);
	CU_ASSERT_EQUAL(procmaps__incarnation(pm, 7, 99), as);
	f = procmaps__find(pm, as, 0x1800);
	CU_ASSERT(f && !strcmp(f->path, "/bin/sh"));
	CU_ASSERT_PTR_NULL(procmaps__find(pm, as, 0x8000));
	CU_ASSERT_STRING_EQUAL(procmaps__comm(pm, as), "sh");
	/* After it (a sample's time is a little after the record's): the program's. */
	CU_ASSERT_EQUAL(procmaps__incarnation(pm, 7, 101), 7);
	f = procmaps__find(pm, 7, 0x4800);
	CU_ASSERT(f && !strcmp(f->path, "/prog"));
	CU_ASSERT_PTR_NULL(procmaps__find(pm, 7, 0x1800));
	CU_ASSERT_PTR_NOT_NULL(procmaps__find(pm, 7, 0x8000));
	CU_ASSERT_STRING_EQUAL(procmaps__comm(pm, 7), "prog");
	/* An exec reported late, older than the last: nothing moves. */
	CU_ASSERT_EQUAL(procmaps__exec(pm, 7, 90, "x"), 0);
	CU_ASSERT_EQUAL(procmaps__incarnation(pm, 7, 101), 7);
	/* The pid used again by a child of pid 9 at 200: prog's mappings kept apart too. */
	CU_ASSERT_EQUAL(procmaps__add(pm, 9, &other), 0);
	procmaps__set_comm(pm, 9, "parent");
	CU_ASSERT_EQUAL(procmaps__fork(pm, 9, 7, 200), 0);
	as2 = procmaps__incarnation(pm, 7, 150);
	CU_ASSERT(as2 >= PROCMAPS_ARCHIVED_PID && as2 != as);
	f = procmaps__find(pm, as2, 0x4800);
	CU_ASSERT(f && !strcmp(f->path, "/prog"));
	CU_ASSERT_EQUAL(procmaps__incarnation(pm, 7, 50), as);
	CU_ASSERT_EQUAL(procmaps__incarnation(pm, 7, 201), 7);
	f = procmaps__find(pm, 7, 0x1800);
	CU_ASSERT(f && !strcmp(f->path, "/other"));
	CU_ASSERT_STRING_EQUAL(procmaps__comm(pm, 7), "parent");
	/* A program BPF never sampled: its mappings are dropped at its exec, not kept apart. */
	CU_ASSERT_EQUAL(procmaps__add(pm, 20, &shell), 0);
	procmaps__unsampled(pm, 20);
	CU_ASSERT_EQUAL(procmaps__exec(pm, 20, 100, "prog"), 0);
	CU_ASSERT_EQUAL(procmaps__incarnation(pm, 20, 0), 20);
	CU_ASSERT_PTR_NULL(procmaps__find(pm, 20, 0x1800));
	/* ... and only that one: the next exec keeps this program's. */
	CU_ASSERT_EQUAL(procmaps__add(pm, 20, &lib), 0);
	CU_ASSERT_EQUAL(procmaps__exec(pm, 20, 400, "next"), 0);
	as = procmaps__incarnation(pm, 20, 150);
	CU_ASSERT(as >= PROCMAPS_ARCHIVED_PID);
	CU_ASSERT_PTR_NOT_NULL(procmaps__find(pm, as, 0x8000));
	/* A shell (pid 9) forks pid 30 at 100, which execs "first" at 150 and exits; the next
	 * fork of pid 30 (300) is read before that exec's record (another CPU's buffer): the
	 * exec still names the samples of the program it began, not the shell's copy. */
	procmaps__set_comm(pm, 9, "sh");
	CU_ASSERT_EQUAL(procmaps__fork(pm, 9, 30, 100), 0);
	CU_ASSERT_EQUAL(procmaps__fork(pm, 9, 30, 300), 0);
	CU_ASSERT_EQUAL(procmaps__exec(pm, 30, 150, "first"), 0);
	as = procmaps__incarnation(pm, 30, 160);
	CU_ASSERT(as >= PROCMAPS_ARCHIVED_PID);
	CU_ASSERT_STRING_EQUAL(procmaps__comm(pm, as), "first");
	CU_ASSERT_EQUAL(procmaps__incarnation(pm, 30, 301), 30);
	CU_ASSERT_STRING_EQUAL(procmaps__comm(pm, 30), "sh");
	/* Pids nothing is known of: themselves, and nothing made of a fork between them. */
	CU_ASSERT_EQUAL(procmaps__incarnation(pm, 8, 0), 8);
	CU_ASSERT_EQUAL(procmaps__fork(pm, 11, 12, 5), 0);
	CU_ASSERT_FALSE(procmaps__has(pm, 12));
	procmaps__free(pm);
}

/* Epochs: a library dlclose'd and another dlopen'ed where it was. Samples before the second
 * one's mapping (their gen) are named with the first; a record read late goes where it was
 * true; the same file reported again (mprotect) begins none. */
static void test_epochs(void)
{
	const uint64_t s = 1000000000ull;	/* times in ns, as BPF's clock */
	struct procmaps *pm = procmaps__new();
	struct map prog = { .start = 0x100000, .end = 0x101000, .ino = 1, .path = (char *)"/prog" };
	struct map a = { .start = 0x1000, .end = 0x3000, .ino = 2, .path = (char *)"/a.so",
			 .time = 10 * s };
	struct map b = { .start = 0x1000, .end = 0x3000, .ino = 3, .path = (char *)"/b.so",
			 .time = 20 * s };
	struct map c = { .start = 0x1000, .end = 0x3000, .ino = 4, .path = (char *)"/c.so",
			 .time = 15 * s };
	struct map again = { .start = 0x2000, .end = 0x3000, .pgoff = 0x1000, .ino = 3,
			     .path = (char *)"/b.so", .time = 30 * s };
	const struct map *f;
	pid_t as;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pm);
	CU_ASSERT_EQUAL(procmaps__add(pm, 40, &prog), 0);	/* from /proc: time 0 */
	CU_ASSERT_EQUAL(procmaps__add(pm, 40, &a), 0);		/* a new place: no epoch */
	CU_ASSERT_EQUAL(procmaps__incarnation(pm, 40, 11 * s), 40);
	CU_ASSERT_EQUAL(procmaps__add(pm, 40, &b), 0);		/* where a.so was */
	as = procmaps__incarnation(pm, 40, 11 * s);
	CU_ASSERT(as >= PROCMAPS_ARCHIVED_PID);
	f = procmaps__find(pm, as, 0x1800);
	CU_ASSERT(f && !strcmp(f->path, "/a.so"));
	f = procmaps__find(pm, as, 0x100000);
	CU_ASSERT(f && !strcmp(f->path, "/prog"));
	/* BPF's gen a little before the record's time is the new epoch's already. */
	CU_ASSERT_EQUAL(procmaps__incarnation(pm, 40, 20 * s - 1000), 40);
	f = procmaps__find(pm, 40, 0x1800);
	CU_ASSERT(f && !strcmp(f->path, "/b.so"));
	/* c.so, mapped at 15 s between the two and read after b.so: the epoch of a.so is
	 * split at its time; b.so stays after it. */
	CU_ASSERT_EQUAL(procmaps__add(pm, 40, &c), 0);
	f = procmaps__find(pm, procmaps__incarnation(pm, 40, 12 * s), 0x1800);
	CU_ASSERT(f && !strcmp(f->path, "/a.so"));
	f = procmaps__find(pm, procmaps__incarnation(pm, 40, 16 * s), 0x1800);
	CU_ASSERT(f && !strcmp(f->path, "/c.so"));
	f = procmaps__find(pm, procmaps__incarnation(pm, 40, 21 * s), 0x1800);
	CU_ASSERT(f && !strcmp(f->path, "/b.so"));
	/* b.so's second page reported again (mprotect): the same file at the same offset. */
	CU_ASSERT_EQUAL(procmaps__add(pm, 40, &again), 0);
	CU_ASSERT_EQUAL(procmaps__incarnation(pm, 40, 25 * s), 40);
	f = procmaps__find(pm, 40, 0x1800);
	CU_ASSERT(f && !strcmp(f->path, "/b.so") && f->end == 0x2000);
	/* An exec ends the program and its epochs: they stay apart for their samples. */
	CU_ASSERT_EQUAL(procmaps__exec(pm, 40, 40 * s, "next"), 0);
	f = procmaps__find(pm, procmaps__incarnation(pm, 40, 16 * s), 0x1800);
	CU_ASSERT(f && !strcmp(f->path, "/c.so"));
	f = procmaps__find(pm, procmaps__incarnation(pm, 40, 35 * s), 0x2800);
	CU_ASSERT(f && !strcmp(f->path, "/b.so"));
	CU_ASSERT_PTR_NULL(procmaps__find(pm, 40, 0x1800));
	/* Many epochs: the oldest are merged into the next, bounded. */
	for (int i = 0; i < 600; i++) {
		struct map m = { .start = 0x1000, .end = 0x3000, .ino = 100 + (i & 1),
				 .path = (char *)(i & 1 ? "/b.so" : "/a.so"),
				 .time = 50 * s + (uint64_t)i * 10000000ull };

		CU_ASSERT_EQUAL_FATAL(procmaps__add(pm, 40, &m), 0);
	}
	CU_ASSERT(limits__count(LIMIT_EPOCHS) >= 600 - 256);
	f = procmaps__find(pm, procmaps__incarnation(pm, 40, 50 * s + 599 * 10000000ull), 0x1800);
	CU_ASSERT(f && !strcmp(f->path, "/b.so"));
	f = procmaps__find(pm, procmaps__incarnation(pm, 40, 50 * s + 598 * 10000000ull), 0x1800);
	CU_ASSERT(f && !strcmp(f->path, "/a.so"));
	procmaps__free(pm);
}

/* A record read late across an exec (made by the program before it, read after the new one
 * mapped): it goes into that program's epochs only, split at its time; the new program's
 * mappings stay as they are. */
static void test_late_across_exec(void)
{
	const uint64_t s = 1000000000ull;
	struct procmaps *pm = procmaps__new();
	struct map a = { .start = 0x1000, .end = 0x3000, .ino = 2, .path = (char *)"/a.so",
			 .time = 10 * s };
	struct map x = { .start = 0x1000, .end = 0x3000, .ino = 5, .path = (char *)"/x.so",
			 .time = 25 * s };
	struct map b = { .start = 0x1000, .end = 0x3000, .ino = 3, .path = (char *)"/b.so",
			 .time = 15 * s };
	struct map d = { .start = 0x5000, .end = 0x6000, .ino = 6, .path = (char *)"/d.so",
			 .time = 16 * s };
	const struct map *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pm);
	CU_ASSERT_EQUAL(procmaps__add(pm, 41, &a), 0);
	CU_ASSERT_EQUAL(procmaps__exec(pm, 41, 20 * s, "next"), 0);
	CU_ASSERT_EQUAL(procmaps__add(pm, 41, &x), 0);
	CU_ASSERT_EQUAL(procmaps__add(pm, 41, &b), 0);	/* made at 15 s, before the exec */
	CU_ASSERT_EQUAL(procmaps__add(pm, 41, &d), 0);	/* at 16 s, a new place */
	f = procmaps__find(pm, procmaps__incarnation(pm, 41, 12 * s), 0x1800);
	CU_ASSERT(f && !strcmp(f->path, "/a.so"));
	CU_ASSERT_PTR_NULL(procmaps__find(pm, procmaps__incarnation(pm, 41, 12 * s), 0x5800));
	f = procmaps__find(pm, procmaps__incarnation(pm, 41, 17 * s), 0x1800);
	CU_ASSERT(f && !strcmp(f->path, "/b.so"));
	f = procmaps__find(pm, procmaps__incarnation(pm, 41, 17 * s), 0x5800);
	CU_ASSERT(f && !strcmp(f->path, "/d.so"));
	/* The program after the exec: its own mapping, nothing of the one before. */
	CU_ASSERT_EQUAL(procmaps__incarnation(pm, 41, 26 * s), 41);
	f = procmaps__find(pm, 41, 0x1800);
	CU_ASSERT(f && !strcmp(f->path, "/x.so"));
	CU_ASSERT_PTR_NULL(procmaps__find(pm, 41, 0x5800));
	procmaps__free(pm);
}

/* A process gone: forgotten with its earlier programs, their memory released, the archived
 * pids free to serve again; the others untouched. */
static void test_forget(void)
{
	struct procmaps *pm = procmaps__new();
	struct map a = { .start = 0x1000, .end = 0x2000, .path = (char *)"/bin/a", .time = 50 };
	struct map b = { .start = 0x4000, .end = 0x5000, .path = (char *)"/bin/b", .time = 150 };
	uint64_t before;
	pid_t *pids, as, as2;
	size_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pm);
	before = limits__used();
	CU_ASSERT_EQUAL(procmaps__add(pm, 7, &a), 0);
	CU_ASSERT_EQUAL(procmaps__exec(pm, 7, 100, "b"), 0);
	CU_ASSERT_EQUAL(procmaps__add(pm, 7, &b), 0);
	CU_ASSERT_EQUAL(procmaps__add(pm, 8, &a), 0);
	as = procmaps__incarnation(pm, 7, 0);
	CU_ASSERT(as >= PROCMAPS_ARCHIVED_PID);
	pids = procmaps__pids(pm, &n);
	CU_ASSERT_EQUAL(n, 2);	/* 7 and 8, not the archived one */
	free(pids);
	procmaps__forget(pm, 7);
	CU_ASSERT_FALSE(procmaps__has(pm, 7));
	CU_ASSERT_FALSE(procmaps__has(pm, as));
	CU_ASSERT_TRUE(procmaps__has(pm, 8));
	pids = procmaps__pids(pm, &n);
	CU_ASSERT(n == 1 && pids && pids[0] == 8);
	free(pids);
	procmaps__forget(pm, 8);
	CU_ASSERT_EQUAL(limits__used(), before);
	/* Programs kept apart again: the ids go on (and come round again past the limit). */
	CU_ASSERT_EQUAL(procmaps__add(pm, 9, &a), 0);
	CU_ASSERT_EQUAL(procmaps__exec(pm, 9, 100, "b"), 0);
	as2 = procmaps__incarnation(pm, 9, 0);
	CU_ASSERT(as2 >= PROCMAPS_ARCHIVED_PID && procmaps__has(pm, as2));
	procmaps__free(pm);
}

static void test_load_self(void)
{
	struct procmaps *pm = procmaps__new();
	const struct map *m;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pm);
	CU_ASSERT_EQUAL(procmaps__load(pm, getpid()), 0);
	m = procmaps__find(pm, getpid(), (uint64_t)(uintptr_t)&test_load_self);
	CU_ASSERT_PTR_NOT_NULL(m);
	if (m) {
		CU_ASSERT_PTR_NOT_NULL(strstr(m->path, "unit-tests"));
	}
	CU_ASSERT_EQUAL(procmaps__load(pm, 999999999), -ENOENT);
	CU_ASSERT_FALSE(procmaps__ensure(pm, 999999999));
	CU_ASSERT_FALSE(procmaps__ensure(pm, 999999999));	/* tried once, not again */
	procmaps__free(pm);
	pm = procmaps__new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(pm);
	CU_ASSERT_TRUE(procmaps__ensure(pm, getpid()));
	procmaps__free(pm);
}

int register_procmaps_suite(void)
{
	CU_pSuite s = CU_add_suite("procmaps", NULL, NULL);

	if (!s || !CU_add_test(s, "parse /proc/PID/maps lines", test_parse_line) ||
	    !CU_add_test(s, "address to file offset", test_file_offset) ||
	    !CU_add_test(s, "add, find, overlapping mappings", test_add_find_overlap) ||
	    !CU_add_test(s, "programs one after the other under a pid", test_incarnations) ||
	    !CU_add_test(s, "a mapping replaced: epochs", test_epochs) ||
	    !CU_add_test(s, "a record read late across an exec", test_late_across_exec) ||
	    !CU_add_test(s, "processes gone forgotten", test_forget) ||
	    !CU_add_test(s, "load our own maps", test_load_self))
		return -1;
	return 0;
}

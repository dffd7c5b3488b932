// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * symbolize: user addresses of a (fake) process that maps the fixture files, through
 * procmaps and the shared dso table to names, named by the sandboxed worker (this test
 * program started again as the worker, handed the fixtures' descriptors): symbols and the preferred alias, return
 * addresses looked up one byte back, FILE+0xSTART for a stripped file, [unknown] outside
 * every mapping, and one dso for a file two processes map.
 */
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "dso/dso.h"
#include "dso/dsos.h"
#include "proc/procmaps.h"
#include "sandbox/symbolizer.h"
#include "suites.h"
#include "unwind/utab.h"

/* No such process (above the kernel's pid_max): files are read by their path. */
#define PID_A	4194400
#define PID_B	4194401
#define BASE	0x555500000000ULL

static struct procmaps *pm;
static struct dsos *dsos;
static struct symbolizer *sym;
static const char *saved_debug_dir;
static char nodebug[PATH_MAX];

/* The fixture NAME by its absolute path: a process maps files by absolute paths. */
static const char *fx(const char *name)
{
	static char buf[PATH_MAX], abs[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s/%s", fixtures_dir, name);
	return realpath(buf, abs) ? abs : buf;
}

static int suite_init(void)
{
	saved_debug_dir = dso_debug_dir;
	snprintf(nodebug, sizeof(nodebug), "%s/nodebug", fixtures_dir);
	dso_debug_dir = nodebug;
	pm = procmaps__new();
	dsos = dsos__new();
	sym = pm && dsos ? symbolizer__new(pm, dsos, SYMBOLIZE_DEMANGLE) : NULL;
	return sym ? 0 : -1;
}

static int suite_cleanup(void)
{
	symbolizer__free(sym);
	dsos__free(dsos);
	procmaps__free(pm);
	dso_debug_dir = saved_debug_dir;
	return 0;
}

/*
 * Map fixture NAME into PID at BASE as the loader would (each PT_LOAD at its page), and
 * return the runtime address of the function symbol FUNC (looked up in the file with symbols
 * SYMFILE, which has the same layout), or 0.
 */
static uint64_t map_fixture(pid_t pid, const char *name, const char *symfile, const char *func)
{
	struct dso *d = dso__open(fx(symfile), NULL);
	const struct dso_seg *segs;
	uint64_t vaddr = 0;
	struct stat st;
	size_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_FATAL(stat(fx(name), &st) == 0);
	segs = dso__segs(d, &n);
	for (size_t i = 0; i < n; i++) {
		struct map m = {
			.start = BASE + (segs[i].vaddr & ~0xfffULL),
			.end = BASE + ((segs[i].vaddr + segs[i].memsz + 0xfff) & ~0xfffULL),
			.pgoff = segs[i].offset & ~0xfffULL,
			.dev = st.st_dev, .ino = st.st_ino, .path = (char *)fx(name),
		};

		CU_ASSERT_EQUAL(procmaps__add(pm, pid, &m), 0);
	}
	if (func)
		vaddr = dso__find(d, func);
	dso__free(d);
	return vaddr ? BASE + vaddr : 0;
}

static const char *name_at(pid_t pid, uint64_t addr, bool is_return)
{
	struct sym_frame fr[8] = { { NULL } };
	int n = symbolizer__user_frames(sym, pid, addr, is_return, fr, 8);

	return n >= 1 ? fr[n - 1].name : NULL;
}

static void test_symbols_and_aliases(void)
{
	uint64_t alpha = map_fixture(PID_A, "prog", "prog", "fx_alpha");

	CU_ASSERT_FATAL(alpha != 0);
	CU_ASSERT_STRING_EQUAL(name_at(PID_A, alpha, false), "fx_alpha");
	CU_ASSERT_STRING_EQUAL(name_at(PID_A, alpha + 3, false), "fx_alpha");
	/* A return address right after fx_alpha's first byte is inside it, one byte back. */
	CU_ASSERT_STRING_EQUAL(name_at(PID_A, alpha + 1, true), "fx_alpha");
	/* fx_impl's address has the global fx_pub and the weak fx_alias_weak: the global wins. */
	CU_ASSERT_STRING_EQUAL(name_at(PID_A, map_fixture(PID_A, "prog", "prog", "fx_pub"),
				       false), "fx_pub");
	CU_ASSERT_STRING_EQUAL(name_at(PID_A, 0x1000, false), "[unknown]");
	CU_ASSERT_STRING_EQUAL(name_at(PID_A + 7, alpha, false), "[unknown]");
}

static void test_stripped_gets_fde_names(void)
{
	uint64_t alpha = map_fixture(PID_B, "prog.stripped", "prog", "fx_alpha");
	char want[64];

	CU_ASSERT_FATAL(alpha != 0);
	/* No .symtab and no debug file here: fx_alpha is named by its FDE's start. */
	snprintf(want, sizeof(want), "prog.stripped+0x%llx",
		 (unsigned long long)(alpha - BASE));
	CU_ASSERT_STRING_EQUAL(name_at(PID_B, alpha + 2, false), want);
	/* The exported alias is in .dynsym and still named. */
	CU_ASSERT_STRING_EQUAL(name_at(PID_B, map_fixture(PID_B, "prog.stripped", "prog",
							  "fx_pub"), false), "fx_pub");
}

/* The kind of the outermost frame of ADDR in PID. */
static int kind_at(pid_t pid, uint64_t addr)
{
	struct sym_frame fr[8];

	return symbolizer__user_frames(sym, pid, addr, false, fr, 8) >= 1 ? fr[0].kind : -1;
}

/* Frames come typed from the worker: a symbol's function, and the frames without a name
 * (FILE+0xSTART, [unknown]) said to be so, not guessed from their spelling. */
static void test_frame_kinds(void)
{
	uint64_t alpha = map_fixture(PID_A, "prog", "prog", "fx_alpha");
	uint64_t stripped = map_fixture(PID_B, "prog.stripped", "prog", "fx_alpha");

	CU_ASSERT_FATAL(alpha && stripped);
	CU_ASSERT_EQUAL(kind_at(PID_A, alpha), SYM_FUNC);
	CU_ASSERT_EQUAL(kind_at(PID_B, stripped + 2), SYM_UNNAMED);
	CU_ASSERT_EQUAL(kind_at(PID_A, 0x1000), SYM_UNNAMED);
}

static void test_one_dso_per_file(void)
{
	uint32_t before = dsos__count(dsos);
	uint64_t a = map_fixture(PID_A + 1, "prog", "prog", "fx_beta");
	uint64_t b = map_fixture(PID_A + 2, "prog", "prog", "fx_beta");

	CU_ASSERT_STRING_EQUAL(name_at(PID_A + 1, a, false), "fx_beta");
	CU_ASSERT_STRING_EQUAL(name_at(PID_A + 2, b, false), "fx_beta");
	/* prog was opened by the first test already: two more processes, no new dso. */
	CU_ASSERT_EQUAL(dsos__count(dsos), before);
}

/*
 * libc's unwind table, built by the worker from the descriptor handed to it, comes back as
 * the same table built here; a file the worker cannot read as ELF has none.
 */
static void test_worker_builds_tables(void)
{
	const struct map *m;
	const struct utab *t;
	struct utab *here;
	unsigned char *a, *b;
	size_t na, nb;
	bool ready;
	uint64_t libc = (uint64_t)(uintptr_t)&printf;
	struct dso *d;

	CU_ASSERT_EQUAL_FATAL(procmaps__load(pm, getpid()), 0);
	m = procmaps__find(pm, getpid(), libc);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	t = symbolizer__table(sym, getpid(), m, true, &ready);
	CU_ASSERT(ready);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT(t->has_cfi && t->nr_rows > 1000 && t->spans.nr > 0);
	d = dso__open(m->path, NULL);
	here = d ? utab__build(d, utab_stack_bottoms, UTAB_NR_STACK_BOTTOMS) : NULL;
	CU_ASSERT_PTR_NOT_NULL_FATAL(here);
	CU_ASSERT_EQUAL_FATAL(utab__encode(t, &a, &na), 0);
	CU_ASSERT_EQUAL_FATAL(utab__encode(here, &b, &nb), 0);
	CU_ASSERT(na == nb && !memcmp(a, b, na));
	/* Asked again: the same table, at once. */
	CU_ASSERT_PTR_EQUAL(symbolizer__table(sym, getpid(), m, false, &ready), t);
	CU_ASSERT(ready);
	free(a);
	free(b);
	utab__free(here);
	dso__free(d);
}

int register_symbolize_suite(void)
{
	CU_pSuite s = CU_add_suite("symbolize", suite_init, suite_cleanup);

	if (!s || !CU_add_test(s, "symbols, aliases, return addresses", test_symbols_and_aliases) ||
	    !CU_add_test(s, "a stripped file: FILE+0xSTART", test_stripped_gets_fde_names) ||
	    !CU_add_test(s, "one dso for a file two processes map", test_one_dso_per_file) ||
	    !CU_add_test(s, "frames typed: a function, no name", test_frame_kinds) ||
	    !CU_add_test(s, "unwind tables built by the worker", test_worker_builds_tables))
		return -1;
	return 0;
}

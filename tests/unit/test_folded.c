// SPDX-License-Identifier: GPL-3.0-or-later
/* folded: building frames, merging identical stacks, sorted output, folding a profile model. */
#include <stdlib.h>
#include <string.h>
#include "output/folded.h"
#include "profile/profile.h"
#include "suites.h"

static char *write_to_string(const struct folded *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (!out)
		return NULL;
	if (folded__write(f, out)) {
		fclose(out);
		free(buf);
		return NULL;
	}
	fclose(out);
	return buf;
}

static void test_push_frame(void)
{
	static const struct {
		const char *name, *suffix, *want;
	} cases[] = {
		{ "main", NULL, "main" },
		{ "vfs_read", "_[k]", "vfs_read_[k]" },
		{ "a;b", NULL, "a:b" },			/* ';' would split the frame */
		{ "x\ny\tz", NULL, "x?y?z" },		/* control characters */
		{ "std::vector<int> f(int, char)", NULL, "std::vector<int> f(int, char)" },
		{ "", NULL, "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *buf = NULL;
		size_t len = 0, cap = 0;

		CU_ASSERT_EQUAL(folded__push_frame(&buf, &len, &cap, cases[i].name, cases[i].suffix), 0);
		CU_ASSERT_STRING_EQUAL(buf, cases[i].want);
		CU_ASSERT_EQUAL(len, strlen(cases[i].want));
		free(buf);
	}
}

static void test_push_joins_and_grows(void)
{
	char *buf = NULL, name[300];
	size_t len = 0, cap = 0;

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	CU_ASSERT_EQUAL(folded__push_frame(&buf, &len, &cap, "proc", NULL), 0);
	CU_ASSERT_EQUAL(folded__push_frame(&buf, &len, &cap, name, NULL), 0);
	CU_ASSERT_EQUAL(folded__push_frame(&buf, &len, &cap, "k", "_[k]"), 0);
	CU_ASSERT_EQUAL(len, 4 + 1 + 299 + 1 + 5);
	CU_ASSERT_NSTRING_EQUAL(buf, "proc;nnn", 8);
	CU_ASSERT_STRING_EQUAL(buf + len - 6, ";k_[k]");
	free(buf);
}

static void test_merge_sort_write(void)
{
	struct folded *f = folded__new();
	char *text;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(folded__add(f, "p;main;b", 3), 0);
	CU_ASSERT_EQUAL(folded__add(f, "p;main;a", 1), 0);
	CU_ASSERT_EQUAL(folded__add(f, "p;main;b", 2), 0);
	CU_ASSERT_EQUAL(folded__add(f, "a;x", 7), 0);
	CU_ASSERT_EQUAL(folded__nr_stacks(f), 3);
	CU_ASSERT_EQUAL(folded__total(f), 13);
	text = write_to_string(f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_STRING_EQUAL(text, "a;x 7\np;main;a 1\np;main;b 5\n");
	free(text);
	folded__free(f);
	folded__free(NULL);
}

static void test_many_stacks_grow(void)
{
	struct folded *f = folded__new();
	char stack[64];
	char *text;
	size_t lines = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 5000; i++) {
			snprintf(stack, sizeof(stack), "p;f%05d", i);
			CU_ASSERT_EQUAL_FATAL(folded__add(f, stack, 1), 0);
		}
	CU_ASSERT_EQUAL(folded__nr_stacks(f), 5000);
	CU_ASSERT_EQUAL(folded__total(f), 10000);
	text = write_to_string(f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	for (char *p = text; *p; p++)
		lines += *p == '\n';
	CU_ASSERT_EQUAL(lines, 5000);
	CU_ASSERT_NSTRING_EQUAL(text, "p;f00000 2\np;f00001 2\n", 22);
	free(text);
	folded__free(f);
}

/* --- from a profile model ---------------------------------------------------------------- */

static uint32_t str(struct profile *p, const char *s)
{
	int id = profile__intern(p, s, strlen(s));

	CU_ASSERT_FATAL(id >= 0);
	return id;
}

/* A location of KIND with the NR frames NAMES, each of the kind in KINDS. */
static uint32_t loc(struct profile *p, enum profile_loc_kind kind, uint64_t addr,
		    const char *const *names, const enum profile_frame_kind *kinds, uint32_t nr)
{
	struct profile_frame frames[4];
	struct profile_location l = {
		.kind = kind, .mapping = PROFILE_NONE, .address = addr, .nr_frames = nr,
		.frames = frames,
	};
	int id;

	for (uint32_t i = 0; i < nr; i++)
		frames[i] = (struct profile_frame){ .name = str(p, names[i]), .kind = kinds[i] };
	id = profile__add_location(p, &l);
	CU_ASSERT_FATAL(id >= 0);
	return id;
}

static void add(struct profile *p, const uint32_t *locs, uint32_t n, uint64_t weight,
		const struct profile_labels *l)
{
	int st = profile__add_stack(p, locs, n);

	CU_ASSERT_FATAL(st >= 0);
	CU_ASSERT_FATAL(profile__add_sample(p, st, weight, l) >= 0);
}

static void test_from_profile(void)
{
	static const char *const work[] = { "work", "helper", "inner;x" };
	static const enum profile_frame_kind work_kinds[] = {
		PROFILE_FRAME_USER, PROFILE_FRAME_INLINE, PROFILE_FRAME_INLINE,
	};
	static const char *const names[][1] = {
		{ "main" }, { "js_fn" }, { "entry_SYSCALL_64" }, { "vfs_read" }, { "bad\nname" },
	};
	static const enum profile_frame_kind user = PROFILE_FRAME_USER, jit = PROFILE_FRAME_JIT,
					     kernel = PROFILE_FRAME_KERNEL;
	struct profile *p = profile__new();
	struct folded *f = folded__new();
	uint32_t u_main, u_work, u_jit, k_sys, k_read, u_bad;
	struct profile_labels l;
	char *text;

	CU_ASSERT_FATAL(p != NULL && f != NULL);
	u_main = loc(p, PROFILE_LOC_USER, 0x1000, names[0], &user, 1);
	u_work = loc(p, PROFILE_LOC_USER, 0x2000, work, work_kinds, 3);
	u_jit = loc(p, PROFILE_LOC_JIT, 0x7f0000, names[1], &jit, 1);
	k_sys = loc(p, PROFILE_LOC_KERNEL, 0xffffffff81000000, names[2], &kernel, 1);
	k_read = loc(p, PROFILE_LOC_KERNEL, 0xffffffff81001000, names[3], &kernel, 1);
	u_bad = loc(p, PROFILE_LOC_USER, 0x3000, names[4], &user, 1);

	/* Leaf first: kernel frames, then user frames. */
	l = (struct profile_labels){ .pid = 10, .comm = str(p, "app"),
				     .thread_comm = PROFILE_NONE };
	add(p, (uint32_t[]){ k_read, k_sys, u_work, u_main }, 4, 3, &l);
	l.pid = 12;		/* another process of the same name: the same line */
	add(p, (uint32_t[]){ k_read, k_sys, u_work, u_main }, 4, 4, &l);
	l = (struct profile_labels){ .pid = 10, .tid = 11, .comm = str(p, "app"),
				     .thread_comm = str(p, "worker"), .truncated = true };
	add(p, (uint32_t[]){ u_jit, u_main }, 2, 2, &l);
	l = (struct profile_labels){ .pid = 13, .comm = PROFILE_NONE,
				     .thread_comm = PROFILE_NONE };
	add(p, &u_bad, 1, 1, &l);
	l = (struct profile_labels){ .pid = 14, .tid = 15, .comm = str(p, "a;b"),
				     .thread_comm = PROFILE_NONE };
	add(p, NULL, 0, 5, &l);

	CU_ASSERT_EQUAL(folded__add_profile(f, p, 0), 0);
	CU_ASSERT_EQUAL(folded__nr_stacks(f), 4);
	CU_ASSERT_EQUAL(folded__total(f), 15);
	text = write_to_string(f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_STRING_EQUAL(text,
		"[unknown];bad?name 1\n"
		"a:b;[unknown]/15 5\n"
		"app;main;work;helper_[i];inner:x_[i];entry_SYSCALL_64_[k];vfs_read_[k] 7\n"
		"app;worker/11;[truncated];main;js_fn_[j] 2\n");
	free(text);
	folded__free(f);
	profile__free(p);
}

/* --lines: a frame with a source line is "NAME (BASENAME:LINE)" before its suffix; one
 * without is as before; without FOLDED_LINES the lines are not shown, and locations that
 * differ only in lines fold alike. */
static void test_lines(void)
{
	struct profile *p = profile__new();
	struct folded *f = folded__new(), *plain = folded__new();
	struct profile_frame frames[2];
	struct profile_location l = { .kind = PROFILE_LOC_USER, .mapping = PROFILE_NONE,
				      .address = 0x1000, .nr_frames = 2, .frames = frames };
	struct profile_labels lab;
	uint32_t a, b;
	char *text;

	CU_ASSERT_FATAL(p && f && plain);
	frames[0] = (struct profile_frame){ str(p, "loop"), PROFILE_FRAME_USER, 29,
					    str(p, "/src/dir/inline.c") };
	frames[1] = (struct profile_frame){ str(p, "mix"), PROFILE_FRAME_INLINE, 12,
					    str(p, "mix.h") };
	a = (uint32_t)profile__add_location(p, &l);
	frames[1].line = 13;
	l.address = 0x1004;
	b = (uint32_t)profile__add_location(p, &l);
	CU_ASSERT_NOT_EQUAL(a, b);
	lab = (struct profile_labels){ .pid = 1, .comm = str(p, "app"),
				       .thread_comm = PROFILE_NONE };
	add(p, &a, 1, 2, &lab);
	add(p, &b, 1, 3, &lab);
	frames[0] = (struct profile_frame){ .name = str(p, "main"), .kind = PROFILE_FRAME_USER };
	l.nr_frames = 1;
	l.address = 0x2000;
	a = (uint32_t)profile__add_location(p, &l);
	add(p, &a, 1, 1, &lab);
	CU_ASSERT_EQUAL(folded__add_profile(f, p, FOLDED_LINES), 0);
	text = write_to_string(f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_STRING_EQUAL(text,
		"app;loop (inline.c:29);mix (mix.h:12)_[i] 2\n"
		"app;loop (inline.c:29);mix (mix.h:13)_[i] 3\n"
		"app;main 1\n");
	free(text);
	CU_ASSERT_EQUAL(folded__add_profile(plain, p, 0), 0);
	text = write_to_string(plain);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_STRING_EQUAL(text, "app;loop;mix_[i] 5\napp;main 1\n");
	free(text);
	folded__free(f);
	folded__free(plain);
	profile__free(p);
}

static void test_from_empty_profile(void)
{
	struct profile *p = profile__new();
	struct folded *f = folded__new();
	char *text;

	CU_ASSERT_FATAL(p != NULL && f != NULL);
	CU_ASSERT_EQUAL(folded__add_profile(f, p, 0), 0);
	text = write_to_string(f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_STRING_EQUAL(text, "");
	free(text);
	folded__free(f);
	profile__free(p);
}

/* Weights in nanoseconds (off-CPU time) are written in microseconds, rounded, under half a
 * microsecond left out; in a "wall" profile the off-CPU samples end in [off-cpu] and fold
 * apart from the on-CPU ones of the same stack; in an "off_cpu" one they are not marked. */
static void test_off_cpu(void)
{
	static const char *const names[][1] = { { "main" }, { "do_nanosleep" } };
	static const enum profile_frame_kind user = PROFILE_FRAME_USER,
					     kernel = PROFILE_FRAME_KERNEL;
	const char *types[] = { "wall", "off_cpu" };

	for (int t = 0; t < 2; t++) {
		struct profile *p = profile__new();
		struct folded *f = folded__new();
		struct profile_meta m = { .weight_type = types[t], .weight_unit = "nanoseconds" };
		struct profile_labels l;
		uint32_t u_main, k_sleep;
		char *text;

		CU_ASSERT_FATAL(p != NULL && f != NULL);
		CU_ASSERT_FATAL(profile__set_meta(p, &m) == 0);
		u_main = loc(p, PROFILE_LOC_USER, 0x1000, names[0], &user, 1);
		k_sleep = loc(p, PROFILE_LOC_KERNEL, 0xffffffff81000000, names[1], &kernel, 1);
		l = (struct profile_labels){ .pid = 1, .comm = str(p, "app"),
					     .thread_comm = PROFILE_NONE };
		add(p, &u_main, 1, 1000000, &l);		/* on the CPU: 1 ms */
		l.off_cpu = true;
		add(p, &u_main, 1, 2499, &l);			/* 2.499 us: 2 */
		add(p, (uint32_t[]){ k_sleep, u_main }, 2, 200000500, &l);	/* 200000.5 */
		l.pid = 2;
		add(p, &u_main, 1, 499, &l);			/* under half a us: out */
		CU_ASSERT_EQUAL(folded__add_profile(f, p, 0), 0);
		text = write_to_string(f);
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		if (t == 0) {
			CU_ASSERT_STRING_EQUAL(text,
				"app;main 1000\n"
				"app;main;[off-cpu] 2\n"
				"app;main;do_nanosleep_[k];[off-cpu] 200001\n");
		} else {
			CU_ASSERT_STRING_EQUAL(text,
				"app;main 1002\n"
				"app;main;do_nanosleep_[k] 200001\n");
		}
		free(text);
		folded__free(f);
		profile__free(p);
	}
}

/* --group-by cgroup: the cgroup's path is the root frame; samples of two cgroups fold
 * apart, those without one as before. */
static void test_cgroup_root(void)
{
	static const char *const names[][1] = { { "main" } };
	static const enum profile_frame_kind user = PROFILE_FRAME_USER;
	struct profile *p = profile__new();
	struct folded *f = folded__new();
	struct profile_labels l;
	uint32_t u_main;
	char *text;

	CU_ASSERT_FATAL(p != NULL && f != NULL);
	u_main = loc(p, PROFILE_LOC_USER, 0x1000, names[0], &user, 1);
	l = (struct profile_labels){ .pid = 1, .comm = str(p, "app"), .thread_comm = PROFILE_NONE,
				     .cgroup = str(p, "/system.slice/a;b.service") + 1 };
	add(p, &u_main, 1, 3, &l);
	l.cgroup = str(p, "/") + 1;
	add(p, &u_main, 1, 2, &l);
	l.cgroup = 0;
	add(p, &u_main, 1, 1, &l);
	CU_ASSERT_EQUAL(folded__add_profile(f, p, 0), 0);
	text = write_to_string(f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_STRING_EQUAL(text,
		"/;app;main 2\n"
		"/system.slice/a:b.service;app;main 3\n"
		"app;main 1\n");
	free(text);
	folded__free(f);
	profile__free(p);
}

int register_folded_suite(void)
{
	CU_pSuite s = CU_add_suite("folded", NULL, NULL);

	if (!s || !CU_add_test(s, "frame names and suffixes", test_push_frame) ||
	    !CU_add_test(s, "frames join with ';' and the buffer grows", test_push_joins_and_grows) ||
	    !CU_add_test(s, "identical stacks merge, output sorted", test_merge_sort_write) ||
	    !CU_add_test(s, "many stacks", test_many_stacks_grow) ||
	    !CU_add_test(s, "a profile model folded", test_from_profile) ||
	    !CU_add_test(s, "an empty profile model", test_from_empty_profile) ||
	    !CU_add_test(s, "source lines (--lines)", test_lines) ||
	    !CU_add_test(s, "off-CPU time in microseconds, [off-cpu] in wall profiles",
			 test_off_cpu) ||
	    !CU_add_test(s, "the cgroup as the root frame", test_cgroup_root))
		return -1;
	return 0;
}

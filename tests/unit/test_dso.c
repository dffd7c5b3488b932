// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Unit tests of lib/dso: segment arithmetic, the debuglink CRC, and symbols read from the
 * fixtures of tests/unit/fixtures.mk (tests/fixtures/symbols.c built several ways) and from the
 * system's libc with its build-id debug file.
 */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <CUnit/CUnit.h>
#include "dso/dso.h"
#include "proc/procmaps.h"
#include "suites.h"

#define LIBC_PATH	"/lib/x86_64-linux-gnu/libc.so.6"
#define SYSTEM_DEBUG	"/usr/lib/debug"

/* dso_debug_dir points here during a test; restored by debug_dir__restore. */
static char debug_dir_buf[PATH_MAX];
static const char *saved_debug_dir;

static const char *fx_path(char *buf, size_t size, const char *name)
{
	int n = snprintf(buf, size, "%s/%s", fixtures_dir, name);

	CU_ASSERT_FATAL(n > 0 && (size_t)n < size);
	return buf;
}

/* Point dso_debug_dir at the fixtures' directory NAME ("nodebug" holds nothing). */
static void debug_dir__set(const char *name)
{
	fx_path(debug_dir_buf, sizeof(debug_dir_buf), name);
	dso_debug_dir = debug_dir_buf;
}

static int suite_init(void)
{
	saved_debug_dir = dso_debug_dir;
	return 0;
}

static int suite_cleanup(void)
{
	dso_debug_dir = saved_debug_dir;
	return 0;
}

/* NAME is WANT (NAME may be NULL, which CU_ASSERT_STRING_EQUAL would crash on). */
static bool name_is(const char *name, const char *want)
{
	return name && !strcmp(name, want);
}

static bool str_ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && !strcmp(s + ls - lx, suffix);
}

/* ---- dso_segs__off_to_vaddr ------------------------------------------------------------- */

/* The PT_LOADs of an lld-linked PIE: every segment after the first has p_vaddr != p_offset,
 * and the file has gaps between segments. */
static const struct dso_seg lld_segs[] = {
	{ .offset = 0x000, .vaddr = 0x0000, .filesz = 0x8f4, .memsz = 0x8f4 },
	{ .offset = 0x900, .vaddr = 0x1900, .filesz = 0x290, .memsz = 0x290 },
	{ .offset = 0xb90, .vaddr = 0x2b90, .filesz = 0x1e8, .memsz = 0x1e8 },
	{ .offset = 0xd80, .vaddr = 0x3d80, .filesz = 0x058, .memsz = 0x059 },
};

static const struct dso_seg shifted_segs[] = {
	{ .offset = 0x1000, .vaddr = 0x2000, .filesz = 0x500, .memsz = 0x800 },
	{ .offset = 0xfffffffffffff000, .vaddr = 0x10000, .filesz = 0x1000, .memsz = 0x1000 },
};

static void test_off_to_vaddr(void)
{
	static const struct {
		const struct dso_seg *segs;
		size_t n;
		uint64_t off;
		int ret;
		uint64_t vaddr;
	} cases[] = {
		{ lld_segs, 4, 0x0, 0, 0x0 },
		{ lld_segs, 4, 0x8f3, 0, 0x8f3 },
		{ lld_segs, 4, 0x8f4, -ENOENT, 0 },		/* gap after segment 0 */
		{ lld_segs, 4, 0x8ff, -ENOENT, 0 },
		{ lld_segs, 4, 0x900, 0, 0x1900 },
		{ lld_segs, 4, 0xa00, 0, 0x1a00 },
		{ lld_segs, 4, 0xb8f, 0, 0x1b8f },		/* last byte of segment 1 */
		{ lld_segs, 4, 0xb90, 0, 0x2b90 },		/* first byte of segment 2 */
		{ lld_segs, 4, 0xdd7, 0, 0x3dd7 },
		{ lld_segs, 4, 0xdd8, -ENOENT, 0 },		/* in memsz, not in the file */
		{ lld_segs, 4, UINT64_MAX, -ENOENT, 0 },
		{ lld_segs, 0, 0x0, -ENOENT, 0 },		/* no segments */
		{ shifted_segs, 2, 0xfff, -ENOENT, 0 },
		{ shifted_segs, 2, 0x1000, 0, 0x2000 },
		{ shifted_segs, 2, 0x14ff, 0, 0x24ff },
		{ shifted_segs, 2, 0x1500, -ENOENT, 0 },
		{ shifted_segs, 2, 0x2000, -ENOENT, 0 },	/* == the vaddr: not an offset */
		{ shifted_segs, 2, 0xfffffffffffff000, 0, 0x10000 },
		{ shifted_segs, 2, UINT64_MAX, 0, 0x10fff },	/* no overflow at the top */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t vaddr = 0xdeadbeef;
		int ret = dso_segs__off_to_vaddr(cases[i].segs, cases[i].n, cases[i].off, &vaddr);

		CU_ASSERT_EQUAL(ret, cases[i].ret);
		/* on failure VADDR is left untouched */
		CU_ASSERT_EQUAL(vaddr, cases[i].ret == 0 ? cases[i].vaddr : 0xdeadbeef);
		if (ret != cases[i].ret || (ret == 0 && vaddr != cases[i].vaddr))
			fprintf(stderr, "\n  off_to_vaddr case %zu: off %#llx -> %d %#llx\n", i,
				(unsigned long long)cases[i].off, ret, (unsigned long long)vaddr);
	}
}

/* ---- debuglink_crc32 --------------------------------------------------------------------- */

static void test_debuglink_crc32(void)
{
	static const struct {
		const char *in;
		uint32_t crc;
	} cases[] = {
		{ "", 0x00000000 },
		{ "a", 0xe8b7be43 },
		{ "123456789", 0xcbf43926 },
		{ "The quick brown fox jumps over the lazy dog", 0x414fa339 },
	};
	const unsigned char *s = (const unsigned char *)"123456789";

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const unsigned char *in = (const unsigned char *)cases[i].in;

		CU_ASSERT_EQUAL(debuglink_crc32(0, in, strlen(cases[i].in)), cases[i].crc);
	}
	/* Incremental, as the file is read in chunks. */
	CU_ASSERT_EQUAL(debuglink_crc32(debuglink_crc32(0, s, 4), s + 4, 5), 0xcbf43926);
}

/* ---- dso__open errors ----------------------------------------------------------------- */

static void test_open_errors(void)
{
	static const struct {
		const char *name;
		int err;
	} cases[] = {
		{ "notelf", ENOEXEC },
		{ "empty", ENOEXEC },
		{ "does-not-exist", ENOENT },
		{ ".", EISDIR },
	};
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dso *e;

		errno = 0;
		e = dso__open(fx_path(path, sizeof(path), cases[i].name), NULL);
		CU_ASSERT_PTR_NULL(e);
		CU_ASSERT_EQUAL(errno, cases[i].err);
		if (e || errno != cases[i].err)
			fprintf(stderr, "\n  open %s: errno %d, want %d\n", path, errno, cases[i].err);
		dso__free(e);
	}
	dso__free(NULL);
}

/* ---- symbols of an unstripped PIE -------------------------------------------------------- */

static void test_prog_symbols(void)
{
	/* Names that survive at shared addresses: fx_pub (global) over fx_alias_weak (weak) over
	 * fx_impl (local); fx_weak2 (weak) over fx_local2 (local); fx_asm_b_long (size 8) over
	 * fx_asm_a_short (size 1). The losers sort first by name. */
	static const char *const present[] = {
		"fx_alpha", "fx_beta", "fx_pub", "fx_weak2", "fx_asm_b_long", "main",
	};
	static const char *const collapsed[] = {
		"fx_impl", "fx_alias_weak", "fx_local2", "fx_asm_a_short",
	};
	const struct dso_seg *segs, *last;
	char path[PATH_MAX];
	uint64_t a, off = 0, k;
	const char *bid, *name;
	struct dso *e;
	size_t n;

	debug_dir__set("nodebug");
	e = dso__open(fx_path(path, sizeof(path), "prog"), NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_EQUAL(dso__type(e), ET_DYN);
	CU_ASSERT_PTR_NULL(dso__debug_path(e));	/* has .symtab: no debug file looked for */
	bid = dso__build_id(e);
	CU_ASSERT_PTR_NOT_NULL(bid);
	if (bid)
		CU_ASSERT_EQUAL(strspn(bid, "0123456789abcdef"), 40);
	CU_ASSERT(dso__nr_syms(e) >= 6);

	for (size_t i = 0; i < sizeof(present) / sizeof(present[0]); i++) {
		a = dso__find(e, present[i]);
		CU_ASSERT_NOT_EQUAL(a, 0);
		name = dso__lookup(e, a, &off);
		CU_ASSERT(name_is(name, present[i]));
		CU_ASSERT_EQUAL(off, 0);
		name = dso__lookup(e, a + 3, &off);		/* every function has >= 4 bytes */
		CU_ASSERT(name_is(name, present[i]));
		CU_ASSERT_EQUAL(off, 3);
	}
	for (size_t i = 0; i < sizeof(collapsed) / sizeof(collapsed[0]); i++)
		CU_ASSERT_EQUAL(dso__find(e, collapsed[i]), 0);
	/* the longer size holds: 7 bytes in, still fx_asm_b_long; 8 bytes in, nothing */
	a = dso__find(e, "fx_asm_b_long");
	CU_ASSERT(name_is(dso__lookup(e, a + 7, NULL), "fx_asm_b_long"));
	CU_ASSERT_PTR_NULL(dso__lookup(e, a + 8, NULL));

	/* fx_alpha is small and the next function is 64-byte aligned: past its st_size there
	 * is padding no symbol covers. */
	a = dso__find(e, "fx_alpha");
	for (k = 0; k < 64; k++) {
		name = dso__lookup(e, a + k, &off);
		if (!name || strcmp(name, "fx_alpha"))
			break;
		CU_ASSERT_EQUAL(off, k);
	}
	CU_ASSERT(k > 3 && k < 64);
	CU_ASSERT_PTR_NULL(dso__lookup(e, a + k, NULL));
	CU_ASSERT(name_is(dso__lookup(e, a + 64, NULL), "fx_beta"));

	/* Below the first function and in the data segment after the last one: nothing. */
	CU_ASSERT_PTR_NULL(dso__lookup(e, 0, NULL));
	segs = dso__segs(e, &n);
	CU_ASSERT_FATAL(n >= 2);
	last = &segs[n - 1];
	CU_ASSERT_PTR_NULL(dso__lookup(e, last->vaddr + last->memsz - 1, NULL));
	CU_ASSERT_PTR_NULL(dso__lookup(e, UINT64_MAX, NULL));
	dso__free(e);
}

/* ---- lld layout: file offset -> vaddr -> name on a real file ----------------------------- */

static void test_lld_layout(void)
{
	char path[PATH_MAX], buf[64];
	const struct dso_seg *segs;
	uint64_t off, vaddr = 0;
	bool shifted = false;
	struct dso *e;
	FILE *f;
	size_t n;

	f = fopen(fx_path(path, sizeof(path), "lld.off"), "r");
	if (!f) {
		fprintf(stderr, "\n  no lld fixture (ld.lld missing): lld layout not tested\n");
		return;
	}
	CU_ASSERT_FATAL(fgets(buf, sizeof(buf), f) != NULL);
	fclose(f);
	off = strtoull(buf, NULL, 16);

	debug_dir__set("nodebug");
	e = dso__open(fx_path(path, sizeof(path), "lld"), NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	segs = dso__segs(e, &n);
	for (size_t i = 0; i < n; i++)
		shifted |= segs[i].offset != segs[i].vaddr;
	CU_ASSERT(shifted);	/* else the fixture proves nothing */
	CU_ASSERT_EQUAL(dso_segs__off_to_vaddr(segs, n, off, &vaddr), 0);
	CU_ASSERT_NOT_EQUAL(vaddr, off);
	CU_ASSERT_EQUAL(vaddr, dso__find(e, "fx_alpha"));
	CU_ASSERT(name_is(dso__lookup(e, vaddr + 1, NULL), "fx_alpha"));

	/* The text segment mapped as the kernel maps it, at page granularity: its first page
	 * is a file page that also holds the previous segment's bytes, so the bias is found at
	 * the address, not at the mapping's start. */
	for (size_t i = 0; i < n; i++) {
		const uint64_t base = 0x7f0000000000ull, pg = 0xfff;
		struct map m;
		uint64_t bias = 0, rt = 0;

		if (off < segs[i].offset || off >= segs[i].offset + segs[i].filesz)
			continue;
		m = (struct map){ .start = base + (segs[i].vaddr & ~pg), .pgoff = segs[i].offset & ~pg,
				  .end = base + ((segs[i].vaddr + segs[i].memsz + pg) & ~pg), .path = "lld" };
		CU_ASSERT_EQUAL(dso__bias(e, &m, base + vaddr, &bias), 0);
		CU_ASSERT_EQUAL(bias, base);
		CU_ASSERT_EQUAL(dso__vaddr_to_runtime(e, &m, vaddr, &rt), 0);
		CU_ASSERT_EQUAL(rt, base + vaddr);
		/* Outside the mapping's file bytes: no runtime address. */
		CU_ASSERT_EQUAL(dso__vaddr_to_runtime(e, &m, segs[i].vaddr + segs[i].memsz + 2 * pg,
						      &rt), -ENOENT);
	}
	dso__free(e);
}

/* ---- debug files ------------------------------------------------------------------------- */

static void test_debug_files(void)
{
	static const struct {
		const char *file;
		const char *orig_path;	/* NULL: the file's own */
		const char *debug_dir;	/* under fixtures_dir */
		const char *debug;	/* suffix of dso__debug_path; NULL: none used;
					 * "build-id": <debug_dir>/.build-id/xx/rest.debug */
	} cases[] = {
		{ "prog.stripped", NULL, "debugroot", "build-id" },
		{ "prog.stripped", NULL, "nodebug", NULL },
		{ "other.stripped", NULL, "debugroot", NULL },	/* build id mismatch */
		{ "linked", NULL, "nodebug", "/linked.debug" },
		{ "dotdebug", NULL, "nodebug", "/.debug/dotdebug.debug" },
		{ "global", "/fake/dir/global", "debugroot", "debugroot/fake/dir/global.debug" },
		{ "global", NULL, "debugroot", NULL },
		{ "global", "", "debugroot", NULL },		/* dirname of "" is "." */
		{ "global", "global", "debugroot", NULL },
		{ "badcrc", NULL, "nodebug", NULL },		/* CRC mismatch */
	};
	char path[PATH_MAX], want[PATH_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct dso_seg *segs;
		const char *dbg, *name;
		bool covered = false;
		struct dso *e;
		uint64_t a, v;
		size_t n;

		debug_dir__set(cases[i].debug_dir);
		e = dso__open(fx_path(path, sizeof(path), cases[i].file), cases[i].orig_path);
		CU_ASSERT_PTR_NOT_NULL_FATAL(e);
		dbg = dso__debug_path(e);

		/* fx_pub is in .dynsym (-rdynamic): always there, named by the global symbol */
		a = dso__find(e, "fx_pub");
		CU_ASSERT_NOT_EQUAL(a, 0);
		name = dso__lookup(e, a, NULL);
		CU_ASSERT(name_is(name, "fx_pub"));

		a = dso__find(e, "fx_alpha");
		if (!cases[i].debug) {
			CU_ASSERT_PTR_NULL(dbg);
			CU_ASSERT_EQUAL(a, 0);		/* static functions stay unnamed */
			if (dbg || a)
				fprintf(stderr, "\n  %s: debug file %s used\n", cases[i].file, dbg);
			dso__free(e);
			continue;
		}
		if (!strcmp(cases[i].debug, "build-id")) {
			const char *id = dso__build_id(e);

			CU_ASSERT_PTR_NOT_NULL_FATAL(id);
			snprintf(want, sizeof(want), "%s/.build-id/%.2s/%s.debug",
				 dso_debug_dir, id, id + 2);
			CU_ASSERT(dbg && !strcmp(dbg, want));
		} else {
			CU_ASSERT(dbg && str_ends_with(dbg, cases[i].debug));
		}
		if (!dbg || !a)
			fprintf(stderr, "\n  %s: debug file %s, fx_alpha %#llx\n", cases[i].file,
				dbg ? dbg : "(none)", (unsigned long long)a);
		CU_ASSERT_NOT_EQUAL(a, 0);
		name = dso__lookup(e, a + 2, NULL);
		CU_ASSERT(name_is(name, "fx_alpha"));
		CU_ASSERT_NOT_EQUAL(dso__find(e, "fx_beta"), 0);

		/* Segments are the stripped file's own (the debug file's text has p_filesz 0). */
		segs = dso__segs(e, &n);
		for (size_t j = 0; j < n; j++)
			covered |= a >= segs[j].vaddr && a - segs[j].vaddr < segs[j].filesz;
		CU_ASSERT(covered);
		CU_ASSERT_EQUAL(dso_segs__off_to_vaddr(segs, n, a - segs[0].vaddr + segs[0].offset,
							&v), 0);
		dso__free(e);
	}
}

/* Go's marks: its build id note, or a .go.buildinfo section; a C program has neither. */
static void test_go_marks(void)
{
	static const struct { const char *name; bool go; } files[] = {
		{ "prog", false }, { "static", false }, { "gonote", true }, { "gobuildinfo", true },
	};

	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct dso *d = dso__open(fx_path(path, sizeof(path), files[i].name), NULL);

		CU_ASSERT_PTR_NOT_NULL_FATAL(d);
		CU_ASSERT_EQUAL(dso__is_go(d), files[i].go);
		/* The note scan still finds the GNU build id beside Go's note. */
		if (!strcmp(files[i].name, "gonote"))
			CU_ASSERT_PTR_NOT_NULL(dso__build_id(d));
		dso__free(d);
	}
}

/* ---- the system's libc, named through libc6-dbg's build-id debug file -------------------- */

/* ld.so's entry point _start is an untyped assembly symbol: still a name for its code. */
static void test_entry_point_named(void)
{
	struct dso *d;
	uint64_t a;

	dso_debug_dir = SYSTEM_DEBUG;
	d = dso__open("/lib64/ld-linux-x86-64.so.2", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	a = dso__find(d, "_start");
	if (!dso__debug_path(d)) {
		fprintf(stderr, "\n  no debug file for ld.so: is libc6-dbg installed?\n");
	} else {
		CU_ASSERT_NOT_EQUAL(a, 0);
		CU_ASSERT(name_is(dso__lookup(d, a + 3, NULL), "_start"));
	}
	dso__free(d);
}

static void test_libc(void)
{
	static const char *const statics[] = { "__libc_start_call_main", "start_thread" };
	const char *dbg, *name;
	struct dso *e;
	uint64_t a, off = 1;

	dso_debug_dir = SYSTEM_DEBUG;
	e = dso__open(LIBC_PATH, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_EQUAL(dso__type(e), ET_DYN);
	dbg = dso__debug_path(e);
	CU_ASSERT_PTR_NOT_NULL(dbg);
	if (!dbg)
		fprintf(stderr, "\n  no debug file for %s: is libc6-dbg installed?\n", LIBC_PATH);
	else
		CU_ASSERT_NSTRING_EQUAL(dbg, SYSTEM_DEBUG "/.build-id/", strlen(SYSTEM_DEBUG) + 11);
	CU_ASSERT(dso__nr_syms(e) > 1000);

	for (size_t i = 0; i < sizeof(statics) / sizeof(statics[0]); i++) {
		a = dso__find(e, statics[i]);
		CU_ASSERT_NOT_EQUAL(a, 0);
		name = dso__lookup(e, a + 1, &off);
		CU_ASSERT(name_is(name, statics[i]));
		CU_ASSERT_EQUAL(off, 1);
	}

	/* __restore_rt, the signal trampoline: its symbol starts one byte after its FDE. */
	a = dso__find(e, "__restore_rt");
	CU_ASSERT(a != 0 && dso__fde_start(e, a) == a - 1);

	/* memcpy is an IFUNC; its global .symtab name is "memcpy@@GLIBC_2.14", shown bare. */
	a = dso__find(e, "memcpy");
	CU_ASSERT_NOT_EQUAL(a, 0);
	name = dso__lookup(e, a, NULL);
	CU_ASSERT(name_is(name, "memcpy"));
	CU_ASSERT_EQUAL(dso__find(e, "memcpy@@GLIBC_2.14"), 0);
	dso__free(e);
	dso_debug_dir = saved_debug_dir;
}

static void test_eh_frame_hdr_parse(void)
{
	/* version 1, pcrel|sdata4, udata4, datarel|sdata4; eh_frame ptr; count 2; 2 entries */
	unsigned char h[12 + 16] = { 1, 0x1b, 0x03, 0x3b, 0, 0, 0, 0, 2, 0, 0, 0 };
	uint32_t count = 0;

	CU_ASSERT_EQUAL(eh_frame_hdr__parse(h, sizeof(h), &count), 0);
	CU_ASSERT_EQUAL(count, 2);
	CU_ASSERT_EQUAL(eh_frame_hdr__parse(h, sizeof(h) - 1, &count), -EINVAL);	/* cut */
	CU_ASSERT_EQUAL(eh_frame_hdr__parse(h, 11, &count), -EINVAL);
	h[3] = 0x1b;	/* table encoded pcrel: not searchable */
	CU_ASSERT_EQUAL(eh_frame_hdr__parse(h, sizeof(h), &count), -ENOTSUP);
	h[3] = 0x3b;
	h[1] = 0x1c;	/* 8-byte eh_frame pointer: the count would not be at offset 8 */
	CU_ASSERT_EQUAL(eh_frame_hdr__parse(h, sizeof(h), &count), -ENOTSUP);
	h[1] = 0x1b;
	h[8] = 0;	/* no entries */
	CU_ASSERT_EQUAL(eh_frame_hdr__parse(h, sizeof(h), &count), -EINVAL);
}

static void test_fde_table_find(void)
{
	/* Starts 0x1000, 0x1040, 0x2000 from base 0x1000; FDEs at 0x800, 0x810, 0x820. */
	static const int32_t pairs[] = { 0, -0x800, 0x40, -0x7f0, 0x1000, -0x7e0 };
	static const struct { uint64_t vaddr, start, fde; } cases[] = {
		{ 0xfff, UINT64_MAX, 0 }, { 0x1000, 0x1000, 0x800 }, { 0x103f, 0x1000, 0x800 },
		{ 0x1040, 0x1040, 0x810 }, { 0x1fff, 0x1040, 0x810 }, { 0x2000, 0x2000, 0x820 },
		{ UINT64_MAX, 0x2000, 0x820 },
	};
	struct fde_table t = { (const unsigned char *)pairs, 3, 0x1000 };
	uint64_t start, fde;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int err = fde_table__find(&t, cases[i].vaddr, &start, &fde);

		CU_ASSERT_EQUAL(err, cases[i].start == UINT64_MAX ? -ENOENT : 0);
		if (!err) {
			CU_ASSERT_EQUAL(start, cases[i].start);
			CU_ASSERT_EQUAL(fde, cases[i].fde);
		}
	}
	t.count = 0;
	CU_ASSERT_EQUAL(fde_table__find(&t, 0x1000, &start, NULL), -ENOENT);
}

/* Every function has an FDE: the FDE table gives each static function's start, the same
 * address its symbol has, even where no symbol is left. */
static void test_fde_starts_match_symbols(void)
{
	static const char *const names[] = { "fx_alpha", "fx_beta", "fx_pub" };
	char path[PATH_MAX];
	struct dso *full, *stripped;

	full = dso__open(fx_path(path, sizeof(path), "prog"), NULL);
	stripped = dso__open(fx_path(path, sizeof(path), "linked"), "/nonexistent/linked");
	CU_ASSERT_PTR_NOT_NULL_FATAL(full);
	CU_ASSERT_PTR_NOT_NULL_FATAL(stripped);
	CU_ASSERT_PTR_NULL(dso__debug_path(stripped));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint64_t start = dso__find(full, names[i]);

		CU_ASSERT_NOT_EQUAL_FATAL(start, 0);
		CU_ASSERT_EQUAL(dso__fde_start(full, start), start);
		CU_ASSERT_EQUAL(dso__fde_start(full, start + 3), start);
		CU_ASSERT_EQUAL(dso__fde_start(stripped, start + 3), start);
		/* Static functions have no name left; fx_pub is still in .dynsym. */
		if (strcmp(names[i], "fx_pub")) {
			CU_ASSERT_PTR_NULL(dso__lookup(stripped, start + 3, NULL));
		} else {
			CU_ASSERT_PTR_NOT_NULL(dso__lookup(stripped, start + 3, NULL));
		}
	}
	dso__free(full);
	dso__free(stripped);
}

/* [*START, *END) of section NAME of the file at PATH; false when it has none. */
static bool section_range(const char *path, const char *name, uint64_t *start, uint64_t *end)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	bool found = false;
	int fd = open(path, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;

	while (elf && !elf_getshdrstrndx(elf, &shstrndx) && !found &&
	       (scn = elf_nextscn(elf, scn))) {
		const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;

		if (n && !strcmp(n, name)) {
			*start = sh.sh_addr;
			*end = sh.sh_addr + sh.sh_size;
			found = true;
		}
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return found;
}

/* Whether some address of PATH's PLT sections is named NAME by D's lookups. */
static bool plt_has(struct dso *d, const char *path, const char *name)
{
	static const char *const secs[] = { ".plt", ".plt.sec", ".plt.got" };
	uint64_t start, end;

	for (size_t i = 0; i < 3; i++)
		if (section_range(path, secs[i], &start, &end))
			for (uint64_t a = start; a < end; a += 8)
				if (name_is(dso__lookup(d, a, NULL), name))
					return true;
	return false;
}

/* PLT stubs are named after the function they jump to, from the file's own relocations,
 * and the unsized _init before them does not reach into them. */
static void test_plt_names(void)
{
	char path[PATH_MAX];
	uint64_t plt, plt_end, init, init_end, stub;
	struct dso *d;

	fx_path(path, sizeof(path), "prog");
	CU_ASSERT_FATAL(section_range(path, ".plt", &plt, &plt_end));
	CU_ASSERT_FATAL(section_range(path, ".init", &init, &init_end));
	d = dso__open(path, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	for (stub = plt + 16; stub < plt_end; stub += 16)		/* after PLT0 */
		if (name_is(dso__lookup(d, stub, NULL), "printf@plt"))
			break;
	CU_ASSERT_FATAL(stub < plt_end);
	CU_ASSERT(name_is(dso__lookup(d, stub + 6, NULL), "printf@plt"));
	CU_ASSERT(name_is(dso__lookup(d, init, NULL), "_init"));
	/* PLT0, past the end of .init: not _init (it was, up to the next symbol). */
	CU_ASSERT_PTR_NULL(dso__lookup(d, plt, NULL));
	CU_ASSERT_PTR_NULL(dso__lookup(d, init_end, NULL));
	/* A Debian binary: its exported calls through .plt and .plt.got (hardened layout). */
	dso__free(d);
	d = dso__open("/usr/bin/xz", NULL);
	if (d) {
		CU_ASSERT(plt_has(d, "/usr/bin/xz", "getenv@plt"));
		CU_ASSERT(plt_has(d, "/usr/bin/xz", "__cxa_finalize@plt"));
		dso__free(d);
	}
}

/* Files without .eh_frame_hdr: gcc -static's .eh_frame indexed; functions only .debug_frame
 * describes (compressed), in a file whose start-up code has .eh_frame. Each function's FDE
 * starts where its symbol does. */
static void test_fdes_without_hdr(void)
{
	static const struct {
		const char *file;
		enum dso_cfi which;
		bool hdr, in_file;
	} cases[] = {
		{ "static", DSO_CFI_EH, false, true },
		{ "debugframe", DSO_CFI_DEBUG, false, false },
		{ "debugframe", DSO_CFI_EH, true, true },
		{ "prog", DSO_CFI_EH, true, true },
	};
	static const char *const names[] = { "fx_alpha", "fx_beta", "fx_pub" };
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dso *e = dso__open(fx_path(path, sizeof(path), cases[i].file), NULL);
		struct dso_fdes f;

		CU_ASSERT_PTR_NOT_NULL_FATAL(e);
		CU_ASSERT_EQUAL_FATAL(dso__fdes(e, cases[i].which, &f), 0);
		CU_ASSERT_EQUAL(f.hdr, cases[i].hdr);
		CU_ASSERT_EQUAL(f.in_file, cases[i].in_file);
		CU_ASSERT(f.table.count > (cases[i].hdr ? 2u : 3u));
		for (size_t j = 0; j < sizeof(names) / sizeof(names[0]) && !cases[i].hdr; j++) {
			uint64_t start = dso__find(e, names[j]), fstart, fde;
			struct cie cie;
			uint64_t s, range;
			struct cfi_rd r;

			CU_ASSERT_NOT_EQUAL_FATAL(start, 0);
			CU_ASSERT_EQUAL(dso__fde_start(e, start + 3), start);
			CU_ASSERT_EQUAL_FATAL(fde_table__find(&f.table, start + 3, &fstart, &fde), 0);
			CU_ASSERT_EQUAL(fstart, start);
			CU_ASSERT_EQUAL(cfi_fde__parse(&f.mem, fde, &cie, &s, &range, &r), 0);
			CU_ASSERT_EQUAL(s, start);
		}
		dso__free(e);
	}
}

int register_dso_suite(void)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} tests[] = {
		{ "dso_segs__off_to_vaddr", test_off_to_vaddr },
		{ "debuglink_crc32", test_debuglink_crc32 },
		{ "open errors", test_open_errors },
		{ "PIE symbols, aliases, sizes", test_prog_symbols },
		{ "lld layout", test_lld_layout },
		{ "debug files", test_debug_files },
		{ "libc via build-id debug file", test_libc },
		{ ".eh_frame_hdr header", test_eh_frame_hdr_parse },
		{ "FDE table: lookup", test_fde_table_find },
		{ "FDE starts match symbol starts", test_fde_starts_match_symbols },
		{ "FDEs without .eh_frame_hdr", test_fdes_without_hdr },
		{ "PLT stubs named, _init bounded by its section", test_plt_names },
		{ "the entry point named though untyped", test_entry_point_named },
		{ "Go's marks", test_go_marks },
	};
	CU_pSuite s = CU_add_suite("dso", suite_init, suite_cleanup);

	if (!s)
		return -1;
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!CU_add_test(s, tests[i].name, tests[i].fn))
			return -1;
	return 0;
}

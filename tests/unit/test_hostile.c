// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Hostile files, unit by unit: a file truncated under its dso, a file past the memory budget,
 * DWARF whose compression headers lie or whose .gnu_debugaltlink leads out, a file at a
 * mapping's path that is not the file mapped, a process with too many mappings. The whole
 * profile against such files: tests/integration/hostile.py.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <CUnit/CUnit.h>
#include "base/limits.h"
#include "dso/dso.h"
#include "dso/dsos.h"
#include "proc/procmaps.h"
#include "suites.h"

#define NO_PID	4194500		/* above pid_max: no /proc entry, no map_files */

static const char *fx(const char *name)
{
	static char path[2][PATH_MAX];
	static int i;

	i ^= 1;
	snprintf(path[i], sizeof(path[i]), "%s/%s", fixtures_dir, name);
	return path[i];
}

/* A copy of fixture NAME in a file of our own (PATH, a mkstemp template), patched by PATCH
 * when given. Returns its descriptor. */
static int copy_fixture(const char *name, char *path, void (*patch)(unsigned char *, size_t))
{
	int in = open(fx(name), O_RDONLY), out = mkstemp(path);
	struct stat st;
	unsigned char *buf;

	CU_ASSERT_FATAL(in >= 0 && out >= 0 && !fstat(in, &st));
	buf = malloc(st.st_size);
	CU_ASSERT_FATAL(buf && read(in, buf, st.st_size) == st.st_size);
	if (patch)
		patch(buf, st.st_size);
	CU_ASSERT_FATAL(write(out, buf, st.st_size) == st.st_size);
	free(buf);
	close(in);
	return out;
}

/* The file truncated to nothing after it was opened: no SIGBUS reaches us, and nothing read
 * from it since is believed. */
static void test_truncated(void)
{
	char path[] = "/tmp/profile-hostile-XXXXXX";
	int fd = copy_fixture("prog", path, NULL);
	struct dso *d;
	struct dso_fdes f;
	uint64_t alpha;

	limits__reset();
	d = dso__open(path, path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT(dso__usable(d));
	CU_ASSERT_EQUAL(ftruncate(fd, 0), 0);
	alpha = dso__find(d, "fx_alpha");	/* reads the symbol table: faults */
	CU_ASSERT_EQUAL(alpha, 0);
	CU_ASSERT(dso__faulted(d));
	CU_ASSERT_FALSE(dso__usable(d));
	CU_ASSERT_PTR_NULL(dso__lookup(d, 0x1000, NULL));
	CU_ASSERT_EQUAL(dso__nr_syms(d), 0);
	CU_ASSERT_EQUAL(dso__fdes(d, DSO_CFI_EH, &f), -ENOENT);
	CU_ASSERT_EQUAL(dso__fde_start(d, 0x1000), UINT64_MAX);
	CU_ASSERT_EQUAL(dso__dwarf_check(d), -ESTALE);
	CU_ASSERT_EQUAL(limits__count(LIMIT_FILE_FAULTS), 1);
	dso__free(d);
	/* Opened when already empty: refused, as any file too short for ELF. */
	CU_ASSERT_PTR_NULL(dso__open(path, path));
	close(fd);
	unlink(path);
	limits__reset();
}

/* Past the memory budget a new file is opened (its headers) but not parsed. */
static void test_past_budget(void)
{
	struct dso *d, *parsed;
	uint64_t used;

	limits__reset();
	parsed = dso__open(fx("prog"), NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(parsed);
	CU_ASSERT(dso__nr_syms(parsed) > 0);
	used = limits__used();
	CU_ASSERT(used > 0);
	limits__set_budget(used + 1);
	d = dso__open(fx("prog"), NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_PTR_NULL(dso__lookup(d, dso__find(parsed, "fx_alpha"), NULL));
	CU_ASSERT_EQUAL(dso__nr_syms(d), 0);
	CU_ASSERT_FALSE(dso__usable(d));
	CU_ASSERT(dso__usable(parsed));
	CU_ASSERT_EQUAL(limits__count(LIMIT_MEMORY_FILES), 1);
	CU_ASSERT_EQUAL(dso__dwarf_check(d), -ESTALE);
	dso__free(d);
	dso__free(parsed);
	CU_ASSERT_EQUAL(limits__used(), 0);
	limits__reset();
}

/* The .debug_info of the fixture "debugframe" (every DWARF section zlib-compressed) claims
 * CLAIM bytes. */
static uint64_t claim;

static void patch_claim(unsigned char *buf, size_t len)
{
	Elf *elf = elf_memory((char *)buf, len);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	const char *name;

	CU_ASSERT_FATAL(elf && !elf_getshdrstrndx(elf, &shstrndx));
	while ((scn = elf_nextscn(elf, scn))) {
		gelf_getshdr(scn, &sh);
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".debug_info")) {
			CU_ASSERT_FATAL(sh.sh_flags & SHF_COMPRESSED);
			memcpy(buf + sh.sh_offset + offsetof(Elf64_Chdr, ch_size), &claim, 8);
		}
	}
	elf_end(elf);
}

static int dwarf_check_claiming(uint64_t bytes)
{
	char path[] = "/tmp/profile-hostile-XXXXXX";
	struct dso *d;
	int fd, err;

	claim = bytes;
	fd = copy_fixture("debugframe", path, patch_claim);
	d = dso__open(path, path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	err = dso__dwarf_check(d);
	dso__free(d);
	close(fd);
	unlink(path);
	return err;
}

static void test_dwarf_sizes(void)
{
	struct dso *d;

	elf_version(EV_CURRENT);
	limits__reset();
	d = dso__open(fx("debugframe"), NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_EQUAL(dso__dwarf_check(d), 0);
	CU_ASSERT(limits__used() > 0);
	dso__free(d);
	/* 4 GiB from a few kilobytes: no zlib stream inflates so much, nor does BFD take it. */
	CU_ASSERT_EQUAL(dwarf_check_claiming(4ull << 30), -EFBIG);
	CU_ASSERT_EQUAL(limits__count(LIMIT_SECTION_SIZE), 1);
	/* A size that could be, but not within the budget. */
	limits__set_budget(64 << 10);
	CU_ASSERT_EQUAL(dwarf_check_claiming(48 << 10), -ENOMEM);
	CU_ASSERT_EQUAL(limits__count(LIMIT_MEMORY_DWARF), 1);
	limits__reset();
}

/* BFD is handed /proc/self/fd/N and looks for the alt file under /proc/self/fd/ first. */
static void test_dwarf_altlink(void)
{
	static const struct { const char *name; int err; } cases[] = {
		{ "altlink.up", -ELOOP }, { "altlink.fd", -ELOOP }, { "altlink.abs", 0 },
	};

	limits__reset();
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct dso *d = dso__open(fx(cases[i].name), NULL);

		CU_ASSERT_PTR_NOT_NULL_FATAL(d);
		CU_ASSERT_EQUAL(dso__dwarf_check(d), cases[i].err);
		CU_ASSERT(dso__nr_syms(d) > 0);		/* its symbols are fine */
		dso__free(d);
	}
	CU_ASSERT_EQUAL(limits__count(LIMIT_DWARF_LINK), 2);
	limits__reset();
}

/* A file at the mapping's path is taken only when it is the file mapped. */
static void test_mapped_file_identity(void)
{
	struct dsos *ds = dsos__new();
	char path[PATH_MAX];
	struct stat st;
	struct map m;
	uint32_t id;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ds);
	CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(fx("prog"), path));
	CU_ASSERT_EQUAL_FATAL(stat(path, &st), 0);
	m = (struct map){ .start = 0x1000, .end = 0x2000, .dev = st.st_dev, .ino = st.st_ino,
			  .path = path };
	CU_ASSERT_PTR_NOT_NULL(dsos__get(ds, NO_PID, &m, &id));
	m.dev = st.st_dev + 1;		/* the same inode number on another device */
	CU_ASSERT_PTR_NULL(dsos__get(ds, NO_PID, &m, &id));
	CU_ASSERT(id != UINT32_MAX);
	m.dev = st.st_dev;
	m.ino = st.st_ino + 1;
	CU_ASSERT_PTR_NULL(dsos__get(ds, NO_PID, &m, &id));
	dsos__free(ds);
}

/* The map of fixture NAME at START, its device and inode the file's, into *M and PATH. */
static void fixture_map(const char *name, uint64_t start, struct map *m, char *path)
{
	struct stat st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(fx(name), path));
	CU_ASSERT_EQUAL_FATAL(stat(path, &st), 0);
	*m = (struct map){ .start = start, .end = start + 0x1000, .dev = st.st_dev,
			   .ino = st.st_ino, .path = path };
}

/* A file forgotten: gone from the table, its id given to the next file added, which is
 * itself (not the forgotten file's dso); the reader of the files added sees each. */
static void test_forgotten_file_id_reused(void)
{
	struct dsos *ds = dsos__new();
	char pa[PATH_MAX], pb[PATH_MAX], pc[PATH_MAX];
	struct map a, b, c;
	uint32_t ia, ib, ic, again;
	struct dso *dc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ds);
	fixture_map("prog", 0x1000, &a, pa);
	fixture_map("other", 0x3000, &b, pb);
	fixture_map("static", 0x5000, &c, pc);
	CU_ASSERT_PTR_NOT_NULL(dsos__get(ds, NO_PID, &a, &ia));
	CU_ASSERT_PTR_NOT_NULL(dsos__get(ds, NO_PID, &b, &ib));
	CU_ASSERT(ia == 0 && ib == 1);
	CU_ASSERT_EQUAL(dsos__find(ds, &a), ia);
	dsos__forget(ds, &ia, 1);
	CU_ASSERT(!dsos__known(ds, ia));
	CU_ASSERT_PTR_NULL(dsos__at(ds, ia));
	CU_ASSERT_EQUAL(dsos__find(ds, &a), UINT32_MAX);
	CU_ASSERT_EQUAL(dsos__find(ds, &b), ib);
	dc = dsos__get(ds, NO_PID, &c, &ic);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dc);
	CU_ASSERT_EQUAL(ic, ia);			/* the forgotten id, now the third file's */
	CU_ASSERT_STRING_EQUAL(dso__path(dc), pc);
	CU_ASSERT_EQUAL(dsos__find(ds, &c), ic);
	CU_ASSERT_EQUAL(dsos__count(ds), 2);
	/* The first file again: a new id, its own dso. */
	CU_ASSERT_PTR_NOT_NULL(dsos__get(ds, NO_PID, &a, &again));
	CU_ASSERT_EQUAL(again, 2);
	CU_ASSERT_STRING_EQUAL(dso__path(dsos__at(ds, again)), pa);
	/* Added, in order: 0 (a), 1 (b), 0 (c), 2 (a); then none. */
	CU_ASSERT_EQUAL(dsos__added(ds, 0), 0);
	CU_ASSERT_EQUAL(dsos__added(ds, 1), 1);
	CU_ASSERT_EQUAL(dsos__added(ds, 2), 0);
	CU_ASSERT_EQUAL(dsos__added(ds, 3), 2);
	CU_ASSERT_EQUAL(dsos__added(ds, 4), UINT32_MAX);
	/* Many forgotten and added: lookups stay right as the index is made again. */
	for (int round = 0; round < 200; round++) {
		uint32_t id;

		dsos__forget(ds, &ic, 1);
		CU_ASSERT_EQUAL(dsos__find(ds, &c), UINT32_MAX);
		CU_ASSERT_PTR_NOT_NULL(dsos__get(ds, NO_PID, &c, &id));
		CU_ASSERT_EQUAL(id, ic);
		CU_ASSERT_EQUAL(dsos__find(ds, &b), ib);
	}
	CU_ASSERT_EQUAL(dsos__added(ds, 203), ic);
	CU_ASSERT_EQUAL(dsos__added(ds, 204), UINT32_MAX);
	CU_ASSERT_EQUAL(dsos__added(ds, 2), UINT32_MAX);	/* taken long ago: dropped */
	dsos__free(ds);
}

/* At most LIMIT_MAPS_MAX mappings a process, half of them without a file; a mapping that
 * replaces others is always taken. */
static void test_mappings_bounded(void)
{
	struct procmaps *pm = procmaps__new();
	struct map m = { .path = "" };
	size_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pm);
	limits__reset();
	for (uint64_t i = 0; i < LIMIT_MAPS_MAX; i++) {
		m.start = 0x100000 + 0x2000 * i;
		m.end = m.start + 0x1000;
		CU_ASSERT_EQUAL(procmaps__add(pm, 1, &m), 0);
	}
	procmaps__maps(pm, 1, &n);
	CU_ASSERT_EQUAL(n, LIMIT_MAPS_MAX / 2);
	m.path = "/usr/lib/x.so";
	for (uint64_t i = 0; i < LIMIT_MAPS_MAX; i++) {
		m.start = 0x100000000 + 0x2000 * i;
		m.end = m.start + 0x1000;
		CU_ASSERT_EQUAL(procmaps__add(pm, 1, &m), 0);
	}
	procmaps__maps(pm, 1, &n);
	CU_ASSERT_EQUAL(n, LIMIT_MAPS_MAX);
	CU_ASSERT_EQUAL(limits__count(LIMIT_MAPS), LIMIT_MAPS_MAX);
	/* One mapping over the first hundred: they go, it comes. */
	m.start = 0x100000;
	m.end = 0x100000 + 0x2000 * 100;
	CU_ASSERT_EQUAL(procmaps__add(pm, 1, &m), 0);
	procmaps__maps(pm, 1, &n);
	CU_ASSERT_EQUAL(n, LIMIT_MAPS_MAX - 99);
	CU_ASSERT_PTR_NOT_NULL(procmaps__find(pm, 1, 0x100000 + 0x2000 * 50));
	CU_ASSERT(limits__used() > 0);
	procmaps__free(pm);
	CU_ASSERT_EQUAL(limits__used(), 0);
	limits__reset();
}

int register_hostile_suite(void)
{
	CU_pSuite s = CU_add_suite("hostile files", NULL, NULL);

	if (!s || !CU_add_test(s, "a file truncated under its dso", test_truncated) ||
	    !CU_add_test(s, "a new file past the memory budget", test_past_budget) ||
	    !CU_add_test(s, "DWARF sizes claimed", test_dwarf_sizes) ||
	    !CU_add_test(s, "a .gnu_debugaltlink BFD would follow out", test_dwarf_altlink) ||
	    !CU_add_test(s, "only the file mapped", test_mapped_file_identity) ||
	    !CU_add_test(s, "a forgotten file's id reused", test_forgotten_file_id_reused) ||
	    !CU_add_test(s, "mappings per process", test_mappings_bounded))
		return -1;
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * libFuzzer: the search for a stripped file's debug file. The input is two files: a program
 * (its build id and .gnu_debuglink are the input's) and a debug file, put where the program
 * says to look: under the debug directory by build id, next to the program and in its .debug/
 * by debuglink name. Half the time the debuglink's CRC is set to the debug file's, so that
 * the candidate is taken and read (its symbols, and the DWARF measured for BFD).
 *
 * Input: the program's length (2 bytes, little-endian), a flag byte (1: set the CRC), the
 * program, the debug file.
 */
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/limits.h"
#include "dso/dso.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], debug_dir[96];

static int write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "w");
	int ok = f && fwrite(p, 1, n, f) == n;

	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

/* The .gnu_debuglink of the ELF file at P (N bytes): its name into NAME (no '/', as the
 * profiler takes it) and where its CRC is in P. Returns 0 or -1. */
static int debuglink(unsigned char *p, size_t n, char *name, size_t max, size_t *crc_off)
{
	Elf *elf = elf_memory((char *)p, n);
	Elf_Scn *scn = NULL;
	size_t shstrndx, len;
	const char *s;
	GElf_Shdr sh;
	int err = -1;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || !(s = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(s, ".gnu_debuglink") || sh.sh_type == SHT_NOBITS || sh.sh_offset > n ||
		    sh.sh_size > n - sh.sh_offset)
			continue;
		len = strnlen((const char *)p + sh.sh_offset, sh.sh_size);
		if (!len || len >= max || len == sh.sh_size || memchr(p + sh.sh_offset, '/', len) ||
		    !strcmp((const char *)p + sh.sh_offset, ".") ||
		    !strcmp((const char *)p + sh.sh_offset, ".."))
			break;
		memcpy(name, p + sh.sh_offset, len + 1);
		*crc_off = sh.sh_offset + ((len + 4) & ~(size_t)3);
		err = *crc_off + 4 <= sh.sh_offset + sh.sh_size ? 0 : -1;
		break;
	}
out:
	elf_end(elf);
	return err;
}

static void setup(void)
{
	char path[160];

	if (dir[0])
		return;
	snprintf(dir, sizeof(dir), "/tmp/fuzz-debugfile-%d", (int)getpid());
	snprintf(debug_dir, sizeof(debug_dir), "%s/debugroot", dir);
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/.debug", dir);
	mkdir(path, 0700);
	mkdir(debug_dir, 0700);
	snprintf(path, sizeof(path), "%s/.build-id", debug_dir);
	mkdir(path, 0700);
	elf_version(EV_CURRENT);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char prog[128], name[256], cand[3][400], id_dir[200];
	size_t n, crc_off, nr = 0;
	unsigned char *copy;
	const char *id;
	bool made_id_dir = false;
	struct dso *d;

	if (size < 3)
		return 0;
	setup();
	n = (size_t)(data[0] | data[1] << 8);
	if (n > size - 3)
		n = size - 3;
	copy = malloc(n ? n : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 3, n);
	/* The debug file next to the program and in .debug/, by its debuglink name. */
	if (!debuglink(copy, n, name, sizeof(name), &crc_off)) {
		if (data[2] & 1) {
			uint32_t crc = debuglink_crc32(0, data + 3 + n, size - 3 - n);

			memcpy(copy + crc_off, &crc, 4);
		}
		snprintf(cand[nr++], sizeof(cand[0]), "%s/%s", dir, name);
		snprintf(cand[nr++], sizeof(cand[0]), "%s/.debug/%s", dir, name);
	}
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	if (write_file(prog, copy, n))
		goto out;
	dso_debug_dir = debug_dir;
	d = dso__open(prog, NULL);
	if (d) {
		/* ... and by its build id. */
		id = dso__build_id(d);	/* the dso's: not used once it is freed */
		made_id_dir = id && strlen(id) > 2 && strlen(id) < 130;
		if (made_id_dir) {
			snprintf(id_dir, sizeof(id_dir), "%s/.build-id/%.2s", debug_dir, id);
			mkdir(id_dir, 0700);
			snprintf(cand[nr++], sizeof(cand[0]), "%s/%s.debug", id_dir, id + 2);
		}
		for (size_t i = 0; i < nr; i++)
			write_file(cand[i], data + 3 + n, size - 3 - n);
		dso__debug_path(d);
		dso__lookup(d, 0x1000, NULL);
		dso__dwarf_check(d);
		dso__free(d);
		for (size_t i = 0; i < nr; i++)
			unlink(cand[i]);
		if (made_id_dir)
			rmdir(id_dir);
	}
	unlink(prog);
out:
	limits__reset();
	free(copy);
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * dwarf: whether the DWARF of a file may be handed to a DWARF reader (BFD, in
 * symbolize/inlines), which reads whole sections into memory, inflated to the size their
 * compression headers claim, and opens the file a .gnu_debugaltlink names by itself (see
 * dso.h, dso__dwarf_check). What BFD would read is measured here, from the section headers,
 * before BFD sees the file.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include "base/limits.h"
#include "base/log.h"
#include "dso/dso_int.h"

#define ZLIB_MAX_RATIO	1032	/* deflate never expands data more than this */
#define BFD_MAX_RATIO	10	/* BFD refuses a section more than 10 times its file's size */
#define ALTLINK_MAX	4096

/*
 * The inflated size of the DWARF section SH (NAME) of a file of FILE_SIZE bytes whose bytes
 * are at P (NULL: not in the file) into *SIZE. Returns 0, or -EFBIG when its header claims
 * more than the file could hold: deflate (zlib) cannot expand by more than 1032 times, and
 * BFD (2.40) refuses a section more than 10 times the size of its file (libc6-dbg's
 * .debug_info is 1.4 times its file).
 */
static int section_size(const GElf_Shdr *sh, const char *name, const unsigned char *p,
			uint64_t file_size, uint64_t *size)
{
	uint64_t claim = 0, packed = sh->sh_size;
	Elf64_Chdr ch;

	*size = sh->sh_size;
	if (sh->sh_type == SHT_NOBITS || !p)
		return 0;
	if (sh->sh_flags & SHF_COMPRESSED) {
		if (packed < sizeof(ch))
			return -EFBIG;
		memcpy(&ch, p, sizeof(ch));
		claim = ch.ch_size;
		packed -= sizeof(ch);
		if (ch.ch_type == ELFCOMPRESS_ZLIB && claim / ZLIB_MAX_RATIO > packed)
			return -EFBIG;
	} else if (!strncmp(name, ".zdebug", 7)) {
		/* GNU's older form: "ZLIB", the size in 8 big-endian bytes, the stream */
		if (packed < 12 || memcmp(p, "ZLIB", 4))
			return 0;
		for (int i = 4; i < 12; i++)
			claim = claim << 8 | p[i];
		packed -= 12;
		if (claim / ZLIB_MAX_RATIO > packed)
			return -EFBIG;
	} else {
		return 0;
	}
	if (claim / BFD_MAX_RATIO > file_size)
		return -EFBIG;
	*size = claim;
	return 0;
}

/*
 * Whether BFD may follow the .gnu_debugaltlink NAME. profile hands BFD /proc/self/fd/N, and
 * BFD looks for the alt file as /proc/self/fd/ + NAME, /proc/self/fd/.debug/ + NAME, then
 * under its debug directories (root's): a relative NAME or one with ".." climbs out of
 * /proc/self/fd to any file (a FIFO: BFD's open blocks), and a NAME whose first component is
 * a number is one of our own descriptors (a pipe, a container's root directory). Safe: an
 * absolute NAME without "." or ".." whose first component is not a number, which under
 * /proc/self/fd names nothing.
 */
static bool altlink_safe(const char *name, size_t len)
{
	const char *p = name, *end = name + len, *next;
	bool first = true, digits;

	if (!len || name[0] != '/')
		return false;
	while (p < end) {
		while (p < end && *p == '/')
			p++;
		next = memchr(p, '/', (size_t)(end - p));
		if (!next)
			next = end;
		if (next - p == 1 && p[0] == '.')
			return false;
		if (next - p == 2 && p[0] == '.' && p[1] == '.')
			return false;
		digits = next > p;
		for (const char *c = p; c < next; c++)
			digits = digits && isdigit((unsigned char)*c);
		if (first && digits)
			return false;
		first = false;
		p = next;
	}
	return true;
}

void dso__measure_dwarf(struct dso *d, Elf *elf, uint64_t file_size)
{
	uint64_t total = 0, size;
	const unsigned char *p;
	Elf_Scn *scn = NULL;
	size_t shstrndx, len;
	const char *name;
	GElf_Shdr sh;
	int err = 0;

	d->dwarf_bytes = 0;
	d->dwarf_err = 0;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while (!err && (scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		p = sh.sh_type != SHT_NOBITS && sh.sh_offset <= file_size &&
		    sh.sh_size <= file_size - sh.sh_offset ?
			(const unsigned char *)elf_rawfile(elf, NULL) + sh.sh_offset : NULL;
		if (!strcmp(name, ".gnu_debugaltlink")) {
			len = p ? strnlen((const char *)p, sh.sh_size < ALTLINK_MAX ?
							       sh.sh_size : ALTLINK_MAX) : 0;
			if (p && !altlink_safe((const char *)p, len))
				err = -ELOOP;
			continue;
		}
		if (strncmp(name, ".debug_", 7) && strncmp(name, ".zdebug_", 8))
			continue;
		err = section_size(&sh, name, p, file_size, &size);
		if (!err && (size > UINT64_MAX / 4 - total))
			err = -EFBIG;
		total += err ? 0 : size;
	}
	if (err == -ELOOP)
		limits__hit(LIMIT_DWARF_LINK, 1);
	else if (err)
		limits__hit(LIMIT_SECTION_SIZE, 1);
	if (err)
		pr_debug("%s: its DWARF is not read: %s", d->path, err == -ELOOP ?
			 "its .gnu_debugaltlink could lead out of the debug directories" :
			 "a section claims more than the file holds");
	d->dwarf_bytes = total;
	d->dwarf_err = err;
}

int dso__dwarf_check(struct dso *d)
{
	dso__debug_path(d);		/* the symbols read, and the DWARF measured with them */
	if (!dso__usable(d))
		return -ESTALE;
	if (d->dwarf_err)
		return d->dwarf_err;
	if (!d->dwarf_charged) {
		/* BFD keeps the sections it reads, and about as much again of what it makes of
		 * them. */
		if (!limits__reserve(2 * d->dwarf_bytes)) {
			limits__hit(LIMIT_MEMORY_DWARF, 1);
			pr_debug("%s: its DWARF (%llu bytes) is not read: the memory budget is "
				 "spent", d->path, (unsigned long long)d->dwarf_bytes);
			d->dwarf_err = -ENOMEM;
			return d->dwarf_err;
		}
		d->dwarf_charged = true;
	}
	return 0;
}

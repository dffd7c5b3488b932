// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * libFuzzer: compressed sections, as a file's headers claim them. An ELF file is made around
 * the input: .symtab (libelf inflates it for the symbols), .debug_frame or the older
 * .zdebug_frame (inflated, then converted to .eh_frame's format) and .debug_info (only
 * measured, before BFD would see it), each compressed with the size its header claims taken
 * from the input, and its stream the input's bytes as they are or deflated here (so that
 * what inflates is the input, and the readers after inflation are reached).
 *
 * Input: flags (1 byte: 1 deflate here, 2 .zdebug_frame, 4 claim the size in the input rather
 * than the true one), the claimed size (8 bytes, little-endian), two split points (2 bytes
 * each), then the bytes of .symtab, .debug_frame and .debug_info.
 */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include "base/limits.h"
#include "dso/dso.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HDR		13
#define MAX_SECTION	(1 << 16)

static const char shstrtab[] = "\0.shstrtab\0.symtab\0.strtab\0.debug_frame\0.debug_info\0"
			       ".zdebug_frame";
static const char strtab[] = "\0fuzz_a\0fuzz_b\0main";

enum { S_NULL, S_SHSTRTAB, S_SYMTAB, S_STRTAB, S_FRAME, S_INFO, NR_SECTIONS };

struct out {
	unsigned char *buf;
	size_t len, cap;
};

static int put(struct out *o, const void *p, size_t n)
{
	if (o->len + n > o->cap) {
		size_t cap = (o->len + n) * 2;
		unsigned char *b = realloc(o->buf, cap);

		if (!b)
			return -1;
		o->buf = b;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	return 0;
}

/* Append section data for SRC (LEN bytes) compressed as FLAGS say, claiming CLAIM bytes when
 * FLAGS has 4. GNU is the .zdebug form ("ZLIB", big-endian size). */
static int put_compressed(struct out *o, const uint8_t *src, size_t len, int flags,
			  uint64_t claim, int gnu)
{
	uLongf zlen = compressBound(len);
	unsigned char *z = malloc(zlen);
	uint64_t size = flags & 4 ? claim : len;
	int err = 0;

	if (!z)
		return -1;
	if (flags & 1) {
		if (compress(z, &zlen, src, len) != Z_OK)
			zlen = 0;
	} else {
		memcpy(z, src, len);
		zlen = len;
	}
	if (gnu) {
		unsigned char h[12] = "ZLIB";

		for (int i = 0; i < 8; i++)
			h[4 + i] = (unsigned char)(size >> (56 - 8 * i));
		err = put(o, h, sizeof(h));
	} else {
		Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = size, .ch_addralign = 8 };

		err = put(o, &ch, sizeof(ch));
	}
	if (!err)
		err = put(o, z, zlen);
	free(z);
	return err;
}

/* The ELF file around the input, into O. */
static int make_elf(struct out *o, const uint8_t *data, size_t size)
{
	int flags = data[0];
	uint64_t claim, off[NR_SECTIONS] = { 0 }, len[NR_SECTIONS] = { 0 };
	size_t a, b, body = size - HDR;
	const uint8_t *p = data + HDR;
	Elf64_Shdr sh[NR_SECTIONS];
	Elf64_Ehdr eh;

	memcpy(&claim, data + 1, 8);
	a = (size_t)(data[9] | data[10] << 8) % (body + 1);
	b = (size_t)(data[11] | data[12] << 8) % (body + 1);
	if (a > b) {
		size_t t = a;

		a = b;
		b = t;
	}
	memset(&eh, 0, sizeof(eh));
	if (put(o, &eh, sizeof(eh)))
		return -1;
#define SECTION(i, code) do { off[i] = o->len; if (code) return -1; len[i] = o->len - off[i]; } while (0)
	SECTION(S_SHSTRTAB, put(o, shstrtab, sizeof(shstrtab)));
	SECTION(S_SYMTAB, put_compressed(o, p, a, flags, claim, 0));
	SECTION(S_STRTAB, put(o, strtab, sizeof(strtab)));
	SECTION(S_FRAME, put_compressed(o, p + a, b - a, flags, claim, flags & 2));
	SECTION(S_INFO, put_compressed(o, p + b, body - b, flags, claim, 0));
#undef SECTION
	while (o->len % 8)
		if (put(o, "", 1))
			return -1;
	memset(sh, 0, sizeof(sh));
	sh[S_SHSTRTAB] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_STRTAB };
	sh[S_SYMTAB] = (Elf64_Shdr){ .sh_name = 11, .sh_type = SHT_SYMTAB,
				     .sh_flags = SHF_COMPRESSED, .sh_link = S_STRTAB,
				     .sh_entsize = sizeof(Elf64_Sym), .sh_addralign = 8 };
	sh[S_STRTAB] = (Elf64_Shdr){ .sh_name = 19, .sh_type = SHT_STRTAB };
	sh[S_FRAME] = (Elf64_Shdr){ .sh_name = flags & 2 ? 52 : 27, .sh_type = SHT_PROGBITS,
				    .sh_flags = flags & 2 ? 0 : SHF_COMPRESSED, .sh_addralign = 8 };
	sh[S_INFO] = (Elf64_Shdr){ .sh_name = 40, .sh_type = SHT_PROGBITS,
				   .sh_flags = SHF_COMPRESSED, .sh_addralign = 8 };
	for (int i = 1; i < NR_SECTIONS; i++) {
		sh[i].sh_offset = off[i];
		sh[i].sh_size = len[i];
	}
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shoff = o->len;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = NR_SECTIONS;
	eh.e_shstrndx = S_SHSTRTAB;
	memcpy(o->buf, &eh, sizeof(eh));
	return put(o, sh, sizeof(sh));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct out o = { 0 };
	struct dso_fdes f;
	char path[64];
	struct dso *d;
	int fd;

	if (size < HDR || size > HDR + 3 * MAX_SECTION)
		return 0;
	fd = memfd_create("fuzz", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (!make_elf(&o, data, size) && write(fd, o.buf, o.len) == (ssize_t)o.len) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		dso_debug_dir = "/nonexistent";
		d = dso__open(path, "/nonexistent/fuzz");
		if (d) {
			dso__nr_syms(d);
			dso__lookup(d, 0x1000, NULL);
			if (!dso__fdes(d, DSO_CFI_DEBUG, &f))
				dso__fde_start(d, 0x1000);
			dso__dwarf_check(d);
			dso__free(d);
		}
	}
	limits__reset();
	free(o.buf);
	close(fd);
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * elfsym: PT_LOAD segments and function symbols of one ELF file, read with libelf, with names
 * from a separate debug file (by build id, then by .gnu_debuglink with its CRC checked) when
 * the file is stripped of .symtab.
 *
 * Symbol names are copied into one arena owned by the elfsym, so no file descriptor or Elf
 * handle stays open after elfsym__open returns: a profiler may hold hundreds of these.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "dso/elfsym.h"
#include "base/log.h"

#define ELFSYM_MAX_FILE		(4ULL << 30)	/* refuse files above 4 GiB */
#define BUILD_ID_MAX		64		/* bytes; GNU ld writes 20 */
#define NOTE_MAX		(1U << 20)	/* bytes of one note segment or section scanned */
#define DEBUGLINK_NAME_MAX	255
#define SYM_NAME_MAX		4095		/* longer names are truncated */
#define CRC_CHUNK		(64U << 10)

const char *elfsym_debug_dir = "/usr/lib/debug";

struct elfsym_sym {
	uint64_t start;
	uint64_t size;
	const char *name;	/* into the file while loading, into elfsym.names afterwards */
	unsigned int len;	/* name length, version suffix dropped, at most SYM_NAME_MAX */
	unsigned int rank;	/* binding preference: 2 global, 1 weak, 0 local */
};

struct elfsym {
	int type;
	struct load_seg *segs;
	size_t nr_segs;
	struct elfsym_sym *syms;
	size_t nr_syms;
	size_t cap_syms;
	char *names;
	char *debug_path;
	char *build_id;
	uint64_t *fde_starts;	/* function starts from .eh_frame_hdr, sorted */
	size_t nr_fdes;
};

/* An ELF file opened for reading; both members are closed by elf_file__close. */
struct elf_file {
	int fd;
	Elf *elf;
	struct stat st;
};

/* ---- pure helpers ------------------------------------------------------------------------ */

int load_segs__off_to_vaddr(const struct load_seg *segs, size_t n, uint64_t off,
			    uint64_t *vaddr)
{
	for (size_t i = 0; i < n; i++) {
		const struct load_seg *s = &segs[i];

		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = off - s->offset + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

uint32_t debuglink_crc32(uint32_t crc, const unsigned char *buf, size_t len)
{
	return (uint32_t)crc32_z(crc, buf, len);
}

/* ---- opening files ----------------------------------------------------------------------- */

static void elf_file__close(struct elf_file *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	f->elf = NULL;
	f->fd = -1;
}

/* Open PATH as an ELF file into F. Returns 0 or a negative errno; F is closed on failure. */
static int elf_file__open(struct elf_file *f, const char *path)
{
	GElf_Ehdr ehdr;
	int err;

	f->elf = NULL;
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return -errno;
	if (fstat(f->fd, &f->st)) {
		err = -errno;
		goto out_err;
	}
	if (!S_ISREG(f->st.st_mode)) {
		err = S_ISDIR(f->st.st_mode) ? -EISDIR : -ENOEXEC;
		goto out_err;
	}
	if ((uint64_t)f->st.st_size > ELFSYM_MAX_FILE) {
		err = -EFBIG;
		goto out_err;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		err = -ENOSYS;
		goto out_err;
	}
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &ehdr)) {
		err = -ENOEXEC;
		goto out_err;
	}
	return 0;

out_err:
	elf_file__close(f);
	return err;
}

/* ---- segments and notes ------------------------------------------------------------------ */

static int elfsym__read_segs(struct elfsym *e, Elf *elf)
{
	size_t nr_phdrs, n = 0;
	GElf_Phdr phdr;

	if (elf_getphdrnum(elf, &nr_phdrs))
		return -ENOEXEC;
	if (nr_phdrs == 0)
		return 0;
	e->segs = calloc(nr_phdrs, sizeof(*e->segs));
	if (!e->segs)
		return -ENOMEM;
	for (size_t i = 0; i < nr_phdrs; i++) {
		if (!gelf_getphdr(elf, (int)i, &phdr))
			return -ENOEXEC;
		if (phdr.p_type != PT_LOAD)
			continue;
		e->segs[n].offset = phdr.p_offset;
		e->segs[n].vaddr = phdr.p_vaddr;
		e->segs[n].filesz = phdr.p_filesz;
		e->segs[n].memsz = phdr.p_memsz;
		n++;
	}
	e->nr_segs = n;
	return 0;
}

/* Scan one block of notes for NT_GNU_BUILD_ID. Returns its length (copied to ID) or 0. */
static size_t notes__build_id(Elf_Data *data, unsigned char *id)
{
	size_t off = 0, name_off, desc_off, next;
	GElf_Nhdr nhdr;

	while (off < data->d_size) {
		next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off);
		if (next == 0 || next <= off)
			break;
		if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == sizeof("GNU") &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", sizeof("GNU")) &&
		    nhdr.n_descsz > 1 && nhdr.n_descsz <= BUILD_ID_MAX) {
			memcpy(id, (const char *)data->d_buf + desc_off, nhdr.n_descsz);
			return nhdr.n_descsz;
		}
		off = next;
	}
	return 0;
}

/* The build id of ELF from its PT_NOTE segments, else its SHT_NOTE sections; 0 when none. */
static size_t elf__build_id(Elf *elf, unsigned char *id)
{
	size_t nr_phdrs, len;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Phdr phdr;
	Elf_Data *data;

	if (elf_getphdrnum(elf, &nr_phdrs))
		nr_phdrs = 0;
	for (size_t i = 0; i < nr_phdrs; i++) {
		if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_NOTE ||
		    phdr.p_filesz == 0 || phdr.p_filesz > NOTE_MAX || phdr.p_offset > INT64_MAX)
			continue;
		data = elf_getdata_rawchunk(elf, (int64_t)phdr.p_offset, phdr.p_filesz,
					    phdr.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (data && (len = notes__build_id(data, id)))
			return len;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE ||
		    shdr.sh_size > NOTE_MAX || (shdr.sh_flags & SHF_COMPRESSED))
			continue;
		data = elf_getdata(scn, NULL);
		if (data && (len = notes__build_id(data, id)))
			return len;
	}
	return 0;
}

static char *hex__dup(const unsigned char *buf, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	char *s = malloc(2 * len + 1);

	if (!s)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		s[2 * i] = digits[buf[i] >> 4];
		s[2 * i + 1] = digits[buf[i] & 0xf];
	}
	s[2 * len] = '\0';
	return s;
}

/* ---- sections ---------------------------------------------------------------------------- */

/* The section data of SCN, decompressed first when SHF_COMPRESSED; NULL on failure. */
static Elf_Data *scn__data(Elf_Scn *scn, const GElf_Shdr *shdr)
{
	if (shdr->sh_type == SHT_NOBITS)
		return NULL;
	if ((shdr->sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return NULL;
	return elf_getdata(scn, NULL);
}

static bool elf__has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB)
			return true;
	return false;
}

/*
 * Read .gnu_debuglink of ELF: NAME (NUL-terminated, at most DEBUGLINK_NAME_MAX bytes, no '/'),
 * padding to 4, CRC32 in the file's byte order. Returns 0, or -ENOENT when absent or malformed.
 */
static int elf__debuglink(Elf *elf, char *name, uint32_t *crc)
{
	const unsigned char *p, *c;
	Elf_Scn *scn = NULL;
	size_t shstrndx, len, crc_off;
	const char *sname;
	GElf_Ehdr ehdr;
	GElf_Shdr shdr;
	Elf_Data *data;

	if (elf_getshdrstrndx(elf, &shstrndx) || !gelf_getehdr(elf, &ehdr))
		return -ENOENT;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr))
			continue;
		sname = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (sname && !strcmp(sname, ".gnu_debuglink"))
			break;
	}
	if (!scn || !(data = scn__data(scn, &shdr)) || !data->d_buf)
		return -ENOENT;
	p = data->d_buf;
	len = strnlen((const char *)p, data->d_size < DEBUGLINK_NAME_MAX + 1 ?
					data->d_size : DEBUGLINK_NAME_MAX + 1);
	if (len == 0 || len > DEBUGLINK_NAME_MAX || memchr(p, '/', len))
		return -ENOENT;
	crc_off = (len + 1 + 3) & ~(size_t)3;
	if (crc_off + 4 > data->d_size)
		return -ENOENT;
	memcpy(name, p, len);
	name[len] = '\0';
	c = p + crc_off;
	if (ehdr.e_ident[EI_DATA] == ELFDATA2MSB)
		*crc = (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 | (uint32_t)c[2] << 8 | c[3];
	else
		*crc = (uint32_t)c[3] << 24 | (uint32_t)c[2] << 16 | (uint32_t)c[1] << 8 | c[0];
	return 0;
}

/* ---- symbols ----------------------------------------------------------------------------- */

static int elfsym__push(struct elfsym *e, const struct elfsym_sym *sym)
{
	struct elfsym_sym *syms;
	size_t cap;

	if (e->nr_syms == e->cap_syms) {
		cap = e->cap_syms ? 2 * e->cap_syms : 256;
		if (cap > SIZE_MAX / sizeof(*syms))
			return -ENOMEM;
		syms = realloc(e->syms, cap * sizeof(*syms));
		if (!syms)
			return -ENOMEM;
		e->syms = syms;
		e->cap_syms = cap;
	}
	e->syms[e->nr_syms++] = *sym;
	return 0;
}

/* Length of NAME without a symbol version suffix ("memcpy@@GLIBC_2.14" -> 6), capped. */
static unsigned int sym_name__len(const char *name)
{
	size_t len = strnlen(name, SYM_NAME_MAX);
	const char *at = memchr(name, '@', len);

	if (at && at != name)
		len = (size_t)(at - name);
	return (unsigned int)len;
}

/* Append the function symbols of symbol table SCN. Names point into ELF until finalized. */
static int elfsym__read_symtab(struct elfsym *e, Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr)
{
	struct elfsym_sym s;
	GElf_Shdr strshdr;
	Elf_Scn *strscn;
	Elf_Data *data;
	const char *name;
	size_t entsize, n;
	GElf_Sym sym;
	int type, bind, err;

	data = scn__data(scn, shdr);
	strscn = elf_getscn(elf, shdr->sh_link);
	if (!data || !strscn || !gelf_getshdr(strscn, &strshdr) || !scn__data(strscn, &strshdr))
		return -ENOEXEC;
	entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	if (entsize == 0)
		return -ENOEXEC;
	n = data->d_size / entsize;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getsym(data, (int)i, &sym))
			return -ENOEXEC;
		type = GELF_ST_TYPE(sym.st_info);
		bind = GELF_ST_BIND(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_value == 0 ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(elf, shdr->sh_link, sym.st_name);
		if (!name || !name[0])
			continue;
		s.start = sym.st_value;
		s.size = sym.st_size;
		s.name = name;
		s.len = sym_name__len(name);
		s.rank = bind == STB_LOCAL ? 0 : bind == STB_WEAK ? 1 : 2;
		err = elfsym__push(e, &s);
		if (err)
			return err;
	}
	return 0;
}

/* Read every SHT_SYMTAB and SHT_DYNSYM section of ELF. */
static int elfsym__read_syms(struct elfsym *e, Elf *elf)
{
	/* .symtab holds what .dynsym has and more: reading both doubles the sort (node: 185k
	 * symbols instead of 110k). */
	GElf_Word skip = elf__has_symtab(elf) ? SHT_DYNSYM : SHT_NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	int err;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr))
			return -ENOEXEC;
		if ((shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM) ||
		    shdr.sh_type == skip)
			continue;
		err = elfsym__read_symtab(e, elf, scn, &shdr);
		if (err)
			return err;
	}
	return 0;
}

/* Address ascending; at one address the preferred symbol first (rank, size, then name). */
static unsigned int leading_underscores(const struct elfsym_sym *s)
{
	unsigned int n = 0;

	while (n < s->len && s->name[n] == '_')
		n++;
	return n;
}

static int sym__cmp(const void *pa, const void *pb)
{
	const struct elfsym_sym *a = pa, *b = pb;
	int c;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank > b->rank ? -1 : 1;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	/* Aliases: the public spelling (pthread_key_create, not __pthread_key_create), as perf
	 * shows it; then the shorter; then by name, so the choice is stable. */
	if (leading_underscores(a) != leading_underscores(b))
		return leading_underscores(a) < leading_underscores(b) ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	c = strncmp(a->name, b->name, a->len < b->len ? a->len : b->len);
	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

/* Sort, keep one symbol per address, copy names into the arena. Must run before the ELF
 * handles the names point into are closed. */
static int elfsym__finalize(struct elfsym *e)
{
	struct elfsym_sym *syms;
	size_t n = 0, total = 0;
	char *p;

	if (e->nr_syms == 0)
		return 0;
	qsort(e->syms, e->nr_syms, sizeof(*e->syms), sym__cmp);
	for (size_t i = 0; i < e->nr_syms; i++) {
		if (n && e->syms[n - 1].start == e->syms[i].start)
			continue;
		e->syms[n++] = e->syms[i];
		total += e->syms[i].len + 1;
	}
	e->nr_syms = n;
	e->names = malloc(total);
	if (!e->names)
		return -ENOMEM;
	p = e->names;
	for (size_t i = 0; i < n; i++) {
		memcpy(p, e->syms[i].name, e->syms[i].len);
		p[e->syms[i].len] = '\0';
		e->syms[i].name = p;
		p += e->syms[i].len + 1;
	}
	syms = realloc(e->syms, n * sizeof(*syms));
	if (syms) {
		e->syms = syms;
		e->cap_syms = n;
	}
	return 0;
}

/* ---- debug files ------------------------------------------------------------------------- */

static int fd__crc32(int fd, uint64_t size, uint32_t *crc)
{
	unsigned char *buf = malloc(CRC_CHUNK);
	uint32_t c = 0;
	uint64_t off = 0;
	ssize_t r;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (off < size) {
		r = pread(fd, buf, CRC_CHUNK, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? -errno : -EIO;
			goto out;
		}
		c = debuglink_crc32(c, buf, (size_t)r);
		off += (uint64_t)r;
	}
	*crc = c;
out:
	free(buf);
	return err;
}

/*
 * Try PATH as the debug file of the file SELF: it must not be SELF, must be ELF with a .symtab,
 * and match either the build id ID (when ID_LEN) or the CRC32 CRC of its contents.
 * Returns 0 with DBG open, -ENOMEM, or another negative errno for "not this one".
 */
static int debug__try(struct elf_file *dbg, const char *path, const struct stat *self,
		      const unsigned char *id, size_t id_len, uint32_t crc)
{
	unsigned char dbg_id[BUILD_ID_MAX];
	uint32_t dbg_crc = 0;
	int err;

	err = elf_file__open(dbg, path);
	if (err)
		return err;
	if (dbg->st.st_dev == self->st_dev && dbg->st.st_ino == self->st_ino) {
		err = -ELOOP;
		goto out_err;
	}
	if (id_len) {
		if (elf__build_id(dbg->elf, dbg_id) != id_len || memcmp(dbg_id, id, id_len)) {
			err = -ESTALE;
			goto out_err;
		}
	} else {
		err = fd__crc32(dbg->fd, (uint64_t)dbg->st.st_size, &dbg_crc);
		if (err)
			goto out_err;
		if (dbg_crc != crc) {
			err = -ESTALE;
			goto out_err;
		}
	}
	if (!elf__has_symtab(dbg->elf)) {
		err = -ENOENT;
		goto out_err;
	}
	pr_debug("%s: debug file found", path);
	return 0;

out_err:
	pr_debug("%s: not a debug file here: %s", path, strerror(-err));
	elf_file__close(dbg);
	return err;
}

/*
 * Find the debug file of MAIN (its own path ORIG_PATH) by build id, then .gnu_debuglink.
 * Returns 0 with DBG open and E->debug_path set, -ENOENT when none fits, or -ENOMEM.
 */
static int elfsym__find_debug(struct elfsym *e, struct elf_file *dbg,
			      const struct elf_file *main_file, const char *orig_path,
			      const unsigned char *id, size_t id_len)
{
	char link[DEBUGLINK_NAME_MAX + 1];
	char *cand[3] = { NULL, NULL, NULL };
	char *path = NULL, *dir = NULL;
	const char *slash;
	uint32_t crc;
	int err = -ENOENT;

	if (id_len) {
		char *hex = hex__dup(id, id_len);

		if (!hex)
			return -ENOMEM;
		if (asprintf(&path, "%s/.build-id/%.2s/%s.debug", elfsym_debug_dir, hex,
			     hex + 2) < 0)
			path = NULL;
		free(hex);
		if (!path)
			return -ENOMEM;
		err = debug__try(dbg, path, &main_file->st, id, id_len, 0);
		if (!err || err == -ENOMEM)
			goto out;
		err = -ENOENT;
		free(path);
		path = NULL;
	}

	if (elf__debuglink(main_file->elf, link, &crc))
		goto out;
	/* dirname; "/x" gives "", the root, so that "" + "/" + name works */
	slash = strrchr(orig_path, '/');
	dir = slash ? strndup(orig_path, (size_t)(slash - orig_path)) : strdup(".");
	if (!dir) {
		err = -ENOMEM;
		goto out;
	}
	if (asprintf(&cand[0], "%s/%s", dir, link) < 0 ||
	    asprintf(&cand[1], "%s/.debug/%s", dir, link) < 0 ||
	    asprintf(&cand[2], "%s%s%s/%s", elfsym_debug_dir, dir[0] == '/' ? "" : "/", dir,
		     link) < 0) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < 3; i++) {
		err = debug__try(dbg, cand[i], &main_file->st, NULL, 0, crc);
		if (!err) {
			path = cand[i];
			cand[i] = NULL;
			goto out;
		}
		if (err == -ENOMEM)
			goto out;
	}
	err = -ENOENT;

out:
	if (!err)
		e->debug_path = path;
	else
		free(path);
	for (size_t i = 0; i < 3; i++)
		free(cand[i]);
	free(dir);
	return err;
}

/* ---- public interface -------------------------------------------------------------------- */

#define MAX_FDES (1u << 22)

int eh_frame_hdr__parse(const unsigned char *h, size_t len, uint32_t *count)
{
	if (len < EH_FRAME_HDR_TABLE)
		return -EINVAL;
	/* version, eh_frame_ptr_enc (4 bytes), fde_count_enc (udata4), table_enc (datarel|sdata4) */
	if (h[0] != 1 || h[2] != 0x03 || h[3] != 0x3b ||
	    ((h[1] & 0x0f) != 0x0b && (h[1] & 0x0f) != 0x03))
		return -ENOTSUP;
	memcpy(count, h + 8, 4);
	if (!*count || EH_FRAME_HDR_TABLE + (uint64_t)*count * 8 > len)
		return -EINVAL;
	return 0;
}

/*
 * Function starts from the .eh_frame_hdr search table (PT_GNU_EH_FRAME): version 1, fde_count
 * as udata4, table of (initial location, FDE address) pairs as datarel sdata4, sorted. A file
 * without one, or with another encoding, simply has none. Returns 0 or -ENOMEM.
 */
static int elfsym__read_fdes(struct elfsym *e, Elf *elf)
{
	size_t phnum;
	GElf_Phdr ph;
	Elf_Data *d = NULL;
	const unsigned char *h;
	uint32_t count;

	if (elf_getphdrnum(elf, &phnum))
		return 0;
	for (size_t i = 0; i < phnum && !d; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		if (ph.p_filesz < 12 || ph.p_offset > INT64_MAX || ph.p_filesz > (64u << 20))
			return 0;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
	}
	if (!d || !d->d_buf)
		return 0;
	h = d->d_buf;
	if (eh_frame_hdr__parse(h, d->d_size, &count) || count > MAX_FDES)
		return 0;
	e->fde_starts = malloc(count * sizeof(*e->fde_starts));
	if (!e->fde_starts)
		return -ENOMEM;
	for (uint32_t i = 0; i < count; i++) {
		int32_t rel;

		memcpy(&rel, h + EH_FRAME_HDR_TABLE + (size_t)i * 8, 4);
		e->fde_starts[i] = ph.p_vaddr + (int64_t)rel;	/* datarel: from the header */
	}
	e->nr_fdes = count;
	return 0;
}

uint64_t fde_starts__find(const uint64_t *starts, size_t n, uint64_t vaddr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (starts[mid] <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? starts[lo - 1] : UINT64_MAX;
}

uint64_t elfsym__fde_start(const struct elfsym *elf, uint64_t vaddr)
{
	return fde_starts__find(elf->fde_starts, elf->nr_fdes, vaddr);
}

struct elfsym *elfsym__open(const char *path, const char *orig_path)
{
	struct elf_file f = { .fd = -1 }, dbg = { .fd = -1 };
	unsigned char id[BUILD_ID_MAX];
	struct elfsym *e;
	GElf_Ehdr ehdr;
	size_t id_len;
	int err;

	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	err = elf_file__open(&f, path);
	if (err)
		goto out;
	if (!gelf_getehdr(f.elf, &ehdr)) {
		err = -ENOEXEC;
		goto out;
	}
	e->type = ehdr.e_type;
	err = elfsym__read_segs(e, f.elf);
	if (!err)
		err = elfsym__read_fdes(e, f.elf);
	if (err)
		goto out;
	id_len = elf__build_id(f.elf, id);
	if (id_len && !(e->build_id = hex__dup(id, id_len))) {
		err = -ENOMEM;
		goto out;
	}
	err = elfsym__read_syms(e, f.elf);
	if (err)
		goto out;
	if (!elf__has_symtab(f.elf)) {
		err = elfsym__find_debug(e, &dbg, &f, orig_path ? orig_path : path, id, id_len);
		if (!err)
			err = elfsym__read_syms(e, dbg.elf);
		if (err == -ENOENT || err == -ENOEXEC) {
			/* No usable debug file: the file's own symbols are what there is. */
			pr_debug("%s: no debug file used: %s", path, strerror(-err));
			err = 0;
		}
		if (err)
			goto out;
	}
	err = elfsym__finalize(e);

out:
	elf_file__close(&dbg);
	elf_file__close(&f);
	if (err) {
		elfsym__free(e);
		errno = -err;
		return NULL;
	}
	return e;
}

void elfsym__free(struct elfsym *elf)
{
	if (!elf)
		return;
	free(elf->segs);
	free(elf->syms);
	free(elf->names);
	free(elf->debug_path);
	free(elf->build_id);
	free(elf->fde_starts);
	free(elf);
}

const struct load_seg *elfsym__segs(const struct elfsym *elf, size_t *n)
{
	*n = elf->nr_segs;
	return elf->segs;
}

int elfsym__type(const struct elfsym *elf)
{
	return elf->type;
}

/* End (exclusive) of the PT_LOAD segment holding VADDR in memory, or VADDR + 1 when none. */
static uint64_t elfsym__seg_end(const struct elfsym *elf, uint64_t vaddr)
{
	for (size_t i = 0; i < elf->nr_segs; i++) {
		const struct load_seg *s = &elf->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->memsz)
			return s->vaddr + s->memsz;
	}
	return vaddr + 1;
}

const char *elfsym__lookup(const struct elfsym *elf, uint64_t vaddr, uint64_t *offset)
{
	size_t lo = 0, hi = elf->nr_syms;
	const struct elfsym_sym *s;

	/* Find the first symbol starting above VADDR; the one before it is the candidate. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (elf->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	s = &elf->syms[lo - 1];
	if (s->size) {
		if (vaddr - s->start >= s->size)
			return NULL;
	} else if (lo == elf->nr_syms && vaddr >= elfsym__seg_end(elf, s->start)) {
		/* The last symbol, unsized: it covers up to the end of its segment. */
		return NULL;
	}
	if (offset)
		*offset = vaddr - s->start;
	return s->name;
}

uint64_t elfsym__find(const struct elfsym *elf, const char *name)
{
	uint64_t start = 0, end;

	elfsym__find_range(elf, name, &start, &end);
	return start;
}

int elfsym__find_range(const struct elfsym *elf, const char *name, uint64_t *start,
		       uint64_t *end)
{
	for (size_t i = 0; i < elf->nr_syms; i++) {
		if (strcmp(elf->syms[i].name, name))
			continue;
		*start = elf->syms[i].start;
		*end = elf->syms[i].start + elf->syms[i].size;
		if (!elf->syms[i].size)	/* up to the next symbol */
			*end = i + 1 < elf->nr_syms ? elf->syms[i + 1].start : *start + 1;
		return 0;
	}
	return -ENOENT;
}

size_t elfsym__nr_syms(const struct elfsym *elf)
{
	return elf->nr_syms;
}

const char *elfsym__debug_path(const struct elfsym *elf)
{
	return elf->debug_path;
}

const char *elfsym__build_id(const struct elfsym *elf)
{
	return elf->build_id;
}

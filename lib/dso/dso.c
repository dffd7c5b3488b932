// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * dso: one ELF file, mapped once (see dso.h). The file is someone else's: it is opened with
 * fileio (regular files only, never blocking), and every read of it is bounded by its size;
 * libelf parses it from our private mapping.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include "base/fileio.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/mapguard.h"
#include "dso/dso.h"
#include "dso/dso_int.h"
#include "proc/procmaps.h"


#define NOTE_MAX		(1U << 20)	/* bytes of one note segment or section scanned */

const char *dso_debug_dir = "/usr/lib/debug";

uint32_t debuglink_crc32(uint32_t crc, const unsigned char *buf, size_t len)
{
	return (uint32_t)crc32_z(crc, buf, len);
}

/* ---- notes ------------------------------------------------------------------------------- */

/* Go's linker writes its build id as a note of owner "Go" (name "Go\0\0", 4 bytes), type 4
 * (cmd/link's ELF_NOTE_GOBUILDID_TAG). */
#define NT_GO_BUILD_ID		4
#define GO_NOTE_NAME		"Go\0"

/* Scan one block of notes: NT_GNU_BUILD_ID into D->id (when not found yet), Go's build id
 * note into D->go. */
static void notes__scan(Elf_Data *data, struct dso *d)
{
	size_t off = 0, name_off, desc_off, next;
	const char *name;
	GElf_Nhdr nhdr;

	while (off < data->d_size) {
		next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off);
		if (next == 0 || next <= off)
			break;
		name = (const char *)data->d_buf + name_off;
		if (!d->id_len && nhdr.n_type == NT_GNU_BUILD_ID &&
		    nhdr.n_namesz == sizeof("GNU") && !memcmp(name, "GNU", sizeof("GNU")) &&
		    nhdr.n_descsz > 1 && nhdr.n_descsz <= BUILD_ID_MAX) {
			memcpy(d->id, (const char *)data->d_buf + desc_off, nhdr.n_descsz);
			d->id_len = nhdr.n_descsz;
		}
		if (nhdr.n_type == NT_GO_BUILD_ID && nhdr.n_namesz == sizeof(GO_NOTE_NAME) &&
		    !memcmp(name, GO_NOTE_NAME, sizeof(GO_NOTE_NAME)))
			d->go = true;
		off = next;
	}
}

/* D's build id and whether Go built it, from its PT_NOTE segments, else its SHT_NOTE
 * sections; and a Go program or library by its .go.buildinfo section (Go writes it since
 * 1.13, a note only into executables of its own linker). */
static void elf__notes(struct dso *d)
{
	Elf *elf = d->elf;
	size_t nr_phdrs, shstrndx;
	Elf_Scn *scn = NULL;
	const char *name;
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
		if (data)
			notes__scan(data, d);
	}
	if (elf_getshdrstrndx(elf, &shstrndx))
		shstrndx = SHN_UNDEF;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr))
			continue;
		name = shstrndx != SHN_UNDEF ? elf_strptr(elf, shstrndx, shdr.sh_name) : NULL;
		if (name && !strcmp(name, ".go.buildinfo"))
			d->go = true;
		if ((d->id_len && d->go) || shdr.sh_type != SHT_NOTE || shdr.sh_size > NOTE_MAX ||
		    (shdr.sh_flags & SHF_COMPRESSED))
			continue;
		data = elf_getdata(scn, NULL);
		if (data)
			notes__scan(data, d);
	}
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

/* ---- opening ----------------------------------------------------------------------------- */

static int dso__read_phdrs(struct dso *d)
{
	size_t nr_phdrs, n = 0;
	uint64_t off;
	GElf_Phdr ph;
	bool has_hdr = false;

	if (elf_getphdrnum(d->elf, &nr_phdrs))
		return -ENOEXEC;
	if (nr_phdrs > 0 && !(d->segs = calloc(nr_phdrs, sizeof(*d->segs))))
		return -ENOMEM;
	d->min_vaddr = UINT64_MAX;
	for (size_t i = 0; i < nr_phdrs; i++) {
		if (!gelf_getphdr(d->elf, (int)i, &ph))
			return -ENOEXEC;
		if (ph.p_type == PT_GNU_EH_FRAME) {
			d->hdr_vaddr = ph.p_vaddr;
			has_hdr = true;
		}
		if (ph.p_type != PT_LOAD)
			continue;
		d->segs[n] = (struct dso_seg){ .offset = ph.p_offset, .vaddr = ph.p_vaddr,
					       .filesz = ph.p_filesz, .memsz = ph.p_memsz };
		if (ph.p_vaddr < d->min_vaddr)
			d->min_vaddr = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > d->max_vaddr)
			d->max_vaddr = ph.p_vaddr + ph.p_memsz;
		n++;
	}
	d->nr_segs = n;
	/* The search table, as the unwinder reads it: through the segment that loads it. */
	if (has_hdr &&
	    !dso_segs__vaddr_to_off(d->segs, n, d->hdr_vaddr, EH_FRAME_HDR_TABLE, d->size, &off) &&
	    eh_frame_hdr__parse(d->image + off, d->size - off, &d->fde_count))
		d->fde_count = 0;
	return 0;
}

/* Open PATH (inside ROOT_FD when >= 0), or take FD when >= 0 (owned from now on), into a new
 * dso named ORIG_PATH. Returns 0 or a negative errno. */
static int dso__init(struct dso *d, int root_fd, const char *path, int fd, const char *orig_path)
{
	struct stat st;
	GElf_Ehdr ehdr;
	void *image;
	int err;

	if (fd >= 0)
		d->fd = fileio__check_regular(fd, DSO_FILE_MAX, &st);
	else
		d->fd = fileio__open_regular_in(root_fd, path, DSO_FILE_MAX, &st);
	if (d->fd < 0)
		return d->fd == -EINVAL ? -ENOEXEC : d->fd;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	d->mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	d->path = strdup(orig_path);
	if (!d->path)
		return -ENOMEM;
	d->base = strrchr(d->path, '/') ? strrchr(d->path, '/') + 1 : d->path;
	snprintf(d->fd_path, sizeof(d->fd_path), "/proc/self/fd/%d", d->fd);
	if (st.st_size < (off_t)sizeof(Elf64_Ehdr))
		return -ENOEXEC;
	if (d->closed)
		return 0;		/* its descriptor only: someone else reads it */
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	/* Private and writable: libelf may convert data in place; the file never changes. */
	image = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, d->fd, 0);
	if (image == MAP_FAILED)
		return -errno;
	d->image = image;
	d->size = st.st_size;
	d->guard = mapguard__add(image, d->size);
	if (d->guard < 0)
		return d->guard;
	d->elf = elf_memory((char *)d->image, d->size);
	if (!d->elf || elf_kind(d->elf) != ELF_K_ELF || !gelf_getehdr(d->elf, &ehdr))
		return -ENOEXEC;
	d->type = ehdr.e_type;
	d->entry = ehdr.e_entry;
	err = dso__read_phdrs(d);
	if (err)
		return err;
	elf__notes(d);
	if (d->id_len && !(d->build_id = hex__dup(d->id, d->id_len)))
		return -ENOMEM;
	return dso__faulted(d) ? -ENOEXEC : 0;	/* truncated as we read it */
}

struct dso *dso__open(const char *path, const char *orig_path)
{
	return dso__open_in(-1, path, orig_path);
}

struct dso *dso__open_in(int root_fd, const char *path, const char *orig_path)
{
	return dso__open_any(root_fd, path, -1, orig_path);
}

struct dso *dso__open_fd(int fd, const char *orig_path)
{
	return dso__open_any(-1, orig_path, fd, orig_path);
}

struct dso *dso__open_closed(int root_fd, const char *path, const char *orig_path)
{
	return dso__open_flags(root_fd, path, -1, orig_path, true);
}

struct dso *dso__open_any(int root_fd, const char *path, int fd, const char *orig_path)
{
	return dso__open_flags(root_fd, path, fd, orig_path, false);
}

struct dso *dso__open_flags(int root_fd, const char *path, int fd, const char *orig_path,
			    bool closed)
{
	struct dso *d = calloc(1, sizeof(*d));
	int err;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	d->closed = d->unparsed = closed;
	d->fd = d->debug_fd = d->root_fd = d->guard = -1;
	err = dso__init(d, root_fd, path, fd, orig_path ? orig_path : path);
	if (err) {
		dso__free(d);
		errno = -err;
		return NULL;
	}
	return d;
}

void dso__free(struct dso *d)
{
	if (!d)
		return;
	symtab__free(&d->syms);
	plt__free(&d->plt);
	if (d->elf)
		elf_end(d->elf);
	mapguard__remove(d->guard);
	if (d->image)
		munmap(d->image, d->size);
	limits__release(d->syms_charged + d->cfi_charged +
			(d->dwarf_charged ? 2 * d->dwarf_bytes : 0));
	if (d->fd >= 0)
		close(d->fd);
	if (d->debug_fd >= 0)
		close(d->debug_fd);
	free(d->segs);
	free(d->build_id);
	free(d->debug_path);
	free(d->alt_name);
	free(d->alt_id);
	dso__free_fdes(d);
	free(d->entries);
	free(d->path);
	free(d);
}

/* ---- symbols, read at first use ---------------------------------------------------------- */

void dso__refuse(struct dso *d)
{
	if (!d->unparsed)
		limits__hit(LIMIT_MEMORY_FILES, 1);
	d->unparsed = true;
}

/* Reserve the budget's bytes for the symbols of ELF, from its tables' sizes. Returns
 * whether they fit; *HELD grows by what was reserved. */
static bool syms__reserve(struct dso *d, Elf *elf, uint64_t *held)
{
	uint64_t want = symtab__estimate(elf);

	if (!limits__reserve(want)) {
		pr_debug("%s: symbols not read: the memory budget is spent", d->path);
		dso__refuse(d);
		return false;
	}
	*held += want;
	return true;
}

/* The symbols of the file, and of its debug file when it has no .symtab. A file whose tables
 * cannot be read has fewer names, nothing worse; one truncated while read (faulted) has
 * none. Charged to the memory budget; refused when they would not fit. */
static void dso__read_syms(struct dso *d)
{
	struct dso *dbg = NULL;
	uint64_t held = 0;
	int err;

	if (d->syms_read)
		return;
	d->syms_read = true;
	if (dso__faulted(d) || !syms__reserve(d, d->elf, &held))
		return;
	plt__init(&d->plt, d->elf);
	err = symtab__add_elf(&d->syms, d->elf);
	if (!err && !elf__has_symtab(d->elf)) {
		dbg = d->find_debug ? d->find_debug(d->find_debug_ctx, d) : dso__open_debug(d);
		if (dbg && syms__reserve(d, dbg->elf, &held)) {
			err = symtab__add_elf(&d->syms, dbg->elf);
			if (!err && !(d->debug_path = strdup(dbg->path)))
				err = -ENOMEM;
			/* DWARF readers open it later: this very file, wherever it was found;
			 * and the common file dwz moved part of its DWARF to. */
			d->debug_fd = fcntl(dbg->fd, F_DUPFD_CLOEXEC, 0);
			elf__altlink(dbg->elf, &d->alt_name, &d->alt_id);
			d->alt_read = true;
			if (d->debug_fd >= 0)
				snprintf(d->debug_fd_path, sizeof(d->debug_fd_path),
					 "/proc/self/fd/%d", d->debug_fd);
			dso__measure_dwarf(d, dbg->elf, dbg->size);
		} else if (!dbg) {
			pr_debug("%s: no debug file used: %s", d->path, strerror(errno));
		}
	}
	if (d->debug_fd < 0)		/* BFD reads the file itself */
		dso__measure_dwarf(d, d->elf, d->size);
	if (err)
		pr_debug("%s: symbols not read: %s", d->path, strerror(-err));
	if (d->syms.cut)
		limits__hit(LIMIT_SYMS, 1);
	/* The names still point into the ELF data: copy them before the debug file goes. */
	if (symtab__finalize(&d->syms) || dso__faulted(d) || (dbg && dso__faulted(dbg)))
		symtab__free(&d->syms);
	d->syms_charged = symtab__bytes(&d->syms);
	limits__charge(d->syms_charged);
	limits__release(held);
	dso__free(dbg);
}

/* ---- accessors --------------------------------------------------------------------------- */

const char *dso__path(const struct dso *d)
{
	return d->path;
}

const char *dso__base_name(const struct dso *d)
{
	return d->base;
}

const char *dso__fd_path(const struct dso *d)
{
	return d->fd_path;
}

int dso__type(const struct dso *d)
{
	return d->type;
}

uint64_t dso__entry(const struct dso *d)
{
	return d->entry;
}

bool dso__is_go(const struct dso *d)
{
	return d->go;
}

const struct dso_seg *dso__segs(const struct dso *d, size_t *n)
{
	*n = d->nr_segs;
	return d->segs;
}

void dso__extent(const struct dso *d, uint64_t *min, uint64_t *max)
{
	*min = d->min_vaddr;
	*max = d->max_vaddr;
}

int dso__off_to_vaddr(const struct dso *d, uint64_t off, uint64_t *vaddr)
{
	return dso_segs__off_to_vaddr(d->segs, d->nr_segs, off, vaddr);
}

int dso__bias(const struct dso *d, const struct map *m, uint64_t addr, uint64_t *bias)
{
	uint64_t vaddr;

	if (dso__off_to_vaddr(d, map__file_offset(m, addr), &vaddr))
		return -ENOENT;
	*bias = addr - vaddr;
	return 0;
}

int dso__vaddr_to_runtime(const struct dso *d, const struct map *m, uint64_t vaddr,
			  uint64_t *addr)
{
	uint64_t off, first = map__file_offset(m, m->start);

	if (dso_segs__vaddr_to_off(d->segs, d->nr_segs, vaddr, 1, d->size, &off) ||
	    off < first || off - first >= m->end - m->start)
		return -ENOENT;
	*addr = m->start + (off - first);
	return 0;
}

const unsigned char *dso__image(const struct dso *d, size_t *size)
{
	*size = d->size;
	return d->image;
}

const char *dso__build_id(const struct dso *d)
{
	return d->build_id;
}

void dso__set_build_id(struct dso *d, const char *hex)
{
	if (d->closed && !d->build_id && hex && hex[0])
		d->build_id = strdup(hex);
}

bool dso__closed(const struct dso *d)
{
	return d->closed;
}

/* The symbols, read at the first use; false once the file is faulted: what is read of it
 * since is dropped. */
static bool syms__ok(struct dso *d)
{
	dso__read_syms(d);
	return !dso__faulted(d);
}

/* Whether VADDR, under symbol S of no size (assembly's: NASM's untyped global labels, x264's),
 * is in another function that begins after S (its FDE, a code entry): S names only up to
 * there. */
static bool unsized_elsewhere(struct dso *d, const struct symtab_sym *s, uint64_t vaddr)
{
	return !s->size && vaddr > s->start && dso__usable(d) &&
	       dso__function_between(d, s->start, vaddr);
}

const char *dso__lookup(struct dso *d, uint64_t vaddr, uint64_t *offset)
{
	const struct symtab_sym *s;
	uint64_t start, end;
	const char *name;

	if (!syms__ok(d))
		return NULL;
	if (plt__contains(&d->plt, vaddr)) {
		name = plt__lookup(&d->plt, vaddr, &start, &end);
		if (name && offset)
			*offset = vaddr - start;
		return name;
	}
	s = symtab__lookup(&d->syms, d->segs, d->nr_segs, vaddr);
	if (!s || unsized_elsewhere(d, s, vaddr))
		return NULL;
	if (offset)
		*offset = vaddr - s->start;
	return s->name;
}

const char *dso__lookup_range(struct dso *d, uint64_t vaddr, uint64_t *start, uint64_t *end)
{
	const struct symtab_sym *s;

	if (!syms__ok(d))
		return NULL;
	if (plt__contains(&d->plt, vaddr))
		return plt__lookup(&d->plt, vaddr, start, end);
	s = symtab__lookup(&d->syms, d->segs, d->nr_segs, vaddr);
	if (!s || unsized_elsewhere(d, s, vaddr))
		return NULL;
	*start = s->start;
	*end = s->start + s->size;
	if (!s->size) {
		*end = s + 1 < d->syms.syms + d->syms.nr ? s[1].start : s->start + 1;
		if (*end > s->limit)
			*end = s->limit;
	}
	return s->name;
}

uint64_t dso__find(struct dso *d, const char *name)
{
	uint64_t start = 0, end;

	dso__find_range(d, name, &start, &end);
	return start;
}

int dso__find_range(struct dso *d, const char *name, uint64_t *start, uint64_t *end)
{
	const struct symtab_sym *s;

	if (!syms__ok(d))
		return -ENOENT;
	s = symtab__find(&d->syms, name, end);
	if (!s)
		return -ENOENT;
	*start = s->start;
	return 0;
}

int dso__find_object(struct dso *d, const char *name, uint64_t *vaddr)
{
	if (!d->elf || dso__faulted(d))
		return -ENOENT;
	/* (A file truncated under us reads as zeros from then on: nothing found is kept.) */
	if (symtab__find_object(d->elf, name, vaddr) || dso__faulted(d))
		return -ENOENT;
	return 0;
}

size_t dso__nr_syms(struct dso *d)
{
	return syms__ok(d) ? d->syms.nr : 0;
}

bool dso__faulted(const struct dso *d)
{
	return mapguard__faulted(d->guard);
}

bool dso__usable(const struct dso *d)
{
	return !d->unparsed && !dso__faulted(d);
}

const char *dso__debug_path(struct dso *d)
{
	dso__read_syms(d);
	return d->debug_path;
}

const char *dso__debug_fd_path(struct dso *d)
{
	dso__read_syms(d);
	return d->debug_fd >= 0 ? d->debug_fd_path : NULL;
}

void dso__set_root(struct dso *d, int root_fd)
{
	d->root_fd = root_fd;
}

uint64_t dso__inode(const struct dso *d)
{
	return d->ino;
}

uint64_t dso__mtime(const struct dso *d)
{
	return d->mtime;
}

int dso__root(const struct dso *d)
{
	return d->root_fd;
}

int dso__fd(const struct dso *d)
{
	return d->fd;
}

int dso__dwarf_altlink(struct dso *d, const char **name, const char **build_id)
{
	dso__read_syms(d);
	if (!d->alt_read) {	/* no debug file: the file's own DWARF's */
		d->alt_read = true;
		elf__altlink(d->elf, &d->alt_name, &d->alt_id);
	}
	if (!d->alt_name)
		return -ENOENT;
	*name = d->alt_name;
	*build_id = d->alt_id;
	return 0;
}

int dso__debug_fd(struct dso *d)
{
	dso__read_syms(d);
	return d->debug_fd;
}

void dso__set_debug_finder(struct dso *d, dso_debug_finder fn, void *ctx)
{
	d->find_debug = fn;
	d->find_debug_ctx = ctx;
}

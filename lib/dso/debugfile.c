// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * debugfile: a stripped file's separate debug file, by build id under dso_debug_dir, then by
 * .gnu_debuglink with its CRC32 checked, in the process's root first when it is not ours
 * (see dso.h for the places looked in).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/fileio.h"
#include "base/log.h"
#include "dso/dso_int.h"


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
	if (!scn || !(data = elf_scn__data(scn, &shdr)) || !data->d_buf)
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

#define ALTLINK_NAME_MAX	4095

/*
 * Read .gnu_debugaltlink of ELF (dwz's pointer to the common file it moved DWARF to): a path
 * (NUL-terminated, at most ALTLINK_NAME_MAX bytes), then that file's build id (2 to
 * BUILD_ID_MAX bytes). Returns 0 with *NAME and *BUILD_ID malloc'd (the id in hex), -ENOENT
 * when absent or malformed, -ENOMEM.
 */
int elf__altlink(Elf *elf, char **name, char **build_id)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *p;
	Elf_Scn *scn = NULL;
	size_t shstrndx, len, id_len;
	const char *sname;
	GElf_Shdr shdr;
	Elf_Data *data;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr))
			continue;
		sname = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (sname && !strcmp(sname, ".gnu_debugaltlink"))
			break;
	}
	if (!scn || !(data = elf_scn__data(scn, &shdr)) || !data->d_buf)
		return -ENOENT;
	p = data->d_buf;
	len = strnlen((const char *)p, data->d_size);
	if (len == 0 || len > ALTLINK_NAME_MAX || len == data->d_size)
		return -ENOENT;
	id_len = data->d_size - len - 1;
	if (id_len < 2 || id_len > BUILD_ID_MAX)
		return -ENOENT;
	*name = strndup((const char *)p, len);
	*build_id = malloc(2 * id_len + 1);
	if (!*name || !*build_id) {
		free(*name);
		free(*build_id);
		return -ENOMEM;
	}
	for (size_t i = 0; i < id_len; i++) {
		(*build_id)[2 * i] = digits[p[len + 1 + i] >> 4];
		(*build_id)[2 * i + 1] = digits[p[len + 1 + i] & 0xf];
	}
	(*build_id)[2 * id_len] = '\0';
	return 0;
}

static int crc_chunk(void *ctx, const unsigned char *buf, size_t len)
{
	uint32_t *crc = ctx;

	*crc = debuglink_crc32(*crc, buf, len);
	return 0;
}

int dso__debug_check(const struct dso *self, const struct dso *dbg, bool by_id, uint32_t crc)
{
	uint32_t dbg_crc = 0;
	int err;

	if (dbg->dev == self->dev && dbg->ino == self->ino)
		return -ELOOP;
	if (by_id) {
		if (!self->id_len || dbg->id_len != self->id_len ||
		    memcmp(dbg->id, self->id, self->id_len))
			return -ESTALE;
	} else {
		err = fileio__each_chunk(dbg->fd, dbg->size, crc_chunk, &dbg_crc);
		if (err)
			return err;
		if (dbg_crc != crc)
			return -ESTALE;
	}
	return elf__has_symtab(dbg->elf) ? 0 : -ENOENT;
}

/*
 * Try PATH (inside ROOT_FD when >= 0; a link as its last component refused when NOFOLLOW) as
 * the debug file of SELF (dso__debug_check). Returns the debug file opened, or NULL with
 * errno (ENOMEM; anything else means "not this one").
 */
static struct dso *debug__try(const struct dso *self, int root_fd, const char *path, bool by_id,
			      bool nofollow, uint32_t crc)
{
	struct stat st;
	int fd = fileio__open_regular_how(root_fd, path, DSO_FILE_MAX,
					  nofollow ? FILEIO_NOFOLLOW : 0, &st);
	struct dso *dbg = fd >= 0 ? dso__open_fd(fd, path) : NULL;
	int err;

	if (fd < 0)
		err = fd;
	else if (!dbg)
		err = -errno;
	else
		err = dso__debug_check(self, dbg, by_id, crc);
	if (!err) {
		pr_debug("%s: debug file found%s", path,
			 root_fd >= 0 ? " in the process's root" : "");
		return dbg;
	}
	pr_debug("%s%s: not a debug file here: %s", path,
		 root_fd >= 0 ? " (in the process's root)" : "", strerror(-err));
	dso__free(dbg);
	errno = -err;
	return NULL;
}

/* Append a malloc'd path made from FMT to OUT (N entries), BY_ID and NOFOLLOW as said.
 * Returns 0 or -ENOMEM. */
static int cand__add(struct dso_debug_path *out, int *n, bool by_id, bool nofollow,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int cand__add(struct dso_debug_path *out, int *n, bool by_id, bool nofollow,
		     const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&out[*n].path, fmt, ap);
	va_end(ap);
	if (r < 0) {
		out[*n].path = NULL;
		return -ENOMEM;
	}
	out[*n].by_id = by_id;
	out[*n].nofollow = nofollow;
	(*n)++;
	return 0;
}

int dso_debug__paths(const char *path, const char *build_id, const char *link,
		     struct dso_debug_path *out)
{
	const char *slash = strrchr(path, '/');
	const char *dir = slash ? path : ".";
	int dirlen = slash ? (int)(slash - path) : 1;
	int err = 0, n = 0;

	/* By build id, then by debuglink: next to the file, in its .debug/ (directories the
	 * file's owner writes: no link followed there), under the debug directory. dirname of
	 * "/x" is "", the root, so that "" + "/" + name works. */
	if (build_id && build_id[0])
		err = cand__add(out, &n, true, false, "%s/.build-id/%.2s/%s.debug",
				dso_debug_dir, build_id, build_id + 2);
	if (!err && link && link[0]) {
		err = cand__add(out, &n, false, true, "%.*s/%s", dirlen, dir, link);
		if (!err)
			err = cand__add(out, &n, false, true, "%.*s/.debug/%s", dirlen, dir, link);
		if (!err)
			err = cand__add(out, &n, false, false, "%s%s%.*s/%s", dso_debug_dir,
					dir[0] == '/' ? "" : "/", dirlen, dir, link);
	}
	if (err) {
		dso_debug__free_paths(out, n);
		return err;
	}
	return n;
}

void dso_debug__free_paths(struct dso_debug_path *paths, int n)
{
	for (int i = 0; i < n; i++) {
		free(paths[i].path);
		paths[i].path = NULL;
	}
}

/* What D's debug file is known by: its build id, its .gnu_debuglink. */
static int debug_ids(const struct dso *d, struct dso_debug_want *w)
{
	memset(w, 0, sizeof(*w));
	w->build_id = d->build_id;
	w->has_link = !elf__debuglink(d->elf, w->link, &w->crc);
	return w->build_id || w->has_link ? 0 : -ENOENT;
}

int dso__debug_ids(const struct dso *d, struct dso_debug_want *w)
{
	return debug_ids(d, w);
}

bool dso__lacks_debug(const struct dso *d)
{
	return !elf__has_symtab(d->elf) || !elf__has_debug_info(d->elf);
}

int dso__debug_want(const struct dso *d, struct dso_debug_want *w)
{
	if (elf__has_symtab(d->elf)) {
		memset(w, 0, sizeof(*w));
		return -EEXIST;
	}
	return debug_ids(d, w);
}

/* D's debug file found by W. */
static struct dso *open_debug(const struct dso *d, const struct dso_debug_want *want)
{
	struct dso_debug_path cand[DSO_DEBUG_PATHS];
	struct dso_debug_want w = *want;
	struct dso *dbg = NULL;
	int err = 0, n;

	n = dso_debug__paths(d->path, w.build_id, w.has_link ? w.link : NULL, cand);
	if (n < 0)
		err = n;
	/* Inside the root of the process that maps the file (a container's) first: the files
	 * of its own packages; then ours. */
	for (int k = d->root_fd >= 0 ? 0 : 1; k < 2; k++) {
		for (int i = 0; !err && !dbg && i < n; i++) {
			dbg = debug__try(d, k ? -1 : d->root_fd, cand[i].path, cand[i].by_id,
					 cand[i].nofollow, w.crc);
			if (!dbg && errno == ENOMEM)
				err = -ENOMEM;
		}
	}
	if (n > 0)
		dso_debug__free_paths(cand, n);
	if (!dbg)
		errno = err ? -err : ENOENT;
	return dbg;
}

struct dso *dso__open_debug(const struct dso *d)
{
	struct dso_debug_want w;

	if (dso__debug_want(d, &w)) {
		errno = ENOENT;
		return NULL;
	}
	return open_debug(d, &w);
}

struct dso *dso__open_debug_cfi(const struct dso *d)
{
	struct dso_debug_want w;

	if (debug_ids(d, &w)) {
		errno = ENOENT;
		return NULL;
	}
	return open_debug(d, &w);
}

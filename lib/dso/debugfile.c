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

#define DEBUGLINK_NAME_MAX	255

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

static int crc_chunk(void *ctx, const unsigned char *buf, size_t len)
{
	uint32_t *crc = ctx;

	*crc = debuglink_crc32(*crc, buf, len);
	return 0;
}

/*
 * Try PATH (inside ROOT_FD when >= 0) as the debug file of SELF: it must not be SELF, must be
 * ELF with a .symtab, and match either SELF's build id (when it has one) or the CRC32 CRC of
 * its contents. Returns the debug file opened, or NULL with errno (ENOMEM; anything else
 * means "not this one").
 */
static struct dso *debug__try(const struct dso *self, int root_fd, const char *path, bool by_id,
			      uint32_t crc)
{
	struct dso *dbg = dso__open_in(root_fd, path, path);
	uint32_t dbg_crc = 0;
	int err;

	if (!dbg) {
		err = -errno;
		goto out_err;
	}
	if (dbg->dev == self->dev && dbg->ino == self->ino) {
		err = -ELOOP;
		goto out_err;
	}
	if (by_id) {
		if (dbg->id_len != self->id_len || memcmp(dbg->id, self->id, self->id_len)) {
			err = -ESTALE;
			goto out_err;
		}
	} else {
		err = fileio__each_chunk(dbg->fd, dbg->size, crc_chunk, &dbg_crc);
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
	pr_debug("%s: debug file found%s", path, root_fd >= 0 ? " in the process's root" : "");
	return dbg;

out_err:
	pr_debug("%s%s: not a debug file here: %s", path,
		 root_fd >= 0 ? " (in the process's root)" : "", strerror(-err));
	dso__free(dbg);
	errno = -err;
	return NULL;
}

/* Append a malloc'd path made from FMT to CAND (N entries). Returns 0 or -ENOMEM. */
static int cand__add(char **cand, int *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int cand__add(char **cand, int *n, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&cand[*n], fmt, ap);
	va_end(ap);
	if (r < 0) {
		cand[*n] = NULL;
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

struct dso *dso__open_debug(const struct dso *d)
{
	char link[DEBUGLINK_NAME_MAX + 1];
	char *cand[4] = { NULL, NULL, NULL, NULL };
	const char *slash = strrchr(d->path, '/');
	const char *dir = slash ? d->path : ".";
	int dirlen = slash ? (int)(slash - d->path) : 1;
	struct dso *dbg = NULL;
	int err = 0, n = 0;
	uint32_t crc = 0;

	/* By build id, then by debuglink: next to the file, in its .debug/, under the debug
	 * directory. dirname of "/x" is "", the root, so that "" + "/" + name works. */
	if (d->build_id)
		err = cand__add(cand, &n, "%s/.build-id/%.2s/%s.debug", dso_debug_dir,
				d->build_id, d->build_id + 2);
	if (!err && !elf__debuglink(d->elf, link, &crc)) {
		err = cand__add(cand, &n, "%.*s/%s", dirlen, dir, link);
		if (!err)
			err = cand__add(cand, &n, "%.*s/.debug/%s", dirlen, dir, link);
		if (!err)
			err = cand__add(cand, &n, "%s%s%.*s/%s", dso_debug_dir,
					dir[0] == '/' ? "" : "/", dirlen, dir, link);
	}
	/* Inside the root of the process that maps the file (a container's) first: the files
	 * of its own packages; then ours. */
	for (int k = d->root_fd >= 0 ? 0 : 1; k < 2; k++) {
		for (int i = 0; !err && !dbg && i < n; i++) {
			dbg = debug__try(d, k ? -1 : d->root_fd, cand[i], i == 0 && d->build_id,
					 crc);
			if (!dbg && errno == ENOMEM)
				err = -ENOMEM;
		}
	}
	for (int i = 0; i < n; i++)
		free(cand[i]);
	if (!dbg)
		errno = err ? -err : ENOENT;
	return dbg;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* bfd.h wants these from a config.h. */
#define PACKAGE "profile"
#define PACKAGE_VERSION PROFILE_VERSION
#include <bfd.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include "symbolize/inlines.h"
#include "base/log.h"

/* libiberty's demangle.h values; the header is not shipped by Debian's binutils-dev. */
#define DMGL_PARAMS	(1 << 0)
#define DMGL_ANSI	(1 << 1)

struct inlines {
	bfd *abfd;
};

static void inlines__init_bfd(void)
{
	static int done;

	if (!done) {
		bfd_init();
		done = 1;
	}
}

/* An inlines over ABFD (taken; NULL: none), or NULL when it has no DWARF. */
static struct inlines *inlines__new(bfd *abfd)
{
	struct inlines *d;

	if (!abfd)
		return NULL;
	/* Debian's debug files are compressed: without this, no lines and no inline chains. */
	abfd->flags |= BFD_DECOMPRESS;
	if (!bfd_check_format(abfd, bfd_object) || !bfd_get_section_by_name(abfd, ".debug_info")) {
		bfd_close(abfd);
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		bfd_close(abfd);
		return NULL;
	}
	d->abfd = abfd;
	return d;
}

struct inlines *inlines__open_fd(int fd, const char *name)
{
	int dup_fd;
	bfd *abfd;

	inlines__init_bfd();
	dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup_fd < 0)
		return NULL;
	/* Opened by descriptor, BFD never closes the file to reopen it by name. With a name,
	 * bfd_fopen would stat it (a path: not for the worker's filter); named afterwards. */
	abfd = bfd_fdopenr("", NULL, dup_fd);
	if (!abfd) {
		close(dup_fd);
		return NULL;
	}
	bfd_set_filename(abfd, name);
	return inlines__new(abfd);
}

void inlines__free(struct inlines *d)
{
	if (!d)
		return;
	bfd_close(d->abfd);
	free(d);
}

int inlines__at(struct inlines *d, uint64_t vaddr, const char **names, struct inline_src *srcs,
		int max)
{
	const char *file = NULL, *func = NULL;
	unsigned int line = 0;
	asection *sec;
	int n = 0;

	for (sec = d->abfd->sections; sec; sec = sec->next) {
		bfd_vma vma = bfd_section_vma(sec);

		if ((bfd_section_flags(sec) & SEC_ALLOC) && (bfd_section_flags(sec) & SEC_CODE) &&
		    vaddr >= vma && vaddr < vma + bfd_section_size(sec))
			break;
	}
	if (!sec)
		return 0;
	/* An empty symbol table: with ours, BFD would fall back to a linear symbol scan per
	 * address; with none (NULL), BFD 2.40 finds nothing at all. */
	static asymbol *no_symbols[1] = { NULL };

	if (!bfd_find_nearest_line(d->abfd, sec, no_symbols, vaddr - bfd_section_vma(sec), &file,
				   &func, &line))
		return 0;
	while (func && n < max) {
		if (srcs)
			srcs[n] = (struct inline_src){ file, line };
		names[n++] = func;
		func = NULL;
		if (!bfd_find_inliner_info(d->abfd, &file, &func, &line))
			break;
	}
	return n;
}

void inlines__warm(struct inlines *d)
{
	const char *names[1];

	for (asection *sec = d->abfd->sections; sec; sec = sec->next) {
		if ((bfd_section_flags(sec) & SEC_ALLOC) && (bfd_section_flags(sec) & SEC_CODE)) {
			inlines__at(d, bfd_section_vma(sec), names, NULL, 1);
			return;
		}
	}
}

char *demangle(const char *name)
{
	if (strncmp(name, "_Z", 2) && strncmp(name, "_R", 2))
		return NULL;
	return bfd_demangle(NULL, name, DMGL_PARAMS | DMGL_ANSI);
}

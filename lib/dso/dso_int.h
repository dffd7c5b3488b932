/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dso_int: what the files of lib/dso share about a dso (not for use outside lib/dso). */
#ifndef DSO_DSO_INT_H
#define DSO_DSO_INT_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include "dso/dso.h"
#include "dso/fdes.h"
#include "dso/plt.h"
#include "dso/symtab.h"

#define BUILD_ID_MAX		64		/* bytes; GNU ld writes 20 */

struct dso {
	char *path;			/* as the process saw it */
	const char *base;		/* its base name, in PATH */
	char fd_path[32];		/* /proc/self/fd/N */
	int fd;
	uint64_t dev, ino;		/* of the file opened */
	uint64_t mtime;			/* its modification time then (ns) */
	unsigned char *image;		/* the whole file, mapped privately */
	size_t size;
	int guard;			/* IMAGE's mapguard slot: a SIGBUS there (the file
					 * truncated under us) zeroes it, and the dso is faulted */
	Elf *elf;			/* over IMAGE */
	int type;
	uint64_t entry;		/* e_entry: link-time address of the entry point, 0 if none */
	struct dso_seg *segs;
	size_t nr_segs;
	uint64_t min_vaddr, max_vaddr;
	uint64_t hdr_vaddr;		/* .eh_frame_hdr, when fde_count */
	uint32_t fde_count;
	unsigned char id[BUILD_ID_MAX];
	size_t id_len;
	char *build_id;			/* ID in hex */
	bool go;			/* Go built it (dso__is_go) */
	bool syms_read;
	bool unparsed;			/* symbols or CFI refused: the memory budget was spent */
	bool closed;			/* opened for its descriptor only, never read here */
	uint64_t syms_charged;		/* bytes of the budget SYMS holds */
	struct symtab syms;
	struct plt plt;			/* stub names, made at lookup */
	char *debug_path;		/* the debug file the symbols came from */
	int debug_fd;			/* ... kept open (-1: none), for DWARF readers */
	char debug_fd_path[32];		/* /proc/self/fd/N of debug_fd */
	uint64_t dwarf_bytes;		/* .debug_* of the file BFD reads (the debug file's, or
					 * this one's), inflated: measured with the symbols */
	int dwarf_err;			/* 0, or why that DWARF is not to be read (dwarf.c) */
	bool dwarf_charged;		/* DWARF_BYTES charged to the budget */
	char *alt_name, *alt_id;	/* .gnu_debugaltlink of the file with the DWARF */
	bool alt_read;
	int root_fd;			/* borrowed: the root directory the process that maps
					 * the file sees, when not ours (-1) */
	dso_debug_finder find_debug;	/* finds the debug file instead of dso__open_debug */
	void *find_debug_ctx;
	bool cfi_read[DSO_CFI__MAX];	/* dso__fdes tried the source */
	int cfi_err[DSO_CFI__MAX];	/* and failed so */
	struct dso_fdes cfi[DSO_CFI__MAX];
	struct fde_index built[DSO_CFI__MAX];	/* tables built here, not the .eh_frame_hdr's */
	struct dso_seg recs_seg;	/* where DSO_CFI_DEBUG's converted records are */
	uint64_t cfi_charged;		/* bytes of the budget the built tables hold */
	uint64_t *entries;		/* dso__code_entry's, sorted */
	size_t nr_entries;
	bool entries_built;
};

/* dso__open of PATH inside the directory ROOT_FD (fileio__open_regular_in; -1: by PATH). */
struct dso *dso__open_in(int root_fd, const char *path, const char *orig_path);

/* dso__open_in, or of FD when >= 0 (dso__open_fd). */
struct dso *dso__open_any(int root_fd, const char *path, int fd, const char *orig_path);

/* debugfile.c: .gnu_debugaltlink of ELF into *NAME and *BUILD_ID (hex, malloc'd). Returns 0,
 * -ENOENT or -ENOMEM. */
int elf__altlink(Elf *elf, char **name, char **build_id);

/* Free the tables of FDEs dso__fdes built. */
void dso__free_fdes(struct dso *d);

/* The file could not be parsed: the memory budget was spent (counted once per file). */
void dso__refuse(struct dso *d);

/*
 * Measure the DWARF that BFD would read of ELF (FILE_SIZE bytes), into D->dwarf_bytes and
 * D->dwarf_err (dwarf.c): the inflated sizes of its .debug_* and .zdebug_* sections, checked
 * against what the file can hold (-EFBIG, counted), and its .gnu_debugaltlink, which BFD
 * follows relative to /proc/self/fd (-ELOOP, counted, when it could lead out).
 */
void dso__measure_dwarf(struct dso *d, Elf *elf, uint64_t file_size);

/*
 * Find the debug file of D (whose own path is D->path) by build id, then .gnu_debuglink,
 * inside D->root_fd first when D has one, then in our own root, and open it as a dso (the
 * caller frees it). Returns it, or NULL with errno: ENOENT when none fits, ENOMEM.
 */
struct dso *dso__open_debug(const struct dso *d);
/* The same, also for a file that has its own .symtab: its call frame information may be in
 * the debug file only. */
struct dso *dso__open_debug_cfi(const struct dso *d);

#endif

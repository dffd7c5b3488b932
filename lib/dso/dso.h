/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * dso: one ELF file that processes map, opened once and shared by everything that asks about
 * it: the unwinder (its bytes, segments and tables of FDEs), the symbolizer (its symbols,
 * its separate debug file, names for unnamed functions) and the collector (where a C
 * library's stack-bottom functions are).
 *
 * A dso holds the file's descriptor and a private read-only mapping of the whole file; every
 * read of its contents is bounded by the file's size. Symbols, the debug file and the tables
 * of FDEs are read at their first use.
 *
 * Symbols come from .symtab and .dynsym of the file itself, and from a separate debug file
 * when the file has no .symtab: first by build id (<debug_dir>/.build-id/xx/rest.debug), then
 * by .gnu_debuglink (next to the file, in its .debug/ directory, and under
 * <debug_dir>/<the file's directory>), a debuglink file being used only when its CRC32 matches;
 * all of them inside the root of the process that maps the file first (a container's), when
 * that is not ours.
 */
#ifndef DSO_DSO_H
#define DSO_DSO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "dso/cfirec.h"
#include "dso/segs.h"

struct dso;

/* Where debug files live; "/usr/lib/debug" unless changed (tests point it elsewhere).
 * Not owned: the string must outlive every dso that may look for a debug file. */
extern const char *dso_debug_dir;

/* Files above this size are refused (4 GiB). */
#define DSO_FILE_MAX		(4ULL << 30)

/*
 * Open the ELF file at PATH (the file may be /proc/PID/map_files/... or /proc/PID/root/...):
 * map it, read its PT_LOAD segments, PT_GNU_EH_FRAME and build id. ORIG_PATH is the file's
 * path as the target process sees it (its name, and where debuglink files are looked for);
 * NULL means PATH. Returns a new dso the caller frees with dso__free, or NULL with errno set
 * (ENOENT, EACCES, ENOEXEC for a file that is not ELF or is malformed or is not a regular
 * file, EISDIR, EFBIG for a file over 4 GiB, ENOMEM).
 */
struct dso *dso__open(const char *path, const char *orig_path);

/*
 * dso__open of a descriptor FD of the file, handed over by whoever could open it (a process
 * that may not open files itself): owned by the dso from then on, closed on failure too.
 * ORIG_PATH names the file. The dso never opens a file by path but through a debug finder
 * (dso__set_debug_finder) if given one. NULL with errno as dso__open.
 */
struct dso *dso__open_fd(int fd, const char *orig_path);

/*
 * Open the file at PATH (inside ROOT_FD when >= 0) for its descriptor only, as dso__open_in
 * checks it (a regular file, its device and inode) but never reading it: for a process that
 * hands files to one that parses them (the sandboxed worker). Such a dso has no segments,
 * symbols or CFI (dso__usable is false); its build id is what dso__set_build_id says.
 */
struct dso *dso__open_closed(int root_fd, const char *path, const char *orig_path);
struct dso *dso__open_flags(int root_fd, const char *path, int fd, const char *orig_path,
			    bool closed);

/* Whether D was opened by dso__open_closed. */
bool dso__closed(const struct dso *d);

/* The build id (hex) of a closed dso, as the one who read the file said (the first time
 * only); ignored for a dso read here. */
void dso__set_build_id(struct dso *d, const char *hex);

/* Unmap and close everything the dso holds, its debug file included. NULL is fine. */
void dso__free(struct dso *dso);

/* The path as the process saw it (ORIG_PATH of dso__open), and its base name. Owned. */
const char *dso__path(const struct dso *dso);
const char *dso__base_name(const struct dso *dso);

/* A path that reads this very file while the dso lives: /proc/self/fd/N of its descriptor.
 * Owned by DSO. */
const char *dso__fd_path(const struct dso *dso);

/* e_type of the file (ET_EXEC, ET_DYN, ...). */
int dso__type(const struct dso *dso);

/* e_entry: the link-time address of the file's entry point (0: none, as most libraries). */
uint64_t dso__entry(const struct dso *dso);

/*
 * Whether Go's toolchain built the file: a note of owner "Go" (Go's build id) in its PT_NOTE
 * segments or note sections, or a .go.buildinfo section (Go 1.13 on, also in libraries built
 * with -buildmode=c-shared). Go's code keeps frame records by a convention its CFI does not
 * describe (unwind/frames_go.c); a cgo program also holds C code, with .eh_frame of its own.
 * Read at open.
 */
bool dso__is_go(const struct dso *dso);

/* The file's PT_LOAD segments; *N gets their number. Owned by DSO. */
const struct dso_seg *dso__segs(const struct dso *dso, size_t *n);

/* [*MIN, *MAX): the link-time extent of the PT_LOAD segments in memory. */
void dso__extent(const struct dso *dso, uint64_t *min, uint64_t *max);

/* File offset OFF -> link-time address (dso_segs__off_to_vaddr). Returns 0 or -ENOENT. */
int dso__off_to_vaddr(const struct dso *dso, uint64_t off, uint64_t *vaddr);

struct map;

/*
 * Where DSO is in mapping M: *BIAS such that runtime address = link-time address + bias, for
 * the segment that holds runtime address ADDR of M. Taken at an address, not at the
 * mapping's start: lld puts segments in shared file pages, so one file offset can belong to
 * two segments. Returns 0, or -ENOENT when ADDR's file offset is in no segment.
 */
int dso__bias(const struct dso *dso, const struct map *m, uint64_t addr, uint64_t *bias);

/* Link-time address VADDR of DSO -> its runtime address in mapping M, when M maps the file
 * bytes of VADDR. Returns 0 and sets *ADDR, or -ENOENT. */
int dso__vaddr_to_runtime(const struct dso *dso, const struct map *m, uint64_t vaddr,
			  uint64_t *addr);

/* The whole file's bytes (read only; *SIZE gets its length). Owned by DSO. */
const unsigned char *dso__image(const struct dso *dso, size_t *size);

/* Where a file's call frame information is. */
enum dso_cfi {
	DSO_CFI_EH,		/* .eh_frame: by its .eh_frame_hdr table, else by a table built
				 * from the records (gcc -static links no .eh_frame_hdr) */
	DSO_CFI_DEBUG,		/* .debug_frame (Go writes only this), converted to .eh_frame's
				 * format in memory */
	DSO_CFI__MAX,
};

/* The FDEs of one source: TABLE finds them, MEM reads them and their CIEs (in .eh_frame's
 * format) by link-time address. */
struct dso_fdes {
	struct fde_table table;
	struct cfi_mem mem;
	bool hdr;		/* TABLE is the file's own .eh_frame_hdr, loaded with the file */
	bool in_file;		/* the records are the file's own, loaded with it (not
				 * DSO_CFI_DEBUG's converted copy, at an address past the file's
				 * extent that no process maps) */
};

/*
 * The FDEs of DSO from source WHICH into *F (pointing into memory DSO owns). The first call
 * for a source reads it: the .eh_frame_hdr table as the file has it, else the records of
 * .eh_frame walked once, or .debug_frame decompressed (at most DSO_DEBUG_FRAME_MAX bytes)
 * and converted; a table holds at most FDES_MAX FDEs. Returns 0, or -ENOENT when the file
 * has no usable table from that source (or it could not be built).
 */
#define DSO_DEBUG_FRAME_MAX	(128u << 20)
int dso__fdes(struct dso *dso, enum dso_cfi which, struct dso_fdes *f);

/*
 * Start of the function holding VADDR: the greatest FDE start at or before it, of
 * DSO_CFI_EH's FDEs or DSO_CFI_DEBUG's (every function with unwind info has an FDE, named or
 * not), or UINT64_MAX when VADDR is below all of them, past the end of that FDE, or the file
 * has neither.
 */
uint64_t dso__fde_start(struct dso *dso, uint64_t vaddr);

/*
 * Start of the function holding VADDR, in code no FDE covers (assembly): the greatest of the
 * entries the file's code that FDEs cover reveals (the targets of its direct calls and jumps
 * and its rip-relative lea: a function called, or its address taken) at or before VADDR with
 * no FDE starting between them; UINT64_MAX when none. The entries are found at the first
 * call (the file's functions decoded once).
 */
uint64_t dso__code_entry(struct dso *dso, uint64_t vaddr);

/* Whether a function begins in (FROM, VADDR]: an FDE's start or a code entry
 * (dso__code_entry's). */
bool dso__function_between(struct dso *dso, uint64_t from, uint64_t vaddr);

/* Build id as lowercase hex (NULL when the file has none). Owned by DSO. */
const char *dso__build_id(const struct dso *dso);

/*
 * The function containing VADDR: the symbol with the greatest start <= VADDR, when VADDR is
 * below start + size (a symbol of size 0 covers up to the next symbol; the last one up to
 * the end of the PT_LOAD segment holding it). O(log n); symbols are read at the first
 * lookup (STT_FUNC and STT_GNU_IFUNC with a non-zero value, from .symtab and .dynsym, merged,
 * sorted, one per address preferring global over weak over local names, then the larger
 * size; version suffixes such as "@@GLIBC_2.14" dropped, names over 4095 bytes truncated).
 * An address in a PLT section (.plt, .plt.sec, .plt.got) is named after the function its stub
 * jumps to, "NAME@plt", made at the first lookup there; PLT0 and stubs that do not decode
 * get no name. Returns the name (owned by DSO) and sets *OFFSET to VADDR - start when OFFSET
 * is not NULL; NULL when no symbol covers VADDR.
 */
const char *dso__lookup(struct dso *dso, uint64_t vaddr, uint64_t *offset);

/* dso__lookup, giving the symbol's extent [*START, *END) instead of the offset (a symbol of
 * size 0 ends at the next symbol or the end of its section). */
const char *dso__lookup_range(struct dso *dso, uint64_t vaddr, uint64_t *start, uint64_t *end);

/*
 * Start address of the function symbol named NAME (exactly, after version suffixes are
 * dropped), or 0 when there is none (PLT stubs are not found by name). A linear scan, meant
 * for tests and diagnostics.
 */
uint64_t dso__find(struct dso *dso, const char *name);

/* [*START, *END) of the function symbol named NAME (a symbol of size 0 ends at the next
 * symbol). Returns 0, or -ENOENT when there is none. A linear scan. */
int dso__find_range(struct dso *dso, const char *name, uint64_t *start, uint64_t *end);

/*
 * The link-time address of the data object (STT_OBJECT, defined) named NAME in the file's
 * .dynsym or .symtab (CPython's _PyRuntime, which out-of-process tools start from). Returns 0
 * and sets *VADDR, or -ENOENT. A scan of the symbol tables, at most once per file and name.
 */
int dso__find_object(struct dso *dso, const char *name, uint64_t *vaddr);

/*
 * Whether the file was truncated under us while mapped (a SIGBUS in its mapping, caught by
 * base/mapguard): its bytes are zeros since, and what would be read from them is dropped:
 * no symbols, no FDEs, no DWARF.
 */
bool dso__faulted(const struct dso *dso);

/*
 * Whether what the file holds was read: false once it faulted, or when the memory budget
 * (base/limits, --max-memory) was spent before its symbols or its tables of FDEs could be
 * (a new file past the budget is not parsed). Its frames are then FILE+0xADDR.
 */
bool dso__usable(const struct dso *dso);

/*
 * Whether the DWARF that DWARF readers (BFD) would read for DSO may be handed to them: the
 * file is usable, the inflated sizes its sections' headers claim fit the file and the
 * memory budget (charged at the first call, for the dso's life), and its .gnu_debugaltlink
 * cannot lead BFD out of the debug directories. Returns 0, or a negative errno: -ESTALE
 * (not usable), -EFBIG (a size past the file's), -ENOMEM (past the budget), -ELOOP (the alt
 * link). Reads the symbols when needed (the debug file is measured with them).
 */
int dso__dwarf_check(struct dso *dso);

/* Number of function symbols (from the file and its debug file); reads them when needed. */
size_t dso__nr_syms(struct dso *dso);

/* Path of the debug file whose symbols were used, or NULL when none (inside the process's
 * root when it was found there: see dso__set_root). Reads the symbols when needed. Owned by
 * DSO. */
const char *dso__debug_path(struct dso *dso);

/* A path that reads that very debug file while the dso lives (/proc/self/fd/N), or NULL when
 * none was used. Reads the symbols when needed. Owned by DSO. */
const char *dso__debug_fd_path(struct dso *dso);

/*
 * The process that maps DSO sees ROOT_FD as its root directory (a container's; rootdir__open),
 * not ours: its debug file is looked for in there first, then in ours. ROOT_FD is borrowed and
 * must stay open as long as DSO. Call before the first symbol lookup.
 */
void dso__set_root(struct dso *dso, int root_fd);

/* The inode number of the file opened. */
uint64_t dso__inode(const struct dso *dso);

/* The file's modification time (ns since the epoch) when it was opened. */
uint64_t dso__mtime(const struct dso *dso);

/* The root directory set by dso__set_root (borrowed), or -1. */
int dso__root(const struct dso *dso);

/* The file's descriptor (owned by DSO). */
int dso__fd(const struct dso *dso);

/* The debug file's descriptor (owned by DSO), or -1 when none was used. Reads the symbols when
 * needed. */
int dso__debug_fd(struct dso *dso);

/*
 * The common file dwz moved part of DSO's DWARF to (.gnu_debugaltlink of the file that holds
 * the DWARF: the debug file when one was used, else DSO): its path *NAME as written there and
 * its build id *BUILD_ID (hex), both owned by DSO. Returns 0, or -ENOENT when there is none.
 * Reads the symbols when needed.
 */
int dso__dwarf_altlink(struct dso *dso, const char **name, const char **build_id);

/* --- debug files found by someone else ------------------------------------------------------
 * A process that may not open files (the sandboxed symbolizer) says what it looks for; the
 * one that may opens the candidates and hands them over; the first to pass dso__debug_check
 * is the debug file. */

#define DEBUGLINK_NAME_MAX	255

/* What DSO's debug file is known by. */
struct dso_debug_want {
	const char *build_id;		/* lowercase hex, owned by the dso; NULL: none */
	bool has_link;			/* a .gnu_debuglink: */
	char link[DEBUGLINK_NAME_MAX + 1];	/* its file name (no '/') */
	uint32_t crc;			/* and the CRC32 of the debug file's contents */
};

/* What to look for, into *W: 0; -EEXIST when DSO needs no debug file (it has a .symtab);
 * -ENOENT when it has neither a build id nor a debuglink. */
int dso__debug_want(const struct dso *dso, struct dso_debug_want *w);

/* What DSO's debug file is known by, whether DSO needs it for its symbols or not (its
 * .debug_frame may be there): 0, or -ENOENT when it has neither a build id nor a debuglink. */
int dso__debug_ids(const struct dso *dso, struct dso_debug_want *w);

/* Whether DSO lacks what a debug file would bring: symbols (.symtab) or DWARF (.debug_info).
 * What a debug file is fetched from a debuginfod server for. */
bool dso__lacks_debug(const struct dso *dso);

/* Where a debug file is looked for: PATH to try, by build id or else by debuglink CRC;
 * NOFOLLOW: in a directory the file's owner writes, where a link must not be followed. */
struct dso_debug_path {
	char *path;
	bool by_id;
	bool nofollow;
};

#define DSO_DEBUG_PATHS	4

/*
 * The places, in order, to look for the debug file of the file at PATH (as its process sees
 * it) with BUILD_ID (hex; NULL or "": none) and debuglink LINK (NULL or "": none): by build
 * id under dso_debug_dir, then LINK next to the file, in its .debug/, under dso_debug_dir
 * plus the file's directory. Fills OUT (DSO_DEBUG_PATHS entries; free with
 * dso_debug__free_paths) and returns how many, or -ENOMEM. Each place is inside the root of
 * the process that maps the file first (a container's), then ours.
 */
int dso_debug__paths(const char *path, const char *build_id, const char *link,
		     struct dso_debug_path *out);
void dso_debug__free_paths(struct dso_debug_path *paths, int n);

/*
 * Whether DBG is DSO's debug file: not DSO itself, with DSO's build id (BY_ID) or else
 * contents of CRC32 CRC, and a .symtab. Returns 0, or -ELOOP, -ESTALE, -ENOENT or a read
 * error.
 */
int dso__debug_check(const struct dso *dso, const struct dso *dbg, bool by_id, uint32_t crc);

/* Find DSO's debug file with FN(CTX, DSO) instead of opening paths (dso__open_debug): FN
 * returns the debug file (a dso the caller frees after reading its symbols) or NULL. Call
 * before the first symbol lookup. */
typedef struct dso *(*dso_debug_finder)(void *ctx, struct dso *dso);
void dso__set_debug_finder(struct dso *dso, dso_debug_finder fn, void *ctx);

/* GNU debuglink CRC32 (the gdb/binutils variant: CRC-32/ISO-HDLC over the whole file). */
uint32_t debuglink_crc32(uint32_t crc, const unsigned char *buf, size_t len);

#endif

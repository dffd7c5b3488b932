/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * elfsym: one ELF file's load segments and function symbols, for turning a file offset into a
 * link-time virtual address and a virtual address into a function name.
 *
 * Symbols come from .symtab and .dynsym of the file itself, and from a separate debug file
 * when the file has no .symtab: first by build id (<debug_dir>/.build-id/xx/rest.debug), then
 * by .gnu_debuglink (next to the file, in its .debug/ directory, and under
 * <debug_dir>/<the file's directory>), a debuglink file being used only when its CRC32 matches.
 */
#ifndef ELFSYM_H
#define ELFSYM_H

#include <stddef.h>
#include <stdint.h>

struct elfsym;

/* One PT_LOAD program header. */
struct load_seg {
	uint64_t offset;	/* p_offset */
	uint64_t vaddr;		/* p_vaddr */
	uint64_t filesz;	/* p_filesz */
	uint64_t memsz;		/* p_memsz */
};

/* Where debug files live; "/usr/lib/debug" unless changed (tests point it elsewhere).
 * Not owned: the string must outlive every elfsym__open call. */
extern const char *elfsym_debug_dir;

/*
 * Map a file offset to the link-time virtual address through the PT_LOAD segment with
 * offset <= off < offset + filesz: vaddr = off - offset + vaddr. Pure.
 * Returns 0 and sets *vaddr, or -ENOENT when no segment holds the offset.
 */
int load_segs__off_to_vaddr(const struct load_seg *segs, size_t n, uint64_t off,
			    uint64_t *vaddr);

/*
 * Open the ELF file at PATH (read only; the file may be /proc/PID/map_files/... or
 * /proc/PID/root/...), read its PT_LOAD segments and function symbols (STT_FUNC and
 * STT_GNU_IFUNC with a non-zero value, from .symtab and .dynsym, merged, sorted, duplicates by
 * address collapsed preferring global over weak over local names, then the larger size), and
 * find a debug file as described above when the file has no .symtab. Symbol version suffixes
 * ("memcpy@@GLIBC_2.14", as Debian's libc debug .symtab spells global names) are dropped and
 * names longer than 4095 bytes truncated. ORIG_PATH is the file's path as the target
 * process sees it (used to find debuglink files); NULL means PATH. No file stays open: names
 * are copied.
 * Returns a new elfsym the caller frees with elfsym__free, or NULL with errno set
 * (ENOENT, EACCES, ENOEXEC for a file that is not ELF or is malformed, EISDIR, EFBIG for a
 * file over 4 GiB, ENOMEM). A missing or unusable debug file is not an error.
 */
struct elfsym *elfsym__open(const char *path, const char *orig_path);

/* Free everything ELF holds. NULL is fine. */
void elfsym__free(struct elfsym *elf);

/* The file's PT_LOAD segments; *n gets their number. Owned by ELF. */
const struct load_seg *elfsym__segs(const struct elfsym *elf, size_t *n);

/* e_type of the file (ET_EXEC, ET_DYN, ...). */
int elfsym__type(const struct elfsym *elf);

/*
 * The function containing VADDR: the symbol with the greatest start <= VADDR, when VADDR is
 * below start + size (a symbol of size 0 covers up to the next symbol; the last one up to
 * the end of the PT_LOAD segment holding it). O(log n). Returns the name
 * (owned by ELF, valid until elfsym__free) and sets *offset to VADDR - start when OFFSET is
 * not NULL; NULL when no symbol covers VADDR.
 */
const char *elfsym__lookup(const struct elfsym *elf, uint64_t vaddr, uint64_t *offset);

/*
 * Start address of the function symbol named NAME (exactly, after version suffixes are
 * dropped), or 0 when there is none. A linear scan, meant for tests and diagnostics.
 */
uint64_t elfsym__find(const struct elfsym *elf, const char *name);

/* [*START, *END) of the function symbol named NAME (a symbol of size 0 ends at the next
 * symbol). Returns 0, or -ENOENT when there is none. A linear scan. */
int elfsym__find_range(const struct elfsym *elf, const char *name, uint64_t *start,
		       uint64_t *end);

/*
 * Start of the function holding VADDR by the .eh_frame_hdr table (every function with unwind
 * info has an FDE, named or not), or UINT64_MAX when VADDR is below all of them or the file
 * has no table.
 */
uint64_t elfsym__fde_start(const struct elfsym *elf, uint64_t vaddr);

/*
 * Check an .eh_frame_hdr section of LEN bytes at H: version 1, a 4-byte eh_frame pointer,
 * the FDE count as udata4 and a search table of (datarel sdata4) pairs that fits in LEN, the
 * only layout a binary-search table lookup can use. Returns 0 and sets *COUNT (the table's
 * entries start at H + EH_FRAME_HDR_TABLE, 8 bytes each), -ENOTSUP for another layout, or
 * -EINVAL when it is cut short or empty. Pure.
 */
#define EH_FRAME_HDR_TABLE 12
int eh_frame_hdr__parse(const unsigned char *h, size_t len, uint32_t *count);

/* The greatest of the N sorted STARTS that is <= VADDR, or UINT64_MAX. Pure. */
uint64_t fde_starts__find(const uint64_t *starts, size_t n, uint64_t vaddr);

/* Number of function symbols loaded (from the file and its debug file). */
size_t elfsym__nr_syms(const struct elfsym *elf);

/* Path of the debug file whose symbols were used, or NULL when none. Owned by ELF. */
const char *elfsym__debug_path(const struct elfsym *elf);

/* Build id as lowercase hex (NULL when the file has none). Owned by ELF. */
const char *elfsym__build_id(const struct elfsym *elf);

/* GNU debuglink CRC32 (the gdb/binutils variant: CRC-32/ISO-HDLC over the whole file). Pure. */
uint32_t debuglink_crc32(uint32_t crc, const unsigned char *buf, size_t len);

#endif

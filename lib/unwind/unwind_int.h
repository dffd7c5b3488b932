/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * unwind_int: what the files of lib/unwind share (not for use outside it). unwind.c has the
 * unwinder and its fast path, files.c the per-file rule caches and per-process file tables
 * and stack reads, remote.c libunwind's accessors and its unwind.
 */
#ifndef UNWIND_UNWIND_INT_H
#define UNWIND_UNWIND_INT_H

#include <libunwind.h>
#include <stdbool.h>
#include <stdint.h>
#include "base/htab.h"
#include "dso/dso.h"
#include "unwind/cfi.h"
#include "unwind/frames.h"
#include "unwind/unwind.h"
#include "unwind/utab.h"

#define PROC_BUCKETS	256
#define PAGE_CACHE	8
#define STACK_SPAN	(8u << 20)	/* reads this close above sp are stack reads */
#define PAGE		4096

struct map;

/* One source of a file's FDEs (enum dso_cfi), read from its dso at the first need. */
struct usrc {
	bool tried;
	bool ok;
	struct dso_fdes fdes;
};

struct ufile {
	struct dso *dso;
	uint32_t id;			/* the dso's id (fake addresses of its tables) */
	bool ok;			/* has FDEs to search */
	const unsigned char *image;	/* the dso's bytes */
	size_t size;
	struct cfi_mem mem;		/* the image and segments */
	struct usrc src[DSO_CFI__MAX];	/* .eh_frame first; .debug_frame where it finds none */
	uint64_t min_vaddr, max_vaddr;	/* extent of the PT_LOAD segments */
	struct utab *tab;		/* the file's rules, spans and Go's windows (utab.h),
					 * NULL when it has no CFI */
	bool tab_borrowed;		/* from the table source, not ours to free */
	bool later;			/* the source is still making it: ask again */
	bool loaded;			/* ufile__load ran: the dso's FDEs for libunwind */
	bool forgotten;			/* unwinder__forget_files: being freed */
};

/*
 * What dso/ built in memory (the search tables of files without .eh_frame_hdr, .debug_frame
 * converted) is shown to libunwind at addresses no process maps (non-canonical on x86-64):
 * FAKE_BASE + (file id << FAKE_ID_SHIFT) + (slot << 32) + offset; access_mem serves them.
 */
#define FAKE_BASE	0x4000000000000000ULL
#define FAKE_ID_SHIFT	36
#define FAKE_IDS	(1u << 22)
enum { FAKE_TABLE_EH, FAKE_TABLE_DEBUG, FAKE_RECS_DEBUG, FAKE__SLOTS };

static inline uint64_t fake_addr(uint32_t id, int slot)
{
	return FAKE_BASE + ((uint64_t)id << FAKE_ID_SHIFT) + ((uint64_t)slot << 32);
}

struct loaded {
	uint64_t bias;		/* runtime address = link-time address + bias */
	struct ufile *f;
};

struct uproc {
	pid_t pid;
	unw_addr_space_t as;
	struct loaded *loaded;	/* the files learnt by address, while its mappings had been
				 * replaced REPLACED times (procmaps__replaced) */
	size_t nr_loaded, cap_loaded;
	uint64_t replaced;
	struct uproc *next;
};

struct uctx;

/* Instructions followed from a frame's pc to its ret (unwind.c's ret_rule_ahead: OpenBLAS's
 * kernels are unrolled over 28 KiB), and the rules so found kept per (file, address). */
#define UNWIND_AHEAD_MAX	8192
/* ... in anonymous code (a JIT's: cached while its first bytes stay the same): a stub's few. */
#define UNWIND_AHEAD_ANON_MAX	32
#define UNWIND_AHEAD_CACHE	4096

enum { AHEAD_EMPTY = 0, AHEAD_OK, AHEAD_NONE };

struct ahead_ent {
	uint64_t pc;		/* link-time (anonymous code: runtime) */
	uint64_t code;		/* anonymous code: its first 8 bytes then (JIT code may be
				 * rewritten: the entry holds while they are the same) */
	uint32_t file;		/* dso id */
	int32_t off;		/* the return address is at register base's value + off */
	uint8_t base;		/* x86's register number (X86_RSP: rsp) */
	uint8_t state;		/* AHEAD_* */
	bool rbp_kept;		/* rbp at the ret is as it was at pc */
};

struct unwinder {
	struct procmaps *pm;
	struct dsos *dsos;
	unw_accessors_t acc;
	struct ufile **files;	/* by dso id */
	uint32_t cap_files;
	struct uproc *procs[PROC_BUCKETS];
	struct uctx *ctx;	/* reused by every unwind (one at a time) */
	bool check;		/* PROFILE_UNWIND_CHECK: libunwind redoes every fast unwind */
	const char *const *bottoms;	/* functions that begin a thread's stack */
	size_t nr_bottoms;
	unwind_table_fn table_fn;	/* where tables come from; NULL: built here */
	bool met_later;			/* the last unwind met a file whose table is coming */
	uint32_t later_id;		/* ... the first such file's dso id */
	void *table_ctx;
	struct unwind_counts counts;
	struct ahead_ent ahead[UNWIND_AHEAD_CACHE];	/* ret_rule_ahead's answers */
};

/* What the accessors see during one unwind: set up by uctx__begin. */
struct uctx {
	struct unwinder *u;
	struct uproc *p;
	const struct unwind_sample *s;
	bool no_info;		/* find_proc_info found no FDE */
	bool copy_only;		/* stack reads from the copy only, never the live process */
	bool no_code;		/* no code read from the process either (one step from words
				 * given, no sample) */
	bool mem_fault;		/* a read failed */
	bool past_copy;		/* copy_only kept a read of the stack past the copy out */
	uint64_t deep[UNWIND_DEEP_WORDS];	/* unwinder__deep_words */
	bool no_want;			/* a word past the copy read now is not asked for */
	int nr_deep_used, nr_deep;
	uint64_t scan_pc;	/* not 0: the frame at this pc (no CFI) had its caller found
				 * by a stack scan */
	bool live_read;		/* a word of the stack was read from the live process */
	int fail_n;		/* the fast path's frames when it gave up, and why */
	enum unwind_stop fail_stop;
	uint64_t stack_used;	/* bytes from sp the unwind read */
	struct { uint64_t addr; bool valid, bad; unsigned char data[PAGE]; } pages[PAGE_CACHE];
	bool gone;		/* the process is gone: nothing more is read from it */
	int next_page;
};

/* --- files.c ------------------------------------------------------------------------------ */

/* File offset holding link-time address VADDR of F (the whole file bounds a read from there),
 * or -1. */
int64_t ufile__vaddr_to_off(const struct ufile *f, uint64_t vaddr);

/* The FDEs of F from source WHICH, read at the first call; NULL when it has none. */
const struct dso_fdes *ufile__fdes(struct ufile *f, enum dso_cfi which);

/* The CFI rule at link-time address VADDR of F (by .eh_frame, then .debug_frame where that
 * has no FDE) from its table, into OUT. Returns 0, -ENOENT (no FDE covers it, or F has no
 * table) or -ENOTSUP (none a rule can express). */
int ufile__rule(struct ufile *f, uint64_t vaddr, struct cfi_rule *out);

/* Code no FDE describes shorter than this, in a file that has FDEs elsewhere, gets no guess
 * of a frame record at rbp (JIT code and V8's builtins span megabytes). */
#define UNWIND_GUESS_GAP_MIN	4096

/* A stack scan for the caller of code without CFI: how far above its sp it looks (OpenBLAS's
 * kernels align a 28 KiB buffer under their frame), and how many candidates that pass the
 * call check it unwinds from before it gives up. */
#define UNWIND_SCAN_SPAN	(32 * 1024)
#define UNWIND_SCAN_TRIES	8
#define UNWIND_SCAN_DEPTH	4	/* frames without CFI in a row (assembly calling its own) */


/* How far above sp a frame record at rbp may be taken for one (bpf/tabwalk.bpf.h's
 * RECORD_REACH, the same). */
#define UNWIND_RECORD_REACH	(1u << 20)

/* Whether link-time address VADDR of F is in a stretch no FDE describes, between FDEs (or
 * its segment's ends), shorter than UNWIND_GUESS_GAP_MIN; *START gets where it begins. */
bool ufile__small_gap(const struct ufile *f, uint64_t vaddr, uint64_t *start);

/* The unwinder's state of the file M of PID maps (by its dso id), made at the first use; NULL
 * when out of memory. Its dso may be NULL: the file cannot be read. */
struct ufile *unwinder__file(struct unwinder *u, pid_t pid, const struct map *m);
/* The word at fake address ADDR (FAKE_BASE...) of U's files; bytes past the end of what is
 * there read as zeros. Returns 0, or -1 when ADDR is in nothing built. */
int unwinder__read_fake(struct unwinder *u, uint64_t addr, uint64_t *val);

/* The unwinder's process PID, made at the first use (with its libunwind address space);
 * NULL when out of memory. */
struct uproc *unwinder__proc(struct unwinder *u, pid_t pid);
void uproc__free(struct uproc *p);

/* The file loaded in P at runtime address ADDR, from what is known already, or NULL. */
struct loaded *uproc__find_loaded(struct uproc *p, uint64_t addr);

/* The file holding code address IP in C's process, learned from its mappings; NULL when
 * there is none or it has no usable unwind table. */
struct loaded *uproc__loaded_for_ip(struct uctx *c, uint64_t ip);

/* Whether return address RA found by a step lies in code the process maps (RA - 1 in one of
 * its executable mappings). A step to anywhere else cannot be justified: the stack ends
 * there, truncated, rather than show an [unknown] caller. */
bool uctx__return_mapped(struct uctx *c, uint64_t ra);

/* Whether PC (a leaf's ip, or a return address - 1) is in the first ENTRY_SPAN bytes of its
 * file's entry point: the outermost frame of a process (the dynamic linker's _start has no
 * CFI to say so). */
#define ENTRY_SPAN	64
bool uctx__at_entry(struct uctx *c, uint64_t pc);

/* The word at ADDR of the sampled thread's stack: from the copy, else (unless copy_only)
 * still in place in the live process. Returns 0 or -1; keeps stack_used. */
int read_stack(struct uctx *c, uint64_t addr, uint64_t *val);

/* The 8 bytes of code at ADDR of the sampled process (not with no_code: code, unlike the
 * stack, is read as it is now). 0 or -1. */
int read_code(struct uctx *c, uint64_t addr, uint64_t *val);

/* --- remote.c ----------------------------------------------------------------------------- */

/* libunwind's accessors over a struct uctx. */
void unwind_remote__init_accessors(unw_accessors_t *acc);

/* Unwind C's sample with libunwind into IPS (IPS[0] set); returns the frames, sets *STOP. */
int unwind_libunwind(struct uctx *c, uint64_t *ips, int max, enum unwind_stop *stop);

/* --- unwind.c ----------------------------------------------------------------------------- */

/* The unwinder's context, reset for sample S (allocated once); NULL when out of memory. */
struct uctx *uctx__begin(struct unwinder *u, const struct unwind_sample *s);

#endif

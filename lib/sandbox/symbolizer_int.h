/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * symbolizer_int: what symbolizer.c (the cache, lookups, kernel names) and resolve.c (the
 * exchanges with the worker) share; private to lib/sandbox.
 */
#ifndef SANDBOX_SYMBOLIZER_INT_H
#define SANDBOX_SYMBOLIZER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "base/htab.h"
#include "sandbox/client.h"
#include "sandbox/proto.h"
#include "sandbox/symbolizer.h"

struct dso;

#define SRC_MAP		0x80000000u	/* sym_ent.src: a perf map's id, not a file's */

/* A named address, or one waiting (nr == 0) to be named. */
struct sym_ent {
	uint32_t src;		/* the file's dso id, or the perf map's id | SRC_MAP */
	bool is_return;
	uint64_t off;		/* file offset (one byte back for a return address), or the
				 * address in a perf map */
	uint32_t used;		/* the symbolizer's epoch when last asked for */
	int nr;			/* frames; 0 while waiting */
	struct sym_frame *frames;	/* root first, their strings in BLOB with them */
	char *blob;
};

/* A file (by dso id) or a perf map (by pid) the worker is asked about. */
struct sym_src {
	char *name;		/* the file's path as its process saw it, or the perf map's */
	const char *base;	/* FILE of FILE+0xOFFSET: the base name */
	char *label;		/* "[base]" */
	char *replaced_label;	/* "[base (replaced)]", made when first asked for */
	struct dso *dso;	/* a file's: its descriptor; NULL when it cannot be read */
	int map_fd;		/* a perf map's descriptor; -1: none */
	pid_t pid;		/* a perf map's process */
	/* An epoch of a process kept apart (procmaps__epoch_of): its perf map is jit_pid's, as
	 * it was at jit_upto bytes (UINT64_MAX: all; for any other map too). */
	pid_t jit_pid;
	uint64_t jit_upto;
	uint32_t id;		/* dso id, or map id */
	bool is_map;
	unsigned int sent;	/* the worker generation it was handed to; 0: none */
	bool bad;		/* a worker failed on it: FILE+0xOFFSET from now on */
	bool info;		/* nr_syms and debug known, from an answer */
	bool debug;
	uint32_t nr_syms;
	uint32_t *wait;		/* the entries waiting to be named */
	uint32_t nr_wait, cap_wait;
	/* a file's unwind table (SB_TABLE, SB_UTAB) */
	uint8_t tstate;		/* enum tab_state */
	unsigned char *tbuf;	/* the parts so far: tlen bytes of ttotal */
	uint32_t tlen, ttotal;
	struct utab *tab;	/* decoded, once done (NULL: the file has none) */
	double tasked;		/* when it was asked for (sb_client__now) */
	char *fetch_id;		/* the build id of a debug file being fetched for it */
};

enum tab_state { TAB_NONE = 0, TAB_ASKED, TAB_DONE };

struct symbolizer {
	struct procmaps *pm;
	struct dsos *dsos;
	unsigned int flags;		/* SYMBOLIZE_* */
	struct sb_client c;
	struct sym_src **files;		/* by dso id */
	uint32_t cap_files;
	struct sym_src **maps;		/* by map id */
	uint32_t nr_maps, cap_maps;
	struct htab map_index;		/* pid -> map id */
	uint32_t *free_maps;		/* map ids forgotten, for later ones (a stack) */
	uint32_t nr_free_maps, cap_free_maps;
	struct sym_ent **ents;
	uint32_t nr_ents, cap_ents;
	struct htab ent_index;		/* (src, off, is_return) -> ents */
	uint32_t epoch;			/* periods whose names were forgotten (ents' used) */
	uint64_t handed;		/* files handed for preparing: the first this many added
					 * (dsos__added) */
	bool preparing;			/* symbolizer__prepare was called */
	bool over;			/* sampling is over: the worker at normal priority */
	bool want_idle;			/* the worker at idle priority when no table is asked */
	unsigned int base_gen;		/* the worker whose memory base_kib is */
	uint64_t base_kib;		/* its RssAnon after its first period's names */
	uint64_t tables_answered;	/* tables made or given up on (TAB_ASKED ended) */
	struct sb_buf out;
	uint32_t seq;
	struct dfetch *fetch;		/* debuginfod; NULL: off */
	bool fetch_nowait;		/* symbolizer__fetch_wait(false) */
	/* kallsyms, read by a thread of ours at idle priority while sampling */
	struct ksyms *ksyms;
	bool ksyms_tried, kthread;
	pthread_t ktid;
	volatile pid_t ktid_os;
};

/* symbolizer_names.c: give entry ID its NR frames FR (copied with their strings). Returns 0
 * or -ENOMEM. */
int sym_ent__set(struct symbolizer *s, uint32_t id, const struct sym_frame *fr, int nr);

/* symbolizer_names.c: the entry ID named FILE+0xOFFSET of its file (a perf map's:
 * [unknown]), unnamed, as when a worker failed on it. */
void sym_ent__set_failed(struct symbolizer *s, uint32_t id);

/* symbolizer.c: the source of entry source id SRC (sym_ent.src). */
struct sym_src *sym_src__of(struct symbolizer *s, uint32_t src);

/* symbolizer.c: the source of file ID (DSO, NULL when unreadable, named PATH), made at the
 * first call. NULL on ENOMEM. */
struct sym_src *sym_src__file_at(struct symbolizer *s, uint32_t id, struct dso *dso,
				 const char *path);

/* symbolizer.c: the source of the file of mapping M of PID (its dso opened now when not
 * yet); the perf map source of PID (its file opened at the first call). NULL on ENOMEM. */
struct sym_src *symbolizer__file(struct symbolizer *s, pid_t pid, const struct map *m);
struct sym_src *symbolizer__map(struct symbolizer *s, pid_t pid);
/* "[base (replaced)]" of file source SRC (its label on ENOMEM). */
const char *sym_src__replaced_label(struct sym_src *src);
/* The source whose perf map SRC's entries are named from: SRC, or the process it is an epoch
 * of (NULL on ENOMEM). */
struct sym_src *symbolizer__map_owner(struct symbolizer *s, struct sym_src *src);

/* symbolizer.c: the worker's priority: idle while sampling unless a table is asked for;
 * normal once sampling is over. */
void symbolizer__set_priority(struct symbolizer *s);

/* symbolizer_names.c: the kallsyms thread joined (at normal priority first). */
void symbolizer__wait_ksyms(struct symbolizer *s);

/* An entry's key in the symbolizer's table: SRC's offset OFF, a return address or not. */
static inline uint64_t sym_ent_hash(uint32_t src, uint64_t off, bool is_return)
{
	return hash_u64(hash_u64(HASH_SEED, off), (uint64_t)src << 1 | is_return);
}

/* resolve.c: the answers to what the worker asked, and files to hand it, without waiting. */
void resolve__poll(struct symbolizer *s);

/* End a worker that works well, for its memory (sb_client__recycle): the tables it was
 * asked for are asked of the next. */
void resolve__recycle(struct symbolizer *s);

/* resolve.c: ask the worker for SRC's unwind table, without waiting. Returns 0 or a negative
 * errno (-EAGAIN: the socket is full, ask again later). */
int resolve__ask_table(struct symbolizer *s, struct sym_src *src);

/* resolve.c: wait until SRC's unwind table has come (or a worker failed on it). */
void resolve__await_table(struct symbolizer *s, struct sym_src *src);

/* symbolizer.c: the debug file of build id ID came (debuginfod): the files waiting for it
 * read again, their names asked for again. CTX is the symbolizer. */
void symbolizer__fetched(void *ctx, const char *id);

/* resolve.c: hand SRC to the worker to read now (SB_PREPARE), without waiting. Returns 0 or
 * a negative errno (-EAGAIN: the socket is full). */
int resolve__prepare(struct symbolizer *s, struct sym_src *src);
/* SRC (a perf map) handed to the worker now, not waiting: symbolizer__perfmap_early. */
int resolve__hand_early(struct symbolizer *s, struct sym_src *src);

/* resolve.c: name the entries SRC waits for. Returns 0 or -ENOMEM. */
int resolve__src(struct symbolizer *s, struct sym_src *src);
/* Code object C's names at its N UNITS into OUT (symbolizer__python). */
int resolve__python(struct symbolizer *s, const struct sym_pycode *c, const uint32_t *units,
		    uint32_t n, struct sym_pyname *out);

#endif

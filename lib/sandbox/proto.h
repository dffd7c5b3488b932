/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * proto: the messages between the privileged side (the client) and the symbolizer worker,
 * one SOCK_SEQPACKET message each, descriptors beside them (SCM_RIGHTS). Each side decodes
 * what the other sends as untrusted input: every length, count and index is checked against
 * the message's size and the limits below before anything is used, strings are
 * NUL-terminated and NUL-free, and a message that does not decode is a protocol error.
 *
 * Layout (little-endian): a header {u8 type, u8 arg, u16 zero, u32 id}, then per type:
 *
 *   client -> worker
 *   SB_FILE     id file, arg flags (SYMBOLIZE_*), str path              + 1 descriptor
 *   SB_PREPARE  id file                                                  read it now, idly
 *   SB_DEBUG    id file, arg n, n x {u8 by_id, str path}                 + n descriptors
 *   SB_LOOKUP   id file, u32 seq, u32 n, n x u64 (offset << 1 | is_return)
 *   SB_PERFMAP  id map                                                   + 1 descriptor
 *   SB_JIT      id map, u32 seq, u32 n, u64 upto, n x u64 address      (upto: the perf
 *               map's names as it was at that size, perfmap__lookup_at; ~0: the latest)
 *   SB_TABLE    id file                                                  its unwind table
 *   SB_FORGET   id file or map, arg is_map                               no process maps it
 *   SB_PYCODE   id 0, arg CPython 3's minor version, u32 seq, SB_PY_BLOBS x {u32 len, bytes}
 *               (a code object's bytes as its process held them, untrusted: the object, its
 *               qualified name, name, file name and line table objects), u32 n, n x u32 unit
 *               answered by SB_NAMES (id 0, seq): one frame per unit, its name, file and line
 *   SB_RBCODE   as SB_PYCODE, for a CRuby iseq: arg Ruby 3's minor version, the objects: the
 *               iseq's body, its label's bytes, its path's bytes, its insns_info entries,
 *               its succinct line table; a unit: a frame word's 16 bits of pc / 8
 *
 *   worker -> client
 *   SB_HELLO      id pid, u32 uid, u32 gid                  confined, ready
 *   SB_BUSY       id file or map, arg is_map                starts work on it
 *   SB_WANT_DEBUG id file, arg has_link, u32 crc, str build_id, str link
 *                 (arg SB_WANT_ALT: dwz's common file, build_id and link its own; with
 *                 SB_WANT_REMOTE: the file has no symbols or no DWARF of its own)
 *   SB_NAMES      id file or map, arg last, u32 seq, u32 first, u32 n, u32 nr_syms,
 *                 u32 flags (SB_NAMES_DEBUG), u32 nstr, nstr x str,
 *                 n x {u8 nr, nr x frame}                   the answer, in parts;
 *                 a frame: u32 name, u32 file (string indexes; file ~0: none), u32 line,
 *                 u8 kind (symbolize/symfile.h's enum sym_kind)
 *   SB_UTAB       id file, arg last, u32 total, u32 offset, bytes      a file's unwind table
 *                 (unwind/utab.h's encoding; total 0: none), in parts, in order
 *   SB_LIMITS     id 0, u32 n, n x u64                      how often each bound of
 *                 base/limits was met in the worker so far (enum limit's order), sent
 *                 before the last part of an answer when one changed
 *
 * A str is {u32 len, len bytes, NUL}.
 */
#ifndef SANDBOX_PROTO_H
#define SANDBOX_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sb_type {
	SB_FILE = 1,
	SB_PREPARE,
	SB_DEBUG,
	SB_LOOKUP,
	SB_PERFMAP,
	SB_JIT,
	SB_TABLE,
	SB_FORGET,
	SB_PYCODE,
	SB_RBCODE,
	SB_HELLO = 64,
	SB_BUSY,
	SB_WANT_DEBUG,
	SB_NAMES,
	SB_LIMITS,
	SB_UTAB,
};

#define SB_MSG_MAX	(1u << 20)	/* bytes of one message */
#define SB_PART_TARGET	(256u << 10)	/* a part of an answer ends past this size */
#define SB_FDS_MAX	8		/* descriptors with one message */
#define SB_BATCH_MAX	16384		/* addresses of one lookup */
#define SB_PATH_MAX	4096		/* bytes of a path */
#define SB_STR_MAX	(16384 + 8)	/* bytes of a name or a source file (symfile's cut) */
#define SB_FRAMES_MAX	33		/* frames of one address */
#define SB_BUILD_ID_MAX	128		/* hex digits of a build id */
#define SB_IDS_MAX	(1u << 24)	/* file and map ids are below this */
#define SB_UTAB_MAX	(256u << 20)	/* bytes of one file's unwind table */
#define SB_PY_BLOBS	5		/* an SB_PYCODE's objects: */
enum { SB_PY_CODE, SB_PY_QUALNAME, SB_PY_NAME, SB_PY_FILE, SB_PY_TABLE };
#define SB_PY_BLOB_MAX	(256u << 10)	/* bytes of one */

#define SB_NAMES_DEBUG	1		/* the symbols came from a debug file */
#define SB_WANT_ALT	2		/* SB_WANT_DEBUG's arg: the common file dwz made */
#define SB_WANT_REMOTE	4		/* SB_WANT_DEBUG's arg, a bit: worth a debuginfod fetch */
#define SB_LIMITS_MAX	32		/* counts of one SB_LIMITS */

/* One debug-file candidate of an SB_DEBUG message. */
struct sb_cand {
	bool by_id;
	const char *path;
};

/* A decoded message. Pointers point into the message's bytes, which must outlive it. */
struct sb_msg {
	enum sb_type type;
	uint8_t arg;		/* SB_FILE: flags; SB_WANT_DEBUG: has_link; SB_NAMES: last */
	uint32_t id;		/* file, map or (SB_HELLO) pid */
	uint32_t seq;		/* SB_LOOKUP, SB_JIT, SB_NAMES */
	uint32_t n;		/* addresses (SB_LOOKUP, SB_JIT, SB_NAMES), candidates (SB_DEBUG) */
	uint32_t nfds;		/* descriptors that must come with it */
	const char *path;	/* SB_FILE */
	const unsigned char *addrs;	/* SB_LOOKUP, SB_JIT: n u64, sb_msg__addr */
	uint64_t upto;		/* SB_JIT */
	struct sb_cand cand[SB_FDS_MAX];	/* SB_DEBUG */
	uint32_t uid, gid;	/* SB_HELLO */
	uint32_t crc;		/* SB_WANT_DEBUG */
	const char *build_id, *link;	/* SB_WANT_DEBUG: "" when none */
	/* SB_NAMES */
	uint32_t first, nr_syms, flags, nstr;
	const unsigned char *strs;	/* the string table: sb_names__strings */
	const unsigned char *ents;	/* the entries: sb_names__next */
	size_t strs_len, ents_len;
	uint64_t counts[SB_LIMITS_MAX];	/* SB_LIMITS: n of them */
	/* SB_PYCODE (seq, n units, arg the minor version) */
	const unsigned char *blob[SB_PY_BLOBS];
	uint32_t blob_len[SB_PY_BLOBS];
	const unsigned char *units;	/* n u32: sb_msg__unit */
	/* SB_UTAB: bytes [offset, offset + data_len) of total */
	uint32_t total, offset;
	const unsigned char *data;
	size_t data_len;
};

/* The address I (< M->n) of an SB_LOOKUP or SB_JIT message. */
uint64_t sb_msg__addr(const struct sb_msg *m, uint32_t i);
/* The unit I (< M->n) of an SB_PYCODE message. */
uint32_t sb_msg__unit(const struct sb_msg *m, uint32_t i);

/*
 * Decode the LEN bytes BUF (one message, with NFDS descriptors beside it) into *M. A worker
 * decodes with TO_WORKER (only client messages are valid), a client without. Returns 0, or
 * -EBADMSG when it is not a valid message of that direction (bad type, size, count, string,
 * or a number of descriptors other than the type's).
 */
int sb_msg__decode(const void *buf, size_t len, unsigned int nfds, bool to_worker,
		   struct sb_msg *m);

/* The NSTR strings of a decoded SB_NAMES into STRS (room for M->nstr; pointers into the
 * message, NUL-terminated). */
void sb_names__strings(const struct sb_msg *m, const char **strs);

/* A frame of an SB_NAMES entry: its name's and source file's indexes in the string table
 * (file SB_NO_STR: none), its line (0: unknown), its kind (enum sym_kind), all checked. */
#define SB_NO_STR	UINT32_MAX
#define SB_FRAME_LEN	13	/* on the wire */
struct sb_frame {
	uint32_t name, file, line;
	uint8_t kind;
};

/* The next entry of a decoded SB_NAMES after *POS (0 at first): its frames into FRAMES
 * (room for SB_FRAMES_MAX). Returns how many (1..SB_FRAMES_MAX). Call M->n times. */
int sb_names__next(const struct sb_msg *m, size_t *pos, struct sb_frame *frames);

/* --- encoding -------------------------------------------------------------------------- */

/* A message being built. Never fails midway: an error (ENOMEM, or the size past SB_MSG_MAX)
 * is kept in ERR and returned by sb_buf__end. */
struct sb_buf {
	unsigned char *p;
	size_t len, cap;
	int err;
};

/* Empty B (its memory kept): a plain byte buffer, without a header. */
void sb_buf__clear(struct sb_buf *b);
/* Append the LEN bytes P. */
void sb_buf__bytes(struct sb_buf *b, const void *p, size_t len);

/* Start a message of TYPE with ARG and ID into B (emptied; its memory reused). */
void sb_buf__start(struct sb_buf *b, enum sb_type type, uint8_t arg, uint32_t id);
void sb_buf__u8(struct sb_buf *b, uint8_t v);
void sb_buf__u32(struct sb_buf *b, uint32_t v);
void sb_buf__u64(struct sb_buf *b, uint64_t v);
/* One SB_NAMES entry of NR frames (the worker's). */
void sb_buf__frames(struct sb_buf *b, const struct sb_frame *frames, int nr);
/* A string of LEN bytes (no NUL among them). */
void sb_buf__str(struct sb_buf *b, const char *s, size_t len);
/* Overwrite the u32 at OFF (a count known only at the end). */
void sb_buf__put_u32(struct sb_buf *b, size_t off, uint32_t v);
/* 0, or the first error (negative errno) since sb_buf__start. */
int sb_buf__end(const struct sb_buf *b);
void sb_buf__free(struct sb_buf *b);

/* The size of the header of every message, and of an SB_NAMES before its strings. */
#define SB_HDR_LEN		8
#define SB_NAMES_HDR_LEN	(SB_HDR_LEN + 6 * 4)

/* --- the debuginfod fetcher's answers (sandbox/debuginfod.c) ----------------------------- */

/*
 * An answer of the fetcher, LEN bytes at BUF: i32 status (0, or a negative errno), the build
 * id (hex digits, 3 to SB_BUILD_ID_MAX). Into *STATUS and ID (SB_BUILD_ID_MAX + 1 bytes).
 * Returns 0 or -EBADMSG.
 */
int sb_fetch_answer__decode(const void *buf, size_t len, int32_t *status, char *id);

/* --- the socket ------------------------------------------------------------------------- */

/* Send the LEN bytes BUF as one message on SOCK with the NFDS descriptors FDS (not taken).
 * FLAGS: MSG_DONTWAIT or 0. Returns 0 or a negative errno (-EAGAIN: the socket is full). */
int sb_send(int sock, const void *buf, size_t len, const int *fds, unsigned int nfds,
	    int flags);

/*
 * Receive one message from SOCK into BUF (SB_MSG_MAX bytes), its descriptors into FDS (room
 * for SB_FDS_MAX; *NFDS gets how many, all owned by the caller, close-on-exec). FLAGS:
 * MSG_DONTWAIT or 0. Returns its length, 0 at the end (the other side is gone), or a negative
 * errno (-EAGAIN: nothing yet; -EMSGSIZE: a message or its descriptors were cut, and the
 * descriptors that came are closed).
 */
long sb_recv(int sock, void *buf, int *fds, unsigned int *nfds, int flags);

#endif

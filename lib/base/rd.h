/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * rd: the bounded reader of bytes from outside (the worker's messages, unwind tables from the
 * worker, pprof files): a read past the end gives zeros, leaves the reader at the end and
 * sets BAD, which the caller checks once the reads are done. Numbers are little-endian, as in
 * every format read with it.
 */
#ifndef BASE_RD_H
#define BASE_RD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rd {
	const unsigned char *p, *end;
	bool bad;
};

static inline struct rd rd__init(const void *buf, size_t len)
{
	return (struct rd){ buf, (const unsigned char *)buf + len, false };
}

static inline size_t rd__left(const struct rd *r)
{
	return (size_t)(r->end - r->p);
}

/* Whether N more bytes are there; BAD (and at the end) when not. */
static inline bool rd__has(struct rd *r, size_t n)
{
	if (r->bad || rd__left(r) < n) {
		r->bad = true;
		r->p = r->end;
		return false;
	}
	return true;
}

/* The next N bytes (at most 8) as a little-endian number. */
static inline uint64_t rd__uint(struct rd *r, size_t n)
{
	uint64_t v = 0;

	if (n > 8 || !rd__has(r, n))
		return 0;
	for (size_t i = n; i-- > 0;)
		v = v << 8 | r->p[i];
	r->p += n;
	return v;
}

static inline uint8_t rd__u8(struct rd *r)
{
	return (uint8_t)rd__uint(r, 1);
}

static inline uint32_t rd__u32(struct rd *r)
{
	return (uint32_t)rd__uint(r, 4);
}

static inline uint64_t rd__u64(struct rd *r)
{
	return rd__uint(r, 8);
}

/* The next N bytes: a pointer to them, or NULL (and BAD). */
static inline const unsigned char *rd__bytes(struct rd *r, size_t n)
{
	const unsigned char *p = r->p;

	if (!rd__has(r, n))
		return NULL;
	r->p += n;
	return p;
}

/* A base-128 number of at most 10 bytes (protobuf's varint, DWARF's ULEB128). */
static inline uint64_t rd__varint(struct rd *r)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		unsigned char c;

		if (!rd__has(r, 1))
			return 0;
		c = *r->p++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

#endif

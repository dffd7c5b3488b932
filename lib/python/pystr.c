// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * python/pystr: compact str objects (PEP 393: the data right after the header, one, two or
 * four bytes a code point; an ASCII one after PyASCIIObject, others after
 * PyCompactUnicodeObject) and bytes objects, from bytes another process holds. Every
 * length in them is checked against what was read and against a cap before use.
 */
#include <errno.h>
#include <string.h>
#include "python/pystr.h"

static int64_t le64s(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return (int64_t)v;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

struct str_hdr {
	size_t data;		/* offset of the first code point */
	unsigned kind;		/* bytes a code point */
	size_t chars;		/* code points to decode (capped) */
	int ascii;
};

/* The header of the str at HDR, or -EINVAL (see py_str__need). */
static int str_header(const struct py_layout *l, const uint8_t *hdr, size_t len,
		      struct str_hdr *h)
{
	uint32_t state;
	int64_t length;

	if (!l || !hdr || len < (size_t)l->str_state + 4 || len < (size_t)l->str_length + 8)
		return -EINVAL;
	state = le32(hdr + l->str_state);
	length = le64s(hdr + l->str_length);
	h->kind = (state >> l->str_kind_shift) & 7;
	h->ascii = (state >> l->str_ascii_bit) & 1;
	if (!((state >> l->str_compact_bit) & 1) || length < 0)
		return -EINVAL;
	if (l->str_ready_bit != PY_NO_BIT && !((state >> l->str_ready_bit) & 1))
		return -EINVAL;
	if (h->kind != 1 && h->kind != 2 && h->kind != 4)
		return -EINVAL;
	if (h->ascii && h->kind != 1)
		return -EINVAL;
	h->data = h->ascii ? l->str_ascii_data : l->str_compact_data;
	h->chars = length > PY_STR_MAX_CHARS ? PY_STR_MAX_CHARS : (size_t)length;
	return 0;
}

size_t py_str__need(const struct py_layout *l, const uint8_t *hdr, size_t len)
{
	struct str_hdr h;

	if (str_header(l, hdr, len, &h))
		return 0;
	return h.data + h.chars * h.kind;
}

/* C as UTF-8 into P (4 bytes of room), its length; what UTF-8 cannot carry, and NUL, as
 * U+FFFD. */
static size_t utf8_put(uint32_t c, char *p)
{
	if (c == 0 || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		c = 0xfffd;
	if (c < 0x80) {
		p[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		p[0] = (char)(0xc0 | c >> 6);
		p[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		p[0] = (char)(0xe0 | c >> 12);
		p[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		p[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	p[0] = (char)(0xf0 | c >> 18);
	p[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	p[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	p[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

int py_str__utf8(const struct py_layout *l, const uint8_t *obj, size_t len, char *out,
		 size_t outlen)
{
	struct str_hdr h;
	size_t w = 0;

	if (out && outlen)
		out[0] = '\0';
	if (!out || !outlen || str_header(l, obj, len, &h) || len < h.data + h.chars * h.kind)
		return -EINVAL;
	for (size_t i = 0; i < h.chars; i++) {
		const uint8_t *p = obj + h.data + i * h.kind;
		uint32_t c = h.kind == 1 ? p[0] : h.kind == 2 ? (uint32_t)(p[0] | p[1] << 8)
							       : le32(p);
		char enc[4];
		size_t n;

		if (h.ascii && c > 0x7f)
			c = 0xfffd;
		n = utf8_put(c, enc);
		if (n >= outlen - w)	/* the character and the NUL */
			break;
		memcpy(out + w, enc, n);
		w += n;
	}
	out[w] = '\0';
	return (int)w;
}

size_t py_bytes__need(const struct py_layout *l, const uint8_t *hdr, size_t len)
{
	int64_t size;

	if (!l || !hdr || len < (size_t)l->bytes_size + 8)
		return 0;
	size = le64s(hdr + l->bytes_size);
	if (size < 0 || size > PY_BYTES_MAX)
		return 0;
	return (size_t)l->bytes_data + (size_t)size;
}

int py_bytes__data(const struct py_layout *l, const uint8_t *obj, size_t len,
		   const uint8_t **data, size_t *n)
{
	size_t need = py_bytes__need(l, obj, len);

	if (data)
		*data = NULL;
	if (n)
		*n = 0;
	if (!need || len < need || !data || !n)
		return -EINVAL;
	*data = obj + l->bytes_data;
	*n = need - l->bytes_data;
	return 0;
}

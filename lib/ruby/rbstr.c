// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * ruby/rbstr: 3.1's RString (flags, klass, then either len, ptr, capa on the heap or up to
 * 23 bytes in place, their count in flags bits 14-18: RSTRING_EMBED_LEN_MASK) and RArray
 * (embedded: up to 3 VALUEs in place, count in bits 15-16; else len, aux, ptr). Every
 * length read is checked against what was read and a cap before use.
 */
#include <errno.h>
#include "ruby/rbstr.h"

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int rb_str__locate(const struct rb_layout *l, uint64_t addr, const uint8_t *obj, size_t len,
		   uint64_t *at, size_t *n)
{
	uint64_t flags, ptr;
	int64_t hlen;
	size_t cnt;

	if (!l || !obj || !at || !n || len < l->str_size)
		return -EINVAL;
	flags = le64(obj + l->obj_flags);
	if ((flags & l->type_mask) != l->type_string)
		return -EINVAL;
	if (!(flags & l->str_noembed)) {
		cnt = (size_t)((flags & l->str_embed_len_mask) >> l->str_embed_len_shift);
		if (l->str_embed + cnt > l->str_size)
			return -EINVAL;
		*at = addr + l->str_embed;
		*n = cnt;
		return 0;
	}
	hlen = (int64_t)le64(obj + l->str_heap_len);
	ptr = le64(obj + l->str_heap_ptr);
	if (hlen < 0 || (hlen && !ptr))
		return -EINVAL;
	*at = ptr;
	*n = hlen > RB_STR_MAX_BYTES ? RB_STR_MAX_BYTES : (size_t)hlen;
	return 0;
}

int rb_path__locate(const struct rb_layout *l, uint64_t addr, const uint8_t *obj, size_t len,
		    uint64_t *path, uint64_t *slot)
{
	uint64_t flags;
	size_t need;

	if (!l || !obj || !path || !slot)
		return -EINVAL;
	need = l->ary_heap_ptr + 8u > l->str_size ? l->ary_heap_ptr + 8u : l->str_size;
	if (len < need)
		return -EINVAL;
	flags = le64(obj + l->obj_flags);
	*path = *slot = 0;
	if ((flags & l->type_mask) == l->type_string) {
		*path = addr;
		return 0;
	}
	if ((flags & l->type_mask) != l->type_array)
		return -EINVAL;
	if (flags & l->ary_embed_flag) {
		if (!((flags & l->ary_embed_len_mask) >> l->ary_embed_len_shift))
			return -EINVAL;
		*slot = addr + l->ary_embed;
		return 0;
	}
	if ((int64_t)le64(obj + l->ary_heap_len) < 1 || !le64(obj + l->ary_heap_ptr))
		return -EINVAL;
	*slot = le64(obj + l->ary_heap_ptr);
	return 0;
}

/* The length of the valid UTF-8 character at P (N bytes left), or 0. */
static size_t utf8_char(const uint8_t *p, size_t n)
{
	uint32_t c;
	size_t k;

	if (p[0] < 0x80)
		return p[0] ? 1 : 0;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		k = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		k = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		k = 4, c = p[0] & 0x07;
	else
		return 0;
	if (k > n)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((k == 3 && c < 0x800) || (k == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return k;
}

size_t rb_str__utf8(const uint8_t *bytes, size_t n, char *out, size_t outlen)
{
	static const uint8_t fffd[3] = { 0xef, 0xbf, 0xbd };
	size_t o = 0;

	if (!out || !outlen)
		return 0;
	if (!bytes)
		n = 0;
	if (n > RB_STR_MAX_BYTES)
		n = RB_STR_MAX_BYTES;
	for (size_t i = 0; i < n;) {
		size_t k = utf8_char(bytes + i, n - i);
		const uint8_t *src = k ? bytes + i : fffd;
		size_t w = k ? k : 3;

		if (o + w + 1 > outlen)
			break;
		for (size_t j = 0; j < w; j++)
			out[o++] = (char)src[j];
		i += k ? k : 1;
	}
	out[o] = '\0';
	return o;
}

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * pystr: CPython str and bytes objects decoded from their bytes as read from another
 * process's memory (untrusted: any header may be garbage), by a version's layout.
 */
#ifndef PYTHON_PYSTR_H
#define PYTHON_PYSTR_H

#include <stddef.h>
#include <stdint.h>
#include "python/pylayout.h"

#define PY_STR_MAX_CHARS	1024		/* code points of a str decoded, at most */
#define PY_BYTES_MAX		(256u << 10)	/* bytes of a bytes object taken, at most */

/*
 * How many bytes from the start of a str object to read to have its whole text (up to its
 * first PY_STR_MAX_CHARS code points), given its first LEN bytes HDR (at least the header
 * through .length and .state: l->str_ascii_data bytes do). 0 when HDR is too short or is
 * not a compact str this decodes: not compact (a legacy or subclass str keeps its data
 * elsewhere), not ready (3.8-3.11), a kind other than 1, 2 or 4 bytes, ASCII but not of
 * kind 1, a negative length.
 */
size_t py_str__need(const struct py_layout *l, const uint8_t *hdr, size_t len);

/*
 * The text of the str object whose first LEN bytes are OBJ (at least py_str__need of them),
 * as UTF-8 into OUT (OUTLEN bytes, NUL-terminated whenever OUTLEN > 0): Latin-1, UCS-2 and
 * UCS-4 encoded, code points that UTF-8 cannot carry (surrogates, past U+10FFFF, bytes
 * past 0x7f in an ASCII str) and NUL replaced by U+FFFD; cut before the first character
 * that would not fit whole, so OUT is always valid UTF-8. Returns the bytes written (not
 * counting the NUL), or -EINVAL when OBJ is not a str py_str__need accepts, or LEN is short
 * of what it says (OUT then "" when OUTLEN > 0).
 */
int py_str__utf8(const struct py_layout *l, const uint8_t *obj, size_t len, char *out,
		 size_t outlen);

/*
 * How many bytes from the start of a bytes object to read to have all its data, given its
 * first LEN bytes HDR (at least through ob_size); 0 when HDR is short or ob_size is
 * negative or past PY_BYTES_MAX.
 */
size_t py_bytes__need(const struct py_layout *l, const uint8_t *hdr, size_t len);

/*
 * The data of the bytes object whose first LEN bytes are OBJ (e.g. a code object's line
 * table): *DATA points into OBJ, *N its ob_size. 0, or -EINVAL when OBJ is shorter than
 * py_bytes__need says or that refuses it (*DATA, *N then NULL, 0).
 */
int py_bytes__data(const struct py_layout *l, const uint8_t *obj, size_t len,
		   const uint8_t **data, size_t *n);

#endif

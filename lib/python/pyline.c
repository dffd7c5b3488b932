// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * python/pyline: a code unit's source line, from the three formats of line table CPython
 * has had (Objects/lnotab_notes.txt and Objects/locations.md of each version):
 *
 *   co_lnotab (3.8, 3.9)     pairs (byte-offset increment: unsigned byte, line increment:
 *                            signed byte); the line of an offset is firstlineno plus the
 *                            increments of the pairs whose offsets are at or below it
 *   co_linetable (3.10)      pairs (byte length of a range: unsigned, line delta: signed;
 *                            -128: the range has no line); ranges of length 0 only move the
 *                            line
 *   location table (3.11 on) entries of 1 to 8 code units: a first byte 1cccclll (code c,
 *                            length l + 1), then by code: 15 no location, 14 long form
 *                            (svarint line delta, varint end line, column, end column),
 *                            13 no column (svarint line delta), 10-12 one line (delta
 *                            c - 10, two column bytes), 0-9 short form (same line, one byte)
 *
 * Each walks the table once from its start, bounded by its length.
 */
#include <stdbool.h>
#include "python/pyline.h"

/* ---- 3.8, 3.9: co_lnotab ----------------------------------------------------------------- */

static int lnotab_line(const uint8_t *t, size_t len, int firstlineno, uint64_t addr)
{
	uint64_t at = 0;
	int64_t line = firstlineno;

	for (size_t i = 0; i + 1 < len; i += 2) {
		at += t[i];
		if (at > addr)
			break;
		line += (int8_t)t[i + 1];
	}
	return line < 0 || line > INT32_MAX ? -1 : (int)line;
}

/* ---- 3.10: co_linetable ------------------------------------------------------------------ */

static int linetable310_line(const uint8_t *t, size_t len, int firstlineno, uint64_t addr)
{
	uint64_t start, end = 0;
	int64_t computed = firstlineno;

	for (size_t i = 0; i + 1 < len; i += 2) {
		int8_t ldelta = (int8_t)t[i + 1];

		start = end;
		end += t[i];
		if (ldelta != -128)
			computed += ldelta;
		if (start <= addr && addr < end) {
			if (ldelta == -128 || computed < 0 || computed > INT32_MAX)
				return -1;
			return (int)computed;
		}
	}
	return -1;
}

/* ---- 3.11 on: the location table --------------------------------------------------------- */

enum {
	LOC_NONE = 15, LOC_LONG = 14, LOC_NO_COLUMN = 13,
	LOC_ONE_LINE0 = 10, LOC_ONE_LINE2 = 12,
};

/* A varint at T[*I] (6 bits a byte, low first; 0x40: more follow): at most 5 bytes (30
 * bits, as CPython writes no more), -1 past LEN or when a byte starts an entry. */
static int64_t varint(const uint8_t *t, size_t len, size_t *i)
{
	uint64_t v = 0;

	for (int shift = 0; shift <= 24; shift += 6) {
		uint8_t b;

		if (*i >= len || (t[*i] & 0x80))
			return -1;
		b = t[(*i)++];
		v |= (uint64_t)(b & 0x3f) << shift;
		if (!(b & 0x40))
			return (int64_t)v;
	}
	return -1;
}

static int svarint(const uint8_t *t, size_t len, size_t *i, int64_t *out)
{
	int64_t v = varint(t, len, i);

	if (v < 0)
		return -1;
	*out = (v & 1) ? -(v >> 1) : (v >> 1);
	return 0;
}

static int loctable_line(const uint8_t *t, size_t len, int firstlineno, uint64_t unit)
{
	uint64_t start = 0;
	int64_t computed = firstlineno;
	size_t i = 0;

	while (i < len) {
		uint8_t first = t[i++];
		int code = (first >> 3) & 15;
		uint64_t n = (uint64_t)(first & 7) + 1;
		int64_t delta = 0;
		bool none = false;

		if (!(first & 0x80))
			return -1;		/* not the start of an entry */
		switch (code) {
		case LOC_NONE:
			none = true;
			break;
		case LOC_LONG:
			if (svarint(t, len, &i, &delta) || varint(t, len, &i) < 0 ||
			    varint(t, len, &i) < 0 || varint(t, len, &i) < 0)
				return -1;
			break;
		case LOC_NO_COLUMN:
			if (svarint(t, len, &i, &delta))
				return -1;
			break;
		default:
			if (code >= LOC_ONE_LINE0 && code <= LOC_ONE_LINE2) {
				delta = code - LOC_ONE_LINE0;
				i += 2;
			} else {
				i += 1;
			}
			if (i > len)
				return -1;
			break;
		}
		computed += delta;
		if (unit < start + n) {
			if (none || computed < 0 || computed > INT32_MAX)
				return -1;
			return (int)computed;
		}
		start += n;
	}
	return -1;
}

int py_line__for(const struct py_layout *l, const uint8_t *table, size_t len, int firstlineno,
		 uint32_t unit)
{
	if (!l || firstlineno < 0)
		return -1;
	if (unit == PY_UNIT_BEFORE)
		return firstlineno;
	if (!table)
		return -1;
	switch (l->bpf.model) {
	case PY_MODEL_FRAMEOBJ_BYTES:
		return lnotab_line(table, len, firstlineno, (uint64_t)unit * 2);
	case PY_MODEL_FRAMEOBJ_UNITS:
		return linetable310_line(table, len, firstlineno, (uint64_t)unit * 2);
	case PY_MODEL_ENTRY_FLAG:
	case PY_MODEL_SHIM_PREV:
	case PY_MODEL_SHIM_NEXT:
		return loctable_line(table, len, firstlineno, unit);
	default:
		return -1;
	}
}

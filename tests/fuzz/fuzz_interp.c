// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * libFuzzer: what the worker decodes of an interpreter's objects, as read from a profiled
 * process (untrusted): CPython's str and bytes objects and line tables (3.8-3.13), 3.13's
 * _Py_DebugOffsets, CRuby 3.1's Strings, pathobjs and line tables. The first byte picks
 * the parser and the version, the next four an instruction; the rest is the object.
 */
#include <stdint.h>
#include <string.h>
#include "python/pylayout.h"
#include "python/pyline.h"
#include "python/pystr.h"
#include "ruby/rblayout.h"
#include "ruby/rbline.h"
#include "ruby/rbstr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void python(int minor, uint32_t unit, const uint8_t *p, size_t n)
{
	const struct py_layout *l = py_layout__for(3, minor);
	struct py_layout dl;
	const uint8_t *bytes;
	char out[1024];
	size_t need, nb;

	if (!l)
		return;
	/* A str as the worker takes it: sized by its header, then decoded. */
	need = py_str__need(l, p, n);
	if (need && need <= n)
		py_str__utf8(l, p, need, out, sizeof(out));
	py_str__utf8(l, p, n, out, sizeof(out));
	py_str__utf8(l, p, n, out, 3);
	/* A bytes object, then its data as a line table. */
	need = py_bytes__need(l, p, n);
	if (need && need <= n && !py_bytes__data(l, p, need, &bytes, &nb))
		py_line__for(l, bytes, nb, 1, unit);
	py_line__for(l, p, n, (int)unit, unit);
	py_line__for(l, p, n, 7, PY_UNIT_BEFORE);
	py_layout__from_debug_offsets(p, n, &dl);
}

static void ruby(uint32_t arg, const uint8_t *p, size_t n)
{
	const struct rb_layout *l = rb_layout__for(3, 1);
	uint64_t at, path, slot, addr = 0x7f0000001000ULL;
	uint32_t pos = 0;
	char out[1024];
	size_t len, half = n / 2;

	if (!l)
		return;
	if (!rb_str__locate(l, addr, p, n, &at, &len) && at >= addr && at - addr <= n &&
	    len <= n - (at - addr))
		rb_str__utf8(p + (at - addr), len, out, sizeof(out));
	rb_path__locate(l, addr, p, n, &path, &slot);
	rb_str__utf8(p, n, out, sizeof(out));
	rb_str__utf8(p, n, out, 2);
	/* A line table: entries in the first half, the succinct index in the second. */
	rb_line__for(l, arg & 0xffff, arg >> 16 & 0xff, p, half, p + half, n - half, arg >> 24);
	rb_line__for(l, (uint32_t)n, 1, p, half, p + half, n - half, arg & 0xff);
	rb_word__pos((uint64_t)arg << 32 | 8, 0x1000, arg & 0xffff, &pos);
	(void)rb_line__succ_len(arg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t arg;

	if (size < 5)
		return 0;
	memcpy(&arg, data + 1, 4);
	if (data[0] & 0x80)
		ruby(arg, data + 5, size - 5);
	else
		python(8 + data[0] % 6, arg, data + 5, size - 5);
	return 0;
}

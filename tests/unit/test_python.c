// SPDX-License-Identifier: GPL-3.0-or-later
/* python: the layout table and 3.13's _Py_DebugOffsets (real bytes, truncated, garbage),
 * lines from real interpreters' line tables (pyline_vectors.h) and hostile ones, str and
 * bytes objects decoded from their bytes, hostile headers among them. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "python/pylayout.h"
#include "python/pyline.h"
#include "python/pystr.h"
#include "suites.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct pyline_vec {
	int major, minor;
	const char *name;
	const uint8_t *table;
	size_t len;
	int firstlineno;
	const int *lines;
	size_t nunits;
};

#include "pyline_vectors.h"
#include "pydebug_offsets.h"

/* ---- pylayout ----------------------------------------------------------------------------- */

static void test_layout_versions(void)
{
	static const struct { int major, minor; bool have; } cases[] = {
		{ 3, 8, true }, { 3, 9, true }, { 3, 10, true }, { 3, 11, true }, { 3, 12, true },
		{ 3, 13, true }, { 3, 7, false }, { 3, 14, false }, { 2, 7, false },
		{ 4, 0, false }, { -3, 8, false },
	};

	for (size_t i = 0; i < N(cases); i++) {
		const struct py_layout *l = py_layout__for(cases[i].major, cases[i].minor);

		CU_ASSERT_EQUAL(l != NULL, cases[i].have);
		if (l) {
			CU_ASSERT_EQUAL(l->major, cases[i].major);
			CU_ASSERT_EQUAL(l->minor, cases[i].minor);
			CU_ASSERT(l->bpf.model != PY_MODEL_NONE);
			CU_ASSERT(l->code_read >= l->code_linetable + 8);
			CU_ASSERT(l->code_read >= l->code_name + 8);
			CU_ASSERT_EQUAL(l->code_firstlineno, l->bpf.code_firstlineno);
			/* a qualname from 3.11, owner shims from 3.12 */
			CU_ASSERT_EQUAL(l->code_qualname == PY_NO_FIELD, cases[i].minor < 11);
			CU_ASSERT_EQUAL(l->bpf.owner_cstack, cases[i].minor >= 12 ? 3 : 0);
			CU_ASSERT_EQUAL(l->str_ready_bit == PY_NO_BIT, cases[i].minor >= 12);
		}
	}
}

static void test_debug_offsets_real(void)
{
	struct py_layout out;
	const struct py_layout *t = py_layout__for(3, 13);

	memset(&out, 0xa5, sizeof(out));
	CU_ASSERT_EQUAL_FATAL(py_layout__from_debug_offsets(py313_debug_offsets,
							    sizeof(py313_debug_offsets), &out), 0);
	/* what pyenv's 3.13.0 says of itself is what the table says */
	CU_ASSERT_EQUAL(memcmp(&out.bpf, &t->bpf, sizeof(out.bpf)), 0);
	CU_ASSERT_EQUAL(out.bpf.runtime_interp_head, 632);
	CU_ASSERT_EQUAL(out.bpf.interp_tstate_head, 7344);
	CU_ASSERT_EQUAL(out.code_name, t->code_name);
	CU_ASSERT_EQUAL(out.code_qualname, t->code_qualname);
	CU_ASSERT_EQUAL(out.code_filename, t->code_filename);
	CU_ASSERT_EQUAL(out.code_linetable, t->code_linetable);
	CU_ASSERT_EQUAL(out.code_read, t->code_read);
	CU_ASSERT_EQUAL(out.str_length, t->str_length);
	CU_ASSERT_EQUAL(out.str_state, t->str_state);
	CU_ASSERT_EQUAL(out.str_ascii_data, t->str_ascii_data);
	CU_ASSERT_EQUAL(out.str_compact_data, t->str_compact_data);
	CU_ASSERT_EQUAL(out.bytes_size, t->bytes_size);
	CU_ASSERT_EQUAL(out.bytes_data, t->bytes_data);
}

static void set64(uint8_t *b, size_t at, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b[at + i] = (uint8_t)(v >> (8 * i));
}

static void test_debug_offsets_hostile(void)
{
	static const struct { size_t at; uint64_t v; } bad[] = {
		{ 0, 0x7970677562656479 },	/* cookie "ydebugpy" */
		{ 8, 0x030e00f0 },		/* 3.14: another struct */
		{ 8, 0x030c01f0 },		/* 3.12 had none */
		{ 16, 1 },			/* free-threaded */
		{ 24, 0 },			/* runtime size 0 */
		{ 24, 1ull << 40 },		/* runtime size huge */
		{ 40, 283320 },			/* interpreters_head at the runtime's end */
		{ 72, 194968 - 4 },		/* threads_head past the interpreter's end */
		{ 168, ~0ull },			/* tstate next */
		{ 264, 80 },			/* frame owner at the frame's size */
		{ 312, 206 },			/* firstlineno: 4 bytes do not fit in 208 */
		{ 288, 70000 },			/* code name past 16 bits and the code */
		{ 544, 64 },			/* str state at the str's size */
		{ 560, 8 },			/* asciiobject_size inside the header */
		{ 560, 64 },			/* asciiobject_size the str's whole size */
	};
	uint8_t b[sizeof(py313_debug_offsets) + 8];
	struct py_layout out, keep;
	uint32_t seed = 12345;

	/* truncated: every length short of the struct */
	for (size_t n = 0; n < sizeof(py313_debug_offsets); n++)
		CU_ASSERT_EQUAL(py_layout__from_debug_offsets(py313_debug_offsets, n, &out), -EINVAL);
	CU_ASSERT_EQUAL(py_layout__from_debug_offsets(NULL, 4096, &out), -EINVAL);
	CU_ASSERT_EQUAL(py_layout__from_debug_offsets(py313_debug_offsets, 584, NULL), -EINVAL);
	for (size_t i = 0; i < N(bad); i++) {
		memcpy(b, py313_debug_offsets, sizeof(py313_debug_offsets));
		set64(b, bad[i].at, bad[i].v);
		memset(&out, 0x5a, sizeof(out));
		keep = out;
		CU_ASSERT_EQUAL(py_layout__from_debug_offsets(b, sizeof(py313_debug_offsets), &out),
				-EINVAL);
		CU_ASSERT_EQUAL(memcmp(&out, &keep, sizeof(out)), 0);	/* untouched */
	}
	/* garbage after a good cookie and version: whatever it says, every offset inside */
	for (int round = 0; round < 2000; round++) {
		int err;

		memcpy(b, py313_debug_offsets, sizeof(py313_debug_offsets));
		for (int k = 0; k < 4; k++) {
			seed = seed * 1103515245 + 12345;
			size_t at = 24 + (seed >> 8) % (sizeof(py313_debug_offsets) - 24);

			seed = seed * 1103515245 + 12345;
			b[at] = (uint8_t)(seed >> 16);
		}
		err = py_layout__from_debug_offsets(b, sizeof(py313_debug_offsets), &out);
		CU_ASSERT(err == 0 || err == -EINVAL);
		if (err == 0) {
			CU_ASSERT(out.bpf.frame_entry < 4096);
			CU_ASSERT(out.code_read <= 4096);
			CU_ASSERT(out.str_ascii_data > out.str_state);
		}
	}
}

/* ---- pyline ------------------------------------------------------------------------------- */

static void check_vectors(const struct pyline_vec *v, size_t n, int minor)
{
	const struct py_layout *l = py_layout__for(3, minor);

	CU_ASSERT_FATAL(l != NULL);
	for (size_t i = 0; i < n; i++) {
		size_t bad = 0;

		CU_ASSERT(v[i].nunits > 10);
		for (size_t u = 0; u < v[i].nunits; u++) {
			int got = py_line__for(l, v[i].table, v[i].len, v[i].firstlineno,
					       (uint32_t)u);

			if (got != v[i].lines[u] && bad++ < 3)
				fprintf(stderr, "\n3.%d %s unit %zu: line %d, want %d", minor,
					v[i].name, u, got, v[i].lines[u]);
		}
		CU_ASSERT_EQUAL(bad, 0);
		CU_ASSERT_EQUAL(py_line__for(l, v[i].table, v[i].len, v[i].firstlineno,
					     PY_UNIT_BEFORE), v[i].firstlineno);
	}
}

static void test_line_vectors(void)
{
	check_vectors(py3_8_vecs, N(py3_8_vecs), 8);
	check_vectors(py3_9_vecs, N(py3_9_vecs), 9);
	check_vectors(py3_10_vecs, N(py3_10_vecs), 10);
	check_vectors(py3_11_vecs, N(py3_11_vecs), 11);
	check_vectors(py3_12_vecs, N(py3_12_vecs), 12);
	check_vectors(py3_13_vecs, N(py3_13_vecs), 13);
}

/* The vectors cover what they are for: lines past 300, and in 3.11 on the long form. */
static void test_line_vectors_reach(void)
{
	const struct pyline_vec *all[] = { py3_8_vecs, py3_10_vecs, py3_11_vecs, py3_13_vecs };

	for (size_t k = 0; k < N(all); k++) {
		int max = 0;

		for (size_t u = 0; u < all[k][2].nunits; u++)
			if (all[k][2].lines[u] > max)
				max = all[k][2].lines[u];
		CU_ASSERT(max > 600);
	}
}

/* Made-up tables: each format's forms, truncations, no-line entries. */
static void test_line_forms(void)
{
	const struct py_layout *l38 = py_layout__for(3, 8), *l310 = py_layout__for(3, 10),
			       *l311 = py_layout__for(3, 11);
	/* lnotab: +4 bytes line +1, +0 bytes line +127 +10 (a long delta split), +6 bytes -3 */
	static const uint8_t lnotab[] = { 4, 1, 0, 127, 0, 10, 6, 0xfd };
	/* 3.10: 4 bytes line +0, 2 bytes no line, 0 bytes +5, 2 bytes +1 */
	static const uint8_t lt310[] = { 4, 0, 2, 0x80, 0, 5, 2, 1 };
	/* 3.11: short form 2 units; one line +1 (code 11) 1 unit; no location 1 unit;
	 * no column +3 (svarint 6) 2 units; long form -2 (svarint 5), end 0, col 1, endcol 2 */
	static const uint8_t loc[] = {
		0x80 | (0 << 3) | 1, 0x00,
		0x80 | (11 << 3) | 0, 4, 9,
		0x80 | (15 << 3) | 0,
		0x80 | (13 << 3) | 1, 6,
		0x80 | (14 << 3) | 0, 5, 0, 1, 2,
	};

	CU_ASSERT_EQUAL(py_line__for(l38, lnotab, sizeof(lnotab), 10, 0), 10);
	CU_ASSERT_EQUAL(py_line__for(l38, lnotab, sizeof(lnotab), 10, 1), 10);
	CU_ASSERT_EQUAL(py_line__for(l38, lnotab, sizeof(lnotab), 10, 2), 148);
	CU_ASSERT_EQUAL(py_line__for(l38, lnotab, sizeof(lnotab), 10, 5), 145);
	CU_ASSERT_EQUAL(py_line__for(l38, lnotab, 7, 10, 5), 148);	/* odd byte ignored */
	CU_ASSERT_EQUAL(py_line__for(l38, NULL, 0, 10, 3), -1);

	CU_ASSERT_EQUAL(py_line__for(l310, lt310, sizeof(lt310), 20, 0), 20);
	CU_ASSERT_EQUAL(py_line__for(l310, lt310, sizeof(lt310), 20, 1), 20);
	CU_ASSERT_EQUAL(py_line__for(l310, lt310, sizeof(lt310), 20, 2), -1);
	CU_ASSERT_EQUAL(py_line__for(l310, lt310, sizeof(lt310), 20, 3), 26);
	CU_ASSERT_EQUAL(py_line__for(l310, lt310, sizeof(lt310), 20, 4), -1);	/* past it */
	CU_ASSERT_EQUAL(py_line__for(l310, lt310, sizeof(lt310), 20, PY_UNIT_BEFORE), 20);

	CU_ASSERT_EQUAL(py_line__for(l311, loc, sizeof(loc), 30, 0), 30);
	CU_ASSERT_EQUAL(py_line__for(l311, loc, sizeof(loc), 30, 1), 30);
	CU_ASSERT_EQUAL(py_line__for(l311, loc, sizeof(loc), 30, 2), 31);
	CU_ASSERT_EQUAL(py_line__for(l311, loc, sizeof(loc), 30, 3), -1);
	CU_ASSERT_EQUAL(py_line__for(l311, loc, sizeof(loc), 30, 4), 34);
	CU_ASSERT_EQUAL(py_line__for(l311, loc, sizeof(loc), 30, 5), 34);
	CU_ASSERT_EQUAL(py_line__for(l311, loc, sizeof(loc), 30, 6), 32);
	CU_ASSERT_EQUAL(py_line__for(l311, loc, sizeof(loc), 30, 7), -1);
	/* cut inside the long form: its unit has no line; earlier ones keep theirs */
	CU_ASSERT_EQUAL(py_line__for(l311, loc, sizeof(loc) - 1, 30, 6), -1);
	CU_ASSERT_EQUAL(py_line__for(l311, loc, sizeof(loc) - 1, 30, 4), 34);
	/* an entry that does not start with bit 7; a varint that never ends */
	static const uint8_t notstart[] = { 0x00, 0x80 };
	static const uint8_t endless[] = { 0x80 | (13 << 3), 0x40, 0x40, 0x40, 0x40, 0x40, 0x40 };

	CU_ASSERT_EQUAL(py_line__for(l311, notstart, sizeof(notstart), 30, 0), -1);
	CU_ASSERT_EQUAL(py_line__for(l311, endless, sizeof(endless), 30, 0), -1);
	CU_ASSERT_EQUAL(py_line__for(NULL, loc, sizeof(loc), 30, 0), -1);
	CU_ASSERT_EQUAL(py_line__for(l311, loc, sizeof(loc), -5, 0), -1);
}

/* Random tables, each in a buffer of exactly its length (ASan sees any read past it). */
static void test_line_garbage(void)
{
	const struct py_layout *ls[] = { py_layout__for(3, 8), py_layout__for(3, 10),
					 py_layout__for(3, 12) };
	uint32_t seed = 99;

	for (int round = 0; round < 3000; round++) {
		size_t len = (size_t)(round % 64);
		uint8_t *t = malloc(len ? len : 1);

		CU_ASSERT_FATAL(t != NULL);
		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245 + 12345;
			t[i] = (uint8_t)(seed >> 16);
		}
		for (size_t k = 0; k < N(ls); k++) {
			int got = py_line__for(ls[k], t, len, 1, (uint32_t)(round % 200));

			CU_ASSERT(got >= -1);
		}
		free(t);
	}
}

/* ---- pystr -------------------------------------------------------------------------------- */

/* A str object of layout L in B: LENGTH code points of KIND bytes, state bits as given. */
static size_t make_str(const struct py_layout *l, uint8_t *b, size_t cap, int64_t length,
		       unsigned kind, int compact, int ascii, const uint32_t *cps, size_t n)
{
	uint32_t state = kind << l->str_kind_shift | (uint32_t)compact << l->str_compact_bit |
			 (uint32_t)ascii << l->str_ascii_bit;
	size_t data = ascii ? l->str_ascii_data : l->str_compact_data;

	if (l->str_ready_bit != PY_NO_BIT)
		state |= 1u << l->str_ready_bit;
	memset(b, 0, cap);
	set64(b, l->str_length, (uint64_t)length);
	memcpy(b + l->str_state, &state, 4);
	for (size_t i = 0; i < n && data + (i + 1) * kind <= cap; i++)
		for (unsigned k = 0; k < kind; k++)
			b[data + i * kind + k] = k < 4 ? (uint8_t)(cps[i] >> (8 * k)) : 0;
	return data + n * kind;
}

static void test_str_kinds(void)
{
	static const uint32_t hello[] = { 'h', 'e', 'l', 'l', 'o' };
	static const uint32_t cafe[] = { 'c', 'a', 'f', 0xe9 };
	static const uint32_t euro[] = { 0x20ac, 'x', 0xd800 };		/* lone surrogate */
	static const uint32_t smile[] = { 0x1f600, 0x110000, 0 };	/* past Unicode, NUL */
	static const struct {
		const uint32_t *cps;
		size_t n;
		unsigned kind;
		int ascii;
		const char *want;
	} cases[] = {
		{ hello, 5, 1, 1, "hello" },
		{ cafe, 4, 1, 0, "caf\xc3\xa9" },
		{ euro, 3, 2, 0, "\xe2\x82\xac" "x" "\xef\xbf\xbd" },
		{ smile, 3, 4, 0, "\xf0\x9f\x98\x80\xef\xbf\xbd\xef\xbf\xbd" },
		{ cafe, 4, 1, 1, "caf\xef\xbf\xbd" },	/* ASCII flag, a byte past 0x7f */
	};

	for (int minor = 8; minor <= 13; minor++) {
		const struct py_layout *l = py_layout__for(3, minor);

		for (size_t i = 0; i < N(cases); i++) {
			uint8_t b[256];
			char out[64];
			size_t end = make_str(l, b, sizeof(b), (int64_t)cases[i].n, cases[i].kind, 1,
					      cases[i].ascii, cases[i].cps, cases[i].n);

			CU_ASSERT_EQUAL(py_str__need(l, b, l->str_ascii_data), end);
			CU_ASSERT_EQUAL(py_str__utf8(l, b, end, out, sizeof(out)),
					(int)strlen(cases[i].want));
			CU_ASSERT_STRING_EQUAL(out, cases[i].want);
			/* one byte short of the data */
			CU_ASSERT_EQUAL(py_str__utf8(l, b, end - 1, out, sizeof(out)), -EINVAL);
			CU_ASSERT_STRING_EQUAL(out, "");
		}
	}
}

static void test_str_cut(void)
{
	static const uint32_t mixed[] = { 'a', 0x20ac, 'b', 0x1f600 };	/* 1, 3, 1, 4 bytes */
	static const struct { size_t outlen; int n; const char *want; } cases[] = {
		{ 1, 0, "" }, { 2, 1, "a" }, { 4, 1, "a" }, { 5, 4, "a\xe2\x82\xac" },
		{ 6, 5, "a\xe2\x82\xac" "b" }, { 9, 5, "a\xe2\x82\xac" "b" },
		{ 10, 9, "a\xe2\x82\xac" "b\xf0\x9f\x98\x80" },
	};
	const struct py_layout *l = py_layout__for(3, 12);
	uint8_t b[256];
	size_t end = make_str(l, b, sizeof(b), 4, 4, 1, 0, mixed, 4);

	for (size_t i = 0; i < N(cases); i++) {
		char out[16];

		memset(out, 'Z', sizeof(out));
		CU_ASSERT_EQUAL(py_str__utf8(l, b, end, out, cases[i].outlen), cases[i].n);
		CU_ASSERT_STRING_EQUAL(out, cases[i].want);
		CU_ASSERT_EQUAL(out[cases[i].outlen < sizeof(out) ? cases[i].outlen : 0],
				cases[i].outlen < sizeof(out) ? 'Z' : out[0]);	/* untouched */
	}
	CU_ASSERT_EQUAL(py_str__utf8(l, b, end, NULL, 10), -EINVAL);
}

static void test_str_hostile(void)
{
	static const uint32_t x[] = { 'x' };
	const struct py_layout *l11 = py_layout__for(3, 11), *l12 = py_layout__for(3, 12);
	uint8_t b[4096 + 128];
	char out[32];
	uint32_t state;

	/* huge length: capped at PY_STR_MAX_CHARS */
	make_str(l12, b, sizeof(b), INT64_MAX, 4, 1, 0, x, 1);
	CU_ASSERT_EQUAL(py_str__need(l12, b, 64), l12->str_compact_data + PY_STR_MAX_CHARS * 4);
	make_str(l12, b, sizeof(b), (int64_t)1 << 40, 1, 1, 1, x, 1);
	CU_ASSERT_EQUAL(py_str__need(l12, b, 64), l12->str_ascii_data + PY_STR_MAX_CHARS);
	CU_ASSERT_EQUAL(py_str__utf8(l12, b, 64, out, sizeof(out)), -EINVAL);	/* short */
	/* negative length, kinds 0, 3, 5, 7, ASCII of kind 2, not compact */
	make_str(l12, b, sizeof(b), -1, 1, 1, 1, x, 1);
	CU_ASSERT_EQUAL(py_str__need(l12, b, 64), 0);
	for (unsigned kind = 0; kind < 8; kind++) {
		make_str(l12, b, sizeof(b), 1, kind, 1, 0, x, 1);
		CU_ASSERT_EQUAL(py_str__need(l12, b, 64) != 0, kind == 1 || kind == 2 || kind == 4);
	}
	make_str(l12, b, sizeof(b), 1, 2, 1, 1, x, 1);
	CU_ASSERT_EQUAL(py_str__need(l12, b, 64), 0);
	make_str(l12, b, sizeof(b), 1, 1, 0, 0, x, 1);
	CU_ASSERT_EQUAL(py_str__need(l12, b, 64), 0);
	CU_ASSERT_EQUAL(py_str__utf8(l12, b, sizeof(b), out, sizeof(out)), -EINVAL);
	/* 3.11: not ready; 3.12: bit 7 is statically_allocated, not a refusal */
	make_str(l11, b, sizeof(b), 1, 1, 1, 1, x, 1);
	memcpy(&state, b + l11->str_state, 4);
	state &= ~(1u << 7);
	memcpy(b + l11->str_state, &state, 4);
	CU_ASSERT_EQUAL(py_str__need(l11, b, 64), 0);
	make_str(l12, b, sizeof(b), 1, 1, 1, 1, x, 1);
	memcpy(&state, b + l12->str_state, 4);
	memcpy(b + l12->str_state, &(uint32_t){ state | 1u << 7 }, 4);
	CU_ASSERT_EQUAL(py_str__need(l12, b, 64), l12->str_ascii_data + 1);
	/* a header shorter than length and state */
	CU_ASSERT_EQUAL(py_str__need(l12, b, l12->str_state + 3), 0);
	CU_ASSERT_EQUAL(py_str__need(NULL, b, 64), 0);
}

static void test_bytes(void)
{
	const struct py_layout *l = py_layout__for(3, 10);
	uint8_t b[128];
	const uint8_t *data = (const uint8_t *)"x";
	size_t n = 99;

	memset(b, 0, sizeof(b));
	set64(b, l->bytes_size, 5);
	memcpy(b + l->bytes_data, "\x01\x02\x03\x04\x05", 5);
	CU_ASSERT_EQUAL(py_bytes__need(l, b, 24), l->bytes_data + 5);
	CU_ASSERT_EQUAL(py_bytes__data(l, b, l->bytes_data + 5, &data, &n), 0);
	CU_ASSERT_EQUAL(n, 5);
	CU_ASSERT_PTR_EQUAL(data, b + l->bytes_data);
	CU_ASSERT_EQUAL(data[4], 5);
	/* one short; negative; past the cap; a header too short */
	CU_ASSERT_EQUAL(py_bytes__data(l, b, l->bytes_data + 4, &data, &n), -EINVAL);
	CU_ASSERT_PTR_NULL(data);
	CU_ASSERT_EQUAL(n, 0);
	set64(b, l->bytes_size, (uint64_t)-3);
	CU_ASSERT_EQUAL(py_bytes__need(l, b, 24), 0);
	set64(b, l->bytes_size, PY_BYTES_MAX + 1);
	CU_ASSERT_EQUAL(py_bytes__need(l, b, 24), 0);
	set64(b, l->bytes_size, 0);
	CU_ASSERT_EQUAL(py_bytes__need(l, b, l->bytes_size + 7), 0);
	CU_ASSERT_EQUAL(py_bytes__data(l, b, sizeof(b), &data, &n), 0);	/* empty */
	CU_ASSERT_EQUAL(n, 0);
}

int register_python_suite(void)
{
	CU_pSuite s = CU_add_suite("python", NULL, NULL);

	if (!s ||
	    !CU_add_test(s, "layout table by version", test_layout_versions) ||
	    !CU_add_test(s, "3.13 _Py_DebugOffsets as built", test_debug_offsets_real) ||
	    !CU_add_test(s, "_Py_DebugOffsets truncated, hostile", test_debug_offsets_hostile) ||
	    !CU_add_test(s, "lines of real line tables 3.8-3.13", test_line_vectors) ||
	    !CU_add_test(s, "line vectors reach long deltas", test_line_vectors_reach) ||
	    !CU_add_test(s, "line table forms", test_line_forms) ||
	    !CU_add_test(s, "line tables of garbage", test_line_garbage) ||
	    !CU_add_test(s, "str kinds to UTF-8", test_str_kinds) ||
	    !CU_add_test(s, "str cut at a character", test_str_cut) ||
	    !CU_add_test(s, "str hostile headers", test_str_hostile) ||
	    !CU_add_test(s, "bytes objects", test_bytes))
		return -1;
	return 0;
}

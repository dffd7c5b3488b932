/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * pylayout: where CPython keeps what a profiler reads from outside the process, per version
 * (3.8 to 3.13, x86-64 release builds: no Py_DEBUG, Py_TRACE_REFS or free threading): the
 * offsets BPF follows to a thread's frames (bpf/profile.h's struct py_offsets) and those
 * userspace needs to name a frame's code object (its names, file, line table; the str and
 * bytes objects they point at). Every number comes from the version's own DWARF;
 * tests/integration/pylayout_check.py compares them with it again.
 */
#ifndef PYTHON_PYLAYOUT_H
#define PYTHON_PYLAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "profile.h"

/* The bit of the str state word that is not there (PyASCIIObject.state.ready, 3.12 on). */
#define PY_NO_BIT	0xff

struct py_layout {
	int major, minor;
	struct py_offsets bpf;		/* what BPF follows; .model says how */

	/* PyCodeObject: pointers to a str, str, str, bytes; an int */
	uint16_t code_name;
	uint16_t code_qualname;		/* PY_NO_FIELD before 3.11 */
	uint16_t code_filename;
	uint16_t code_linetable;	/* co_lnotab (3.8, 3.9), co_linetable (3.10 on) */
	uint16_t code_firstlineno;
	uint16_t code_read;		/* bytes from the code object's start covering them all */

	/* str: PyASCIIObject, PyCompactUnicodeObject */
	uint16_t str_length;		/* .length (Py_ssize_t): code points */
	uint16_t str_state;		/* the 32-bit state bitfield */
	uint16_t str_ascii_data;	/* sizeof(PyASCIIObject): a compact ASCII str's data */
	uint16_t str_compact_data;	/* sizeof(PyCompactUnicodeObject): other compact data */
	uint8_t str_kind_shift;		/* state bits: kind (3 bits: 1, 2 or 4 bytes a char), */
	uint8_t str_compact_bit;	/* compact, */
	uint8_t str_ascii_bit;		/* ascii, */
	uint8_t str_ready_bit;		/* ready (PY_NO_BIT from 3.12: always) */

	/* bytes: PyBytesObject */
	uint16_t bytes_size;		/* .ob_size (Py_ssize_t) */
	uint16_t bytes_data;		/* .ob_sval */
};

/*
 * The layout of CPython MAJOR.MINOR (a static table, never freed), or NULL when it is not
 * one of 3.8 to 3.13. A version past 3.13 has its own _Py_DebugOffsets, which
 * py_layout__from_debug_offsets reads; this table does not guess at it.
 */
const struct py_layout *py_layout__for(int major, int minor);

/*
 * The layout from the first LEN bytes of a process's _PyRuntime (BUF, as read from its
 * memory: untrusted), which in 3.13 begins with _Py_DebugOffsets: cookie "xdebugpy",
 * PY_VERSION_HEX, then the sizes and offsets of the structs a debugger reads. What the
 * struct does not say (the str state bits, the bpf model, the owner of C-stack shims, the
 * size of PyCompactUnicodeObject) comes from the 3.13 table. Every offset must lie inside
 * the size the struct gives for its own struct, and fit in 16 bits. Fills OUT and returns 0;
 * -EINVAL when BUF is short, the cookie or version is not 3.13's (later versions rearranged
 * the struct), the build is free-threaded, or an offset is out of bounds (OUT then
 * unchanged).
 */
int py_layout__from_debug_offsets(const void *buf, size_t len, struct py_layout *out);

/* Bytes of _PyRuntime that py_layout__from_debug_offsets reads (sizeof(_Py_DebugOffsets)
 * in 3.13). */
#define PY_DEBUG_OFFSETS_SIZE	584

#endif

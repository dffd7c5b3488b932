/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * pyline: the source line of a Python frame from its code object's line table, as
 * CPython's PyCode_Addr2Line computes it, for 3.8 to 3.13.
 */
#ifndef PYTHON_PYLINE_H
#define PYTHON_PYLINE_H

#include <stddef.h>
#include <stdint.h>
#include "python/pylayout.h"

/* The unit BPF records for a frame that has not begun its first instruction (3.8-3.12:
 * f_lasti -1, prev_instr one unit before the code): its line is the first. */
#define PY_UNIT_BEFORE	UINT32_MAX

/*
 * The line of the instruction at code unit UNIT (two bytes each) of a code object of
 * layout L's version, from its line table TABLE of LEN bytes (the bytes of co_lnotab in
 * 3.8 and 3.9, co_linetable after) and its co_firstlineno FIRSTLINENO. UNIT is what BPF
 * records: f_lasti / 2 (3.8, 3.9), f_lasti (3.10), the unit prev_instr (3.11, 3.12) or
 * instr_ptr (3.13) points at, which in a frame that called another is a unit of its CALL
 * (its last cache entry while a Python callee runs in 3.11 and 3.12), so the caller's line
 * is that of the call. PY_UNIT_BEFORE gives FIRSTLINENO.
 *
 * Returns the line (>= 0), or -1 when the table says the instruction has no line, UNIT is
 * past the table, or the table is malformed. Reads only TABLE[0 .. LEN); at most LEN steps.
 */
int py_line__for(const struct py_layout *l, const uint8_t *table, size_t len, int firstlineno,
		 uint32_t unit);

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * python/pylayout: CPython's layouts, 3.8 to 3.13 (x86-64 release builds), as the
 * versions' DWARF gives them (pyenv's 3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1, 3.13.0;
 * tests/integration/pylayout_check.py reads them there again, and walks a live interpreter
 * of each by them), and 3.13's own _Py_DebugOffsets read from a process.
 *
 * What moved between versions, for the reader of the table:
 *   3.8-3.10  PyFrameObject chain from tstate->frame; f_lasti an int, in bytes before 3.10
 *   3.11      tstate->cframe->current_frame, _PyInterpreterFrame with is_entry; the
 *             interpreter's threads under .threads.head (not .tstate_head as before)
 *   3.12      _PyCFrame loses use_tracing (current_frame at 0), f_code moves first, frames
 *             owned by FRAME_OWNED_BY_CSTACK (3) are shims; str loses wstr and `ready`
 *             (bit 7 is statically_allocated now), so its data starts 8 bytes earlier
 *   3.13      tstate->current_frame, f_executable and instr_ptr; _PyRuntime grows
 *             _Py_DebugOffsets in front (interpreters.head at 632, threads.head at 7344)
 * The str state bits stay where 3.3 put them: interned 0-1, kind 2-4, compact 5, ascii 6.
 */
#include <errno.h>
#include <string.h>
#include "python/pylayout.h"

/* The str state bits as every version has them; `ready` (bit 7) until 3.11. */
#define STR_BITS_READY	.str_kind_shift = 2, .str_compact_bit = 5, .str_ascii_bit = 6, \
			.str_ready_bit = 7
#define STR_BITS	.str_kind_shift = 2, .str_compact_bit = 5, .str_ascii_bit = 6, \
			.str_ready_bit = PY_NO_BIT

static const struct py_layout layouts[] = {
	{
		.major = 3, .minor = 8,
		.bpf = {
			.runtime_interp_head = 32, .interp_tstate_head = 8, .tstate_next = 8,
			.tstate_thread_id = 176, .tstate_frame = 24,
			.cframe_current_frame = PY_NO_FIELD, .frame_previous = 24,
			.frame_code = 32, .frame_instr = 104, .frame_entry = PY_NO_FIELD,
			.code_adaptive = PY_NO_FIELD, .code_firstlineno = 40,
			.model = PY_MODEL_FRAMEOBJ_BYTES,
		},
		.code_name = 112, .code_qualname = PY_NO_FIELD, .code_filename = 104,
		.code_linetable = 120, .code_firstlineno = 40, .code_read = 128,
		.str_length = 16, .str_state = 32, .str_ascii_data = 48, .str_compact_data = 72,
		STR_BITS_READY,
		.bytes_size = 16, .bytes_data = 32,
	},
	{
		.major = 3, .minor = 9,
		.bpf = {
			.runtime_interp_head = 32, .interp_tstate_head = 8, .tstate_next = 8,
			.tstate_thread_id = 176, .tstate_frame = 24,
			.cframe_current_frame = PY_NO_FIELD, .frame_previous = 24,
			.frame_code = 32, .frame_instr = 104, .frame_entry = PY_NO_FIELD,
			.code_adaptive = PY_NO_FIELD, .code_firstlineno = 40,
			.model = PY_MODEL_FRAMEOBJ_BYTES,
		},
		.code_name = 112, .code_qualname = PY_NO_FIELD, .code_filename = 104,
		.code_linetable = 120, .code_firstlineno = 40, .code_read = 128,
		.str_length = 16, .str_state = 32, .str_ascii_data = 48, .str_compact_data = 72,
		STR_BITS_READY,
		.bytes_size = 16, .bytes_data = 32,
	},
	{
		.major = 3, .minor = 10,
		.bpf = {
			.runtime_interp_head = 32, .interp_tstate_head = 8, .tstate_next = 8,
			.tstate_thread_id = 176, .tstate_frame = 24,
			.cframe_current_frame = PY_NO_FIELD, .frame_previous = 24,
			.frame_code = 32, .frame_instr = 96, .frame_entry = PY_NO_FIELD,
			.code_adaptive = PY_NO_FIELD, .code_firstlineno = 40,
			.model = PY_MODEL_FRAMEOBJ_UNITS,
		},
		.code_name = 112, .code_qualname = PY_NO_FIELD, .code_filename = 104,
		.code_linetable = 120, .code_firstlineno = 40, .code_read = 128,
		.str_length = 16, .str_state = 32, .str_ascii_data = 48, .str_compact_data = 72,
		STR_BITS_READY,
		.bytes_size = 16, .bytes_data = 32,
	},
	{
		.major = 3, .minor = 11,
		.bpf = {
			.runtime_interp_head = 40, .interp_tstate_head = 16, .tstate_next = 8,
			.tstate_thread_id = 152, .tstate_frame = 56, .cframe_current_frame = 8,
			.frame_previous = 48, .frame_code = 32, .frame_instr = 56,
			.frame_entry = 68, .code_adaptive = 184, .code_firstlineno = 72,
			.model = PY_MODEL_ENTRY_FLAG,
		},
		.code_name = 120, .code_qualname = 128, .code_filename = 112,
		.code_linetable = 136, .code_firstlineno = 72, .code_read = 144,
		.str_length = 16, .str_state = 32, .str_ascii_data = 48, .str_compact_data = 72,
		STR_BITS_READY,
		.bytes_size = 16, .bytes_data = 32,
	},
	{
		.major = 3, .minor = 12,
		.bpf = {
			.runtime_interp_head = 40, .interp_tstate_head = 72, .tstate_next = 8,
			.tstate_thread_id = 136, .tstate_frame = 56, .cframe_current_frame = 0,
			.frame_previous = 8, .frame_code = 0, .frame_instr = 56,
			.frame_entry = 70, .code_adaptive = 192, .code_firstlineno = 68,
			.model = PY_MODEL_SHIM_PREV, .owner_cstack = 3,
		},
		.code_name = 120, .code_qualname = 128, .code_filename = 112,
		.code_linetable = 136, .code_firstlineno = 68, .code_read = 144,
		.str_length = 16, .str_state = 32, .str_ascii_data = 40, .str_compact_data = 56,
		STR_BITS,
		.bytes_size = 16, .bytes_data = 32,
	},
	{
		.major = 3, .minor = 13,
		.bpf = {
			.runtime_interp_head = 632, .interp_tstate_head = 7344, .tstate_next = 8,
			.tstate_thread_id = 152, .tstate_frame = 72,
			.cframe_current_frame = PY_NO_FIELD, .frame_previous = 8,
			.frame_code = 0, .frame_instr = 56, .frame_entry = 70,
			.code_adaptive = 200, .code_firstlineno = 68,
			.model = PY_MODEL_SHIM_NEXT, .owner_cstack = 3,
		},
		.code_name = 120, .code_qualname = 128, .code_filename = 112,
		.code_linetable = 136, .code_firstlineno = 68, .code_read = 144,
		.str_length = 16, .str_state = 32, .str_ascii_data = 40, .str_compact_data = 56,
		STR_BITS,
		.bytes_size = 16, .bytes_data = 32,
	},
};

const struct py_layout *py_layout__for(int major, int minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].major == major && layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

/* ---- 3.13's _Py_DebugOffsets ------------------------------------------------------------ */

/* Where 3.13.x keeps what is read here in _Py_DebugOffsets (Include/internal/
 * pycore_runtime.h; pyenv 3.13.0's `ptype/o struct _Py_DebugOffsets`): every member a
 * uint64_t, each struct's first its own size. */
enum {
	DO_VERSION = 8, DO_FREE_THREADED = 16,
	DO_RUNTIME_SIZE = 24, DO_RUNTIME_INTERP_HEAD = 40,
	DO_INTERP_SIZE = 48, DO_INTERP_THREADS_HEAD = 72,
	DO_TSTATE_SIZE = 152, DO_TSTATE_NEXT = 168, DO_TSTATE_CURRENT_FRAME = 184,
	DO_TSTATE_THREAD_ID = 192,
	DO_FRAME_SIZE = 224, DO_FRAME_PREVIOUS = 232, DO_FRAME_EXECUTABLE = 240,
	DO_FRAME_INSTR_PTR = 248, DO_FRAME_OWNER = 264,
	DO_CODE_SIZE = 272, DO_CODE_FILENAME = 280, DO_CODE_NAME = 288, DO_CODE_QUALNAME = 296,
	DO_CODE_LINETABLE = 304, DO_CODE_FIRSTLINENO = 312, DO_CODE_ADAPTIVE = 344,
	DO_BYTES_SIZE = 512, DO_BYTES_OB_SIZE = 520, DO_BYTES_OB_SVAL = 528,
	DO_STR_SIZE = 536, DO_STR_STATE = 544, DO_STR_LENGTH = 552, DO_STR_ASCII_SIZE = 560,
};

#define DO_COOKIE	"xdebugpy"
#define DO_MAX_BIG	(1u << 20)	/* the runtime's and an interpreter's size at most
					   (3.13: 283320, 194968 bytes) */
#define DO_MAX_SMALL	4096u		/* any other struct's (3.13's largest: a thread
					   state, 304 bytes) */

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The offset at AT in B, stored in *OUT when it leaves WIDTH bytes inside the size at
 * SIZE_AT (itself at most DO_MAX_BIG for the runtime and an interpreter, DO_MAX_SMALL
 * for the others) and fits in 16 bits (PY_NO_FIELD excluded). */
static int field(const uint8_t *b, unsigned size_at, unsigned at, unsigned width,
		 uint16_t *out)
{
	uint64_t size = le64(b + size_at), off = le64(b + at);
	uint64_t max = size_at == DO_RUNTIME_SIZE || size_at == DO_INTERP_SIZE ? DO_MAX_BIG
									     : DO_MAX_SMALL;

	if (size == 0 || size > max || off >= size || size - off < width ||
	    off >= PY_NO_FIELD)
		return -EINVAL;
	*out = (uint16_t)off;
	return 0;
}

int py_layout__from_debug_offsets(const void *buf, size_t len, struct py_layout *out)
{
	const uint8_t *b = buf;
	const struct py_layout *base = py_layout__for(3, 13);
	struct py_layout l;
	uint64_t version;
	uint16_t ascii_size, state;
	int err = 0;

	if (!b || !out || !base || len < PY_DEBUG_OFFSETS_SIZE ||
	    memcmp(b, DO_COOKIE, 8) != 0)
		return -EINVAL;
	version = le64(b + DO_VERSION);
	/* PY_VERSION_HEX: 0x030d.... for every 3.13 release; later versions moved members */
	if ((version >> 16) != 0x030d || le64(b + DO_FREE_THREADED) != 0)
		return -EINVAL;
	l = *base;
	err |= field(b, DO_RUNTIME_SIZE, DO_RUNTIME_INTERP_HEAD, 8, &l.bpf.runtime_interp_head);
	err |= field(b, DO_INTERP_SIZE, DO_INTERP_THREADS_HEAD, 8, &l.bpf.interp_tstate_head);
	err |= field(b, DO_TSTATE_SIZE, DO_TSTATE_NEXT, 8, &l.bpf.tstate_next);
	err |= field(b, DO_TSTATE_SIZE, DO_TSTATE_CURRENT_FRAME, 8, &l.bpf.tstate_frame);
	err |= field(b, DO_TSTATE_SIZE, DO_TSTATE_THREAD_ID, 8, &l.bpf.tstate_thread_id);
	err |= field(b, DO_FRAME_SIZE, DO_FRAME_PREVIOUS, 8, &l.bpf.frame_previous);
	err |= field(b, DO_FRAME_SIZE, DO_FRAME_EXECUTABLE, 8, &l.bpf.frame_code);
	err |= field(b, DO_FRAME_SIZE, DO_FRAME_INSTR_PTR, 8, &l.bpf.frame_instr);
	err |= field(b, DO_FRAME_SIZE, DO_FRAME_OWNER, 1, &l.bpf.frame_entry);
	/* co_code_adaptive is the code's last member: its size says where it ends */
	err |= field(b, DO_CODE_SIZE, DO_CODE_ADAPTIVE, 0, &l.bpf.code_adaptive);
	err |= field(b, DO_CODE_SIZE, DO_CODE_FIRSTLINENO, 4, &l.bpf.code_firstlineno);
	err |= field(b, DO_CODE_SIZE, DO_CODE_FILENAME, 8, &l.code_filename);
	err |= field(b, DO_CODE_SIZE, DO_CODE_NAME, 8, &l.code_name);
	err |= field(b, DO_CODE_SIZE, DO_CODE_QUALNAME, 8, &l.code_qualname);
	err |= field(b, DO_CODE_SIZE, DO_CODE_LINETABLE, 8, &l.code_linetable);
	err |= field(b, DO_BYTES_SIZE, DO_BYTES_OB_SIZE, 8, &l.bytes_size);
	err |= field(b, DO_BYTES_SIZE, DO_BYTES_OB_SVAL, 0, &l.bytes_data);
	err |= field(b, DO_STR_SIZE, DO_STR_STATE, 4, &state);
	err |= field(b, DO_STR_SIZE, DO_STR_LENGTH, 8, &l.str_length);
	/* asciiobject_size: sizeof(PyASCIIObject), where an ASCII str's data begins: past
	 * the state, and with PyCompactUnicodeObject's 16 more bytes inside the str */
	err |= field(b, DO_STR_SIZE, DO_STR_ASCII_SIZE, 16, &ascii_size);
	if (err || ascii_size < state + 4 || ascii_size < l.str_length + 8)
		return -EINVAL;
	l.str_state = state;
	l.str_ascii_data = ascii_size;
	/* PyCompactUnicodeObject: the ASCII header, then utf8_length and utf8 */
	l.str_compact_data = (uint16_t)(ascii_size + 16);
	l.code_firstlineno = l.bpf.code_firstlineno;
	l.code_read = 0;
	{
		const uint16_t ends[] = {
			(uint16_t)(l.code_name + 8), (uint16_t)(l.code_qualname + 8),
			(uint16_t)(l.code_filename + 8), (uint16_t)(l.code_linetable + 8),
			(uint16_t)(l.code_firstlineno + 4),
		};

		for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
			if (ends[i] > l.code_read)
				l.code_read = ends[i];
	}
	*out = l;
	return 0;
}

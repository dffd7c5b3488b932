// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * pylayout_dump: lib/python's layout of one CPython version as JSON, for
 * tests/integration/pylayout_check.py to compare with the interpreters' DWARF.
 *
 *   pylayout_dump 3.11                     py_layout__for(3, 11); exit 1 when NULL
 *   pylayout_dump --debug-offsets FILE|-   py_layout__from_debug_offsets of FILE's bytes
 *   pylayout_dump --line 3.12 FIRSTLINENO UNIT HEX
 *                                          py_line__for of the line table in HEX
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "python/pylayout.h"
#include "python/pyline.h"

static void dump(const struct py_layout *l)
{
	const struct py_offsets *b = &l->bpf;

	printf("{\"major\": %d, \"minor\": %d, \"bpf\": {"
	       "\"runtime_interp_head\": %u, \"interp_tstate_head\": %u, \"tstate_next\": %u, "
	       "\"tstate_thread_id\": %u, \"tstate_frame\": %u, \"cframe_current_frame\": %u, "
	       "\"frame_previous\": %u, \"frame_code\": %u, \"frame_instr\": %u, "
	       "\"frame_entry\": %u, \"code_adaptive\": %u, \"code_firstlineno\": %u, "
	       "\"model\": %u, \"owner_cstack\": %u}, ",
	       l->major, l->minor, b->runtime_interp_head, b->interp_tstate_head, b->tstate_next,
	       b->tstate_thread_id, b->tstate_frame, b->cframe_current_frame, b->frame_previous,
	       b->frame_code, b->frame_instr, b->frame_entry, b->code_adaptive,
	       b->code_firstlineno, b->model, b->owner_cstack);
	printf("\"code_name\": %u, \"code_qualname\": %u, \"code_filename\": %u, "
	       "\"code_linetable\": %u, \"code_firstlineno\": %u, \"code_read\": %u, "
	       "\"str_length\": %u, \"str_state\": %u, \"str_ascii_data\": %u, "
	       "\"str_compact_data\": %u, \"str_kind_shift\": %u, \"str_compact_bit\": %u, "
	       "\"str_ascii_bit\": %u, \"str_ready_bit\": %u, \"bytes_size\": %u, "
	       "\"bytes_data\": %u}\n",
	       l->code_name, l->code_qualname, l->code_filename, l->code_linetable,
	       l->code_firstlineno, l->code_read, l->str_length, l->str_state, l->str_ascii_data,
	       l->str_compact_data, l->str_kind_shift, l->str_compact_bit, l->str_ascii_bit,
	       l->str_ready_bit, l->bytes_size, l->bytes_data);
}

int main(int argc, char **argv)
{
	const struct py_layout *l;
	int major, minor;
	char end;

	if (argc == 3 && strcmp(argv[1], "--debug-offsets") == 0) {
		static unsigned char buf[1 << 16];
		FILE *f = strcmp(argv[2], "-") == 0 ? stdin : fopen(argv[2], "rb");
		struct py_layout out;
		size_t n;

		if (!f) {
			perror(argv[2]);
			return 2;
		}
		n = fread(buf, 1, sizeof(buf), f);
		if (f != stdin)
			fclose(f);
		if (py_layout__from_debug_offsets(buf, n, &out)) {
			fprintf(stderr, "pylayout_dump: not 3.13's _Py_DebugOffsets (%zu bytes)\n", n);
			return 1;
		}
		dump(&out);
		return 0;
	}
	if (argc == 6 && strcmp(argv[1], "--line") == 0 &&
	    sscanf(argv[2], "%d.%d%c", &major, &minor, &end) == 2 &&
	    (l = py_layout__for(major, minor))) {
		static uint8_t table[1 << 16];
		const char *hex = argv[5];
		size_t n = 0;

		while (hex[0] && hex[1] && n < sizeof(table)) {
			unsigned v;

			if (sscanf(hex, "%2x", &v) != 1)
				return 2;
			table[n++] = (uint8_t)v;
			hex += 2;
		}
		printf("%d\n", py_line__for(l, table, n, atoi(argv[3]),
					    (uint32_t)strtoul(argv[4], NULL, 10)));
		return 0;
	}
	if (argc != 2 || sscanf(argv[1], "%d.%d%c", &major, &minor, &end) != 2) {
		fprintf(stderr, "usage: pylayout_dump MAJOR.MINOR | --debug-offsets FILE|-\n");
		return 2;
	}
	l = py_layout__for(major, minor);
	if (!l) {
		fprintf(stderr, "pylayout_dump: no layout for %d.%d\n", major, minor);
		return 1;
	}
	dump(l);
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * libFuzzer: a file's unwind table as the privileged side receives it from the worker
 * (unwind/utab.c's decoder). Input: an encoded table (seeds: the tables of small programs,
 * one with only .eh_frame, one with .debug_frame). What decodes is looked up at addresses
 * taken from its own rows, calls and functions, and encodes again to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "unwind/utab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct utab *t;
	unsigned char *again;
	size_t len;

	if (utab__decode(data, size, &t))
		return 0;
	for (uint32_t i = 0; i < t->nr_rows && i < 64; i++) {
		struct cfi_rule r;

		utab__rule(t, t->base + t->rows[i].start, &r);
		utab__rule(t, t->base + t->rows[i].start - 1, &r);
	}
	for (uint32_t i = 0; i < t->nr_calls && i < 64; i++) {
		uint64_t s, e, ret = t->base + t->calls[i].ret;

		utab__called_before(t, ret);
		if (!utab__go_function(t, ret - 1, &s, &e))
			utab__only_call(t, s, e, utab__called_before(t, ret));
	}
	if (utab__encode(t, &again, &len) == 0) {
		if (len != size || memcmp(again, data, size))
			__builtin_trap();	/* what decodes must encode back unchanged */
		free(again);
	}
	utab__free(t);
	return 0;
}

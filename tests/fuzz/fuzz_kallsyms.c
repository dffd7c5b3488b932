// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer: kallsyms text. */
#include <stdint.h>
#include <stdio.h>
#include "symbolize/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fmemopen((void *)data, size, "r");
	struct ksyms *ks;

	if (!f)
		return 0;
	ks = ksyms__parse(f);
	if (ks) {
		ksyms__lookup(ks, 0xffffffff81000000ULL, NULL, NULL);
		ksyms__lookup(ks, UINT64_MAX, NULL, NULL);
	}
	ksyms__free(ks);
	fclose(f);
	return 0;
}

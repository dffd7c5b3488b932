// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer: /tmp/perf-PID.map text, which any process can write. */
#include <stdint.h>
#include <stdio.h>
#include "symbolize/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fmemopen((void *)data, size, "r");
	struct perfmap *pm;

	if (!f)
		return 0;
	pm = perfmap__parse(f);
	if (pm) {
		perfmap__lookup(pm, 0x1000);
		perfmap__lookup(pm, UINT64_MAX - 1);
		/* As the file was at a few sizes (an epoch's names). */
		for (size_t upto = 0; upto <= size; upto += size / 4 + 1)
			perfmap__lookup_at(pm, 0x1000, upto);
	}
	perfmap__free(pm);
	fclose(f);
	return 0;
}

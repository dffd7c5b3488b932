// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer: /tmp/perf-PID.map text, which any process can write. */
#include <stdint.h>
#include <stdio.h>
#include "symbolize/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t sink;

static void on_start(void *ctx, uint64_t start, size_t offset)
{
	(void)ctx;
	sink += start + offset;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fmemopen((void *)data, size, "r");
	struct perfmap *pm;

	/* What the privileged process reads of a growing map: the lines' start addresses. */
	if (perfmap__line_starts((const char *)data, size, on_start, NULL) > size)
		__builtin_trap();
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

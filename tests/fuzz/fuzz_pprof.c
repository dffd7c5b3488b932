// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer: pprof files (profile.proto, gzip'd or raw) read into folded stacks, as
 * `profile flamegraph x.pb.gz` reads anyone's file. Seeds: profiles profile and Go wrote. */
#include <stdint.h>
#include <stdio.h>
#include "output/folded.h"
#include "output/pprof_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct folded *f = folded__new();
	char err[128];

	if (!f)
		return 0;
	pprof__read(data, size, f, err, sizeof(err), NULL);
	folded__total(f);
	folded__free(f);
	return 0;
}

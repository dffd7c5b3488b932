// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer: pprof files (profile.proto, gzip'd or raw) read into folded stacks, as
 * `profile flamegraph x.pb.gz` reads anyone's file. Seeds: profiles profile and Go wrote. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "output/folded.h"
#include "output/pprof_read.h"
#include "output/top.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct folded *f = folded__new();
	char err[128];

	if (!f)
		return 0;
	struct pprof_info info = { 0 };
	struct top *t;

	pprof__read(data, size, f, err, sizeof(err), &info);
	folded__total(f);
	/* As profile report reads it: the hottest functions, the tree. */
	t = top__new(info.process ? TOP_ROOT_IS_PROCESS : 0);
	if (t && !top__add_folded(t, f)) {
		FILE *out = fopen("/dev/null", "w");

		if (out) {
			top__write(t, out, TOP_BY_SELF, 20, 0);
			top__write_tree(t, out, 1.0, 0);
			fclose(out);
		}
	}
	top__free(t);
	folded__free(f);
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer: folded input, as `profile flamegraph` and `profile report` read any file,
 * through the parser, the SVG renderer (escaping, UTF-8 repair, layout) and the hottest
 * functions' table and tree (output/top.c). */
#include <stdint.h>
#include <stdio.h>
#include "flamegraph.h"
#include "output/folded_read.h"
#include "output/top.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *in = fmemopen((void *)data, size, "r"), *out = fopen("/dev/null", "w");
	struct folded_reader *r = NULL;
	struct flamegraph *fg = NULL;
	struct fg_opts o;

	if (!in || !out)
		goto out;
	fg_opts__init(&o);
	o.minwidth = 0;		/* keep every frame: more of the renderer runs */
	r = folded_reader__new(in, "<fuzz>");
	fg = flamegraph__new(&o);
	if (r && fg && flamegraph__read(fg, r) == 0)
		flamegraph__write(fg, out);
	/* The same lines through the table of hottest functions, either way of the root. */
	for (unsigned int flags = 0; flags <= TOP_ROOT_IS_PROCESS; flags++) {
		struct top *t = top__new(flags);
		struct folded_rec rec;
		FILE *again = fmemopen((void *)data, size, "r");
		struct folded_reader *r2 = again ? folded_reader__new(again, "<fuzz>") : NULL;

		/* (As profile report takes them: whole counts up to 2^53.) */
		while (t && r2 && folded_reader__next(r2, &rec) > 0)
			if (rec.count >= 0 && rec.count < 9007199254740992.0)
				top__add(t, rec.stack, rec.len, (uint64_t)rec.count);
		if (t) {
			top__write(t, out, TOP_BY_TOTAL, 50, 40);
			top__write_tree(t, out, 0.5, 40);
		}
		folded_reader__free(r2);
		if (again)
			fclose(again);
		top__free(t);
	}
out:
	flamegraph__free(fg);
	folded_reader__free(r);
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	return 0;
}

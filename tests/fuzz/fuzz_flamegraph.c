// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer: folded input, as `profile flamegraph` reads any file, through the parser and the
 * SVG renderer (escaping, UTF-8 repair, layout). */
#include <stdint.h>
#include <stdio.h>
#include "flamegraph.h"
#include "output/folded_read.h"

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
out:
	flamegraph__free(fg);
	folded_reader__free(r);
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	return 0;
}

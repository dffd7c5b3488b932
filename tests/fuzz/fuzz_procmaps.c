// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer: /proc/PID/maps lines, as another process's mappings could present them. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "proc/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procmaps *pm = procmaps__new();
	char *line = malloc(size + 1);
	struct map m;
	bool deleted;

	if (!pm || !line)
		goto out;
	memcpy(line, data, size);
	line[size] = '\0';
	/* Every line of the input, parsed and added like procmaps__load does. */
	for (char *p = line, *nl; p && *p; p = nl) {
		nl = strchr(p, '\n');
		if (nl)
			*nl++ = '\0';
		if (procmaps__parse_line(p, &m, &deleted) == 1) {
			procmaps__add(pm, 1, &m);
			procmaps__find(pm, 1, m.start);
		}
	}
	procmaps__fork(pm, 1, 2, 0);
out:
	procmaps__free(pm);
	free(line);
	return 0;
}

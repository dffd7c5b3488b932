// SPDX-License-Identifier: GPL-3.0-or-later
/* libFuzzer: ELF files, as the profiler opens whatever other processes map: segments,
 * symbol tables (compressed ones too), notes, debuglink, the tables of FDEs (.eh_frame_hdr,
 * .eh_frame walked, .debug_frame decompressed and converted), and the DWARF sections'
 * compression headers and .gnu_debugaltlink measured before BFD would see them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include "dso/dso.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	struct dso *e;
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	dso_debug_dir = "/nonexistent";
	e = dso__open(path, "/nonexistent/fuzz");
	if (e) {
		size_t n;
		const struct dso_seg *segs = dso__segs(e, &n);
		uint64_t v;

		for (size_t i = 0; i < n; i++) {
			dso__lookup(e, segs[i].vaddr, NULL);
			dso__fde_start(e, segs[i].vaddr + 1);
			dso__code_entry(e, segs[i].vaddr + 1);
			dso_segs__off_to_vaddr(segs, n, segs[i].offset, &v);
		}
		dso__lookup(e, UINT64_MAX, NULL);
		dso__dwarf_check(e);	/* what BFD would be handed, measured */
		for (int w = 0; w < DSO_CFI__MAX; w++) {
			struct dso_fdes f;
			uint64_t fde;

			if (dso__fdes(e, w, &f) == 0 && fde_table__find(&f.table, UINT64_MAX,
									NULL, &fde) == 0)
				cfi_mem__ptr(&f.mem, fde, 4);
		}
	}
	dso__free(e);
	close(fd);
	return 0;
}

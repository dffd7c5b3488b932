// SPDX-License-Identifier: GPL-3.0-or-later
/* Helpers of the suites that unwind this very process (self.h). */
#include <unistd.h>
#include "dso/dsos.h"
#include "proc/procmaps.h"
#include "unwind/unwind.h"
#include "self.h"

int self_unwinder_open(struct procmaps **pm, struct dsos **dsos, struct unwinder **unw)
{
	*pm = procmaps__new();
	*dsos = dsos__new();
	*unw = NULL;
	if (!*pm || !*dsos || procmaps__load(*pm, getpid()))
		return -1;
	*unw = unwinder__new(*pm, *dsos);
	return *unw ? 0 : -1;
}

void self_unwinder_close(struct procmaps *pm, struct dsos *dsos, struct unwinder *unw)
{
	unwinder__free(unw);
	dsos__free(dsos);
	procmaps__free(pm);
}

__attribute__((no_sanitize_address, noinline)) void self_copy_stack(unsigned char *dst,
								    const void *src, size_t len)
{
	const volatile unsigned char *p = src;

	for (size_t i = 0; i < len; i++)
		dst[i] = p[i];
}

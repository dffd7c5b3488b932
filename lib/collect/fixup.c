// SPDX-License-Identifier: GPL-3.0-or-later
#include <string.h>
#include "collect/fixup.h"

const char *const fixup_stack_bottoms[FIXUP_NR_STACK_BOTTOMS] = {
	"__libc_start_call_main", "start_thread",
};

bool fixup__is_stack_bottom(const char *name)
{
	for (size_t i = 0; name && i < FIXUP_NR_STACK_BOTTOMS; i++)
		if (!strcmp(name, fixup_stack_bottoms[i]))
			return true;
	return false;
}

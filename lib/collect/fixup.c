// SPDX-License-Identifier: GPL-3.0-or-later
#include <string.h>
#include "collect/fixup.h"

bool fixup__is_stack_bottom(const char *name)
{
	for (size_t i = 0; name && i < FIXUP_NR_STACK_BOTTOMS; i++)
		if (!strcmp(name, fixup_stack_bottoms[i]))
			return true;
	return false;
}

bool fixup__ends_at(int i, const char *name)
{
	return i > 0 && fixup__is_stack_bottom(name);
}

bool fixup__truncated(bool unwind_truncated, const char *outer)
{
	return unwind_truncated && !fixup__is_stack_bottom(outer);
}

int fixup__add_leaf_caller(uint64_t *ips, int n, uint64_t ret)
{
	if (n < 1 || !ret || (n > 1 && ips[1] == ret))
		return n;
	memmove(&ips[2], &ips[1], (n - 1) * sizeof(*ips));
	ips[1] = ret;
	return n + 1;
}

bool fixup__is_exec(const char *name)
{
	static const char *const exec_fns[] = { "bprm_execve", "do_execveat_common",
						"__do_execve_file" };

	for (size_t i = 0; name && i < sizeof(exec_fns) / sizeof(exec_fns[0]); i++) {
		size_t len = strlen(exec_fns[i]);

		if (!strncmp(name, exec_fns[i], len) && (name[len] == '\0' || name[len] == '.'))
			return true;
	}
	return false;
}

int fixup__kernel_depth(const uint64_t *ips, int max)
{
	int n;

	for (n = 0; n < max && ips[n]; n++)
		;
	return n;
}

bool fixup__is_sampling_frame(const char *name)
{
	static const char *const prefixes[] = {
		"bpf_", "__bpf_", "perf_", "__perf_", "___perf_", "stack_trace_save",
		"arch_stack_walk", "get_callchain_entry", "__x64_sys_bpf",
	};

	if (!name)
		return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

bool fixup__prefer_walk(int n, enum unwind_stop stop, uint32_t nr_walk)
{
	return n == 1 && stop == UNWIND_STOP_NO_INFO && nr_walk > 1;
}

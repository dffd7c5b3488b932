// SPDX-License-Identifier: GPL-3.0-or-later
/* CUnit runner for the unit tests of lib/ and flamegraph/. */
#include <stdio.h>
#include <stdlib.h>
#include <CUnit/Basic.h>
#include "suites.h"

const char *fixtures_dir = "build/tests/fixtures";

int main(int argc, char **argv)
{
	int (*suites[])(void) = {
		register_procmaps_suite,
		register_kallsyms_suite,
		register_dso_suite,
		register_folded_suite,
		register_speedscope_suite,
		register_pprof_suite,
		register_unwind_suite,
		register_cfi_suite,
		register_frames_suite,
		register_fdes_suite,
		register_perfmap_suite,
		register_folded_read_suite,
		register_flamegraph_suite,
		register_htab_suite,
		register_profile_suite,
		register_fixup_suite,
		register_bpftabs_suite,
		register_ucounts_suite,
		register_symbolize_suite,
		register_ns_suite,
		register_explain_suite,
		register_x86_suite,
		register_leafscan_suite,
		register_gofp_suite,
		register_follow_suite,
		register_log_suite,
		register_runas_suite,
		register_fileio_suite,
		register_limits_suite,
		register_hostile_suite,
		register_sandbox_suite,
		register_utab_suite,
		register_events_suite,
		register_stacks_suite,
		register_grow_suite,
		register_top_suite,
		register_python_suite,
		register_ruby_suite,
	};
	unsigned int failed;

	if (argc > 1)
		fixtures_dir = argv[1];
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
		if (suites[i]()) {
			fprintf(stderr, "unit: cannot register suite %zu: %s\n", i, CU_get_error_msg());
			CU_cleanup_registry();
			return 2;
		}
	}
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}

/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Each unit-test file registers one CUnit suite per module. */
#ifndef SUITES_H
#define SUITES_H
#include <CUnit/CUnit.h>

int register_procmaps_suite(void);
int register_kallsyms_suite(void);
int register_dso_suite(void);
int register_folded_suite(void);
int register_speedscope_suite(void);
int register_pprof_suite(void);
int register_unwind_suite(void);
int register_cfi_suite(void);
int register_frames_suite(void);
int register_fdes_suite(void);
int register_perfmap_suite(void);
int register_folded_read_suite(void);
int register_flamegraph_suite(void);
int register_htab_suite(void);
int register_profile_suite(void);
int register_fixup_suite(void);
int register_bpftabs_suite(void);
int register_ucounts_suite(void);
int register_symbolize_suite(void);
int register_ns_suite(void);
int register_explain_suite(void);
int register_x86_suite(void);
int register_leafscan_suite(void);
int register_gofp_suite(void);
int register_follow_suite(void);
int register_log_suite(void);
int register_runas_suite(void);
int register_fileio_suite(void);
int register_limits_suite(void);
int register_hostile_suite(void);
int register_sandbox_suite(void);
int register_utab_suite(void);
int register_events_suite(void);
int register_stacks_suite(void);
int register_grow_suite(void);
int register_top_suite(void);
int register_python_suite(void);
int register_ruby_suite(void);

/* Directory holding the unit-test fixtures built by the Makefile (build/tests/fixtures). */
extern const char *fixtures_dir;

#endif

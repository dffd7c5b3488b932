/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The profiles the subcommands read: folded files and pprof files (cmd/inputs.c). */
#ifndef CMD_INPUTS_H
#define CMD_INPUTS_H

#include <stdbool.h>
#include "output/pprof_read.h"

struct folded;

/* Whether PATH names a pprof file: by its name (.pb, .pb.gz, .pprof), or its first bytes
 * (gzip). "-" (stdin) is folded. */
bool input_is_pprof(const char *path);

/* The pprof file PATH into FOLDED; *INFO (or NULL) what it says of itself (whether its stacks
 * begin with their process, its sample type). Returns 0, or 1 after one sentence on stderr
 * that begins with WHO. */
int input_read_pprof(const char *who, const char *path, struct folded *folded,
		     struct pprof_info *info);

/* The folded file PATH ("-": stdin) into FOLDED (a differential line: its second count).
 * Returns 0, or 1 after one sentence on stderr that begins with WHO. */
int input_read_folded(const char *who, const char *path, struct folded *folded);

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The `profile diff` subcommand (cmd/diff.c), for cmd/profile.c. */
#ifndef DIFF_CMD_H
#define DIFF_CMD_H

/*
 * `profile diff [OPTIONS] BEFORE AFTER`: ARGV[0] is "diff". Writes the three columns, or an
 * SVG, to stdout or -o FILE. Returns the exit status: 0, 1 for a write error, 2 for bad
 * usage or input.
 */
int diff_main(int argc, char **argv);

#endif

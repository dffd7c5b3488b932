/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The `profile flamegraph` subcommand (cmd/flamegraph.c), for cmd/profile.c. */
#ifndef FLAMEGRAPH_CMD_H
#define FLAMEGRAPH_CMD_H

/*
 * `profile flamegraph [OPTIONS] [FILE...]`: ARGV[0] is "flamegraph". Reads the files (stdin
 * when none, "-" too), writes the SVG to stdout or -o FILE. Returns the exit status: 0, 1
 * for unreadable or malformed input or a write error, 2 for bad usage.
 */
int flamegraph_main(int argc, char **argv);

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The `profile top` subcommand (cmd/top.c), for cmd/profile.c. */
#ifndef TOP_CMD_H
#define TOP_CMD_H

/* `profile top [OPTIONS] (-p PID | -a | [--] COMMAND)`: ARGV[0] is "top". Returns the exit
 * status, as profile's. */
int top_main(int argc, char **argv);

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The `profile report` subcommand (cmd/report.c), for cmd/profile.c. */
#ifndef REPORT_CMD_H
#define REPORT_CMD_H

/* `profile report [OPTIONS] FILE...`: ARGV[0] is "report". Returns the exit status: 0, 1
 * for unreadable, malformed or empty input or a write error, 2 for bad usage. */
int report_main(int argc, char **argv);

#endif

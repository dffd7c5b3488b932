/* SPDX-License-Identifier: GPL-3.0-or-later */
/* proc/procfile: a small file of a task's under /proc, read whole. */
#ifndef PROC_PROCFILE_H
#define PROC_PROCFILE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * /proc/PID/NAME (status, stat, schedstat: text a read gives at once) into BUF, at most
 * SIZE - 1 bytes, NUL-terminated. Returns the bytes read (> 0), or -1 when the file cannot
 * be opened or read or is empty (the task gone).
 */
ssize_t proc__read(pid_t pid, const char *name, char *buf, size_t size);

#endif

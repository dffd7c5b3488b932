/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * confine: what the symbolizer worker does to itself before it reads a byte of anyone's file,
 * in this order: a root directory that is an empty, removed directory (when it may chroot);
 * the groups, gid and uid of an unprivileged user (when it runs as root); no capabilities
 * (effective, permitted, inheritable, ambient, and the bounding set where it may); not
 * dumpable (no ptrace, no core, /proc/PID owned by root); killed when its parent dies; no
 * core files; no new privileges; and a seccomp filter that kills the process at
 * any system call outside a short list (see confine.c): no open, no socket, no exec, no
 * ptrace, no mapping of executable memory; reads, mappings, closes on the descriptors it is
 * handed, and messages on its socket.
 */
#ifndef SANDBOX_CONFINE_H
#define SANDBOX_CONFINE_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * The part of the confinement that is not the root directory or the filter (the debuginfod
 * fetcher's, which must open and connect): UID and GID when it runs as root, no capabilities,
 * not dumpable, killed with PARENT, no core, no new privileges. Returns 0, or a negative errno
 * with a message printed (the process must then exit).
 */
int confine__user(uid_t uid, gid_t gid, pid_t parent);

/*
 * Confine the calling process (single-threaded) as above: UID and GID are the user it
 * becomes when it runs as root (it keeps its own otherwise: it is no one's root then);
 * SOCK is the one descriptor the filter lets it send and receive messages on, PARENT the
 * process whose death ends it; STDERR_FD (>= 0) becomes its standard error right before the
 * filter. Returns 0, or a negative errno with a message printed (the process must then exit:
 * it may be half confined).
 */
int confine__self(uid_t uid, gid_t gid, int sock, pid_t parent, int stderr_fd);

#endif

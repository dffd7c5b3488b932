/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * worker: the symbolizer worker, a process of its own that reads everyone's files (libelf,
 * GNU BFD, the demangler) with no privilege at all (confine.h) and answers the client's
 * requests (proto.h): files and perf maps come as descriptors, addresses in batches, names
 * go back in compact parts. It asks for a debug file by what it is known by and checks the
 * candidates it is handed. Between requests it reads, at idle priority, the files it was
 * asked to prepare.
 *
 * A program that links lib/sandbox becomes the worker when started as
 *
 *	PROGRAM SANDBOX_WORKER_ARG UID GID PARENT LOG_LEVEL BUDGET
 *
 * (BUDGET: base/limits' memory budget in bytes, the profiler's --max-memory; the bounds met
 * there are sent back as SB_LIMITS)
 *
 * with its socket as descriptor SANDBOX_WORKER_FD (client.c does so through /proc/self/exe):
 * a constructor runs the worker before main and exits. Each worker is so a fresh image: none
 * of the profiler's memory (samples of other processes' stacks), its own address layout.
 */
#ifndef SANDBOX_WORKER_H
#define SANDBOX_WORKER_H

#include <stdbool.h>
#include <sys/types.h>

#define SANDBOX_WORKER_ARG	"--profile-symbolizer-worker"
#define SANDBOX_WORKER_FD	3

/*
 * Test hooks, from the environment variable PROFILE_SANDBOX_TEST of the first worker only:
 * "open" makes it call open() once at its first lookup (the filter kills it), "stall" makes
 * it never answer its first lookup.
 */
#define SANDBOX_TEST_ENV	"PROFILE_SANDBOX_TEST"

/*
 * Confine this process (confine__self with UID, GID, SOCK, PARENT) and serve the requests
 * coming on SOCK until the client closes it. Returns the exit status: 0 at the end, 1 when
 * it could not be confined, 2 at a message that does not decode.
 */
int sandbox_worker__main(int sock, uid_t uid, gid_t gid, pid_t parent);

#endif

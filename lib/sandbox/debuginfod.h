/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * debuginfod: debug files fetched by build id from the servers DEBUGINFOD_URLS names, for the
 * files that have no symbols or no DWARF here (a distribution's stripped programs and
 * libraries). Internal to lib/sandbox: the symbolizer asks, the answers come while sampling.
 *
 * The fetching is done by a process of its own (this program started again with
 * DFETCH_ARG): elfutils' libdebuginfod (libcurl) talking to the network, as the worker's user
 * (nobody), without capabilities, not dumpable, killed with us. It reads no file a profiled
 * process maps and the worker, which parses the debug files, has no network. The fetcher
 * keeps what it fetched in a cache of libdebuginfod's layout (BUILDID/debuginfo) that its
 * user owns: /var/cache/profile/debuginfod when we run as root, DFETCH_CACHE_ENV if set; a
 * directory of its own for this run when that one cannot be used. The symbolizer opens a
 * debug file there (and in our user's own libdebuginfod cache, which perf and gdb fill) as
 * any other candidate: by descriptor, handed to the worker, checked against the build id.
 */
#ifndef SANDBOX_DEBUGINFOD_H
#define SANDBOX_DEBUGINFOD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define DFETCH_ARG		"--profile-debuginfod-fetcher"
#define DFETCH_FD		3
#define DFETCH_CACHE_ENV	"PROFILE_DEBUGINFOD_CACHE"
#define DFETCH_CACHE_ROOT	"/var/cache/profile/debuginfod"
#define DFETCH_THREADS		4	/* fetches at once */

struct dfetch;

/*
 * Fetching for a profile, each fetch bounded by TIMEOUT seconds, the fetcher running as
 * UID:GID (when we are root). Its cache directory is made ready now (before the session
 * drops root); the fetcher starts at the first fetch. NULL with errno ENOENT when
 * DEBUGINFOD_URLS names no server (nothing to do), ENOMEM.
 */
struct dfetch *dfetch__new(double timeout, uid_t uid, gid_t gid);

/* End the fetcher, remove a directory made for this run only. NULL is fine. */
void dfetch__free(struct dfetch *f);

/* The fetcher's pid while it runs, else 0. */
pid_t dfetch__pid(const struct dfetch *f);

/*
 * The places BUILD_ID's debug file would be at in the caches: up to 2 pairs of (directory
 * descriptor, path relative to it), to open inside that directory (fileio's ROOT_FD). Returns
 * how many.
 */
int dfetch__places(const struct dfetch *f, const char *build_id, int *dirs, char (*paths)[160]);

/*
 * Fetch BUILD_ID's debug file (for the file named NAME), without waiting, unless it was asked
 * for before. Returns 1 (under way: asked now, or before and not answered yet), 0 (answered
 * before, or no more fetches: the fetcher failed), or a negative errno.
 */
int dfetch__ask(struct dfetch *f, const char *build_id, const char *name);

/*
 * The answers that came: DONE(CTX, BUILD_ID) for each debug file now in the cache. Waits for
 * more until DEADLINE (monotonic seconds; 0: not at all) while any fetch is under way and
 * within its own time. Returns how many fetches are still under way.
 */
unsigned int dfetch__poll(struct dfetch *f, double deadline,
			  void (*done)(void *ctx, const char *build_id), void *ctx);

/* When the fetches under way would all have ended (monotonic seconds); 0: none. */
double dfetch__due(const struct dfetch *f);

/* The seconds a fetch may take (and the end of a profile may wait for all of them). */
double dfetch__timeout(const struct dfetch *f);

/* Counts: fetched, failed (no server had it, or an error), given up on (out of time). */
void dfetch__counts(const struct dfetch *f, unsigned int *fetched, unsigned int *failed,
		    unsigned int *pending);

/* Say (a warning) which files' fetches were given up on, once each. */
void dfetch__report(struct dfetch *f);

#endif

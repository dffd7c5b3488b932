/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * client: the privileged side's end of the worker (internal to lib/sandbox). It starts the
 * worker (fork, every descriptor but its socket closed, exec of this very program as the
 * worker: see worker.h), sends it messages with descriptors, receives its messages within a
 * deadline, and ends a worker that failed (crashed, stalled, or said something that does not
 * decode) so that the next request starts a new one, a bounded number of times.
 */
#ifndef SANDBOX_CLIENT_H
#define SANDBOX_CLIENT_H

#include <stdbool.h>
#include <sys/types.h>
#include "sandbox/proto.h"

#define SB_TIMEOUT_MS		5000	/* a request not answered in this time: the worker
					 * stalled (unless SB_TIMEOUT_ENV says another) */
#define SB_TIMEOUT_ENV		"PROFILE_SANDBOX_TIMEOUT"	/* seconds, 0.1 to 3600 */
#define SB_TOTAL_MS		60000	/* waiting for workers in all, at most */
#define SB_SPAWNS_MAX		8	/* workers started in all, at most */

struct sb_client {
	int sock;			/* -1: no worker */
	pid_t pid;
	unsigned int gen;		/* the worker's generation: 1, 2, ... (0: none yet) */
	unsigned int spawns;
	unsigned int recycled;		/* of those, ended for their memory, not failed */
	bool dead;			/* no more workers: every start fails */
	uid_t uid;
	gid_t gid;
	bool confined;			/* its SB_HELLO came */
	bool idle;			/* workers run at SCHED_IDLE (while sampling) */
	uint32_t busy;			/* the file (or map, BUSY_MAP set) it said it works on */
	bool busy_known;
	double waited;			/* seconds spent waiting for workers */
	double timeout;			/* seconds a request may take */
	unsigned char *rbuf;		/* SB_MSG_MAX */
	const char *test;		/* SANDBOX_TEST_ENV for the first worker */
	uint64_t limits_seen[SB_LIMITS_MAX];	/* the worker's counts of base/limits' bounds */
};

#define SB_BUSY_MAP	0x80000000u	/* sb_client.busy: a perf map's id */

/* A client (no worker yet) whose workers run as UID:GID. Returns 0 or -ENOMEM. */
int sb_client__init(struct sb_client *c, uid_t uid, gid_t gid);

/* End the worker (its socket closed: it exits) and free what C holds. */
void sb_client__fini(struct sb_client *c);

/*
 * A worker, started now when there is none. Returns 0; -ECHILD when no more may be started
 * (SB_SPAWNS_MAX, SB_TOTAL_MS, or one could not be started: a warning said why); another
 * negative errno when this one could not start.
 */
int sb_client__start(struct sb_client *c);

/* Send the message in B with the NFDS descriptors FDS (not taken); NOWAIT: never block, fail
 * with -EAGAIN instead. Returns 0 or a negative errno (the worker is then failed by the
 * caller). */
int sb_client__send(struct sb_client *c, const struct sb_buf *b, const int *fds,
		    unsigned int nfds, bool nowait);

/*
 * The next message from the worker into *M (pointing into C's buffer until the next call),
 * waiting until DEADLINE (monotonic seconds; 0: not at all). SB_BUSY and SB_HELLO are taken
 * care of here and not returned. Returns 0; -EAGAIN (nothing, no wait), -ETIMEDOUT, -EPIPE
 * (the worker is gone), -EBADMSG (it does not decode).
 */
int sb_client__recv(struct sb_client *c, struct sb_msg *m, double deadline);

/*
 * The worker failed with ERR (as sb_client__recv's) while it worked on the file or perf map
 * WHAT (named in the warning): ended and reaped, a warning saying how (the signal that
 * killed it, a stall, a bad message) and that WHAT's frames stay unnamed.
 */
void sb_client__fail(struct sb_client *c, int err, const char *what);

/* End the worker while it works well (for its memory: sb_client__anon_kib); the next request
 * starts another, which does not count against SB_SPAWNS_MAX. */
void sb_client__recycle(struct sb_client *c);

/* The worker's resident anonymous memory in KiB (its caches: symbols, BFD's DWARF), 0 when
 * none runs or it cannot be read. */
uint64_t sb_client__anon_kib(const struct sb_client *c);

/* Workers at SCHED_IDLE when IDLE (while sampling: only CPU time no one else wants), else
 * at normal priority (the end of a profile waits for them): set from outside, the worker
 * itself may not, and from the start for the workers started later. */
void sb_client__set_idle(struct sb_client *c, bool idle);

/*
 * posix_spawn of this program (/proc/self/exe) with ARGV and ENVP, as a helper process of
 * lib/sandbox (the worker, the debuginfod fetcher) over a new SOCK_SEQPACKET socket: its end
 * as descriptor FD, every other but the standard ones closed, stdin and stdout on
 * /dev/null, stderr ours; a process group of its own, so that the terminal's signals are
 * not its. Not a session of its own: with autogroup scheduling a new session is a new task
 * group, which gets its fair share of the CPUs whatever its policy, and SCHED_IDLE would not
 * leave the profiled programs the CPU (on a 2-CPU machine, 8% of a fixed-work target's
 * time). IDLE: at SCHED_IDLE from the start. Our end into *SOCK, its pid into *PID.
 * Returns 0 or a negative errno.
 */
int sb_spawn_self(char *const argv[], char *const envp[], int fd, bool idle, int *sock,
		  pid_t *pid);

/* Monotonic seconds. */
double sb_client__now(void);

#endif

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * runas: the user a command is run as (--user USER[:GROUP]). Resolved in the parent, before
 * the fork: the held child only makes system calls (no user database, no malloc) between
 * fork and exec.
 */
#ifndef COLLECT_RUNAS_H
#define COLLECT_RUNAS_H

#include <stddef.h>
#include <sys/types.h>

struct runas {
	uid_t uid;
	gid_t gid;
	gid_t *groups;		/* supplementary groups: the user's, or only GID */
	int nr_groups;
	char *name;		/* the user's name and home directory, NULL when the uid has */
	char *home;		/* no entry in the user database */
	char **envp;		/* the environment for exec: ours with HOME, USER and LOGNAME
				 * the user's (runas__env) */
};

/*
 * Resolve SPEC, "USER[:GROUP]": USER a name or a uid, GROUP a name or a gid. Without GROUP,
 * the user's primary group and supplementary groups from the user database; with it, GROUP
 * alone. A uid without an entry in the user database needs GROUP. Returns 0, or -EINVAL with
 * a sentence in ERR (an unknown user or group, a malformed SPEC) or -ENOMEM. Free with
 * runas__free.
 */
int runas__resolve(const char *spec, struct runas *ra, char *err, size_t errlen);

/* RA->envp: ENV with HOME, USER and LOGNAME set to RA's (unchanged when RA has no name).
 * Returns 0 or -ENOMEM. */
int runas__env(struct runas *ra, char *const *env);

/*
 * In the child, between fork and exec (async-signal-safe: system calls only): ambient
 * capabilities cleared; with RA (not NULL), the groups, gid and uid RA's, every capability
 * dropped (a uid other than 0 keeps none across exec), PR_SET_KEEPCAPS off. Returns 0 or
 * the step that failed (enum runas_step) with *ERR its errno.
 */
enum runas_step { RUNAS_OK, RUNAS_GROUPS, RUNAS_GID, RUNAS_UID, RUNAS_CAPS };
int runas__become(const struct runas *ra, int *err);

/* The step's name for an error sentence ("set the groups"). */
const char *runas__step_name(int step);

void runas__free(struct runas *ra);

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
/* collect/runas: the user a command is run as (--user), resolved before the fork and become
 * in the held child. */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include "collect/runas.h"

#define MAX_GROUPS	65536

/* A whole decimal number of at most an id's range into *ID; false for anything else. */
static bool parse_id(const char *s, unsigned int *id)
{
	char *end;
	unsigned long v;

	if (!*s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v >= UINT_MAX)	/* (uid_t)-1 means "unchanged" to setresuid */
		return false;
	*id = (unsigned int)v;
	return true;
}

static int resolve_group(const char *g, gid_t *gid, char *err, size_t errlen)
{
	struct group *gr;
	unsigned int id;

	if (parse_id(g, &id)) {
		*gid = id;
		return 0;
	}
	errno = 0;
	gr = getgrnam(g);
	if (!gr) {
		snprintf(err, errlen, "unknown group '%s' (--user USER:GROUP): no such group in the "
			 "group database", g);
		return -EINVAL;
	}
	*gid = gr->gr_gid;
	return 0;
}

/* RA's supplementary groups from the user database (RA->name and RA->gid set). */
static int user_groups(struct runas *ra)
{
	int n = 64;

	for (;;) {
		gid_t *g = realloc(ra->groups, n * sizeof(*g));
		int got = n;

		if (!g)
			return -ENOMEM;
		ra->groups = g;
		if (getgrouplist(ra->name, ra->gid, g, &got) >= 0) {
			ra->nr_groups = got;
			return 0;
		}
		n = got > n ? got : n * 2;
		if (n > MAX_GROUPS)
			return -EINVAL;
	}
}

int runas__resolve(const char *spec, struct runas *ra, char *err, size_t errlen)
{
	char *user = strdup(spec ? spec : ""), *group;
	struct passwd *pw;
	unsigned int id;
	int ret = 0;

	memset(ra, 0, sizeof(*ra));
	if (!user)
		return -ENOMEM;
	group = strchr(user, ':');
	if (group)
		*group++ = '\0';
	if (!*user || (group && !*group)) {
		snprintf(err, errlen, "invalid user '%s' (--user): expected USER or USER:GROUP, "
			 "by name or number", spec ? spec : "");
		free(user);
		return -EINVAL;
	}
	errno = 0;
	if (parse_id(user, &id)) {
		ra->uid = id;
		pw = getpwuid(id);
	} else {
		pw = getpwnam(user);
		if (!pw) {
			snprintf(err, errlen, "unknown user '%s' (--user): no such user in the user "
				 "database", user);
			free(user);
			return -EINVAL;
		}
		ra->uid = pw->pw_uid;
	}
	if (pw) {
		ra->gid = pw->pw_gid;
		ra->name = strdup(pw->pw_name);
		ra->home = strdup(pw->pw_dir);
		if (!ra->name || !ra->home)
			ret = -ENOMEM;
	} else if (!group) {
		snprintf(err, errlen, "uid %u has no entry in the user database, so no groups "
			 "(--user): give one, as --user %u:GID", ra->uid, ra->uid);
		ret = -EINVAL;
	}
	if (!ret && group)
		ret = resolve_group(group, &ra->gid, err, errlen);
	if (!ret && (group || !pw)) {
		/* GROUP given: it alone, as setpriv and sudo -g do. */
		ra->groups = malloc(sizeof(*ra->groups));
		if (!ra->groups)
			ret = -ENOMEM;
		else
			ra->groups[ra->nr_groups++] = ra->gid;
	} else if (!ret) {
		ret = user_groups(ra);
		if (ret == -EINVAL)
			snprintf(err, errlen, "user '%s' is in too many groups (--user)", ra->name);
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	free(user);
	if (ret)
		runas__free(ra);
	return ret;
}

/* "NAME=VALUE", malloc'd. */
static char *env_var(const char *name, const char *value)
{
	char *s;

	return asprintf(&s, "%s=%s", name, value) < 0 ? NULL : s;
}

int runas__env(struct runas *ra, char *const *env)
{
	static const char *const names[] = { "HOME", "USER", "LOGNAME" };
	size_t n = 0, o = 0;

	while (env && env[n])
		n++;
	ra->envp = calloc(n + 4, sizeof(*ra->envp));
	if (!ra->envp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		bool ours = false;

		for (size_t k = 0; ra->name && k < 3; k++) {
			size_t len = strlen(names[k]);

			ours |= !strncmp(env[i], names[k], len) && env[i][len] == '=';
		}
		if (!ours && !(ra->envp[o++] = strdup(env[i])))
			return -ENOMEM;
	}
	if (ra->name) {
		const char *values[] = { ra->home, ra->name, ra->name };

		for (size_t k = 0; k < 3; k++)
			if (!(ra->envp[o++] = env_var(names[k], values[k])))
				return -ENOMEM;
	}
	return 0;
}

int runas__become(const struct runas *ra, int *err)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct none[2] = { 0 };

	/* Ambient capabilities (profile run by a user given some) would pass to the command:
	 * it gets none of ours. EINVAL: a kernel without them. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL) {
		*err = errno;
		return RUNAS_CAPS;
	}
	if (!ra)
		return RUNAS_OK;
	if (setgroups(ra->nr_groups, ra->groups)) {
		*err = errno;
		return RUNAS_GROUPS;
	}
	if (setresgid(ra->gid, ra->gid, ra->gid)) {
		*err = errno;
		return RUNAS_GID;
	}
	/* Without PR_SET_KEEPCAPS, a uid other than 0 leaves no permitted capability. */
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) || setresuid(ra->uid, ra->uid, ra->uid)) {
		*err = errno;
		return RUNAS_UID;
	}
	/* And none inheritable either (nor any a securebit would have kept). */
	if (ra->uid && syscall(SYS_capset, &hdr, none)) {
		*err = errno;
		return RUNAS_CAPS;
	}
	return RUNAS_OK;
}

const char *runas__step_name(int step)
{
	switch (step) {
	case RUNAS_GROUPS: return "set the groups";
	case RUNAS_GID: return "set the group id";
	case RUNAS_UID: return "set the user id";
	case RUNAS_CAPS: return "drop the capabilities";
	default: return "execute";
	}
}

void runas__free(struct runas *ra)
{
	if (!ra)
		return;
	for (size_t i = 0; ra->envp && ra->envp[i]; i++)
		free(ra->envp[i]);
	free(ra->envp);
	free(ra->groups);
	free(ra->name);
	free(ra->home);
	memset(ra, 0, sizeof(*ra));
}

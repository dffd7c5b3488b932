// SPDX-License-Identifier: GPL-3.0-or-later
/* runas: --user USER[:GROUP] resolved by name or number, with the user's groups or GROUP
 * alone; unknown names and uids without an entry are one sentence; the command's environment
 * gets the user's HOME, USER and LOGNAME. */
#include <errno.h>
#include <string.h>
#include "collect/runas.h"
#include "suites.h"

static void test_resolve(void)
{
	struct runas ra;
	char err[256];

	CU_ASSERT_EQUAL_FATAL(runas__resolve("root", &ra, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(ra.uid, 0);
	CU_ASSERT_EQUAL(ra.gid, 0);
	CU_ASSERT_STRING_EQUAL(ra.name, "root");
	CU_ASSERT(ra.nr_groups >= 1 && ra.groups[0] == 0);
	runas__free(&ra);

	CU_ASSERT_EQUAL_FATAL(runas__resolve("65534", &ra, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(ra.uid, 65534);
	CU_ASSERT_STRING_EQUAL(ra.name, "nobody");
	runas__free(&ra);

	/* GROUP alone, by name or number. */
	CU_ASSERT_EQUAL_FATAL(runas__resolve("nobody:root", &ra, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(ra.uid, 65534);
	CU_ASSERT_EQUAL(ra.gid, 0);
	CU_ASSERT_EQUAL(ra.nr_groups, 1);
	CU_ASSERT_EQUAL(ra.groups[0], 0);
	runas__free(&ra);
	CU_ASSERT_EQUAL_FATAL(runas__resolve("4242:4343", &ra, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(ra.uid, 4242);
	CU_ASSERT_EQUAL(ra.gid, 4343);
	CU_ASSERT_PTR_NULL(ra.name);
	runas__free(&ra);

	CU_ASSERT_EQUAL(runas__resolve("no-such-user-x", &ra, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown user 'no-such-user-x'"));
	CU_ASSERT_EQUAL(runas__resolve("root:no-such-group-x", &ra, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown group 'no-such-group-x'"));
	CU_ASSERT_EQUAL(runas__resolve("4242", &ra, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--user 4242:GID"));
	for (const char *bad = ""; bad; bad = !*bad ? ":" : !strcmp(bad, ":") ? "root:" :
	     !strcmp(bad, "root:") ? "4294967295" : NULL) {
		CU_ASSERT_EQUAL(runas__resolve(bad, &ra, err, sizeof(err)), -EINVAL);
		CU_ASSERT_PTR_NULL(ra.groups);
	}
}

static void test_env(void)
{
	char *env[] = { "PATH=/bin", "HOME=/root", "USERX=1", "LOGNAME=root", NULL };
	struct runas ra;
	char err[256];
	int n = 0;

	CU_ASSERT_EQUAL_FATAL(runas__resolve("nobody", &ra, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(runas__env(&ra, env), 0);
	while (ra.envp[n])
		n++;
	CU_ASSERT_EQUAL(n, 5);
	CU_ASSERT_STRING_EQUAL(ra.envp[0], "PATH=/bin");
	CU_ASSERT_STRING_EQUAL(ra.envp[1], "USERX=1");
	CU_ASSERT_STRING_EQUAL(ra.envp[2], "HOME=/nonexistent");
	CU_ASSERT_STRING_EQUAL(ra.envp[3], "USER=nobody");
	CU_ASSERT_STRING_EQUAL(ra.envp[4], "LOGNAME=nobody");
	runas__free(&ra);

	/* No name: the environment as it is. */
	CU_ASSERT_EQUAL_FATAL(runas__resolve("4242:4242", &ra, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(runas__env(&ra, env), 0);
	CU_ASSERT_STRING_EQUAL(ra.envp[1], "HOME=/root");
	CU_ASSERT_PTR_NULL(ra.envp[4]);
	runas__free(&ra);
}

int register_runas_suite(void)
{
	CU_pSuite s = CU_add_suite("runas", NULL, NULL);

	if (!s || !CU_add_test(s, "resolve USER[:GROUP]", test_resolve) ||
	    !CU_add_test(s, "the command's environment", test_env))
		return -1;
	return 0;
}

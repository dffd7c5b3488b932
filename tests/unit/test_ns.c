// SPDX-License-Identifier: GPL-3.0-or-later
/* proc/ns and fileio__open_regular_in: pid namespaces, roots, opening inside a root. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/fileio.h"
#include "proc/ns.h"
#include "suites.h"

static void test_pidns_self(void)
{
	struct pidns ns;

	/* The tests run with a /proc of their own namespace. */
	CU_ASSERT_EQUAL_FATAL(pidns__self(&ns), 0);
	CU_ASSERT(ns.ino != 0);
	CU_ASSERT_EQUAL(ns.initial, ns.ino == 0xEFFFFFFCu);
}

static void test_inner_pid(void)
{
	CU_ASSERT_EQUAL(pidns__inner_pid(getpid()), getpid());
	CU_ASSERT_EQUAL(pidns__inner_pid(999999999), -ENOENT);
}

static void test_own_root(void)
{
	struct rootdir_id id;

	CU_ASSERT_EQUAL(rootdir__open(getpid(), &id), -EEXIST);
	CU_ASSERT(rootdir__open(999999999, &id) < 0);
}

/* A directory standing for another process's root: links in it, absolute or going up, must
 * lead to its own etc/x, never to ours. */
static void test_open_inside_root(void)
{
	static const char *const same[] = { "/etc/x", "etc/x", "/abs", "up", "/../../etc/x" };
	static const char *const made[] = { "abs", "up", "null", "etc/x", "etc" };
	char dir[] = "/tmp/profile-ns-XXXXXX", path[128], buf[16] = { 0 };
	struct stat st, inside;
	int root, fd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/etc", dir);
	CU_ASSERT_EQUAL_FATAL(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/etc/x", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, "inside", 6), 6);
	close(fd);
	CU_ASSERT_EQUAL_FATAL(stat(path, &inside), 0);
	snprintf(path, sizeof(path), "%s/abs", dir);
	CU_ASSERT_EQUAL(symlink("/etc/x", path), 0);
	snprintf(path, sizeof(path), "%s/up", dir);
	CU_ASSERT_EQUAL(symlink("../../../../../etc/x", path), 0);
	snprintf(path, sizeof(path), "%s/null", dir);
	CU_ASSERT_EQUAL(symlink("/dev/null", path), 0);
	root = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CU_ASSERT_FATAL(root >= 0);
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		fd = fileio__open_regular_in(root, same[i], 1 << 20, &st);
		CU_ASSERT(fd >= 0 && st.st_ino == inside.st_ino && st.st_dev == inside.st_dev);
		if (fd >= 0) {
			CU_ASSERT_EQUAL(pread(fd, buf, sizeof(buf) - 1, 0), 6);
			CU_ASSERT_STRING_EQUAL(buf, "inside");
			close(fd);
		}
	}
	/* Our /dev/null is not inside; nor is a missing file found in our root. */
	CU_ASSERT_EQUAL(fileio__open_regular_in(root, "/null", 1 << 20, &st), -ENOENT);
	CU_ASSERT_EQUAL(fileio__open_regular_in(root, "/etc/hostname", 1 << 20, &st), -ENOENT);
	/* No root: the path as it is. */
	fd = fileio__open_regular_in(-1, "/dev/null", 1 << 20, &st);
	CU_ASSERT_EQUAL(fd, -EINVAL);
	close(root);
	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, made[i]);
		CU_ASSERT_EQUAL(remove(path), 0);
	}
	CU_ASSERT_EQUAL(rmdir(dir), 0);
}

int register_ns_suite(void)
{
	CU_pSuite s = CU_add_suite("ns", NULL, NULL);

	if (!s || !CU_add_test(s, "our pid namespace", test_pidns_self) ||
	    !CU_add_test(s, "a pid in its own namespace", test_inner_pid) ||
	    !CU_add_test(s, "our own root is no other root", test_own_root) ||
	    !CU_add_test(s, "links stay inside a root", test_open_inside_root))
		return -1;
	return 0;
}

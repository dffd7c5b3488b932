// SPDX-License-Identifier: GPL-3.0-or-later
/* base/fileio: only regular files of a bounded size are opened; FIFOs, devices, directories
 * and links to them are refused without being opened, and nothing blocks. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/fileio.h"
#include "suites.h"

static char dir[] = "/tmp/profile-fileio-XXXXXX";

/* NAME in the test directory (two at a time). */
static const char *at(const char *name)
{
	static char path[2][128];
	static int i;

	i ^= 1;
	snprintf(path[i], sizeof(path[i]), "%s/%s", dir, name);
	return path[i];
}

static int setup(void)
{
	int fd;

	if (!mkdtemp(dir))
		return -1;
	fd = open(at("regular"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, "0123456789", 10) != 10)
		return -1;
	close(fd);
	if (mkfifo(at("fifo"), 0600) || symlink("/dev/zero", at("zero")) ||
	    symlink(at("fifo"), at("tofifo")) || symlink(at("regular"), at("toregular")) ||
	    mkdir(at("dir"), 0700))
		return -1;
	return 0;
}

static int teardown(void)
{
	static const char *const names[] = { "regular", "fifo", "zero", "tofifo", "toregular" };

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		unlink(at(names[i]));
	rmdir(at("dir"));
	rmdir(dir);
	return 0;
}

static void test_regular(void)
{
	struct stat st;
	int fd = fileio__open_regular(at("regular"), 10, &st);

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(st.st_size, 10);
	CU_ASSERT(fcntl(fd, F_GETFL) & O_NONBLOCK);
	CU_ASSERT_FALSE(fcntl(fd, F_GETFL) & O_PATH);
	CU_ASSERT(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	fd = fileio__open_regular(at("toregular"), 10, &st);
	CU_ASSERT(fd >= 0);
	close(fd);
	CU_ASSERT_EQUAL(fileio__open_regular(at("regular"), 9, &st), -EFBIG);
}

/* A FIFO without a writer would block an open for reading; a device's open may act. Neither
 * is opened: refused at once, also through a link. */
static void test_not_regular(void)
{
	struct stat st;
	int before = dup(0), after;

	close(before);	/* the lowest free descriptor: the same afterwards when none leaked */

	CU_ASSERT_EQUAL(fileio__open_regular(at("fifo"), 1 << 20, &st), -EINVAL);
	CU_ASSERT_EQUAL(fileio__open_regular(at("tofifo"), 1 << 20, &st), -EINVAL);
	CU_ASSERT_EQUAL(fileio__open_regular(at("zero"), 1 << 20, &st), -EINVAL);
	CU_ASSERT_EQUAL(fileio__open_regular("/dev/null", 1 << 20, &st), -EINVAL);
	CU_ASSERT_EQUAL(fileio__open_regular(at("dir"), 1 << 20, &st), -EISDIR);
	CU_ASSERT_EQUAL(fileio__open_regular(at("none"), 1 << 20, &st), -ENOENT);
	CU_ASSERT_PTR_NULL(fileio__fopen_regular(at("fifo"), 1 << 20));
	CU_ASSERT_EQUAL(errno, EINVAL);
	/* No descriptor left behind. */
	after = dup(0);
	CU_ASSERT_EQUAL(after, before);
	close(after);
}

int register_fileio_suite(void)
{
	CU_pSuite s = CU_add_suite("fileio", setup, teardown);

	if (!s || !CU_add_test(s, "regular files, bounded", test_regular) ||
	    !CU_add_test(s, "FIFOs, devices, directories refused unopened", test_not_regular))
		return -1;
	return 0;
}

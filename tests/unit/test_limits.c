// SPDX-License-Identifier: GPL-3.0-or-later
/* base/limits and base/mapguard: the memory budget, bounds counted, and a SIGBUS in a guarded
 * mapping costing only that mapping. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "base/limits.h"
#include "base/mapguard.h"
#include "suites.h"

static void test_budget(void)
{
	limits__reset();
	CU_ASSERT(limits__default_budget() > 0);
	CU_ASSERT(limits__default_budget() <= (1ull << 30));
	CU_ASSERT_EQUAL(limits__budget(), limits__default_budget());
	limits__set_budget(1000);
	CU_ASSERT(limits__reserve(600));
	CU_ASSERT_FALSE(limits__reserve(500));
	CU_ASSERT_EQUAL(limits__used(), 600);
	CU_ASSERT(limits__reserve(400));
	CU_ASSERT(limits__spent());
	CU_ASSERT_FALSE(limits__reserve(1));
	limits__charge(100);		/* taken already: counted past the budget */
	CU_ASSERT_EQUAL(limits__used(), 1100);
	CU_ASSERT_EQUAL(limits__peak(), 1100);
	limits__release(700);
	CU_ASSERT_EQUAL(limits__used(), 400);
	CU_ASSERT_FALSE(limits__spent());
	limits__release(1 << 20);
	CU_ASSERT_EQUAL(limits__used(), 0);
	CU_ASSERT_FALSE(limits__reserve(UINT64_MAX));
	limits__reset();
}

static void test_parse_size(void)
{
	static const struct { const char *s; uint64_t v; } ok[] = {
		{ "0", 0 }, { "4096", 4096 }, { "1K", 1024 }, { "512M", 512ull << 20 },
		{ "1G", 1ull << 30 }, { "2GiB", 2ull << 30 }, { "3mb", 3ull << 20 },
		{ "1T", 1ull << 40 },
	};
	static const char *const bad[] = { "", "-1", "1X", "1GG", "G", "1.5G", " 1",
					   "99999999999999999999", "17179869184G" };
	uint64_t v;

	for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++) {
		CU_ASSERT_EQUAL(limits__parse_size(ok[i].s, &v), 0);
		CU_ASSERT_EQUAL(v, ok[i].v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		CU_ASSERT_EQUAL(limits__parse_size(bad[i], &v), -EINVAL);
}

static void test_report(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	limits__reset();
	CU_ASSERT_EQUAL(limits__report(f, "profile"), 0);
	limits__hit(LIMIT_MAPS, 3);
	limits__hit(LIMIT_MAPS, 2);
	limits__hit(LIMIT_FILE_FAULTS, 1);
	CU_ASSERT_EQUAL(limits__count(LIMIT_MAPS), 5);
	CU_ASSERT_EQUAL(limits__report(f, "profile"), 2);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "profile: bound met: 5 mappings left out"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "profile: bound met: 1 files changed while read"));
	free(buf);
	limits__reset();
}

/* A file of two pages mapped privately, as a dso maps its file. */
static void *map_file(char *path, int *fd)
{
	static const char page[4096] = "ELF...";
	void *p;

	*fd = mkstemp(path);
	if (*fd < 0 || write(*fd, page, sizeof(page)) != sizeof(page) ||
	    write(*fd, page, sizeof(page)) != sizeof(page))
		return NULL;
	p = mmap(NULL, 2 * sizeof(page), PROT_READ | PROT_WRITE, MAP_PRIVATE, *fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void test_sigbus_guarded(void)
{
	char path[] = "/tmp/profile-mapguard-XXXXXX";
	volatile unsigned char *p;
	int fd, id;

	limits__reset();
	p = map_file(path, &fd);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	id = mapguard__add((void *)p, 8192);
	CU_ASSERT_FATAL(id >= 0);
	CU_ASSERT_EQUAL(p[0], 'E');
	CU_ASSERT_FALSE(mapguard__faulted(id));
	/* Another user truncates the file: the pages past its end are gone. */
	CU_ASSERT_EQUAL(ftruncate(fd, 0), 0);
	CU_ASSERT_EQUAL(p[4096 + 1], 0);	/* SIGBUS, handled: zeros */
	CU_ASSERT(mapguard__faulted(id));
	CU_ASSERT_EQUAL(p[0], 0);		/* all of the mapping, from then on */
	CU_ASSERT_EQUAL(limits__count(LIMIT_FILE_FAULTS), 1);
	mapguard__remove(id);
	munmap((void *)p, 8192);
	close(fd);
	unlink(path);
	CU_ASSERT_FALSE(mapguard__faulted(-1));
	limits__reset();
}

/* A SIGBUS outside every guarded mapping, or one sent, is as fatal as without the guard. */
static void test_sigbus_elsewhere(void)
{
	char path[] = "/tmp/profile-mapguard-XXXXXX";
	volatile unsigned char *p;
	struct rlimit no_core = { 0, 0 };
	int fd, status, id;
	pid_t child;

	p = map_file(path, &fd);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	id = mapguard__add((void *)p, 4096);	/* the first page only */
	CU_ASSERT_FATAL(id >= 0);
	CU_ASSERT_EQUAL(ftruncate(fd, 0), 0);
	child = fork();
	if (child == 0) {
		setrlimit(RLIMIT_CORE, &no_core);
		(void)p[4096];			/* the second page: not guarded */
		_exit(0);
	}
	CU_ASSERT_EQUAL(waitpid(child, &status, 0), child);
	CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS);
	child = fork();
	if (child == 0) {
		setrlimit(RLIMIT_CORE, &no_core);
		raise(SIGBUS);
		_exit(0);
	}
	CU_ASSERT_EQUAL(waitpid(child, &status, 0), child);
	CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS);
	mapguard__remove(id);
	munmap((void *)p, 8192);
	close(fd);
	unlink(path);
}

int register_limits_suite(void)
{
	CU_pSuite s = CU_add_suite("limits", NULL, NULL);

	if (!s || !CU_add_test(s, "the memory budget", test_budget) ||
	    !CU_add_test(s, "--max-memory sizes", test_parse_size) ||
	    !CU_add_test(s, "bounds met, reported", test_report) ||
	    !CU_add_test(s, "SIGBUS in a guarded mapping: zeros", test_sigbus_guarded) ||
	    !CU_add_test(s, "SIGBUS elsewhere: fatal", test_sigbus_elsewhere))
		return -1;
	return 0;
}

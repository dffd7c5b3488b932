// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>
#include "base/fileio.h"

#define CHUNK (64u << 10)
/* Found, not opened: a device's or FIFO's open is not called through an O_PATH descriptor
 * (a tape rewinds, a watchdog starts, a serial port waits for its carrier). */
#define FIND_FLAGS (O_PATH | O_CLOEXEC)
/* The regular file found, opened for reading. */
#define READ_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

/*
 * FD, an O_PATH descriptor just returned by an open (-1: errno says why not): when it is a
 * regular file of at most MAX_SIZE bytes (*ST), the same file opened for reading through
 * /proc/self/fd (the very inode: no path is resolved again). Returns that descriptor or a
 * negative errno; FD is closed either way.
 */
static int check_regular(int fd, uint64_t max_size, struct stat *st)
{
	char path[32];
	struct stat again;
	int err, rfd;

	if (fd < 0)
		return -errno;
	if (fstat(fd, st)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st->st_mode)) {
		err = S_ISDIR(st->st_mode) ? -EISDIR : S_ISLNK(st->st_mode) ? -ELOOP : -EINVAL;
		goto out;
	}
	if ((uint64_t)st->st_size > max_size) {
		err = -EFBIG;
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rfd = open(path, READ_FLAGS);
	if (rfd < 0) {
		err = -errno;
		goto out;
	}
	if (fstat(rfd, &again) || again.st_dev != st->st_dev || again.st_ino != st->st_ino) {
		close(rfd);
		err = -ESTALE;
		goto out;
	}
	*st = again;
	err = rfd;
out:
	close(fd);
	return err;
}

int fileio__check_regular(int fd, uint64_t max_size, struct stat *st)
{
	int err;

	if (fstat(fd, st)) {
		err = -errno;
		goto fail;
	}
	if (!S_ISREG(st->st_mode)) {
		err = S_ISDIR(st->st_mode) ? -EISDIR : -EINVAL;
		goto fail;
	}
	if ((uint64_t)st->st_size > max_size) {
		err = -EFBIG;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return err;
}

int fileio__open_regular(const char *path, uint64_t max_size, struct stat *st)
{
	return check_regular(open(path, FIND_FLAGS), max_size, st);
}

int fileio__open_regular_in(int root_fd, const char *path, uint64_t max_size, struct stat *st)
{
	return fileio__open_regular_how(root_fd, path, max_size, 0, st);
}

int fileio__open_regular_how(int root_fd, const char *path, uint64_t max_size, unsigned int how,
			     struct stat *st)
{
	/* An O_PATH descriptor of a link itself with FILEIO_NOFOLLOW: refused as -ELOOP. */
	int flags = FIND_FLAGS | (how & FILEIO_NOFOLLOW ? O_NOFOLLOW : 0);
	struct open_how oh = {
		.flags = (uint64_t)flags,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd;

	if (root_fd < 0)
		return check_regular(open(path, flags), max_size, st);
	fd = (int)syscall(SYS_openat2, root_fd, path, &oh, sizeof(oh));
	if (fd < 0 && (errno == ENOSYS || errno == EPERM)) {	/* old kernel, or seccomp */
		while (*path == '/')
			path++;
		fd = openat(root_fd, path, flags | O_NOFOLLOW);
	}
	return check_regular(fd, max_size, st);
}

/* A stream over FD (from fileio__open_regular*), or NULL with errno set and FD closed. */
static FILE *stream(int fd)
{
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	/* Reads block again: a regular file never waits, and stdio retries nothing. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	f = fdopen(fd, "r");
	if (!f) {
		int err = errno;

		close(fd);
		errno = err;
	}
	return f;
}

FILE *fileio__fopen_regular(const char *path, uint64_t max_size)
{
	struct stat st;

	return stream(fileio__open_regular(path, max_size, &st));
}

FILE *fileio__fopen_regular_in(int root_fd, const char *path, uint64_t max_size)
{
	struct stat st;

	return stream(fileio__open_regular_in(root_fd, path, max_size, &st));
}

int fileio__each_chunk(int fd, uint64_t size, int (*fn)(void *ctx, const unsigned char *buf,
							size_t len), void *ctx)
{
	unsigned char *buf = malloc(CHUNK);
	uint64_t off = 0;
	ssize_t r;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (!err && off < size) {
		r = pread(fd, buf, CHUNK, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? -errno : -EIO;
			break;
		}
		err = fn(ctx, buf, (size_t)r);
		off += (uint64_t)r;
	}
	free(buf);
	return err;
}

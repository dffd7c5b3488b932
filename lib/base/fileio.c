// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include "base/fileio.h"

#define CHUNK (64u << 10)

int fileio__open_regular(const char *path, uint64_t max_size, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	int err;

	if (fd < 0)
		return -errno;
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

FILE *fileio__fopen_regular(const char *path, uint64_t max_size)
{
	struct stat st;
	int fd = fileio__open_regular(path, max_size, &st);
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

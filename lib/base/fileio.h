/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * fileio: opening files that someone else wrote, safely: read only, never blocking (a FIFO
 * or a device in place of a library must not hang the profiler), not becoming a controlling
 * terminal, closed on exec, and only regular files of a bounded size. A path is first
 * looked up without opening what it names (O_PATH), and opened for reading only when that
 * is a regular file: the open of a device or a FIFO (which may block, or act: a watchdog
 * starts, a tape rewinds) is never called.
 */
#ifndef BASE_FILEIO_H
#define BASE_FILEIO_H

#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

/*
 * Open PATH read only (O_NONBLOCK, O_NOCTTY, O_CLOEXEC) and check it is a regular file of at
 * most MAX_SIZE bytes. Returns the descriptor (the caller closes it) with *ST filled, or a
 * negative errno: the open's error, -EISDIR for a directory, -EINVAL for another kind of
 * file (FIFO, device, socket), -EFBIG when larger than MAX_SIZE, -ESTALE when the file
 * changed between its lookup and its open.
 */
int fileio__open_regular(const char *path, uint64_t max_size, struct stat *st);

/* fileio__open_regular as a stdio stream ("r"); NULL with errno set (the same errors). */
FILE *fileio__fopen_regular(const char *path, uint64_t max_size);

/*
 * fileio__open_regular of PATH inside the directory ROOT_FD as if it were "/" (another
 * process's root, /proc/PID/root): symbolic links, absolute or relative, and ".." stay
 * inside it, and /proc's magic links are refused (openat2 with RESOLVE_IN_ROOT). Where
 * openat2 is not available, PATH is opened relative to ROOT_FD without following a link in
 * its last component. ROOT_FD < 0: fileio__open_regular(PATH). The same returns and errors.
 */
int fileio__open_regular_in(int root_fd, const char *path, uint64_t max_size, struct stat *st);

/* How fileio__open_regular_how opens: also refuse a symbolic link as the last component
 * (O_NOFOLLOW), for paths in directories that other users write (/tmp, next to their
 * programs), where a link could point the profiler at a file they cannot read. */
#define FILEIO_NOFOLLOW	1

/*
 * fileio__open_regular_in with HOW (FILEIO_* flags). The same returns and errors, and -ELOOP
 * for a link refused by FILEIO_NOFOLLOW.
 */
int fileio__open_regular_how(int root_fd, const char *path, uint64_t max_size, unsigned int how,
			     struct stat *st);

/*
 * FD (a descriptor from elsewhere: another process's, or one handed over a socket): a
 * regular file of at most MAX_SIZE bytes, *ST filled? Returns FD, or a negative errno as
 * fileio__open_regular's with FD closed.
 */
int fileio__check_regular(int fd, uint64_t max_size, struct stat *st);

/* fileio__open_regular_in as a stdio stream ("r"); NULL with errno set. */
FILE *fileio__fopen_regular_in(int root_fd, const char *path, uint64_t max_size);

/* Read all of FD from offset 0 up to SIZE bytes, calling FN(CTX, BUF, LEN) for each chunk.
 * Returns 0, the first non-zero return of FN, or a negative errno (-EIO when the file is
 * shorter than SIZE). */
int fileio__each_chunk(int fd, uint64_t size, int (*fn)(void *ctx, const unsigned char *buf,
							size_t len), void *ctx);

#endif

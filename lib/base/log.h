/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Messages on stderr, gated by a verbosity level. */
#ifndef LOG_H
#define LOG_H

#include <stddef.h>
#include <stdio.h>

enum log_level { LOG_WARN = 0, LOG_INFO = 1, LOG_DEBUG = 2 };

/* Messages at a level above this are dropped. Default LOG_WARN. */
extern int log_level;

/* printf-style message to stderr, prefixed with "profile: " and followed by a newline
 * (one at the end of the message is not repeated); escaped as log_escape does. */
void log_print(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The LEN bytes at S to F, safe for a terminal: control characters (C0, DEL, C1 also as
 * UTF-8) and bytes that are not UTF-8 as \xHH, a backslash doubled, the rest (printable
 * ASCII, valid UTF-8) as is. Paths and names from files and processes go through it.
 */
void log_escape(FILE *f, const char *s, size_t len);

/* The string S escaped so into BUF (LEN bytes, NUL-terminated, cut before a character that
 * does not fit whole). Returns the length written. */
size_t log_escape_buf(const char *s, char *buf, size_t len);

#define pr_warn(...)  log_print(LOG_WARN, __VA_ARGS__)
#define pr_info(...)  log_print(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_print(LOG_DEBUG, __VA_ARGS__)

#endif

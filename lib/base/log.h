/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Messages on stderr, gated by a verbosity level. */
#ifndef LOG_H
#define LOG_H

enum log_level { LOG_WARN = 0, LOG_INFO = 1, LOG_DEBUG = 2 };

/* Messages at a level above this are dropped. Default LOG_WARN. */
extern int log_level;

/* printf-style message to stderr, prefixed with "profile: " and followed by a newline
 * unless the format ends with one. */
void log_print(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define pr_warn(...)  log_print(LOG_WARN, __VA_ARGS__)
#define pr_info(...)  log_print(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_print(LOG_DEBUG, __VA_ARGS__)

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "base/log.h"

int log_level = LOG_WARN;

void log_print(int level, const char *fmt, ...)
{
	va_list ap;
	size_t len = strlen(fmt);

	if (level > log_level)
		return;
	fputs("profile: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (len == 0 || fmt[len - 1] != '\n')
		fputc('\n', stderr);
}

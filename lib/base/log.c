// SPDX-License-Identifier: GPL-3.0-or-later
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/log.h"

int log_level = LOG_WARN;

/* The length of the valid UTF-8 sequence of 2-4 bytes at P (of LEFT bytes), or 0 when it is
 * not one. */
static size_t utf8_len(const unsigned char *p, size_t left)
{
	size_t n = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;

	if (p[0] < 0xc2 || p[0] > 0xf4 || n > left)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* Overlong forms, surrogates, above U+10FFFF. */
	if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
	    (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
		return 0;
	return n;
}

void log_escape(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		size_t n = *p < 0x80 ? 1 : utf8_len(p, end - p);

		/* C0 and C1 controls and DEL (terminal escapes), bytes that are not UTF-8. */
		if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f)) ||
		    (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)) {
			n = n ? n : 1;
			for (size_t i = 0; i < n; i++)
				fprintf(f, "\\x%02x", p[i]);
		} else if (*p == '\\') {
			fputs("\\\\", f);
		} else {
			fwrite(p, 1, n, f);
		}
		p += n;
	}
}

void log_print(int level, const char *fmt, ...)
{
	char buf[1024], *msg = buf;
	va_list ap;
	int n;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf)) {
		msg = malloc(n + 1);
		if (!msg) {
			msg = buf;
			n = sizeof(buf) - 1;
		} else {
			va_start(ap, fmt);
			vsnprintf(msg, n + 1, fmt, ap);
			va_end(ap);
		}
	}
	if (n > 0 && msg[n - 1] == '\n')
		n--;
	fputs("profile: ", stderr);
	log_escape(stderr, msg, n);
	fputc('\n', stderr);
	if (msg != buf)
		free(msg);
}

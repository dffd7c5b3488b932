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

/* The next character of the LEFT bytes at P, safe for a terminal, into OUT (room for 16);
 * returns the bytes of P it took, *N the bytes it made. */
static size_t escape_one(const unsigned char *p, size_t left, char *out, size_t *n)
{
	static const char hex[] = "0123456789abcdef";
	size_t len = *p < 0x80 ? 1 : utf8_len(p, left);

	*n = 0;
	/* C0 and C1 controls and DEL (terminal escapes), bytes that are not UTF-8. */
	if (len == 0 || (len == 1 && (*p < 0x20 || *p == 0x7f)) ||
	    (len == 2 && p[0] == 0xc2 && p[1] < 0xa0)) {
		len = len ? len : 1;
		for (size_t i = 0; i < len; i++) {
			out[(*n)++] = '\\';
			out[(*n)++] = 'x';
			out[(*n)++] = hex[p[i] >> 4];
			out[(*n)++] = hex[p[i] & 15];
		}
	} else if (*p == '\\') {
		out[(*n)++] = '\\';
		out[(*n)++] = '\\';
	} else {
		memcpy(out, p, len);
		*n = len;
	}
	return len;
}

void log_escape(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	char out[16];
	size_t n;

	while (p < end) {
		p += escape_one(p, end - p, out, &n);
		fwrite(out, 1, n, f);
	}
}

size_t log_escape_buf(const char *s, char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
	size_t o = 0, n, took;
	char out[16];

	if (!len)
		return 0;
	while (p < end) {
		took = escape_one(p, end - p, out, &n);
		if (o + n >= len)
			break;
		memcpy(buf + o, out, n);
		o += n;
		p += took;
	}
	buf[o] = '\0';
	return o;
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

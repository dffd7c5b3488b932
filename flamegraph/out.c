// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * flamegraph output: a buffered writer for the SVG (bytes, numbers, counts) and text made
 * safe for it: UTF-8 checked and repaired, XML-escaped and bounded, or a JavaScript string.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "flamegraph.h"
#include "out.h"

/* --- output buffer --------------------------------------------------------------------- */

void out_flush(struct out *o)
{
	if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len && !o->err)
		o->err = -(errno ? errno : EIO);
	o->len = 0;
}

void out_mem(struct out *o, const char *s, size_t n)
{
	if (o->len + n > sizeof(o->buf)) {
		out_flush(o);
		if (n > sizeof(o->buf)) {
			if (fwrite(s, 1, n, o->f) != n && !o->err)
				o->err = -(errno ? errno : EIO);
			return;
		}
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

void out_str(struct out *o, const char *s)
{
	out_mem(o, s, strlen(s));
}

void out_fmt(struct out *o, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		out_mem(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

void out_u64(struct out *o, uint64_t v)
{
	char tmp[24];
	int i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	out_mem(o, tmp + i, sizeof(tmp) - i);
}

/* X rounded to one decimal, without the ".0" of whole numbers. */
void out_tenths(struct out *o, double x)
{
	long long t = llround(x * 10);

	if (t < 0) {
		out_mem(o, "-", 1);
		t = -t;
	}
	out_u64(o, (uint64_t)t / 10);
	if (t % 10) {
		char d[2] = { '.', (char)('0' + t % 10) };

		out_mem(o, d, 2);
	}
}

/* A count as flamegraph.pl prints it: whole numbers with thousands separators. */
void out_count(struct out *o, double v)
{
	char tmp[64];
	int n, lead;

	if (fabs(v - nearbyint(v)) > 1e-9 || v >= 1e18) {
		out_fmt(o, "%.2f", v);
		return;
	}
	n = snprintf(tmp, sizeof(tmp), "%.0f", v);
	lead = n % 3 ? n % 3 : 3;
	out_mem(o, tmp, lead);
	for (int i = lead; i < n; i += 3) {
		out_mem(o, ",", 1);
		out_mem(o, tmp + i, 3);
	}
}

/* --- text: UTF-8 checked, XML-escaped, bounded ----------------------------------------- */

/*
 * The code point at S[*I] (LEN bytes), advancing *I. Invalid or overlong sequences,
 * surrogates and characters XML does not allow come back as U+FFFD, one byte consumed;
 * control characters as '?'.
 */
static uint32_t next_cp(const unsigned char *s, size_t len, size_t *i)
{
	unsigned char c = s[*i];
	uint32_t cp, min;
	size_t n;

	if (c < 0x80) {
		(*i)++;
		return c < 0x20 && c != '\t' ? '?' : c;
	}
	if (c >= 0xc2 && c <= 0xdf)
		n = 1, cp = c & 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		n = 2, cp = c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 3, cp = c & 0x07, min = 0x10000;
	else
		goto bad;
	if (*i + n >= len)
		goto bad;
	for (size_t k = 1; k <= n; k++) {
		if ((s[*i + k] & 0xc0) != 0x80)
			goto bad;
		cp = cp << 6 | (s[*i + k] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe ||
	    cp == 0xffff)
		goto bad;
	*i += n + 1;
	return cp;
bad:
	(*i)++;
	return 0xfffd;
}

static void out_cp(struct out *o, uint32_t cp)
{
	char b[4];

	switch (cp) {
	case '&': out_mem(o, "&amp;", 5); return;
	case '<': out_mem(o, "&lt;", 4); return;
	case '>': out_mem(o, "&gt;", 4); return;
	case '"': out_mem(o, "&quot;", 6); return;
	case '\'': out_mem(o, "&#39;", 5); return;
	}
	if (cp < 0x80) {
		b[0] = (char)cp;
		out_mem(o, b, 1);
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		out_mem(o, b, 2);
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		out_mem(o, b, 3);
	} else {
		b[0] = (char)(0xf0 | cp >> 18);
		b[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		b[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		out_mem(o, b, 4);
	}
}

/* Whether S is plain ASCII that needs no escaping (the common case, written as is). */
static bool plain(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c < 0x20 || c >= 0x7f || c == '&' || c == '<' || c == '>' || c == '"' ||
		    c == '\'')
			return false;
	}
	return true;
}

/*
 * S (LEN bytes) as XML text: at most MAX characters, and when S has more, its first
 * MAX - KEEP characters followed by MORE ("..." or "..").
 */
void out_text(struct out *o, const char *s, size_t len, size_t max, size_t keep,
	      const char *more)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, n = 0;

	if (len <= max && plain(s, len)) {
		out_mem(o, s, len);
		return;
	}
	/* count up to MAX + 1 characters to know whether it fits */
	while (i < len && n <= max) {
		next_cp(u, len, &i);
		n++;
	}
	if (n <= max) {
		for (i = 0; i < len;)
			out_cp(o, next_cp(u, len, &i));
		return;
	}
	for (i = 0, n = 0; n + keep < max; n++)
		out_cp(o, next_cp(u, len, &i));
	out_str(o, more);
}

void out_text_str(struct out *o, const char *s)
{
	out_text(o, s, strlen(s), FG_NAME_MAX, 3, "...");
}

/* S as the contents of a JavaScript string literal inside CDATA: only [A-Za-z0-9 ] as is. */
void out_js_str(struct out *o, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strlen(s);

	for (size_t i = 0; i < len;) {
		uint32_t cp = next_cp(u, len, &i);

		if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
		    (cp >= '0' && cp <= '9') || cp == ' ') {
			char c = (char)cp;

			out_mem(o, &c, 1);
		} else if (cp < 0x10000) {
			out_fmt(o, "\\u%04x", cp);
		} else {
			cp -= 0x10000;
			out_fmt(o, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
		}
	}
}

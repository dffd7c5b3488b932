/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * flamegraph output (out.c): a buffered writer for the SVG, and text made safe for it.
 * Private to flamegraph/. Every call appends to O's buffer and writes it out when full; the
 * first write error is kept in O->err (a negative errno) and later output is still tried,
 * so a caller checks O->err once, after out_flush. Strings are borrowed, never kept.
 */
#ifndef FLAMEGRAPH_OUT_H
#define FLAMEGRAPH_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Zero it (calloc: the buffer is 64 KiB, too large for the stack), then set F. */
struct out {
	FILE *f;
	char buf[1 << 16];
	size_t len;
	int err;
};

/* Write the buffered bytes to O->f and empty the buffer. Does not fflush O->f. */
void out_flush(struct out *o);

/* N bytes of S as they are (no escaping); S may hold NULs. */
void out_mem(struct out *o, const char *s, size_t n);

/* The NUL-terminated S as it is. */
void out_str(struct out *o, const char *s);

/* printf-style, at most 511 bytes (longer output is cut); no escaping. */
void out_fmt(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* V in decimal. */
void out_u64(struct out *o, uint64_t v);

/* X rounded to one decimal, without the ".0" of whole numbers: 12, 12.5, -0.3. */
void out_tenths(struct out *o, double x);

/* A count as flamegraph.pl prints it: 1,234,567; fractions and huge values as %.2f. */
void out_count(struct out *o, double v);

/*
 * S (LEN bytes, any bytes) as XML text: invalid UTF-8 and characters XML does not allow
 * become U+FFFD, control characters '?', & < > " ' entities. At most MAX characters; when S
 * has more, its first MAX - KEEP characters followed by MORE ("..." or "..", KEEP long).
 */
void out_text(struct out *o, const char *s, size_t len, size_t max, size_t keep,
	      const char *more);

/* The NUL-terminated S as out_text, bounded to FG_NAME_MAX characters with "...". */
void out_text_str(struct out *o, const char *s);

/*
 * The NUL-terminated S as the contents of a JavaScript string literal inside CDATA: only
 * [A-Za-z0-9 ] as they are, everything else \uXXXX (surrogate pairs above U+FFFF).
 */
void out_js_str(struct out *o, const char *s);

#endif

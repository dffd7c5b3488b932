// SPDX-License-Identifier: GPL-3.0-or-later
/* folded_read: the folded-stack parser (flamegraph.pl's input format). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "output/folded_read.h"

#define CHUNK (64u << 10)

struct folded_reader {
	FILE *in;
	bool own;		/* opened by us: close on free */
	char *name;
	char *buf;		/* input chunk */
	size_t pos, end;
	bool eof;
	char *line;		/* current line */
	size_t cap;
	size_t lineno;
	char err[512];
};

/* --- one line -------------------------------------------------------------------------- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * The count ending at END (exclusive) in S: digits, optionally '.' and more digits, preceded
 * by a blank or by the start of S. Returns the index where the count starts, or -1.
 */
static long count_start(const char *s, size_t end, double *val)
{
	size_t i = end, dot = 0;
	bool digits = false;
	char tmp[64];

	while (i > 0 && ((s[i - 1] >= '0' && s[i - 1] <= '9') || s[i - 1] == '.')) {
		if (s[i - 1] == '.')
			dot++;
		i--;
	}
	if (i == end || dot > 1 || s[i] == '.')
		return -1;
	for (size_t j = i; j < end; j++)
		digits |= s[j] >= '0' && s[j] <= '9';
	if (!digits || end - i >= sizeof(tmp))
		return -1;
	memcpy(tmp, s + i, end - i);
	tmp[end - i] = '\0';
	*val = strtod(tmp, NULL);
	if (!isfinite(*val))
		return -1;
	return (long)i;
}

static size_t rtrim(const char *s, size_t len)
{
	while (len > 0 && is_blank(s[len - 1]))
		len--;
	return len;
}

int folded__parse_line(const char *line, size_t len, struct folded_rec *rec)
{
	size_t i = 0, end;
	long at;
	double c1, c2;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	while (i < len && is_blank(line[i]))
		i++;
	if (i == len || line[i] == '#')
		return 0;
	end = rtrim(line, len);
	at = count_start(line, end, &c2);
	if (at <= 0 || !is_blank(line[at - 1]))
		return -EINVAL;
	end = rtrim(line, (size_t)at);
	rec->diff = false;
	rec->count = rec->count2 = c2;
	at = end > 0 ? count_start(line, end, &c1) : -1;
	if (at > 0 && is_blank(line[at - 1])) {
		rec->diff = true;
		rec->count = c1;
		end = rtrim(line, (size_t)at);
	}
	rec->stack = line;
	rec->len = end;
	return 1;
}

/* --- the reader ------------------------------------------------------------------------ */

struct folded_reader *folded_reader__new(FILE *in, const char *name)
{
	struct folded_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->in = in;
	r->name = strdup(name);
	r->buf = malloc(CHUNK);
	if (!r->name || !r->buf) {
		folded_reader__free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

struct folded_reader *folded_reader__open(const char *path)
{
	struct folded_reader *r;
	FILE *in;
	int err;

	if (!strcmp(path, "-"))
		return folded_reader__new(stdin, "<stdin>");
	in = fopen(path, "r");
	if (!in)
		return NULL;
	r = folded_reader__new(in, path);
	if (!r) {
		err = errno;
		fclose(in);
		errno = err;
		return NULL;
	}
	r->own = true;
	return r;
}

void folded_reader__free(struct folded_reader *r)
{
	if (!r)
		return;
	if (r->own && r->in)
		fclose(r->in);
	free(r->name);
	free(r->buf);
	free(r->line);
	free(r);
}

const char *folded_reader__error(const struct folded_reader *r)
{
	return r->err;
}

/* Append N bytes to the line; -E2BIG past FOLDED_LINE_MAX. */
static int line_append(struct folded_reader *r, size_t *len, const char *p, size_t n)
{
	if (*len + n + 1 > FOLDED_LINE_MAX)
		return -E2BIG;
	if (*len + n + 1 > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		char *line;

		while (cap < *len + n + 1)
			cap *= 2;
		line = realloc(r->line, cap);
		if (!line)
			return -ENOMEM;
		r->line = line;
		r->cap = cap;
	}
	memcpy(r->line + *len, p, n);
	*len += n;
	r->line[*len] = '\0';
	return 0;
}

/* Read one line without its newline. Returns 1, 0 at the end, or a negative errno. */
static int read_line(struct folded_reader *r, size_t *len)
{
	bool any = false;
	int err;

	*len = 0;
	for (;;) {
		char *nl;
		size_t n;

		if (r->pos == r->end) {
			if (r->eof)
				return any ? 1 : 0;
			r->pos = 0;
			r->end = fread(r->buf, 1, CHUNK, r->in);
			if (r->end == 0) {
				if (ferror(r->in))
					return -(errno ? errno : EIO);
				r->eof = true;
				continue;
			}
		}
		any = true;
		nl = memchr(r->buf + r->pos, '\n', r->end - r->pos);
		n = (nl ? (size_t)(nl - r->buf) : r->end) - r->pos;
		err = line_append(r, len, r->buf + r->pos, n);
		if (err)
			return err;
		r->pos += n;
		if (nl) {
			r->pos++;
			return 1;
		}
	}
}

/* A short, printable excerpt of the line for error messages. */
static void excerpt(char *dst, size_t size, const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len && n + 4 < size; i++) {
		unsigned char c = s[i];

		dst[n++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (n + 4 >= size)
		memcpy(dst + n, "...", 3), n += 3;
	dst[n] = '\0';
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Whether LINE (LEN bytes) looks like perf script's output: a frame ("\t  7f3a2c1b4e10
 * func+0x12 (/lib/x.so)") or a sample's header ("comm 1234 [001] 12.345: cpu-clock:"). */
static bool perf_script_line(const char *s, size_t len)
{
	size_t i = 0, h = 0;

	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i > 0) {
		while (i + h < len && is_hex(s[i + h]))
			h++;
		if (h >= 4 && i + h < len && s[i + h] == ' ')
			return true;
	}
	for (i = 0; i + 3 < len; i++) {
		if (s[i] == ' ' && s[i + 1] == '[' && s[i + 2] >= '0' && s[i + 2] <= '9') {
			size_t j = i + 2;

			while (j < len && s[j] >= '0' && s[j] <= '9')
				j++;
			if (j + 1 < len && s[j] == ']' && memchr(s + j, ':', len - j))
				return true;
		}
	}
	return false;
}

int folded_reader__next(struct folded_reader *r, struct folded_rec *rec)
{
	char what[64];
	size_t len;
	int ret;

	for (;;) {
		ret = read_line(r, &len);
		if (ret == 0)
			return 0;
		r->lineno++;
		if (ret == -E2BIG) {
			snprintf(r->err, sizeof(r->err), "%s:%zu: line longer than %u MiB",
				 r->name, r->lineno, FOLDED_LINE_MAX >> 20);
			return ret;
		}
		if (ret < 0) {
			snprintf(r->err, sizeof(r->err), "%s:%zu: cannot read: %s", r->name,
				 r->lineno, strerror(-ret));
			return ret;
		}
		if (memchr(r->line, '\0', len)) {
			if (r->lineno == 1 && len >= 8 && !memcmp(r->line, "PERFILE", 7))
				snprintf(r->err, sizeof(r->err), "%s is a perf.data file, not folded "
					 "stacks: fold it first (perf script -i %s | "
					 "stackcollapse-perf.pl)", r->name, r->name);
			else
				snprintf(r->err, sizeof(r->err), "%s:%zu: NUL byte in the line: not "
					 "a text file of folded stacks", r->name, r->lineno);
			return -EINVAL;
		}
		ret = folded__parse_line(r->line, len, rec);
		if (ret == 0)
			continue;
		if (ret < 0) {
			excerpt(what, sizeof(what), r->line, len);
			if (perf_script_line(r->line, len))
				snprintf(r->err, sizeof(r->err), "%s:%zu: this is perf script's "
					 "output, not folded stacks: fold it first (perf script | "
					 "stackcollapse-perf.pl), found '%s'", r->name, r->lineno, what);
			else
				snprintf(r->err, sizeof(r->err), "%s:%zu: expected 'STACK COUNT' (a "
					 "count after the last blank), found '%s'", r->name,
					 r->lineno, what);
			return ret;
		}
		rec->lineno = r->lineno;
		return 1;
	}
}

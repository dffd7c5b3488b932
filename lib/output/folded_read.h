/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * folded_read: read folded stacks as flamegraph.pl reads them.
 *
 *   frame;frame;...;frame COUNT          one stack, root first
 *   frame;frame;...;frame COUNT1 COUNT2  differential: two profiles (width from COUNT2,
 *                                        colour from COUNT2 - COUNT1, as flamegraph.pl)
 *
 * Any run of spaces or tabs separates the stack from its count(s); counts are decimal,
 * integer or fractional ("12", "0.5", "3."). Blank lines and lines whose first non-blank
 * character is '#' are skipped; a trailing CR is ignored. Anything else is an error that
 * names the file and line.
 */
#ifndef FOLDED_READ_H
#define FOLDED_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Lines longer than this are an error (a 20,000-character frame name is far below it). */
#define FOLDED_LINE_MAX (64u << 20)

/* One stack as read. STACK points into the reader's buffer: valid until the next call. */
struct folded_rec {
	const char *stack;	/* ';'-joined frames, not NUL-terminated, may be empty */
	size_t len;		/* bytes of STACK */
	double count;		/* the only count, or the first of a differential line */
	double count2;		/* the second count of a differential line, else == count */
	bool diff;		/* the line had two counts */
	size_t lineno;		/* 1-based line number in the input */
};

struct folded_reader;

/*
 * A reader of the file at PATH ("-" is stdin). Returns NULL with errno set when the file
 * cannot be opened. Free with folded_reader__free (which closes the file, not stdin).
 */
struct folded_reader *folded_reader__open(const char *path);

/*
 * A reader of the open stream IN, called NAME in error messages (e.g. "<stdin>"). The stream
 * stays the caller's: folded_reader__free does not close it. NULL on ENOMEM.
 */
struct folded_reader *folded_reader__new(FILE *in, const char *name);

/* Free the reader, closing the file it opened (never a stream it was given). NULL is fine. */
void folded_reader__free(struct folded_reader *r);

/*
 * Read the next stack into *REC. Returns 1 when a stack was read, 0 at the end of the input,
 * or a negative errno: -EINVAL for a malformed line, -E2BIG for a line over FOLDED_LINE_MAX,
 * -ENOMEM, or the read error. After an error, folded_reader__error gives one sentence
 * naming the file and line ("app.folded:12: expected 'STACK COUNT', found ...").
 */
int folded_reader__next(struct folded_reader *r, struct folded_rec *rec);

/* The message of the last error ("" if none); owned by the reader. */
const char *folded_reader__error(const struct folded_reader *r);

/*
 * Parse one line (LINE, LEN bytes, no newline) into *REC (STACK points into LINE). Returns 1
 * for a stack, 0 for a blank or comment line, -EINVAL when malformed. For tests and for
 * callers with their own line source.
 */
int folded__parse_line(const char *line, size_t len, struct folded_rec *rec);

#endif

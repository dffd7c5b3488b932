// SPDX-License-Identifier: GPL-3.0-or-later
/* profile: the profiles `profile flamegraph` and `profile report` read (inputs.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "output/folded.h"
#include "output/folded_read.h"
#include "output/pprof_read.h"
#include "inputs.h"

bool input_is_pprof(const char *path)
{
	size_t n = strlen(path);
	unsigned char head[2];
	bool gz = false;
	FILE *f;

	if ((n > 3 && !strcmp(path + n - 3, ".pb")) || (n > 6 && !strcmp(path + n - 6, ".pb.gz")) ||
	    (n > 6 && !strcmp(path + n - 6, ".pprof")))
		return true;
	if (!strcmp(path, "-"))
		return false;
	f = fopen(path, "re");
	if (f) {
		gz = fread(head, 1, 2, f) == 2 && pprof__is_gzip(head, 2);
		fclose(f);
	}
	return gz;
}

int input_read_pprof(const char *who, const char *path, struct folded *folded,
		     struct pprof_info *info)
{
	FILE *f = fopen(path, "re");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0, n;
	char err[256] = "";
	int e = 0;

	if (!f) {
		fprintf(stderr, "%s: cannot read %s: %s.\n", who, path, strerror(errno));
		return 1;
	}
	do {
		if (len == cap) {
			unsigned char *p;

			cap = cap ? 2 * cap : 1 << 16;
			p = cap <= PPROF_READ_MAX ? realloc(buf, cap) : NULL;
			if (!p) {
				fprintf(stderr, "%s: %s: too large or out of memory.\n", who, path);
				e = 1;
				goto out;
			}
			buf = p;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	if (ferror(f)) {
		fprintf(stderr, "%s: cannot read %s: %s.\n", who, path, strerror(errno));
		e = 1;
	} else if (pprof__read(buf, len, folded, err, sizeof(err), info)) {
		fprintf(stderr, "%s: %s: %s.\n", who, path, err);
		e = 1;
	}
out:
	fclose(f);
	free(buf);
	return e;
}

int input_read_folded(const char *who, const char *path, struct folded *folded)
{
	struct folded_reader *r = folded_reader__open(path);
	struct folded_rec rec;
	char *stack = NULL;
	size_t cap = 0;
	int e;

	if (!r) {
		fprintf(stderr, "%s: cannot read %s: %s.\n", who, path, strerror(errno));
		return 1;
	}
	while ((e = folded_reader__next(r, &rec)) > 0) {
		/* A differential line: the second profile's count. */
		double c = rec.diff ? rec.count2 : rec.count;

		/* Whole counts as a double holds them exactly; a sum of them fits 64 bits. */
		if (!(c < 9007199254740992.0)) {
			fprintf(stderr, "%s: %s:%zu: a count over 2^53 (%g).\n", who, path,
				rec.lineno, c);
			e = -ERANGE;
			break;
		}

		if (rec.len + 1 > cap) {
			char *p = realloc(stack, rec.len + 1);

			if (!p) {
				e = -ENOMEM;
				break;
			}
			stack = p;
			cap = rec.len + 1;
		}
		memcpy(stack, rec.stack, rec.len);
		stack[rec.len] = '\0';
		if (c >= 0.5 && folded__add(folded, stack, (uint64_t)(c + 0.5))) {
			e = -ENOMEM;
			break;
		}
	}
	if (e < 0 && e != -ERANGE) {
		if (*folded_reader__error(r))
			fprintf(stderr, "%s: %s.\n", who, folded_reader__error(r));
		else
			fprintf(stderr, "%s: %s: %s.\n", who, path, strerror(-e));
	}
	free(stack);
	folded_reader__free(r);
	return e < 0;
}

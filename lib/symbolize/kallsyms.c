// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base/bsearch.h"
#include "base/grow.h"
#include "symbolize/kallsyms.h"

#define KSYM_NAME_MAX 255

struct ksym {
	uint64_t addr;
	const char *name;
	const char *module;	/* NULL for the kernel image */
};

struct ksyms {
	struct ksym *syms;
	size_t nr, cap;
	/* Names and module names live in chunks of this string arena. */
	char **chunks;
	size_t nr_chunks;
	size_t chunk_used, chunk_size;
	const char *last_module;
};

#define CHUNK_SIZE (256 * 1024)

static const char *ksyms__strdup(struct ksyms *ks, const char *s, size_t len)
{
	char *dst, **chunks;

	if (!ks->nr_chunks || ks->chunk_used + len + 1 > ks->chunk_size) {
		chunks = realloc(ks->chunks, (ks->nr_chunks + 1) * sizeof(*chunks));
		if (!chunks)
			return NULL;
		ks->chunks = chunks;
		ks->chunks[ks->nr_chunks] = malloc(CHUNK_SIZE);
		if (!ks->chunks[ks->nr_chunks])
			return NULL;
		ks->nr_chunks++;
		ks->chunk_used = 0;
		ks->chunk_size = CHUNK_SIZE;
	}
	dst = ks->chunks[ks->nr_chunks - 1] + ks->chunk_used;
	memcpy(dst, s, len);
	dst[len] = '\0';
	ks->chunk_used += len + 1;
	return dst;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return 0;
}

/* Parse one line into addr, type, name and module spans. Returns 0 or -EINVAL. */
static int parse_line(char *line, uint64_t *addr, char *type, char **name, size_t *name_len,
		      char **module, size_t *module_len)
{
	char *p = line, *end;

	errno = 0;
	*addr = strtoull(p, &end, 16);
	if (errno || end == p || *end != ' ')
		return -EINVAL;
	p = end + 1;
	if (!*p || p[1] != ' ')
		return -EINVAL;
	*type = *p;
	p += 2;
	*name = p;
	while (*p && *p != '\t' && *p != '\n' && *p != ' ')
		p++;
	*name_len = p - *name;
	if (*name_len == 0 || *name_len > KSYM_NAME_MAX)
		return -EINVAL;
	*module = NULL;
	*module_len = 0;
	if (*p == '\t' && p[1] == '[') {
		char *m = p + 2, *close = strchr(m, ']');

		if (close && close - m > 0 && close - m <= KSYM_NAME_MAX) {
			*module = m;
			*module_len = close - m;
		}
	}
	return 0;
}

struct ksyms *ksyms__parse(FILE *f)
{
	struct ksyms *ks = calloc(1, sizeof(*ks));
	char line[KSYM_NAME_MAX * 2 + 64];
	size_t nonzero = 0;

	if (!ks)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		char *name, *module, type;
		size_t name_len, module_len;
		uint64_t addr;
		struct ksym *s;

		if (!strchr(line, '\n') && !feof(f)) {
			/* An overlong line: skip the rest of it. */
			int c;

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
			continue;
		}
		if (parse_line(line, &addr, &type, &name, &name_len, &module, &module_len))
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (array_grow(&ks->syms, &ks->cap, sizeof(*ks->syms), ks->nr))
			goto nomem;
		s = &ks->syms[ks->nr];
		s->addr = addr;
		s->name = ksyms__strdup(ks, name, name_len);
		s->module = NULL;
		if (module) {
			if (!ks->last_module || strncmp(ks->last_module, module, module_len) ||
			    ks->last_module[module_len])
				ks->last_module = ksyms__strdup(ks, module, module_len);
			s->module = ks->last_module;
		}
		if (!s->name || (module && !s->module))
			goto nomem;
		nonzero += addr != 0;
		ks->nr++;
	}
	if (ks->nr && !nonzero) {
		ksyms__free(ks);
		errno = ENODATA;
		return NULL;
	}
	if (ks->nr)
		qsort(ks->syms, ks->nr, sizeof(*ks->syms), ksym_cmp);
	return ks;
nomem:
	ksyms__free(ks);
	errno = ENOMEM;
	return NULL;
}

struct ksyms *ksyms__load(const char *path)
{
	FILE *f = fopen(path, "re");
	struct ksyms *ks;
	int err;

	if (!f)
		return NULL;
	ks = ksyms__parse(f);
	err = errno;
	fclose(f);
	errno = err;
	return ks;
}

void ksyms__free(struct ksyms *ks)
{
	if (!ks)
		return;
	for (size_t i = 0; i < ks->nr_chunks; i++)
		free(ks->chunks[i]);
	free(ks->chunks);
	free(ks->syms);
	free(ks);
}

const char *ksyms__lookup(const struct ksyms *ks, uint64_t addr, uint64_t *offset,
			  const char **module)
{
	/* The first symbol above ADDR; the one before it holds ADDR. */
	size_t lo = BSEARCH_PREFIX(ks->nr, mid, ks->syms[mid].addr <= addr);

	if (lo == 0)
		return NULL;
	if (offset)
		*offset = addr - ks->syms[lo - 1].addr;
	if (module)
		*module = ks->syms[lo - 1].module;
	return ks->syms[lo - 1].name;
}

size_t ksyms__count(const struct ksyms *ks)
{
	return ks->nr;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * symfile: one file's names (see symfile.h): the symbol, demangled; inline chains from the
 * DWARF of the debug file when symbols came from one, else of the file itself; FILE+0xSTART
 * from the tables of FDEs where no symbol covers the address.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dso/dso.h"
#include "symbolize/inlines.h"
#include "symbolize/symfile.h"

struct symfile {
	struct dso *dso;	/* NULL when the file could not be read */
	char *label;		/* "[basename]" for addresses without a function */
	unsigned int flags;	/* SYMBOLIZE_* */
	struct inlines *inl;	/* inline chains; NULL when none */
	bool inl_tried;
	symfile_alt_fn alt;	/* makes dwz's common file readable */
	void *alt_ctx;
	char *buf;		/* the names of the last lookup */
	size_t cap;
};

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

struct symfile *symfile__new(struct dso *dso, const char *path, unsigned int flags)
{
	struct symfile *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->dso = dso;
	f->flags = flags;
	if (asprintf(&f->label, path[0] == '[' ? "%s" : "[%s]", base_name(path)) < 0) {
		free(f);
		return NULL;
	}
	return f;
}

void symfile__free(struct symfile *f)
{
	if (!f)
		return;
	inlines__free(f->inl);
	free(f->label);
	free(f->buf);
	free(f);
}

/* DWARF for inline chains, opened at the first lookup: the debug file when symbols came from
 * one, else the file itself, through the dso's own descriptors (still the very files after
 * the process is gone; a debug file found inside a container's root is not at its path
 * here; and the worker may not open paths). */
static struct inlines *symfile__inlines(struct symfile *f)
{
	const char *alt_name, *alt_id;
	int fd;

	if (f->inl_tried)
		return f->inl;
	f->inl_tried = true;
	/* What BFD would read must fit the file and the memory budget, and lead nowhere else. */
	if (dso__dwarf_check(f->dso))
		return NULL;
	fd = dso__debug_fd(f->dso);
	if (f->alt && !dso__dwarf_altlink(f->dso, &alt_name, &alt_id))
		f->alt(f->alt_ctx, alt_name, alt_id);
	f->inl = inlines__open_fd(fd >= 0 ? fd : dso__fd(f->dso), dso__base_name(f->dso));
	return f->inl;
}

/* The length of NAME cut at SYMFILE_NAME_MAX (where it ends in "..."). */
static size_t cut_len(const char *name)
{
	size_t n = strnlen(name, SYMFILE_NAME_MAX + 1);

	return n > SYMFILE_NAME_MAX ? SYMFILE_NAME_MAX : n;
}

/* A copy of NAME cut at SYMFILE_NAME_MAX at P; returns the byte after its NUL. */
static char *put_cut(char *p, const char *name)
{
	size_t n = strnlen(name, SYMFILE_NAME_MAX + 1);

	if (n > SYMFILE_NAME_MAX) {
		memcpy(p, name, SYMFILE_NAME_MAX - 3);
		memcpy(p + SYMFILE_NAME_MAX - 3, "...", 3);
		n = SYMFILE_NAME_MAX;
	} else {
		memcpy(p, name, n);
	}
	p[n] = '\0';
	return p + n + 1;
}

/* The label of F ("[FILE]") as the one frame in OUT. Returns 1. */
static int symfile__label(struct symfile *f, struct sym_frame *out)
{
	out[0] = (struct sym_frame){ .name = f->label, .kind = SYM_UNNAMED };
	return 1;
}

/* The NR frames IN, their names and files (each cut at SYMFILE_NAME_MAX) copied into F's
 * buffer, into OUT. Returns NR, or 1 with OUT[0] the label on ENOMEM. */
static int symfile__keep(struct symfile *f, const struct sym_frame *in, int nr,
			 struct sym_frame *out)
{
	size_t len = 0;
	char *p;

	for (int i = 0; i < nr; i++)
		len += cut_len(in[i].name) + 1 + (in[i].file ? cut_len(in[i].file) + 1 : 0);
	if (len > f->cap) {
		char *buf = realloc(f->buf, len);

		if (!buf)
			return symfile__label(f, out);
		f->buf = buf;
		f->cap = len;
	}
	p = f->buf;
	for (int i = 0; i < nr; i++) {
		out[i] = in[i];
		out[i].name = p;
		p = put_cut(p, in[i].name);
		if (in[i].file) {
			out[i].file = p;
			p = put_cut(p, in[i].file);
		}
	}
	return nr;
}

/*
 * A name for VADDR where no symbol covers it: FILE+0xSTART, START that of the last FDE
 * starting at or before VADDR (every function with unwind info has one, named or not), or in
 * code no FDE covers (assembly) the entry the file's other code calls or takes the address
 * of (dso__code_entry: x264's functions, one each), unless a symbol says that function ends
 * before VADDR: then [FILE].
 */
static int symfile__unnamed(struct symfile *f, uint64_t vaddr, struct sym_frame *out)
{
	uint64_t start = dso__fde_start(f->dso, vaddr), sym_start, sym_end;
	char name[4096 + 32];
	struct sym_frame fr = { .name = name, .kind = SYM_UNNAMED };

	if (start == UINT64_MAX && dso__usable(f->dso))
		start = dso__code_entry(f->dso, vaddr);
	if (start != UINT64_MAX && dso__lookup_range(f->dso, start, &sym_start, &sym_end) &&
	    vaddr >= sym_end)
		start = UINT64_MAX;
	/* A file not parsed (the memory budget), or truncated under us: the address itself. */
	if (start == UINT64_MAX && !dso__usable(f->dso))
		start = vaddr;
	if (start == UINT64_MAX)
		return symfile__label(f, out);
	snprintf(name, sizeof(name), "%s+0x%" PRIx64, dso__base_name(f->dso), start);
	return symfile__keep(f, &fr, 1, out);
}

int symfile__frames(struct symfile *f, uint64_t off, bool is_return, struct sym_frame *out,
		    int max)
{
	const char *inl[INLINES_MAX], *name;
	struct inline_src isrc[INLINES_MAX], srcs[SYMFILE_MAX_FRAMES] = { 0 };
	struct sym_frame fr[SYMFILE_MAX_FRAMES];
	char *owned[SYMFILE_MAX_FRAMES] = { 0 };
	uint64_t vaddr, at, o;
	int nr = 1, ni = 0;

	if (!f->dso || dso__off_to_vaddr(f->dso, off, &vaddr))
		return symfile__label(f, out);
	at = vaddr;
	name = dso__lookup(f->dso, vaddr, NULL);
	/* A return address (looked up one byte back) at a function's very first byte: a signal
	 * trampoline such as __restore_rt, which the kernel "called". Named at the address. */
	if (!name && is_return) {
		const char *next = dso__lookup(f->dso, vaddr + 1, &o);

		if (next && !o) {
			name = next;
			at = vaddr + 1;
		}
	}
	if (!name)
		return symfile__unnamed(f, vaddr, out);
	if ((f->flags & SYMBOLIZE_DEMANGLE) && (owned[0] = demangle(name)))
		name = owned[0];
	fr[0] = (struct sym_frame){ .name = name, .kind = SYM_FUNC };
	if ((f->flags & (SYMBOLIZE_INLINE | SYMBOLIZE_LINES)) && symfile__inlines(f))
		ni = inlines__at(f->inl, at, inl, isrc, INLINES_MAX);
	if (ni)
		srcs[0] = isrc[ni - 1];
	/* inl[ni - 1] is the function itself (named above from the symbol table). Without
	 * SYMBOLIZE_INLINE, DWARF was read for the line only. */
	for (int i = ni - 2; i >= 0 && nr < max && nr < SYMFILE_MAX_FRAMES &&
	     (f->flags & SYMBOLIZE_INLINE); i--, nr++) {
		fr[nr] = (struct sym_frame){ .name = inl[i], .kind = SYM_INLINE };
		srcs[nr] = isrc[i];
		if ((f->flags & SYMBOLIZE_DEMANGLE) && (owned[nr] = demangle(inl[i])))
			fr[nr].name = owned[nr];
	}
	if (ni && !(f->flags & SYMBOLIZE_INLINE))
		srcs[0] = isrc[0];	/* the line of the address, in whatever was inlined */
	for (int i = 0; i < nr && (f->flags & SYMBOLIZE_LINES); i++) {
		fr[i].file = srcs[i].file;
		fr[i].line = srcs[i].line;
	}
	nr = symfile__keep(f, fr, nr, out);
	for (int i = 0; i < SYMFILE_MAX_FRAMES; i++)
		free(owned[i]);
	return nr;
}

void symfile__set_alt(struct symfile *f, symfile_alt_fn fn, void *ctx)
{
	f->alt = fn;
	f->alt_ctx = ctx;
}

void symfile__prepare(struct symfile *f)
{
	if (!f->dso)
		return;
	dso__nr_syms(f->dso);
	if ((f->flags & SYMBOLIZE_INLINE) && symfile__inlines(f))
		inlines__warm(f->inl);
}

void symfile__info(struct symfile *f, size_t *nr_syms, bool *debug)
{
	*nr_syms = f->dso ? dso__nr_syms(f->dso) : 0;
	*debug = f->dso && dso__debug_path(f->dso);
}

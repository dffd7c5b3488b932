// SPDX-License-Identifier: GPL-3.0-or-later
/* symtab: function symbols from .symtab and .dynsym, merged and sorted (see dso.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base/bsearch.h"
#include "base/limits.h"
#include "base/grow.h"
#include "dso/symtab.h"

#define SYM_NAME_MAX		4095		/* longer names are truncated */

#define ZLIB_MAX_RATIO	1032	/* deflate never expands data more than this */

/* The section data of SCN, decompressed first when SHF_COMPRESSED; NULL on failure. libelf
 * allocates what the compression header claims: checked first. */
Elf_Data *elf_scn__data(Elf_Scn *scn, const GElf_Shdr *shdr)
{
	GElf_Chdr ch;

	if (shdr->sh_type == SHT_NOBITS)
		return NULL;
	if (shdr->sh_flags & SHF_COMPRESSED) {
		if (!gelf_getchdr(scn, &ch))
			return NULL;
		if (ch.ch_type != ELFCOMPRESS_ZLIB || ch.ch_size > LIMIT_SECTION_MAX ||
		    ch.ch_size / ZLIB_MAX_RATIO > shdr->sh_size) {
			limits__hit(LIMIT_SECTION_SIZE, 1);
			return NULL;
		}
		if (elf_compress(scn, 0, 0) < 0)
			return NULL;
	}
	return elf_getdata(scn, NULL);
}

bool elf__has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB)
			return true;
	return false;
}

bool elf__has_debug_info(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr shdr;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS || !shdr.sh_size)
			continue;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (name && (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")))
			return true;
	}
	return false;
}

/* ---- reading ----------------------------------------------------------------------------- */

int symtab__push(struct symtab *e, const struct symtab_sym *sym)
{
	if (array_grow(&e->syms, &e->cap, sizeof(*e->syms), e->nr))
		return -ENOMEM;
	e->syms[e->nr++] = *sym;
	return 0;
}

/* Length of NAME without a symbol version suffix ("memcpy@@GLIBC_2.14" -> 6), capped. */
static unsigned int sym_name__len(const char *name)
{
	size_t len = strnlen(name, SYM_NAME_MAX);
	const char *at = memchr(name, '@', len);

	if (at && at != name)
		len = (size_t)(at - name);
	return (unsigned int)len;
}

/* End of the section with index NDX (where an unsized symbol's code must stop), or UINT64_MAX. */
static uint64_t section_end(Elf *elf, size_t ndx)
{
	Elf_Scn *scn;
	GElf_Shdr shdr;

	if (ndx == SHN_UNDEF || ndx >= SHN_LORESERVE || !(scn = elf_getscn(elf, ndx)) ||
	    !gelf_getshdr(scn, &shdr) || shdr.sh_addr + shdr.sh_size < shdr.sh_addr)
		return UINT64_MAX;
	return shdr.sh_addr + shdr.sh_size;
}

/* Whether section NDX holds code (SHF_EXECINSTR). */
static bool section_is_code(Elf *elf, size_t ndx)
{
	Elf_Scn *scn;
	GElf_Shdr shdr;

	return ndx != SHN_UNDEF && ndx < SHN_LORESERVE && (scn = elf_getscn(elf, ndx)) &&
	       gelf_getshdr(scn, &shdr) && (shdr.sh_flags & SHF_EXECINSTR);
}

/* Append the function symbols of symbol table SCN. Names point into ELF until finalized. */
static int symtab__read(struct symtab *e, Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr)
{
	struct symtab_sym s;
	GElf_Shdr strshdr;
	Elf_Scn *strscn;
	Elf_Data *data;
	const char *name;
	size_t entsize, n;
	GElf_Sym sym;
	GElf_Ehdr ehdr;
	uint64_t entry;
	int type, bind, err;

	data = elf_scn__data(scn, shdr);
	strscn = elf_getscn(elf, shdr->sh_link);
	if (!data || !strscn || !gelf_getshdr(strscn, &strshdr) || !elf_scn__data(strscn, &strshdr))
		return -ENOEXEC;
	entry = gelf_getehdr(elf, &ehdr) ? ehdr.e_entry : 0;
	entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	if (entsize == 0)
		return -ENOEXEC;
	n = data->d_size / entsize;
	for (size_t i = 0; i < n; i++) {
		if (e->nr >= LIMIT_SYMS_MAX) {
			e->cut = true;
			break;
		}
		if (!gelf_getsym(data, (int)i, &sym))
			return -ENOEXEC;
		type = GELF_ST_TYPE(sym.st_info);
		bind = GELF_ST_BIND(sym.st_info);
		/* Functions; and untyped global labels in code, as hand-written assembly leaves
		 * its functions (NASM's `global f`, x264's; ld.so's _start, the entry point). */
		if ((type != STT_FUNC && type != STT_GNU_IFUNC &&
		     !(type == STT_NOTYPE && (sym.st_value == entry ||
					      ((bind == STB_GLOBAL || bind == STB_WEAK) &&
					       section_is_code(elf, sym.st_shndx))))) ||
		    sym.st_value == 0 || sym.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(elf, shdr->sh_link, sym.st_name);
		if (!name || !name[0])
			continue;
		s.start = sym.st_value;
		s.size = sym.st_size;
		s.limit = sym.st_size ? UINT64_MAX : section_end(elf, sym.st_shndx);
		s.name = name;
		s.len = sym_name__len(name);
		s.rank = bind == STB_LOCAL ? 0 : bind == STB_WEAK ? 1 : 2;
		err = symtab__push(e, &s);
		if (err)
			return err;
	}
	return 0;
}

int symtab__add_elf(struct symtab *e, Elf *elf)
{
	/* .symtab holds what .dynsym has and more: reading both doubles the sort (node: 185k
	 * symbols instead of 110k). */
	GElf_Word skip = elf__has_symtab(elf) ? SHT_DYNSYM : SHT_NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	int err;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr))
			return -ENOEXEC;
		if ((shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM) ||
		    shdr.sh_type == skip)
			continue;
		err = symtab__read(e, elf, scn, &shdr);
		if (err)
			return err;
	}
	return 0;
}

/* Address ascending; at one address the preferred symbol first (rank, size, then name). */
static unsigned int leading_underscores(const struct symtab_sym *s)
{
	unsigned int n = 0;

	while (n < s->len && s->name[n] == '_')
		n++;
	return n;
}

static int sym__cmp(const void *pa, const void *pb)
{
	const struct symtab_sym *a = pa, *b = pb;
	int c;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank > b->rank ? -1 : 1;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	/* Aliases: the public spelling (pthread_key_create, not __pthread_key_create), as perf
	 * shows it; then the shorter; then by name, so the choice is stable. */
	if (leading_underscores(a) != leading_underscores(b))
		return leading_underscores(a) < leading_underscores(b) ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	c = strncmp(a->name, b->name, a->len < b->len ? a->len : b->len);
	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

/* Sort, keep one symbol per address, copy names into the arena. Must run before the ELF
 * handles the names point into are closed. */
int symtab__finalize(struct symtab *e)
{
	struct symtab_sym *syms;
	size_t n = 0, total = 0;
	char *p;

	if (e->nr == 0)
		return 0;
	qsort(e->syms, e->nr, sizeof(*e->syms), sym__cmp);
	for (size_t i = 0; i < e->nr; i++) {
		if (n && e->syms[n - 1].start == e->syms[i].start)
			continue;
		e->syms[n++] = e->syms[i];
		total += e->syms[i].len + 1;
	}
	e->nr = n;
	e->names = malloc(total);
	e->names_len = total;
	if (!e->names)
		return -ENOMEM;
	p = e->names;
	for (size_t i = 0; i < n; i++) {
		memcpy(p, e->syms[i].name, e->syms[i].len);
		p[e->syms[i].len] = '\0';
		e->syms[i].name = p;
		p += e->syms[i].len + 1;
	}
	syms = realloc(e->syms, n * sizeof(*syms));
	if (syms) {
		e->syms = syms;
		e->cap = n;
	}
	return 0;
}


/* ---- lookups ---------------------------------------------------------------------------- */

uint64_t symtab__estimate(Elf *elf)
{
	GElf_Word skip = elf__has_symtab(elf) ? SHT_DYNSYM : SHT_NULL;
	uint64_t bytes = 0, nr;
	Elf_Scn *scn = NULL, *strscn;
	GElf_Shdr shdr, strshdr;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) ||
		    (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM) ||
		    shdr.sh_type == skip)
			continue;
		nr = shdr.sh_size / sizeof(Elf64_Sym);
		if (nr > LIMIT_SYMS_MAX)
			nr = LIMIT_SYMS_MAX;
		/* the array as it grows (twice at most), the names copied */
		bytes += 2 * nr * sizeof(struct symtab_sym);
		strscn = elf_getscn(elf, shdr.sh_link);
		if (strscn && gelf_getshdr(strscn, &strshdr))
			bytes += strshdr.sh_size < LIMIT_SECTION_MAX ? strshdr.sh_size :
								       LIMIT_SECTION_MAX;
	}
	return bytes;
}

uint64_t symtab__bytes(const struct symtab *st)
{
	return st->cap * sizeof(*st->syms) + (st->names ? st->names_len : 0);
}

void symtab__free(struct symtab *st)
{
	free(st->syms);
	free(st->names);
	*st = (struct symtab){ 0 };
}

const struct symtab_sym *symtab__lookup(const struct symtab *st, const struct dso_seg *segs,
					size_t nr_segs, uint64_t vaddr)
{
	/* The first symbol starting above VADDR; the one before it is the candidate. */
	size_t lo = BSEARCH_PREFIX(st->nr, mid, st->syms[mid].start <= vaddr);
	const struct symtab_sym *s;

	if (lo == 0)
		return NULL;
	s = &st->syms[lo - 1];
	if (s->size) {
		if (vaddr - s->start >= s->size)
			return NULL;
	} else if (vaddr >= s->limit) {
		return NULL;	/* past its section: _init does not cover the PLT */
	} else if (lo == st->nr && vaddr >= dso_segs__end(segs, nr_segs, s->start)) {
		/* The last symbol, unsized: it covers up to the end of its segment. */
		return NULL;
	}
	return s;
}

const struct symtab_sym *symtab__find(const struct symtab *st, const char *name,
				      uint64_t *end)
{
	for (size_t i = 0; i < st->nr; i++) {
		const struct symtab_sym *s = &st->syms[i];

		if (strcmp(s->name, name))
			continue;
		*end = s->start + s->size;
		if (!s->size) {	/* up to the next symbol, within its section */
			*end = i + 1 < st->nr ? st->syms[i + 1].start : s->start + 1;
			if (*end > s->limit)
				*end = s->limit;
		}
		return s;
	}
	return NULL;
}

int symtab__find_object(Elf *elf, const char *name, uint64_t *vaddr)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t entsize, n;

		if (!gelf_getshdr(scn, &shdr) ||
		    (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM))
			continue;
		data = elf_scn__data(scn, &shdr);
		entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
		if (!data || !entsize)
			continue;
		n = data->d_size / entsize;
		for (size_t i = 0; i < n && i < LIMIT_SYMS_MAX; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(data, (int)i, &sym))
				break;
			if (GELF_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_shndx == SHN_UNDEF ||
			    !sym.st_value)
				continue;
			s = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (s && !strcmp(s, name)) {
				*vaddr = sym.st_value;
				return 0;
			}
		}
	}
	return -ENOENT;
}

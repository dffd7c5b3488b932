// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * plt: symbols for PLT stubs ("memcpy@plt"). Each entry of .plt (after its first), .plt.sec
 * and .plt.got jumps through a GOT slot, `jmp *disp32(%rip)` (after an endbr64 and a bnd
 * prefix when present); the relocation of that slot in .rela.plt or .rela.dyn names the
 * function. x86-64 only; anything that does not decode is left unnamed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "dso/symtab.h"

#define MAX_RELOCS	(1u << 20)
#define PLT_NAME_MAX	1024

struct slot_name {
	uint64_t got;		/* r_offset: the GOT slot */
	const char *name;	/* in .dynstr */
};

struct plt_scan {
	struct slot_name *slots;
	size_t nr, cap;
};

static int slot_cmp(const void *a, const void *b)
{
	const struct slot_name *x = a, *y = b;

	return x->got < y->got ? -1 : x->got > y->got;
}

/* Collect the JUMP_SLOT and GLOB_DAT relocations of RELA section SCN with their names. */
static int scan__relocs(struct plt_scan *ps, Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr)
{
	Elf_Data *data = elf_scn__data(scn, shdr), *syms;
	Elf_Scn *symscn = elf_getscn(elf, shdr->sh_link);
	GElf_Shdr symshdr;
	size_t n;

	if (!data || !symscn || !gelf_getshdr(symscn, &symshdr) ||
	    !(syms = elf_scn__data(symscn, &symshdr)) || !shdr->sh_entsize)
		return 0;
	n = data->d_size / shdr->sh_entsize;
	for (size_t i = 0; i < n && ps->nr < MAX_RELOCS; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *name;
		unsigned long type;

		if (!gelf_getrela(data, (int)i, &r))
			break;
		type = GELF_R_TYPE(r.r_info);
		if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
		    !GELF_R_SYM(r.r_info) || !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym) ||
		    !(name = elf_strptr(elf, symshdr.sh_link, sym.st_name)) || !name[0])
			continue;
		if (ps->nr == ps->cap) {
			size_t cap = ps->cap ? 2 * ps->cap : 256;
			struct slot_name *s = realloc(ps->slots, cap * sizeof(*s));

			if (!s)
				return -ENOMEM;
			ps->slots = s;
			ps->cap = cap;
		}
		ps->slots[ps->nr++] = (struct slot_name){ r.r_offset, name };
	}
	return 0;
}

/* The GOT slot the stub at ADDR (bytes P, LEN of them) jumps through, or 0. */
static uint64_t stub_slot(const unsigned char *p, size_t len, uint64_t addr)
{
	size_t i = 0;
	int32_t disp;

	if (len >= 4 && p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
		i = 4;					/* endbr64 */
	if (i < len && p[i] == 0xf2)
		i++;					/* bnd */
	if (i + 6 > len || p[i] != 0xff || p[i + 1] != 0x25)
		return 0;
	memcpy(&disp, p + i + 2, 4);
	return addr + i + 6 + (int64_t)disp;
}

static const char *scan__name(const struct plt_scan *ps, uint64_t got)
{
	struct slot_name key = { got, NULL };
	const struct slot_name *s = bsearch(&key, ps->slots, ps->nr, sizeof(key), slot_cmp);

	return s ? s->name : NULL;
}

/* Append "NAME@plt" to ST's arena of made names; returns its offset, or -1 on ENOMEM. */
static long made__add(struct symtab *st, const char *name, unsigned int *len)
{
	size_t n = strnlen(name, PLT_NAME_MAX), need = n + sizeof("@plt");
	long off = (long)st->made_len;

	if (st->made_len + need > st->made_cap) {
		size_t cap = st->made_cap ? 2 * st->made_cap : 4096;
		char *m;

		while (cap < st->made_len + need)
			cap *= 2;
		m = realloc(st->made, cap);
		if (!m)
			return -1;
		st->made = m;
		st->made_cap = cap;
	}
	memcpy(st->made + st->made_len, name, n);
	memcpy(st->made + st->made_len + n, "@plt", sizeof("@plt"));
	st->made_len += need;
	*len = (unsigned int)(n + 4);
	return off;
}

/* Name the stubs of the PLT section SCN, ENTSIZE bytes each from FIRST on. */
static int scan__stubs(const struct plt_scan *ps, struct symtab *st, Elf_Scn *scn,
		       const GElf_Shdr *shdr, size_t first, size_t entsize)
{
	Elf_Data *data = elf_scn__data(scn, shdr);
	const unsigned char *p;

	if (!data || !data->d_buf || data->d_size > shdr->sh_size + 64)
		return 0;
	p = data->d_buf;
	for (size_t k = first; k + entsize <= data->d_size; k += entsize) {
		const char *name = scan__name(ps, stub_slot(p + k, entsize, shdr->sh_addr + k));
		struct symtab_sym s = { .start = shdr->sh_addr + k, .size = entsize, .rank = 1,
					.limit = UINT64_MAX };
		long off;

		if (!name)
			continue;
		off = made__add(st, name, &s.len);
		if (off < 0)
			return -ENOMEM;
		s.name = (const char *)(uintptr_t)off;	/* an offset until the arena stops moving */
		if (symtab__push(st, &s))
			return -ENOMEM;
	}
	return 0;
}

int symtab__add_plt(struct symtab *st, Elf *elf)
{
	struct plt_scan ps = { 0 };
	size_t shstrndx, first = st->nr;
	Elf_Scn *scn = NULL;
	GElf_Ehdr ehdr;
	GElf_Shdr shdr;
	int err = 0;

	if (!gelf_getehdr(elf, &ehdr) || ehdr.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while (!err && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_RELA)
			err = scan__relocs(&ps, elf, scn, &shdr);
	if (err || !ps.nr)
		goto out;
	qsort(ps.slots, ps.nr, sizeof(*ps.slots), slot_cmp);
	while (!err && (scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS ||
		    !(shdr.sh_flags & SHF_EXECINSTR) ||
		    !(name = elf_strptr(elf, shstrndx, shdr.sh_name)))
			continue;
		if (!strcmp(name, ".plt"))
			err = scan__stubs(&ps, st, scn, &shdr, 16, 16);	/* after PLT0 */
		else if (!strcmp(name, ".plt.sec"))
			err = scan__stubs(&ps, st, scn, &shdr, 0, 16);
		else if (!strcmp(name, ".plt.got"))
			err = scan__stubs(&ps, st, scn, &shdr, 0, 8);
	}
	/* The arena has its final place: offsets become names (or, on failure, go). */
	if (err)
		st->nr = first;
	for (size_t i = first; i < st->nr; i++)
		st->syms[i].name = st->made + (uintptr_t)st->syms[i].name;
out:
	free(ps.slots);
	return err;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * plt: names for PLT stubs ("memcpy@plt"), found when an address falls in one. Each entry of
 * .plt (after its first), .plt.sec and .plt.got jumps through a GOT slot, `jmp *disp32(%rip)`
 * (after an endbr64 and a bnd prefix when present); the relocation of that slot in .rela.plt
 * or .rela.dyn names the function. Only the section headers are read up front: naming every
 * stub at once read a relocation's symbol and name for each (node: 5.5 MB of .dynsym and
 * .dynstr pages), while samples land in a handful of stubs. x86-64 only; anything that does
 * not decode is left unnamed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "dso/plt.h"
#include "dso/symtab.h"

#define PLT_NAME_MAX	1024

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

void plt__init(struct plt *p, Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Ehdr ehdr;
	GElf_Shdr shdr;

	*p = (struct plt){ .elf = elf };
	if (!gelf_getehdr(elf, &ehdr) || ehdr.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn)) && p->nr < PLT_MAX_SECS) {
		struct plt_sec *s = &p->secs[p->nr];
		const char *name;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS ||
		    !(shdr.sh_flags & SHF_EXECINSTR) ||
		    !(name = elf_strptr(elf, shstrndx, shdr.sh_name)))
			continue;
		if (!strcmp(name, ".plt"))
			*s = (struct plt_sec){ .first = 16, .entsize = 16 };	/* after PLT0 */
		else if (!strcmp(name, ".plt.sec"))
			*s = (struct plt_sec){ .first = 0, .entsize = 16 };
		else if (!strcmp(name, ".plt.got"))
			*s = (struct plt_sec){ .first = 0, .entsize = 8 };
		else
			continue;
		s->scn = scn;
		s->addr = shdr.sh_addr;
		s->size = shdr.sh_size;
		if (s->size > s->first && s->size - s->first < PLT_MAX_STUBS * (uint64_t)s->entsize)
			p->nr++;
	}
}

void plt__free(struct plt *p)
{
	for (int i = 0; i < p->nr; i++) {
		if (p->secs[i].names)
			for (size_t k = 0; k < p->secs[i].nr_stubs; k++)
				free(p->secs[i].names[k]);
		free(p->secs[i].names);
		free(p->secs[i].tried);
	}
	*p = (struct plt){ 0 };
}

/* The name of the JUMP_SLOT or GLOB_DAT relocation of GOT slot GOT in ELF's RELA sections,
 * or NULL. */
static const char *slot_name(Elf *elf, uint64_t got)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr, symshdr;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Scn *symscn;
		Elf_Data *data, *syms;
		size_t n;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_RELA || !shdr.sh_entsize ||
		    !(data = elf_scn__data(scn, &shdr)) ||
		    !(symscn = elf_getscn(elf, shdr.sh_link)) || !gelf_getshdr(symscn, &symshdr) ||
		    !(syms = elf_scn__data(symscn, &symshdr)))
			continue;
		n = data->d_size / shdr.sh_entsize;
		for (size_t i = 0; i < n && i < PLT_MAX_RELOCS; i++) {
			unsigned long type;
			const char *name;
			GElf_Rela r;
			GElf_Sym sym;

			if (!gelf_getrela(data, (int)i, &r))
				break;
			type = GELF_R_TYPE(r.r_info);
			if (r.r_offset != got ||
			    (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
			    !GELF_R_SYM(r.r_info) ||
			    !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym))
				continue;
			name = elf_strptr(elf, symshdr.sh_link, sym.st_name);
			if (name && name[0])
				return name;
		}
	}
	return NULL;
}

/* "NAME@plt" for stub K of section S, made at the first use (NULL: none). */
static const char *stub_name(struct plt *p, struct plt_sec *s, size_t k)
{
	uint64_t at = s->addr + s->first + k * s->entsize;
	const char *name;
	Elf_Data *data;
	GElf_Shdr shdr;
	char *made;
	size_t len;

	if (!s->names) {
		s->nr_stubs = (s->size - s->first) / s->entsize;
		s->names = calloc(s->nr_stubs, sizeof(*s->names));
		s->tried = calloc(s->nr_stubs, sizeof(*s->tried));
		if (!s->names || !s->tried) {
			free(s->names);
			free(s->tried);
			s->names = NULL;
			s->tried = NULL;
			return NULL;
		}
	}
	if (k >= s->nr_stubs)
		return NULL;
	if (s->tried[k])
		return s->names[k];
	s->tried[k] = true;
	if (!gelf_getshdr(s->scn, &shdr) || !(data = elf_scn__data(s->scn, &shdr)) ||
	    !data->d_buf || s->first + (k + 1) * s->entsize > data->d_size)
		return NULL;
	name = slot_name(p->elf, stub_slot((const unsigned char *)data->d_buf + s->first +
					   k * s->entsize, s->entsize, at));
	if (!name)
		return NULL;
	len = strnlen(name, PLT_NAME_MAX);
	made = malloc(len + sizeof("@plt"));
	if (!made)
		return NULL;
	memcpy(made, name, len);
	memcpy(made + len, "@plt", sizeof("@plt"));
	s->names[k] = made;
	return made;
}

const char *plt__lookup(struct plt *p, uint64_t vaddr, uint64_t *start, uint64_t *end)
{
	for (int i = 0; i < p->nr; i++) {
		struct plt_sec *s = &p->secs[i];
		const char *name;
		size_t k;

		if (vaddr < s->addr + s->first || vaddr >= s->addr + s->size)
			continue;
		k = (vaddr - s->addr - s->first) / s->entsize;
		name = stub_name(p, s, k);
		if (name) {
			*start = s->addr + s->first + k * s->entsize;
			*end = *start + s->entsize;
		}
		return name;
	}
	return NULL;
}

bool plt__contains(const struct plt *p, uint64_t vaddr)
{
	for (int i = 0; i < p->nr; i++)
		if (vaddr >= p->secs[i].addr && vaddr < p->secs[i].addr + p->secs[i].size)
			return true;
	return false;
}

// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <libunwind.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "unwind/cfi.h"
#include "dso/elfsym.h"
#include "base/log.h"
#include "proc/procmaps.h"
#include "unwind/unwind.h"

/* Not in libunwind's public headers, but exported: search a binary-search table of FDEs
 * (.eh_frame_hdr) described by DI, reading it through the address space's accessors. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)

#define MAX_FILE_SIZE	(2ULL << 30)
#define FILE_BUCKETS	256
#define PROC_BUCKETS	256
#define PAGE_CACHE	8
#define STACK_SPAN	(8u << 20)	/* reads this close above sp are stack reads */
#define PAGE		4096
#define RULES_MIN	256	/* slots of a file's rule cache, at first ... */
#define RULES_MAX	(1u << 16)	/* ... and at most (32 bytes each) */

const char *const unwind_stop_names[UNWIND_STOP__MAX] = {
	[UNWIND_STOP_END] = "complete",
	[UNWIND_STOP_NO_INFO] = "no unwind info",
	[UNWIND_STOP_BAD_FRAME] = "bad frame",
	[UNWIND_STOP_NO_MEMORY] = "unreadable stack",
	[UNWIND_STOP_DEPTH] = "depth limit",
};

/* --- ELF files: our own read-only mapping, segments and .eh_frame_hdr ------------------- */

/* The CFI rule (or why there is none) at one link-time address of a file. */
struct rule_slot {
	uint64_t key;		/* vaddr + 1; 0: empty */
	struct cfi_rule rule;
	int err;		/* cfi__lookup's result */
};

struct ufile {
	uint64_t dev, ino;
	char *path;
	bool ok;			/* mapped and has a usable .eh_frame_hdr */
	const unsigned char *image;	/* the whole file, mmap'd read only */
	size_t size;
	struct cfi_seg segs[16];
	int nr_segs;
	struct cfi_mem mem;		/* the image and segs, for cfi__lookup */
	struct rule_slot *rules;	/* open addressing, RULES_MIN..RULES_MAX slots */
	uint32_t rules_mask, rules_used;
	uint64_t hdr_vaddr;		/* .eh_frame_hdr */
	uint64_t table_vaddr;		/* its FDE search table */
	uint64_t fde_count;
	uint64_t min_vaddr, max_vaddr;	/* extent of the PT_LOAD segments */
	struct ufile *next;
};

/* File offset holding link-time address VADDR, or -1. */
static int64_t ufile__vaddr_to_off(const struct ufile *f, uint64_t vaddr)
{
	for (int i = 0; i < f->nr_segs; i++)
		if (vaddr >= f->segs[i].vaddr && vaddr - f->segs[i].vaddr < f->segs[i].filesz)
			return (int64_t)(vaddr - f->segs[i].vaddr + f->segs[i].offset);
	return -1;
}

/* The .eh_frame_hdr search table libunwind will search (see eh_frame_hdr__parse). */
static int ufile__parse_hdr(struct ufile *f)
{
	int64_t off = ufile__vaddr_to_off(f, f->hdr_vaddr);
	uint32_t count;
	int err;

	if (off < 0)
		return -ENOENT;
	err = eh_frame_hdr__parse(f->image + off, f->size - off, &count);
	if (err)
		return err;
	f->fde_count = count;
	f->table_vaddr = f->hdr_vaddr + EH_FRAME_HDR_TABLE;
	return 0;
}

static void ufile__load(struct ufile *f, const char *path)
{
	struct stat st;
	GElf_Ehdr eh;
	Elf *elf = NULL;
	void *image;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > MAX_FILE_SIZE ||
	    st.st_size < 64)
		goto out;
	image = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (image == MAP_FAILED)
		goto out;
	f->image = image;
	f->size = st.st_size;
	elf = elf_memory((char *)image, st.st_size);
	if (!elf || !gelf_getehdr(elf, &eh))
		goto out;
	f->min_vaddr = UINT64_MAX;
	for (size_t i = 0; i < eh.e_phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph))
			continue;
		if (ph.p_type == PT_LOAD && f->nr_segs < 16) {
			f->segs[f->nr_segs].vaddr = ph.p_vaddr;
			f->segs[f->nr_segs].offset = ph.p_offset;
			f->segs[f->nr_segs].filesz = ph.p_filesz;
			f->nr_segs++;
			if (ph.p_vaddr < f->min_vaddr)
				f->min_vaddr = ph.p_vaddr;
			if (ph.p_vaddr + ph.p_memsz > f->max_vaddr)
				f->max_vaddr = ph.p_vaddr + ph.p_memsz;
		} else if (ph.p_type == PT_GNU_EH_FRAME) {
			f->hdr_vaddr = ph.p_vaddr;
		}
	}
	f->mem = (struct cfi_mem){ f->image, f->size, f->segs, f->nr_segs };
	if (f->hdr_vaddr && f->nr_segs && ufile__parse_hdr(f) == 0)
		f->ok = true;
	else
		pr_debug("unwind: no usable .eh_frame_hdr in %s", f->path);
out:
	if (elf)
		elf_end(elf);
	close(fd);
}

static uint32_t rule_hash(uint64_t vaddr)
{
	return (uint32_t)((vaddr * 0x9e3779b97f4a7c15ULL) >> 32);
}

static struct rule_slot *rules__slot(struct rule_slot *t, uint32_t mask, uint64_t key)
{
	uint32_t i = rule_hash(key) & mask;

	while (t[i].key && t[i].key != key)
		i = (i + 1) & mask;
	return &t[i];
}

/* Twice the slots, up to RULES_MAX; false when it cannot grow. */
static bool ufile__grow_rules(struct ufile *f)
{
	uint32_t n = f->rules ? (f->rules_mask + 1) * 2 : RULES_MIN;
	struct rule_slot *t;

	if (n > RULES_MAX)
		return false;
	t = calloc(n, sizeof(*t));
	if (!t)
		return false;
	for (uint32_t i = 0; f->rules && i <= f->rules_mask; i++)
		if (f->rules[i].key)
			*rules__slot(t, n - 1, f->rules[i].key) = f->rules[i];
	free(f->rules);
	f->rules = t;
	f->rules_mask = n - 1;
	return true;
}

/*
 * The CFI rule at link-time address VADDR of F, worked out once and kept; NULL when there is
 * none a rule can express (libunwind's turn). OUT holds it when the cache is full.
 */
static const struct cfi_rule *ufile__rule(struct ufile *f, uint64_t vaddr, struct cfi_rule *out)
{
	struct rule_slot *sl = NULL;
	int err;

	if (f->rules) {
		sl = rules__slot(f->rules, f->rules_mask, vaddr + 1);
		if (sl->key)
			return sl->err ? NULL : &sl->rule;
	}
	err = cfi__lookup(&f->mem, f->hdr_vaddr, (uint32_t)f->fde_count, vaddr, out);
	if (!f->rules || (f->rules_used + 1) * 2 > f->rules_mask + 1)
		sl = ufile__grow_rules(f) ? rules__slot(f->rules, f->rules_mask, vaddr + 1) :
		     NULL;		/* full at RULES_MAX: not kept */
	if (sl) {
		sl->key = vaddr + 1;
		sl->err = err;
		sl->rule = *out;
		f->rules_used++;
	}
	return err ? NULL : out;
}

/* --- per process: address space, and where its files are --------------------------------- */

struct loaded {
	uint64_t bias;		/* runtime address = link-time address + bias */
	struct ufile *f;
};

struct uproc {
	pid_t pid;
	unw_addr_space_t as;
	struct loaded *loaded;
	size_t nr_loaded, cap_loaded;
	struct uproc *next;
};

struct uctx;

struct unwinder {
	struct procmaps *pm;
	unw_accessors_t acc;
	struct ufile *files[FILE_BUCKETS];
	struct uproc *procs[PROC_BUCKETS];
	struct uctx *ctx;	/* reused by every unwind (one at a time) */
	bool check;		/* PROFILE_UNWIND_CHECK: libunwind redoes every fast unwind */
	struct unwind_counts counts;
};

/* What the accessors see during one unwind: set up by uctx__begin. */
struct uctx {
	struct unwinder *u;
	struct uproc *p;
	const struct unwind_sample *s;
	bool no_info;		/* find_proc_info found no table */
	bool copy_only;		/* stack reads from the copy only, never the live process */
	bool mem_fault;		/* a read failed */
	uint64_t stack_used;	/* bytes from sp the unwind read */
	struct { uint64_t addr; bool valid; unsigned char data[PAGE]; } pages[PAGE_CACHE];
	int next_page;
};

/*
 * The unwinder's context, reset for sample S: 33 KiB with its page cache, allocated once
 * (a calloc per sample cost more than some unwinds). NULL when out of memory.
 */
static struct uctx *uctx__begin(struct unwinder *u, const struct unwind_sample *s)
{
	struct uctx *c = u->ctx;

	if (!c) {
		c = u->ctx = malloc(sizeof(*c));
		if (!c)
			return NULL;
	}
	c->u = u;
	c->s = s;
	c->p = NULL;
	c->no_info = c->copy_only = c->mem_fault = false;
	c->stack_used = 0;
	for (int i = 0; i < PAGE_CACHE; i++)
		c->pages[i].valid = false;
	c->next_page = 0;
	return c;
}

static struct ufile *unwinder__file(struct unwinder *u, pid_t pid, const struct map *m)
{
	unsigned int b = map__file_bucket(m, FILE_BUCKETS);
	char path[PROCMAPS_PATH_MAX + 64];
	struct ufile *f;

	for (f = u->files[b]; f; f = f->next)
		if (map__is_file(m, f->dev, f->ino, f->path))
			return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->dev = m->dev;
	f->ino = m->ino;
	f->path = strdup(m->path);
	if (!f->path) {
		free(f);
		return NULL;
	}
	if (map__file_path(pid, m, path, sizeof(path)) == 0)
		ufile__load(f, path);
	f->next = u->files[b];
	u->files[b] = f;
	return f;
}

static struct uproc *unwinder__proc(struct unwinder *u, pid_t pid)
{
	unsigned int b = (unsigned int)pid % PROC_BUCKETS;
	struct uproc *p;

	for (p = u->procs[b]; p; p = p->next)
		if (p->pid == pid)
			return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->as = unw_create_addr_space(&u->acc, 0);
	if (!p->as) {
		free(p);
		return NULL;
	}
	/* Off by default in remote address spaces; one space per process keeps it right. */
	unw_set_caching_policy(p->as, UNW_CACHE_GLOBAL);
	p->next = u->procs[b];
	u->procs[b] = p;
	return p;
}

/* The file loaded in P at runtime address ADDR, from what is known already. */
static struct loaded *uproc__find_loaded(struct uproc *p, uint64_t addr)
{
	for (size_t i = 0; i < p->nr_loaded; i++) {
		struct loaded *l = &p->loaded[i];

		if (addr >= l->f->min_vaddr + l->bias && addr < l->f->max_vaddr + l->bias)
			return l;
	}
	return NULL;
}

/* The file holding code address IP in P, learned from the process's mappings. */
static struct loaded *uproc__loaded_for_ip(struct uctx *c, uint64_t ip)
{
	struct uproc *p = c->p;
	struct loaded *l = uproc__find_loaded(p, ip);
	const struct map *m;
	struct ufile *f;
	uint64_t vaddr = 0;
	int64_t off;
	bool found = false;

	if (l)
		return l->f->ok ? l : NULL;
	m = procmaps__find(c->u->pm, p->pid, ip);
	if (!m || m->path[0] != '/')
		return NULL;
	f = unwinder__file(c->u, p->pid, m);
	if (!f || !f->image)
		return NULL;
	/* The mapping's file offset pgoff is at runtime m->start: find its link-time address. */
	for (int i = 0; i < f->nr_segs; i++) {
		off = (int64_t)m->pgoff - (int64_t)f->segs[i].offset;
		if (off >= 0 && (uint64_t)off < f->segs[i].filesz) {
			vaddr = f->segs[i].vaddr + off;
			found = true;
			break;
		}
	}
	if (!found)
		return NULL;
	if (p->nr_loaded == p->cap_loaded) {
		size_t cap = p->cap_loaded ? p->cap_loaded * 2 : 8;
		struct loaded *n = realloc(p->loaded, cap * sizeof(*n));

		if (!n)
			return NULL;
		p->loaded = n;
		p->cap_loaded = cap;
	}
	l = &p->loaded[p->nr_loaded++];
	l->f = f;
	l->bias = m->start - vaddr;
	return f->ok ? l : NULL;
}

/* --- accessors ---------------------------------------------------------------------------- */

static int read_live(struct uctx *c, uint64_t addr, unw_word_t *val)
{
	uint64_t page = addr & ~(uint64_t)(PAGE - 1);
	struct iovec local, remote;
	int slot = -1;

	if ((addr & (PAGE - 1)) > PAGE - sizeof(*val)) {
		/* Straddles two pages: read it directly. */
		local = (struct iovec){ val, sizeof(*val) };
		remote = (struct iovec){ (void *)addr, sizeof(*val) };
		return process_vm_readv(c->s->pid, &local, 1, &remote, 1, 0) == sizeof(*val) ? 0 : -1;
	}
	for (int i = 0; i < PAGE_CACHE; i++)
		if (c->pages[i].valid && c->pages[i].addr == page)
			slot = i;
	if (slot < 0) {
		slot = c->next_page;
		c->next_page = (c->next_page + 1) % PAGE_CACHE;
		local = (struct iovec){ c->pages[slot].data, PAGE };
		remote = (struct iovec){ (void *)page, PAGE };
		c->pages[slot].valid = false;
		if (process_vm_readv(c->s->pid, &local, 1, &remote, 1, 0) != PAGE)
			return -1;
		c->pages[slot].valid = true;
		c->pages[slot].addr = page;
	}
	memcpy(val, c->pages[slot].data + (addr - page), sizeof(*val));
	return 0;
}

/* The word at ADDR of the sampled thread's stack: from the copy, else (unless copy_only) still
 * in place in the live process. Returns 0 or -1; keeps stack_used. */
static int read_stack(struct uctx *c, uint64_t addr, uint64_t *val)
{
	const struct unwind_sample *s = c->s;

	if (addr >= s->sp && addr - s->sp + sizeof(*val) <= s->stack_len) {
		memcpy(val, (const char *)s->stack + (addr - s->sp), sizeof(*val));
		if (addr - s->sp + sizeof(*val) > c->stack_used)
			c->stack_used = addr - s->sp + sizeof(*val);
		return 0;
	}
	if (c->copy_only || read_live(c, addr, val))
		return -1;
	if (addr >= s->sp && addr - s->sp < STACK_SPAN &&
	    addr - s->sp + sizeof(*val) > c->stack_used)
		c->stack_used = addr - s->sp + sizeof(*val);
	return 0;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write,
		      void *arg)
{
	struct uctx *c = arg;
	const struct unwind_sample *s = c->s;
	struct loaded *l;
	uint64_t v;
	(void)as;

	if (write)
		return -UNW_EINVAL;
	/* Unwind tables and code, from our mapping of the file, unless it is the stack copy.
	 * (The whole file bounds the read, not its segment: libunwind reads aligned words.) */
	l = addr >= s->sp && addr - s->sp + sizeof(*val) <= s->stack_len ? NULL :
	    uproc__find_loaded(c->p, addr);
	if (l) {
		int64_t off = ufile__vaddr_to_off(l->f, addr - l->bias);

		if (off >= 0 && (uint64_t)off + sizeof(*val) <= l->f->size) {
			memcpy(val, l->f->image + off, sizeof(*val));
			return 0;
		}
	}
	/* The stack: the copy, then older frames still in place in the live process. */
	if (read_stack(c, addr, &v) == 0) {
		*val = v;
		return 0;
	}
	c->mem_fault = true;
	return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write,
		      void *arg)
{
	struct uctx *c = arg;
	(void)as;

	if (write)
		return -UNW_EREADONLYREG;
	switch (reg) {
	case UNW_X86_64_RIP: *val = c->s->ip; return 0;
	case UNW_X86_64_RSP: *val = c->s->sp; return 0;
	case UNW_X86_64_RBP: *val = c->s->bp; return 0;
	default: return -UNW_EBADREG;	/* not sampled */
	}
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			void *arg)
{
	(void)as; (void)reg; (void)val; (void)write; (void)arg;
	return -UNW_EBADREG;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct uctx *c = arg;
	struct loaded *l = uproc__loaded_for_ip(c, ip);
	unw_dyn_info_t di;
	int ret;

	if (!l) {
		c->no_info = true;
		return -UNW_ENOINFO;
	}
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = l->f->min_vaddr + l->bias;
	di.end_ip = l->f->max_vaddr + l->bias;
	di.u.rti.segbase = l->f->hdr_vaddr + l->bias;
	di.u.rti.table_data = l->f->table_vaddr + l->bias;
	/* In words; one table entry (two 4-byte fields) is one word. */
	di.u.rti.table_len = l->f->fde_count * 8 / sizeof(unw_word_t);
	ret = dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
	if (ret < 0)
		c->no_info = true;
	return ret;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	(void)as; (void)pi; (void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	(void)as; (void)addr; (void)arg;
	return -UNW_ENOINFO;
}

static int resume(unw_addr_space_t as, unw_cursor_t *cur, void *arg)
{
	(void)as; (void)cur; (void)arg;
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			 unw_word_t *off, void *arg)
{
	(void)as; (void)addr; (void)buf; (void)len; (void)off; (void)arg;
	return -UNW_EINVAL;
}

/* --- the unwinder ------------------------------------------------------------------------- */

struct unwinder *unwinder__new(struct procmaps *pm)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		free(u);
		return NULL;
	}
	u->pm = pm;
	u->check = getenv("PROFILE_UNWIND_CHECK") != NULL;
	u->acc.find_proc_info = find_proc_info;
	u->acc.put_unwind_info = put_unwind_info;
	u->acc.get_dyn_info_list_addr = get_dyn_info_list_addr;
	u->acc.access_mem = access_mem;
	u->acc.access_reg = access_reg;
	u->acc.access_fpreg = access_fpreg;
	u->acc.resume = resume;
	u->acc.get_proc_name = get_proc_name;
	return u;
}

static void uproc__free(struct uproc *p)
{
	unw_destroy_addr_space(p->as);
	free(p->loaded);
	free(p);
}

void unwinder__forget(struct unwinder *u, pid_t pid)
{
	struct uproc **pp = &u->procs[(unsigned int)pid % PROC_BUCKETS];

	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->pid == pid) {
			struct uproc *p = *pp;

			*pp = p->next;
			uproc__free(p);
			return;
		}
	}
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	for (int b = 0; b < PROC_BUCKETS; b++) {
		struct uproc *p, *next;

		for (p = u->procs[b]; p; p = next) {
			next = p->next;
			uproc__free(p);
		}
	}
	for (int b = 0; b < FILE_BUCKETS; b++) {
		struct ufile *f, *next;

		for (f = u->files[b]; f; f = next) {
			next = f->next;
			if (f->image)
				munmap((void *)f->image, f->size);
			free(f->rules);
			free(f->path);
			free(f);
		}
	}
	free(u->ctx);
	free(u);
}

/*
 * The fast path: cached CFI rules (ufile__rule), two or three stack reads per frame. Returns
 * the number of frames in IPS and sets *STOP; 0 when some frame needs libunwind (no rule for
 * its address, a register we do not have, a word we cannot read), which then does the whole
 * stack so that what is reported does not depend on which path ran.
 */
static int unwind_fast(struct uctx *c, uint64_t *ips, int max, enum unwind_stop *stop)
{
	const struct unwind_sample *s = c->s;
	uint64_t ip = s->ip, sp = s->sp, bp = s->bp;
	bool bp_ok = true;
	int n = 1;

	for (;;) {
		/* A caller's return address may be past its function's end (a call to a
		 * noreturn function): its rule is the call's, one byte before. */
		uint64_t pc = n > 1 ? ip - 1 : ip, cfa, ra;
		const struct cfi_rule *r;
		struct cfi_rule tmp;
		struct loaded *l;

		if (n >= max) {
			*stop = UNWIND_STOP_DEPTH;
			return n;
		}
		l = uproc__loaded_for_ip(c, pc);
		if (!l || !(r = ufile__rule(l->f, pc - l->bias, &tmp)))
			return 0;
		if (r->cfa_reg == CFI_REG_RBP && !bp_ok)
			return 0;
		cfa = (r->cfa_reg == CFI_REG_RSP ? sp : bp) + (int64_t)r->cfa_off;
		if (r->cfa_deref && read_stack(c, cfa, &cfa))
			return 0;
		if (r->ra == CFI_UNDEFINED) {
			*stop = UNWIND_STOP_END;	/* the outermost frame (_start, clone) */
			return n;
		}
		if (read_stack(c, cfa + (int64_t)r->ra_off, &ra))
			return 0;
		if (r->bp == CFI_AT_CFA && read_stack(c, cfa + (int64_t)r->bp_off, &bp))
			return 0;
		if (r->bp == CFI_UNDEFINED)
			bp_ok = false;
		sp = cfa;
		ip = ra;
		if (!ip) {
			*stop = UNWIND_STOP_END;
			return n;
		}
		ips[n++] = ip;
	}
}

static int unwind_libunwind(struct uctx *c, uint64_t *ips, int max, enum unwind_stop *stop)
{
	unw_cursor_t cur;
	int n = 1, ret;

	*stop = UNWIND_STOP_NO_MEMORY;
	if (unw_init_remote(&cur, c->p->as, c) < 0)
		return 1;
	for (;;) {
		unw_word_t ip;

		if (n >= max) {
			*stop = UNWIND_STOP_DEPTH;
			break;
		}
		ret = unw_step(&cur);
		if (ret == 0) {
			*stop = UNWIND_STOP_END;
			break;
		}
		if (ret < 0) {
			*stop = c->no_info ? UNWIND_STOP_NO_INFO :
				c->mem_fault ? UNWIND_STOP_NO_MEMORY : UNWIND_STOP_BAD_FRAME;
			break;
		}
		if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0) {
			*stop = ip == 0 ? UNWIND_STOP_END : UNWIND_STOP_BAD_FRAME;
			break;
		}
		ips[n++] = ip;
	}
	return n;
}

/* PROFILE_UNWIND_CHECK: libunwind's answer for the stack the fast path unwound into IPS. */
static void check_fast(struct unwinder *u, const struct unwind_sample *s, const uint64_t *ips,
		       int n, enum unwind_stop stop, int max)
{
	static uint64_t theirs[1024];
	struct uctx *c = uctx__begin(u, s);
	enum unwind_stop their_stop;
	int m;

	if (!c || max > 1024)
		return;
	c->p = unwinder__proc(u, s->pid);
	theirs[0] = s->ip;
	m = c->p ? unwind_libunwind(c, theirs, max, &their_stop) : 0;
	if (m == n && their_stop == stop && !memcmp(ips, theirs, n * sizeof(*ips)))
		return;
	if (u->counts.mismatches++ < 10) {
		pr_warn("unwind check: pid %d ip %#llx: fast path %d frames (%s), libunwind %d (%s)",
			s->pid, (unsigned long long)s->ip, n, unwind_stop_names[stop], m,
			unwind_stop_names[their_stop]);
		for (int i = 0; i < n || i < m; i++)
			pr_warn("  %2d %#18llx %#18llx", i, i < n ? (unsigned long long)ips[i] : 0ULL,
				i < m ? (unsigned long long)theirs[i] : 0ULL);
	}
}

int unwinder__unwind(struct unwinder *u, const struct unwind_sample *s, uint64_t *ips, int max,
		     enum unwind_stop *stop)
{
	struct uproc *p;
	struct uctx *c;
	int n;

	ips[0] = s->ip;
	*stop = UNWIND_STOP_NO_MEMORY;
	c = uctx__begin(u, s);
	if (!c)
		return 1;
	c->p = unwinder__proc(u, s->pid);
	if (!c->p)
		return 1;
	n = unwind_fast(c, ips, max, stop);
	if (n) {
		size_t used = c->stack_used;

		u->counts.fast++;
		if (u->check) {
			check_fast(u, s, ips, n, *stop, max);
			u->ctx->stack_used = used;
		}
		return n;
	}
	u->counts.slow++;
	p = c->p;
	c = uctx__begin(u, s);		/* what the fast path read does not count */
	c->p = p;
	return unwind_libunwind(c, ips, max, stop);
}

const struct unwind_counts *unwinder__counts(const struct unwinder *u)
{
	return &u->counts;
}

size_t unwinder__stack_used(const struct unwinder *u)
{
	return u->ctx ? u->ctx->stack_used : 0;
}

int unwinder__leaf_return(struct unwinder *u, const struct unwind_sample *s, uint64_t *ret)
{
	struct uctx *c;
	unw_cursor_t cur;
	unw_word_t ip = 0;
	int err = -ENOENT;

	c = uctx__begin(u, s);
	if (!c)
		return -ENOMEM;
	c->copy_only = true;
	c->p = unwinder__proc(u, s->pid);
	if (c->p && unw_init_remote(&cur, c->p->as, c) >= 0 && unw_step(&cur) > 0 &&
	    unw_get_reg(&cur, UNW_REG_IP, &ip) >= 0 && ip) {
		*ret = ip;
		err = 0;
	}
	return err;
}

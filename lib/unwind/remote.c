// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * libunwind's side: the accessors of a remote address space over a sample (registers from the
 * sample, memory from our mapping of each file, the stack copy, then the live process; the
 * tables dso/ built, at fake addresses), the FDE search in each file's tables of FDEs, and
 * the unwind of stacks the fast path leaves.
 */
#include <errno.h>
#include <string.h>
#include "unwind/unwind_int.h"

/* Not in libunwind's public headers, but exported: search a binary-search table of FDEs
 * (.eh_frame_hdr's layout) described by DI, reading it and the FDEs through the address
 * space's accessors (UNW_INFO_FORMAT_REMOTE_TABLE and _IP_OFFSET). */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)

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
	/* Tables and records built in memory (never a process's address). */
	if (addr - FAKE_BASE < FAKE_BASE && unwinder__read_fake(c->u, addr, &v) == 0) {
		*val = v;
		return 0;
	}
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
	default:
		if (c->s->regs && reg >= 0 && reg < UNWIND_NR_REGS) {
			*val = c->s->regs[reg];
			return 0;
		}
		return -UNW_EBADREG;	/* not sampled */
	}
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			void *arg)
{
	(void)as; (void)reg; (void)val; (void)write; (void)arg;
	return -UNW_EBADREG;
}

/* Describe the FDEs SRC (source WHICH) of L's file to libunwind as DI: a binary-search table
 * of (start, FDE) offsets, as .eh_frame_hdr has it. Returns 0, or -1 when they cannot be
 * shown to it. */
static int describe_fdes(const struct loaded *l, enum dso_cfi which, const struct dso_fdes *src,
			 unw_dyn_info_t *di)
{
	const struct fde_table *t = &src->table;

	memset(di, 0, sizeof(*di));
	di->format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di->start_ip = l->f->min_vaddr + l->bias;
	di->end_ip = l->f->max_vaddr + l->bias;
	/* In words; one table entry (two 4-byte fields) is one word. */
	di->u.rti.table_len = (uint64_t)t->count * 8 / sizeof(unw_word_t);
	/* Offsets are from segbase: the table's base where the process has it. */
	di->u.rti.segbase = t->base + l->bias;
	if (src->hdr) {			/* the file's own table, where the process maps it */
		di->u.rti.table_data = t->base + EH_FRAME_HDR_TABLE + l->bias;
		return 0;
	}
	if (l->f->id >= FAKE_IDS)
		return -1;
	di->u.rti.table_data = fake_addr(l->f->id, which == DSO_CFI_EH ? FAKE_TABLE_EH :
					 FAKE_TABLE_DEBUG);
	if (src->in_file)		/* the records where the process maps them */
		return 0;
	/* Converted records at a fake address: starts are searched from start_ip (the
	 * table's base, loaded), FDEs found from segbase, and their addresses, link-time
	 * ones, moved by load_offset. */
	di->format = UNW_INFO_FORMAT_IP_OFFSET;
	di->start_ip = t->base + l->bias;
	di->u.rti.segbase = fake_addr(l->f->id, FAKE_RECS_DEBUG) - (src->mem.segs[0].vaddr - t->base);
	di->load_offset = l->bias;
	return 0;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct uctx *c = arg;
	struct loaded *l = uproc__loaded_for_ip(c, ip);
	int ret = -UNW_ENOINFO;
	unw_dyn_info_t di;

	/* .eh_frame's FDEs, then .debug_frame's where those have none for IP. */
	for (int i = 0; l && i < DSO_CFI__MAX && ret == -UNW_ENOINFO; i++) {
		const struct dso_fdes *src = ufile__fdes(l->f, i);

		if (src && !describe_fdes(l, i, src, &di) && ip >= di.start_ip && ip < di.end_ip)
			ret = dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
	}
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

void unwind_remote__init_accessors(unw_accessors_t *acc)
{
	acc->find_proc_info = find_proc_info;
	acc->put_unwind_info = put_unwind_info;
	acc->get_dyn_info_list_addr = get_dyn_info_list_addr;
	acc->access_mem = access_mem;
	acc->access_reg = access_reg;
	acc->access_fpreg = access_fpreg;
	acc->resume = resume;
	acc->get_proc_name = get_proc_name;
}

int unwind_libunwind(struct uctx *c, uint64_t *ips, int max, enum unwind_stop *stop)
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
		c->no_info = false;
		ret = unw_step(&cur);
		/* libunwind also ends where it had no unwind info and its frame-pointer guess
		 * found rbp == 0: not an end anyone showed, so not a whole stack, unless it is
		 * in the process's entry point. */
		if (ret == 0) {
			*stop = c->no_info &&
				!uctx__at_entry(c, n > 1 ? ips[n - 1] - 1 : ips[0]) ?
				UNWIND_STOP_NO_INFO : UNWIND_STOP_END;
			break;
		}
		if (ret < 0) {
			*stop = c->no_info ? UNWIND_STOP_NO_INFO :
				c->past_copy ? UNWIND_STOP_COPY :
				c->mem_fault ? UNWIND_STOP_NO_MEMORY : UNWIND_STOP_BAD_FRAME;
			break;
		}
		/* A 0 is no root (unwind.c says why): a bad frame, as the fast path has it. */
		if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0) {
			*stop = UNWIND_STOP_BAD_FRAME;
			break;
		}
		if (!uctx__return_mapped(c, ip)) {
			*stop = UNWIND_STOP_BAD_FRAME;
			break;
		}
		ips[n++] = ip;
	}
	return n;
}

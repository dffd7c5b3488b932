// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * cfi: the CFA program of an FDE run up to one address, after the DWARF 4 specification
 * (section 6.4); the records themselves are read by dso/cfirec.c. Only rbp, the return address
 * and the CFA are tracked; operations on other registers are read and ignored.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "unwind/cfi.h"

/* DW_CFA_* operations (those with an operand in the low 6 bits first). */
#define CFA_advance_loc		0x40
#define CFA_offset		0x80
#define CFA_restore		0xc0
enum {
	CFA_nop = 0x00, CFA_set_loc, CFA_advance_loc1, CFA_advance_loc2, CFA_advance_loc4,
	CFA_offset_extended, CFA_restore_extended, CFA_undefined, CFA_same_value, CFA_register,
	CFA_remember_state, CFA_restore_state, CFA_def_cfa, CFA_def_cfa_register,
	CFA_def_cfa_offset, CFA_def_cfa_expression, CFA_expression, CFA_offset_extended_sf,
	CFA_def_cfa_sf, CFA_def_cfa_offset_sf, CFA_val_offset, CFA_val_offset_sf,
	CFA_val_expression,
	CFA_GNU_args_size = 0x2e, CFA_GNU_negative_offset_extended = 0x2f,
};

#define OP_deref	0x06
#define OP_and		0x1a
#define OP_plus		0x22
#define OP_shl		0x24
#define OP_ge		0x2a
#define OP_lit0		0x30
#define OP_breg0	0x70

#define MAX_STATES	16	/* remember_state nesting */

/* A register's rule while the program runs: enum cfi_where, or UNSUP. */
#define UNSUP		0xff

/* --- the CFA program ----------------------------------------------------------------------- */

struct reg {
	uint8_t where;		/* enum cfi_where or UNSUP */
	int64_t off;
};

struct row {
	uint8_t cfa_reg;
	uint8_t cfa_deref;		/* enum cfi_cfa */
	uint8_t plt_cut;
	bool cfa_unsup;
	int64_t cfa_off;
	struct reg bp, ra;
	struct reg cs[CFI_NR_CS];	/* rbx, r12-r15 */
};

const uint8_t cfi_cs_regs[CFI_NR_CS] = { 3, 12, 13, 14, 15 };

/* The index of callee-saved register REGNO in cfi_cs_regs, or -1. */
static int cs_index(uint64_t regno)
{
	for (int i = 0; i < CFI_NR_CS; i++)
		if (cfi_cs_regs[i] == regno)
			return i;
	return -1;
}

struct prog {
	const struct cie *cie;
	struct row row, init;		/* current, and after the CIE's instructions */
	struct row stack[MAX_STATES];
	int depth;
	uint64_t loc, pc;
	bool past;			/* advanced beyond pc: the row is final */
	bool unsup;			/* an operation we cannot follow, anywhere */
	bool backwards;			/* (rows) a location before the current one */
	bool signal;			/* the FDE's CIE says "S" */
	cfi_row_fn emit;		/* (rows) called for each row as it ends, or NULL */
	cfi_rule_fn emit_rule;		/* (rule rows) the same with the row's rule */
	void *arg;
};

/* V times the data alignment factor, wrapping (nonsense offsets are refused later, as
 * outside 32 bits). */
static int64_t factored(uint64_t v, const struct cie *c)
{
	return (int64_t)(v * (uint64_t)c->data_align);
}

static struct reg *prog_reg(struct row *row, uint64_t regno)
{
	if (regno == CFI_REG_RBP)
		return &row->bp;
	if (regno == CFI_REG_RA)
		return &row->ra;
	if (cs_index(regno) >= 0)
		return &row->cs[cs_index(regno)];
	return NULL;			/* not tracked */
}

static void set_reg(struct row *row, uint64_t regno, uint8_t where, int64_t off)
{
	struct reg *g = prog_reg(row, regno);

	if (g) {
		g->where = where;
		g->off = off;
	}
}

/* DW_CFA_restore: back to the CIE's rule (INIT), which the CIE itself cannot use. */
static int restore_reg(struct row *row, const struct row *init, uint64_t regno)
{
	if (!init)
		return -EINVAL;
	if (regno == CFI_REG_RBP)
		row->bp = init->bp;
	else if (regno == CFI_REG_RA)
		row->ra = init->ra;
	else if (cs_index(regno) >= 0)
		row->cs[cs_index(regno)] = init->cs[cs_index(regno)];
	return 0;
}

static enum cfi_frame row_frame(const struct row *row);
static int32_t row_sp_off(const struct row *row);
static void emit_row(struct prog *pg, uint64_t from, uint64_t to);

/* The row goes on to LOC. Running to one address, past it the row is final; running the
 * whole table, the row that ends at LOC is handed to pg->emit (or emit_rule). */
static void advance(struct prog *pg, uint64_t loc)
{
	if (pg->emit || pg->emit_rule) {
		uint64_t to = loc < pg->pc ? loc : pg->pc;

		if (loc < pg->loc)
			pg->backwards = true;
		else if (to > pg->loc)
			emit_row(pg, pg->loc, to);
		pg->loc = to;
		pg->past = loc >= pg->pc;
		return;
	}
	if (loc > pg->pc)
		pg->past = true;
	else
		pg->loc = loc;
}

/* The expression block at R (its length first) into *E, R past it. Returns 0 or -1 (R bad). */
static int expr_block(struct cfi_rd *r, struct cfi_rd *e)
{
	uint64_t len = rd_uleb(r);

	if (r->bad || len > (uint64_t)(r->end - r->p)) {
		r->bad = true;
		return -1;
	}
	*e = (struct cfi_rd){ .p = r->p, .start = r->p, .end = r->p + len };
	r->p += len;
	return 0;
}

/* Whether E is DW_OP_bregN OFF (N < 17) and nothing else: *REG and *OFF get them. With
 * DEREF, DW_OP_deref must follow. */
static bool breg_expr(struct cfi_rd e, bool deref, uint8_t *reg, int64_t *off)
{
	if (e.p >= e.end || *e.p < OP_breg0 || *e.p > OP_breg0 + CFI_REG_RA)
		return false;
	*reg = *e.p++ - OP_breg0;
	*off = rd_sleb(&e);
	if (e.bad)
		return false;
	if (deref)
		return e.p + 1 == e.end && *e.p == OP_deref;
	return e.p == e.end;
}

/* Whether E is the CFA of a .plt section as the linkers write it: DW_OP_breg7 OFF;
 * DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_litCUT; DW_OP_ge; DW_OP_lit3; DW_OP_shl;
 * DW_OP_plus, that is rsp + OFF + (((rip & 15) >= CUT) << 3). */
static bool plt_expr(struct cfi_rd e, int64_t *off, uint8_t *cut)
{
	static const unsigned char tail[] = { OP_lit0 + 15, OP_and, 0, OP_ge, OP_lit0 + 3,
					       OP_shl, OP_plus };

	if (e.p >= e.end || *e.p++ != OP_breg0 + CFI_REG_RSP)
		return false;
	*off = rd_sleb(&e);
	if (e.bad || e.end - e.p != 2 + (ptrdiff_t)sizeof(tail) || e.p[0] != OP_breg0 + CFI_REG_RA ||
	    e.p[1] != 0)
		return false;
	e.p += 2;
	for (size_t i = 0; i < sizeof(tail); i++) {
		if (i == 2) {
			if (e.p[i] < OP_lit0 || e.p[i] > OP_lit0 + 15)
				return false;
			*cut = e.p[i] - OP_lit0;
		} else if (e.p[i] != tail[i]) {
			return false;
		}
	}
	return true;
}

/* DW_CFA_def_cfa_expression: the two kept, CFA = *(reg + off) (GCC's rule for functions that
 * realign, and a signal frame's) and a .plt section's. */
static void def_cfa_expr(struct row *row, struct cfi_rd *r)
{
	struct cfi_rd e;
	uint8_t reg, cut = 0;
	int64_t off;

	if (expr_block(r, &e))
		return;
	row->cfa_unsup = true;
	if (breg_expr(e, true, &reg, &off) && reg < CFI_REG_RA) {
		row->cfa_unsup = false;
		row->cfa_reg = reg;
		row->cfa_off = off;
		row->cfa_deref = CFI_CFA_DEREF;
	} else if (plt_expr(e, &off, &cut)) {
		row->cfa_unsup = false;
		row->cfa_reg = CFI_REG_RSP;
		row->cfa_off = off;
		row->cfa_deref = CFI_CFA_PLT;
		row->plt_cut = cut;
	}
}

/* DW_CFA_expression REG: kept when the register is saved at rsp + off (a signal frame's
 * ucontext). */
static void reg_expr(struct row *row, struct cfi_rd *r)
{
	uint64_t regno = rd_uleb(r);
	struct cfi_rd e;
	uint8_t reg;
	int64_t off;

	if (r->bad || expr_block(r, &e))
		return;
	if (breg_expr(e, false, &reg, &off) && reg == CFI_REG_RSP)
		set_reg(row, regno, CFI_AT_SP, off);
	else
		set_reg(row, regno, UNSUP, 0);
}

static void skip_block(struct cfi_rd *r)
{
	uint64_t len = rd_uleb(r);

	if (r->bad || len > (uint64_t)(r->end - r->p))
		r->bad = true;
	else
		r->p += len;
}

/* Run the instructions in R until they end or pass pg->pc. INIT: the CIE's row for
 * DW_CFA_restore (NULL while running the CIE's own). */
static int run(struct prog *pg, struct cfi_rd *r, const struct row *init)
{
	const struct cie *c = pg->cie;
	struct row *row = &pg->row;

	while (r->p < r->end && !pg->past && !pg->unsup) {
		uint8_t op = *r->p++;
		uint64_t reg, u;
		int64_t s;

		switch (op & 0xc0) {
		case CFA_advance_loc:
			advance(pg, pg->loc + (op & 0x3f) * c->code_align);
			continue;
		case CFA_offset:
			u = rd_uleb(r);
			set_reg(row, op & 0x3f, CFI_AT_CFA, factored(u, c));
			continue;
		case CFA_restore:
			if (restore_reg(row, init, op & 0x3f))
				return -EINVAL;
			continue;
		}
		switch (op) {
		case CFA_nop:
			break;
		case CFA_set_loc:
			u = rd_enc(r, c->fde_enc, true);
			if (!r->bad)
				advance(pg, u);
			break;
		case CFA_advance_loc1:
		case CFA_advance_loc2:
		case CFA_advance_loc4:		/* a 1, 2 or 4-byte delta */
			u = rd_u(r, op == CFA_advance_loc1 ? 1 : op == CFA_advance_loc2 ? 2 : 4);
			advance(pg, pg->loc + u * c->code_align);
			break;
		case CFA_offset_extended:
			reg = rd_uleb(r);
			u = rd_uleb(r);
			set_reg(row, reg, CFI_AT_CFA, factored(u, c));
			break;
		case CFA_offset_extended_sf:
			reg = rd_uleb(r);
			s = rd_sleb(r);
			set_reg(row, reg, CFI_AT_CFA, factored((uint64_t)s, c));
			break;
		case CFA_GNU_negative_offset_extended:
			reg = rd_uleb(r);
			u = rd_uleb(r);
			set_reg(row, reg, CFI_AT_CFA, factored(0 - u, c));
			break;
		case CFA_restore_extended:
			if (restore_reg(row, init, rd_uleb(r)))
				return -EINVAL;
			break;
		case CFA_undefined:
			set_reg(row, rd_uleb(r), CFI_UNDEFINED, 0);
			break;
		case CFA_same_value:
			set_reg(row, rd_uleb(r), CFI_SAME, 0);
			break;
		case CFA_register:		/* kept in another register */
			reg = rd_uleb(r);
			u = rd_uleb(r);
			/* The return address or rbp, in a register the sample has (or the
			 * unwind restored); others are not followed. */
			set_reg(row, reg, (reg == CFI_REG_RA || reg == CFI_REG_RBP) && u < 16 &&
				u != CFI_REG_RSP ? CFI_IN_REG : UNSUP, (int64_t)u);
			break;
		case CFA_val_offset:		/* the value is an address: not for rbp or rip */
			reg = rd_uleb(r);
			rd_uleb(r);
			set_reg(row, reg, UNSUP, 0);
			break;
		case CFA_val_offset_sf:
			reg = rd_uleb(r);
			rd_sleb(r);
			set_reg(row, reg, UNSUP, 0);
			break;
		case CFA_expression:
			reg_expr(row, r);
			break;
		case CFA_val_expression:
			reg = rd_uleb(r);
			skip_block(r);
			set_reg(row, reg, UNSUP, 0);
			break;
		case CFA_remember_state:
			if (pg->depth == MAX_STATES) {
				pg->unsup = true;
				break;
			}
			pg->stack[pg->depth++] = *row;
			break;
		case CFA_restore_state:
			if (!pg->depth)
				return -EINVAL;
			*row = pg->stack[--pg->depth];
			break;
		case CFA_def_cfa:
			row->cfa_reg = (uint8_t)rd_uleb(r);
			row->cfa_off = (int64_t)rd_uleb(r);
			row->cfa_deref = 0;
			row->cfa_unsup = false;
			break;
		case CFA_def_cfa_sf:
			row->cfa_reg = (uint8_t)rd_uleb(r);
			row->cfa_off = factored((uint64_t)rd_sleb(r), c);
			row->cfa_deref = 0;
			row->cfa_unsup = false;
			break;
		case CFA_def_cfa_register:
			row->cfa_reg = (uint8_t)rd_uleb(r);
			if (row->cfa_deref)	/* only valid after a register + offset rule */
				row->cfa_unsup = true;
			break;
		case CFA_def_cfa_offset:
			row->cfa_off = (int64_t)rd_uleb(r);
			if (row->cfa_deref)
				row->cfa_unsup = true;
			break;
		case CFA_def_cfa_offset_sf:
			row->cfa_off = factored((uint64_t)rd_sleb(r), c);
			if (row->cfa_deref)
				row->cfa_unsup = true;
			break;
		case CFA_def_cfa_expression:
			def_cfa_expr(row, r);
			break;
		case CFA_GNU_args_size:
			rd_uleb(r);
			break;
		default:
			pg->unsup = true;	/* vendor operations we do not know */
			break;
		}
		if (r->bad)
			return -EINVAL;
	}
	return r->bad ? -EINVAL : 0;
}

static int row_to_rule(const struct row *row, struct cfi_rule *out)
{
	if (row->cfa_unsup || row->cfa_reg >= CFI_REG_RA || row->ra.where == UNSUP || row->ra.where == CFI_SAME || row->bp.where == UNSUP)
		return -ENOTSUP;
	if (row->cfa_off < INT32_MIN || row->cfa_off > INT32_MAX ||
	    row->ra.off < INT32_MIN || row->ra.off > INT32_MAX ||
	    row->bp.off < INT32_MIN || row->bp.off > INT32_MAX)
		return -ENOTSUP;
	*out = (struct cfi_rule){
		.cfa_reg = row->cfa_reg, .cfa_deref = row->cfa_deref, .plt_cut = row->plt_cut,
		.cfa_off = (int32_t)row->cfa_off,
		.ra = row->ra.where, .ra_off = (int32_t)row->ra.off,
		.bp = row->bp.where, .bp_off = (int32_t)row->bp.off,
	};
	for (int i = 0; i < CFI_NR_CS; i++) {
		const struct reg *g = &row->cs[i];

		if (g->where == UNSUP || g->where == CFI_IN_REG || g->off < INT32_MIN ||
		    g->off > INT32_MAX) {
			out->cs[i] = CFI_UNDEFINED;	/* its value is lost to us */
		} else {
			out->cs[i] = g->where;
			out->cs_off[i] = (int32_t)g->off;
		}
	}
	return 0;
}

/* The rule of PG's current row (what a signal frame's must be checked), or -ENOTSUP. */
static int prog_rule(const struct prog *pg, struct cfi_rule *out)
{
	int err;

	if (pg->unsup)
		return -ENOTSUP;
	err = row_to_rule(&pg->row, out);
	if (!err && pg->signal) {
		/* Only the interrupted code's own sp, rbp and rip will do. */
		if (out->cfa_reg != CFI_REG_RSP || out->ra != CFI_AT_SP ||
		    (out->bp != CFI_AT_SP && out->bp != CFI_UNDEFINED))
			return -ENOTSUP;
		out->signal = 1;
	}
	return err;
}

/* Hand the current row, [FROM, TO), to whichever callback PG has. */
static void emit_row(struct prog *pg, uint64_t from, uint64_t to)
{
	struct cfi_rule r;
	int err;

	if (pg->emit) {
		/* After an operation we cannot follow, the rest is what we cannot say. */
		pg->emit(pg->arg, from, to, pg->unsup ? CFI_FRAME_OTHER : row_frame(&pg->row),
			 pg->unsup ? 0 : row_sp_off(&pg->row));
		return;
	}
	err = prog_rule(pg, &r);
	pg->emit_rule(pg->arg, from, to, err, err ? NULL : &r);
}

/* An FDE with its CIE: [start, start + range) and its instructions. */
struct fde {
	struct cie cie;
	uint64_t start, range;
	struct cfi_rd insns;
};

/* Open the FDE at FDE_VADDR (dso/cfirec.h). Returns 0, -EINVAL or -ENOTSUP (a return
 * address column other than x86-64's, or what the records' reader cannot read). */
static int fde_open(const struct cfi_mem *m, uint64_t fde_vaddr, struct fde *f)
{
	int err = cfi_fde__parse(m, fde_vaddr, &f->cie, &f->start, &f->range, &f->insns);

	if (err)
		return err;
	if (f->cie.ra != CFI_REG_RA)
		return -ENOTSUP;
	if (f->start + f->range < f->start)
		return -EINVAL;
	return 0;
}

/* Run F's CIE instructions, then its own, in PG (set up by the caller: pc, emit). */
static int fde_run(struct prog *pg, struct fde *f)
{
	struct cfi_rd insns = f->cie.insns;
	cfi_row_fn emit = pg->emit;
	cfi_rule_fn emit_rule = pg->emit_rule;
	int err;

	pg->cie = &f->cie;
	pg->loc = f->start;
	pg->signal = f->cie.signal;
	pg->emit = NULL;		/* the CIE's instructions make no rows */
	pg->emit_rule = NULL;
	err = run(pg, &insns, NULL);
	if (err)
		return err;
	if (pg->past)
		return -EINVAL;		/* the CIE's instructions cannot advance */
	pg->emit = emit;
	pg->emit_rule = emit_rule;
	pg->init = pg->row;
	pg->depth = 0;
	return run(pg, &f->insns, &pg->init);
}

int cfi__rule_at(const struct cfi_mem *m, uint64_t fde_vaddr, uint64_t pc, struct cfi_rule *out)
{
	struct prog pg;
	struct fde f;
	int err;

	err = fde_open(m, fde_vaddr, &f);
	if (err)
		return err;
	if (pc < f.start || pc - f.start >= f.range)
		return -ENOENT;
	memset(&pg, 0, sizeof(pg));
	pg.pc = pc;
	err = fde_run(&pg, &f);
	if (err)
		return err;
	return prog_rule(&pg, out);
}

int cfi__lookup(const struct cfi_mem *m, const struct fde_table *t, uint64_t pc,
		struct cfi_rule *r)
{
	uint64_t fde;

	if (fde_table__find(t, pc, NULL, &fde))
		return -ENOENT;
	return cfi__rule_at(m, fde, pc, r);
}

int cfi__fde_range(const struct cfi_mem *m, uint64_t fde_vaddr, uint64_t *start, uint64_t *end)
{
	struct fde f;
	int err = fde_open(m, fde_vaddr, &f);

	if (err)
		return err;
	*start = f.start;
	*end = f.start + f.range;
	return 0;
}

/* Whether the N bytes at P hold DW_CFA_undefined for the return address. */
static bool has_undefined_ra(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++)
		if (p[i] == CFA_undefined && p[i + 1] == CFI_REG_RA)
			return true;
	return false;
}

bool cfi__may_end_stack(const struct cfi_mem *m, uint64_t fde_vaddr)
{
	struct fde f;

	if (fde_open(m, fde_vaddr, &f))
		return false;
	return has_undefined_ra(f.cie.insns.p, (size_t)(f.cie.insns.end - f.cie.insns.p)) ||
	       has_undefined_ra(f.insns.p, (size_t)(f.insns.end - f.insns.p));
}

/* --- the whole table, row by row ---------------------------------------------------------- */

/* What ROW says of frame records (see enum cfi_frame). */
static enum cfi_frame row_frame(const struct row *row)
{
	if (row->ra.where == CFI_UNDEFINED)
		return CFI_FRAME_OUTERMOST;
	if (row->cfa_unsup || row->cfa_deref || row->ra.where != CFI_AT_CFA || row->ra.off != -8)
		return CFI_FRAME_OTHER;
	if (row->cfa_reg == CFI_REG_RBP && row->cfa_off == 16 && row->bp.where == CFI_AT_CFA &&
	    row->bp.off == -16)
		return CFI_FRAME_RECORD;
	if (row->cfa_reg == CFI_REG_RSP && (row->cfa_off == 8 || row->cfa_off == 16))
		return row->cfa_off == 8 ? CFI_FRAME_SP8 : CFI_FRAME_SP16;
	if (row->cfa_reg == CFI_REG_RSP && row->cfa_off > 16 && row->cfa_off <= INT32_MAX &&
	    !(row->cfa_off & 7) && row->bp.where == CFI_SAME)
		return CFI_FRAME_SPN;
	return CFI_FRAME_OTHER;
}

/* K of CFA = rsp + K for the rows row_frame calls CFI_FRAME_SP*, else 0. */
static int32_t row_sp_off(const struct row *row)
{
	switch (row_frame(row)) {
	case CFI_FRAME_SP8: case CFI_FRAME_SP16: case CFI_FRAME_SPN:
		return (int32_t)row->cfa_off;
	default:
		return 0;
	}
}

/* Run the whole CFA program of the FDE at FDE_VADDR, each row to FN (frame kinds) or RFN
 * (rules); a signal frame is one CFI_FRAME_OTHER row for FN. */
static int rows_run(const struct cfi_mem *m, uint64_t fde_vaddr, cfi_row_fn fn, cfi_rule_fn rfn,
		    void *arg, uint64_t *start, uint64_t *end)
{
	struct prog pg;
	struct fde f;
	int err;

	err = fde_open(m, fde_vaddr, &f);
	if (err)
		return err;
	*start = f.start;
	*end = f.start + f.range;
	if (fn && f.cie.signal) {
		if (f.range)
			fn(arg, f.start, *end, CFI_FRAME_OTHER, 0);
		return 0;
	}
	memset(&pg, 0, sizeof(pg));
	pg.pc = *end;
	pg.emit = fn;
	pg.emit_rule = rfn;
	pg.arg = arg;
	err = fde_run(&pg, &f);
	if (!err && pg.backwards)
		err = -EINVAL;
	if (err)
		return err;
	/* The last row runs to the FDE's end; after an operation we cannot follow, so does
	 * what we cannot say. */
	if (pg.loc < *end)
		emit_row(&pg, pg.loc, *end);
	return 0;
}

int cfi__rows(const struct cfi_mem *m, uint64_t fde_vaddr, cfi_row_fn fn, void *arg,
	      uint64_t *start, uint64_t *end)
{
	return rows_run(m, fde_vaddr, fn, NULL, arg, start, end);
}

int cfi__rule_rows(const struct cfi_mem *m, uint64_t fde_vaddr, cfi_rule_fn fn, void *arg,
		   uint64_t *start, uint64_t *end)
{
	return rows_run(m, fde_vaddr, NULL, fn, arg, start, end);
}

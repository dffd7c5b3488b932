// SPDX-License-Identifier: GPL-3.0-or-later
/* bpftabs: the rules BPF's walk follows from the files' tables (the rest left to userspace),
 * and a table cut into shards. */
#include <stdlib.h>
#include <string.h>
#include "collect/bpftabs.h"
#include "suites.h"

static void test_urow(void)
{
	/* A frameless function: CFA = rsp + 24, return address at CFA - 8. */
	struct cfi_rule sp = { .cfa_reg = CFI_REG_RSP, .cfa_off = 24, .ra = CFI_AT_CFA,
			       .ra_off = -8 };
	/* A frame record: CFA = rbp + 16, rbp at CFA - 16. */
	struct cfi_rule bp = { .cfa_reg = CFI_REG_RBP, .cfa_off = 16, .ra = CFI_AT_CFA,
			       .ra_off = -8, .bp = CFI_AT_CFA, .bp_off = -16 };
	struct cfi_rule r;
	struct urow u;

	u = bpftabs__urow(0x40, &sp);
	CU_ASSERT(u.start == 0x40 && u.cfa == UROW_RSP && u.cfa_off == 24 && u.ra_off == -8 &&
		  u.bp == UROW_BP_SAME);
	u = bpftabs__urow(0x50, &bp);
	CU_ASSERT(u.cfa == UROW_RBP && u.cfa_off == 16 && u.bp == UROW_BP_AT_CFA &&
		  u.bp_off == -16);
	/* The stack's first frame. */
	r = (struct cfi_rule){ .cfa_reg = CFI_REG_RSP, .cfa_off = 8, .ra = CFI_UNDEFINED };
	CU_ASSERT_EQUAL(bpftabs__urow(0, &r).cfa, UROW_OUTERMOST);
	/* A .plt entry: 8 more past the cut; rbp as it was. */
	r = (struct cfi_rule){ .cfa_reg = CFI_REG_RSP, .cfa_deref = CFI_CFA_PLT, .cfa_off = 8,
			       .plt_cut = 11, .ra = CFI_AT_CFA, .ra_off = -8 };
	u = bpftabs__urow(0, &r);
	CU_ASSERT(u.cfa == UROW_PLT && u.bp_off == 11 && u.bp == UROW_BP_SAME);
	/* A realigning function's CFA = *(rbp - 8). */
	r = bp;
	r.cfa_deref = CFI_CFA_DEREF;
	r.cfa_off = -8;
	CU_ASSERT_EQUAL(bpftabs__urow(0, &r).cfa, UROW_DEREF_RBP);
	r.bp = CFI_UNDEFINED;
	CU_ASSERT_EQUAL(bpftabs__urow(0, &r).bp, UROW_BP_UNDEFINED);
	/* Left to userspace from the frame: no rule, a signal frame (rsp and rbp are all
	 * they need). */
	CU_ASSERT_EQUAL(bpftabs__urow(0, NULL).cfa, UROW_SP_ONLY);
	r = sp;
	r.signal = 1;
	CU_ASSERT_EQUAL(bpftabs__urow(0, &r).cfa, UROW_SP_ONLY);
	/* A CFA from another register (rbx: OpenSSL's), kept with the rule; a row with a rule
	 * for a callee-saved register says so. */
	r = sp;
	r.cfa_reg = 3;
	u = bpftabs__urow(0, &r);
	CU_ASSERT(u.cfa == UROW_REG && u.reg == 3 && u.cfa_off == 24 && u.flags == 0);
	r.cs[1] = CFI_AT_CFA;	/* r12 saved */
	r.cs_off[1] = -16;
	CU_ASSERT_EQUAL(bpftabs__urow(0, &r).flags, UROW_F_CS);
	CU_ASSERT_EQUAL(bpftabs__urow(0, &bp).flags, 0);
	/* From the leaf: that register's word as the CFA, rbp kept at sp or in a register,
	 * offsets past 16 bits, a return address in a register. */
	r = sp;
	r.cfa_reg = 3;
	r.cfa_deref = CFI_CFA_DEREF;
	CU_ASSERT_EQUAL(bpftabs__urow(0, &r).cfa, UROW_NONE);
	r = bp;
	r.bp = CFI_AT_SP;
	CU_ASSERT_EQUAL(bpftabs__urow(0, &r).cfa, UROW_NONE);
	r = bp;
	r.bp = CFI_IN_REG;
	CU_ASSERT_EQUAL(bpftabs__urow(0, &r).cfa, UROW_NONE);
	r = bp;
	r.bp_off = -70000;
	CU_ASSERT_EQUAL(bpftabs__urow(0, &r).cfa, UROW_NONE);
	r = sp;
	r.ra = CFI_IN_REG;
	CU_ASSERT_EQUAL(bpftabs__urow(0, &r).cfa, UROW_NONE);
	r = (struct cfi_rule){ .cfa_reg = CFI_REG_RSP, .cfa_deref = CFI_CFA_PLT, .cfa_off = 8,
			       .plt_cut = 11, .ra = CFI_AT_CFA, .ra_off = -8, .bp = CFI_AT_CFA };
	CU_ASSERT_EQUAL(bpftabs__urow(0, &r).cfa, UROW_NONE);
	/* A large frame's CFA offset is kept whole (32 bits). */
	r = sp;
	r.cfa_off = 0x12348;
	CU_ASSERT_EQUAL(bpftabs__urow(0, &r).cfa_off, 0x12348);
}

/* A table of N rows, one every 16 bytes, rule 0 (frameless) but each 7th: no rule. */
static struct utab *table(uint32_t n)
{
	struct utab *t = calloc(1, sizeof(*t));
	static struct cfi_rule rule = { .cfa_reg = CFI_REG_RSP, .cfa_off = 8, .ra = CFI_AT_CFA,
					.ra_off = -8 };

	t->rows = calloc(n, sizeof(*t->rows));
	t->rules = &rule;
	t->nr_rules = 1;
	t->nr_rows = n;
	for (uint32_t i = 0; i < n; i++)
		t->rows[i] = (struct utab_row){ i * 16, i % 7 ? 0 : UTAB_NONE };
	return t;
}

static void test_shards(void)
{
	struct ushard *sh = malloc(sizeof(*sh));
	struct utab *t = table(UTAB_SHARD_ROWS + 10);

	CU_ASSERT_PTR_NOT_NULL_FATAL(sh);
	CU_ASSERT_EQUAL(bpftabs__nr_shards(t), 2);
	bpftabs__fill(t, 0, sh);
	CU_ASSERT(sh->rows[0].start == 0 && sh->rows[0].cfa == UROW_SP_ONLY);
	CU_ASSERT(sh->rows[1].start == 16 && sh->rows[1].cfa == UROW_RSP);
	CU_ASSERT_EQUAL(sh->rows[UTAB_SHARD_ROWS - 1].start, (UTAB_SHARD_ROWS - 1) * 16);
	/* V8's builtins (no FDE, records at their calls): the record's row. */
	t->rows[14].rule = UTAB_RECORD;
	bpftabs__fill(t, 0, sh);
	CU_ASSERT(sh->rows[14].start == 14 * 16 && sh->rows[14].cfa == UROW_RECORD);
	CU_ASSERT_EQUAL(sh->rows[7].cfa, UROW_SP_ONLY);
	/* The second: its ten rows, then rows past the last that no offset reaches. */
	bpftabs__fill(t, UTAB_SHARD_ROWS, sh);
	CU_ASSERT_EQUAL(sh->rows[0].start, UTAB_SHARD_ROWS * 16);
	CU_ASSERT_EQUAL(sh->rows[9].start, (UTAB_SHARD_ROWS + 9) * 16);
	CU_ASSERT(sh->rows[10].start == UINT32_MAX && sh->rows[10].cfa == UROW_NONE);
	CU_ASSERT(sh->rows[UTAB_SHARD_ROWS - 1].start == UINT32_MAX);
	free(t->rows);
	free(t);
	/* More rows than a file may have in BPF: as many shards as it may. */
	t = table(UTAB_FILE_SHARDS * UTAB_SHARD_ROWS + 1);
	CU_ASSERT_EQUAL(bpftabs__nr_shards(t), UTAB_FILE_SHARDS);
	t->nr_rows = 0;
	CU_ASSERT_EQUAL(bpftabs__nr_shards(t), 0);
	free(t->rows);
	free(t);
	free(sh);
}

int register_bpftabs_suite(void)
{
	CU_pSuite s = CU_add_suite("bpftabs", NULL, NULL);

	if (!s ||
	    !CU_add_test(s, "rules BPF follows, the rest userspace's", test_urow) ||
	    !CU_add_test(s, "a table in shards", test_shards))
		return -1;
	return 0;
}

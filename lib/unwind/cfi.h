/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cfi: the DWARF call frame information of x86-64 code (.eh_frame's records, as the file has
 * them or as dso/ converted them from .debug_frame), read straight from the bytes, reduced to
 * what a stack walk needs at one instruction: where the caller's stack pointer (the CFA),
 * return address and rbp are. The records themselves are read by dso/cfirec.h.
 *
 * The unwinder caches one such rule per sampled address and steps with two memory reads,
 * instead of going through libunwind for every frame (which takes a lock with two
 * sigprocmask calls per step and searches the FDE table again each time). A rule also holds
 * the three expressions compilers and libraries write for x86-64: the realigning function's
 * CFA = *(reg + off), the CFA of a .plt stub (rsp + off, 8 more past the push of each
 * 16-byte entry) and a signal frame's registers saved at rsp + off (glibc's __restore_rt:
 * its CFA, rbp and return address are the interrupted code's, from the ucontext on the
 * stack); and a return address or rbp kept in another register (__vfork's). Anything else
 * (other expressions, other registers kept in registers) is -ENOTSUP, and the unwinder
 * leaves that stack to libunwind.
 */
#ifndef CFI_H
#define CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "dso/cfirec.h"

/* DWARF register numbers on x86-64 that a rule is about. */
#define CFI_REG_RBP	6
#define CFI_REG_RSP	7
#define CFI_REG_RA	16

/* Where the caller's value of a register is. */
enum cfi_where {
	CFI_SAME = 0,		/* unchanged by this frame */
	CFI_UNDEFINED,		/* none: for the return address, the outermost frame */
	CFI_AT_CFA,		/* saved in memory at CFA + off */
	CFI_AT_SP,		/* saved in memory at this frame's rsp + off (a signal frame's
				 * ucontext: DW_CFA_expression DW_OP_breg7 off) */
	CFI_IN_REG,		/* in this frame's register off (DW_CFA_register; for the
				 * return address and rbp only, off below 16 and not rsp:
				 * glibc's __vfork pops its return address into rdi) */
};

/* How the CFA is computed from cfa_reg and cfa_off. */
enum cfi_cfa {
	CFI_CFA_REG = 0,	/* cfa_reg + cfa_off */
	CFI_CFA_DEREF,		/* the word at cfa_reg + cfa_off */
	CFI_CFA_PLT,		/* rsp + cfa_off, plus 8 when (rip & 15) >= plt_cut: a .plt
				 * entry's CFA, deeper by the word it pushes */
};

/* The caller's registers at one instruction. */
struct cfi_rule {
	uint8_t cfa_reg;	/* a DWARF register number below CFI_REG_RA: rsp, rbp, or (in a
				 * leaf, whose registers the sample has) any other */
	uint8_t cfa_deref;	/* enum cfi_cfa */
	uint8_t ra;		/* enum cfi_where of the return address */
	uint8_t bp;		/* enum cfi_where of rbp */
	uint8_t plt_cut;	/* CFI_CFA_PLT: the low bits of rip from which 8 is added */
	uint8_t signal;		/* a signal frame: its return address is the interrupted
				 * instruction itself, not one after a call */
	uint16_t pad;
	int32_t cfa_off;
	int32_t ra_off;
	int32_t bp_off;
	/* The callee-saved registers rbx, r12, r13, r14, r15 (CFI_CS_REGS): enum cfi_where
	 * (CFI_UNDEFINED also for a rule no cfi_where says) and offset; a frame further out may
	 * define its CFA by one of them. */
	uint8_t cs[5];
	uint8_t pad2[3];
	int32_t cs_off[5];
};

#define CFI_NR_CS	5
extern const uint8_t cfi_cs_regs[CFI_NR_CS];	/* their DWARF numbers: 3, 12, 13, 14, 15 */

/*
 * The rule at PC (link-time address) from the FDE at FDE_VADDR and its CIE. Returns 0;
 * -ENOENT when the FDE does not cover PC; -ENOTSUP for what a rule cannot express (see
 * above); -EINVAL for malformed CFI.
 */
int cfi__rule_at(const struct cfi_mem *m, uint64_t fde_vaddr, uint64_t pc, struct cfi_rule *r);

/*
 * What one row of an FDE's CFA table says about frame records, which a frame-pointer walk
 * follows: from a return address in a function that keeps none at that address, the walk
 * skips frames (rbp is still its caller's) or reads garbage.
 */
enum cfi_frame {
	CFI_FRAME_RECORD = 0,	/* CFA = rbp + 16, rbp saved at CFA - 16: [rbp] is the caller's
				 * rbp, [rbp + 8] the return address */
	CFI_FRAME_SP8,		/* CFA = rsp + 8: the return address at [rsp] (entry, or a
				 * function that pushed nothing; no aligned call can be here) */
	CFI_FRAME_SP16,		/* CFA = rsp + 16: the return address at [rsp + 8] */
	CFI_FRAME_OTHER,	/* any other rule, a signal frame, or one we cannot follow */
	CFI_FRAME_OUTERMOST,	/* the return address is undefined: a thread's first frame */
	CFI_FRAME_SPN,		/* CFA = rsp + K, K > 16 a multiple of 8, the return address at
				 * CFA - 8, rbp as the caller left it as far as the CFI says (Go's
				 * rows: its CFI never says where rbp is saved) */
};

/* Called for each row [START, END) of a CFA table (link-time addresses), in order; SP_OFF is
 * K of CFA = rsp + K for the CFI_FRAME_SP* kinds (8, 16, K), else 0. */
typedef void (*cfi_row_fn)(void *arg, uint64_t start, uint64_t end, enum cfi_frame kind,
			   int32_t sp_off);

/*
 * Run the whole CFA program of the FDE at FDE_VADDR, calling FN with ARG for each row, in
 * increasing order, up to the FDE's end; *START and *END get the FDE's range. After an
 * operation the program cannot follow, the rest of the range is one CFI_FRAME_OTHER row.
 * Returns 0, -EINVAL for malformed CFI (a row may have been reported before) or -ENOTSUP.
 */
int cfi__rows(const struct cfi_mem *m, uint64_t fde_vaddr, cfi_row_fn fn, void *arg,
	      uint64_t *start, uint64_t *end);

/* Called for each row [START, END) of a CFA table with its rule R (ERR 0), or ERR -ENOTSUP
 * (R NULL) where no rule can say it. */
typedef void (*cfi_rule_fn)(void *arg, uint64_t start, uint64_t end, int err,
			    const struct cfi_rule *r);

/*
 * Run the whole CFA program of the FDE at FDE_VADDR, calling FN with ARG for each row and its
 * rule (cfi__rule_at's at any address of the row), in increasing order, up to the FDE's end;
 * *START and *END get the FDE's range. Returns 0, -EINVAL for malformed CFI (a row may have
 * been reported before) or -ENOTSUP.
 */
int cfi__rule_rows(const struct cfi_mem *m, uint64_t fde_vaddr, cfi_rule_fn fn, void *arg,
		   uint64_t *start, uint64_t *end);

/* [*START, *END): the code the FDE at FDE_VADDR covers. Returns 0, -EINVAL or -ENOTSUP. */
int cfi__fde_range(const struct cfi_mem *m, uint64_t fde_vaddr, uint64_t *start, uint64_t *end);

/* Whether the instructions of the FDE at FDE_VADDR or of its CIE hold the bytes of
 * DW_CFA_undefined for the return address, the mark of a thread's first frame (those bytes
 * may also be operands of other instructions): a cheap filter before cfi__rows. False when
 * the FDE cannot be read. */
bool cfi__may_end_stack(const struct cfi_mem *m, uint64_t fde_vaddr);

/* The FDE of table T that may cover PC (fde_table__find), then cfi__rule_at. */
int cfi__lookup(const struct cfi_mem *m, const struct fde_table *t, uint64_t pc,
		struct cfi_rule *r);

#endif

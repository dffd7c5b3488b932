/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Where a leaf in code without unwind info (JIT code) has its return address, from its
 * machine code at the sample: a scan forward from pc, as the code will run, over the few
 * instructions JIT compilers put in prologues and epilogues.
 *
 * A walk from rbp takes the record at rbp for the leaf's own. In JIT code that keeps frame
 * pointers (HotSpot with -XX:+PreserveFramePointer, V8) that is true only in the function's
 * body: in its prologue and epilogue rbp is still, or again, the caller's, and the walk would
 * leave the caller out with nothing to say so. HotSpot's C2 code of a small method keeps its
 * record for 4 of its 13 instructions.
 *
 * The scan follows rsp and rbp relative to the sample's rsp until it can tell:
 * - a `ret`: the return address is at rsp then, rbp is the caller's;
 * - a `pop rbp` (rsp not taken from rbp): the caller's rbp is at rsp then, the return
 *   address above it;
 * - `leave`, or `mov rbp, rsp` then `pop rbp`: the record at rbp is the leaf's (LEAF_FRAMED:
 *   said by its code, as LEAF_RECORD is not: code that may keep no record, V8's builtins, is
 *   taken by its record on this word only);
 * - rbp set from rsp (a prologue: `mov rsp, rbp`, `lea X(rsp), rbp`, then `add`s), then any
 *   instruction it does not know: the record will be at that rbp, the return address above
 *   it; the caller's rbp is in the register if the scan saw it stored there, else already
 *   in the record's slot;
 * - any other instruction it does not know, a call or a jump, rbp untouched: nothing says
 *   the record at rbp is not the leaf's (the walk goes on from it, as without the scan).
 * Conditional jumps are taken as not taken (HotSpot's safepoint poll before its `ret`).
 * What it cannot follow (rbp changed from a value it does not know, rsp taken from an rbp
 * it does not know before a `ret`) is LEAF_CUT: rbp is no record to walk from.
 *
 * Plain C on a byte buffer: BPF runs it (bpf/walk.bpf.h) on the code it read at the sample,
 * and the unit tests on code taken from HotSpot and V8.
 */
#ifndef PROFILE_LEAFSCAN_H
#define PROFILE_LEAFSCAN_H

#define LEAF_SCAN_BYTES	64	/* code read at pc (a power of two) */
#define LEAF_SCAN_INSNS	16	/* instructions followed at most */

enum leaf_verdict {
	LEAF_GOING = 0,		/* (scanning) */
	LEAF_RECORD,		/* the record at rbp is the leaf's, or nothing says it is not */
	LEAF_RA,		/* the return address is at sp + off, the caller's rbp in rbp */
	LEAF_RA_BP,		/* the return address is at sp + off, the caller's rbp below it */
	LEAF_CUT,		/* rbp is not the leaf's record, and the scan cannot say more */
	LEAF_FRAMED,		/* the record at rbp is the leaf's: the scan saw it left (leave,
				 * or rsp taken from rbp, then pop rbp) */
};

struct leaf_scan {
	/* The code at pc; what could not be read is 0 (an instruction the scan does not
	 * know). 16 more: an instruction at the end reads past it. */
	__u8 c[LEAF_SCAN_BYTES + 16];
	__s32 d;		/* rsp then - the sample's rsp */
	__s32 bp_rel;		/* rbp then - the sample's rsp, when bp_known */
	__s32 saved;		/* where the scan saw rbp stored, from the sample's rsp */
	__s32 off;		/* LEAF_RA*: the return address's offset from the sample's rsp */
	__u32 i;		/* offset of the next instruction in c */
	__u8 bp_known;		/* bp_rel holds */
	__u8 bp_set;		/* the scan saw rbp written */
	__u8 saved_ok;		/* the scan saw rbp stored on the stack (saved) */
	__u8 sp_lost;		/* the scan saw rsp taken from an rbp it does not know */
	__u8 verdict;		/* enum leaf_verdict */
	__u8 pad[3];
};

/* A scan of the code in S->c for a sample whose rbp was BP_IS_SP: rbp == rsp. */
static __always_inline void leaf_scan_init(struct leaf_scan *s, int bp_is_sp)
{
	s->d = 0;
	s->bp_rel = 0;
	s->saved = 0;
	s->off = 0;
	s->i = 0;
	s->bp_known = bp_is_sp != 0;
	s->bp_set = 0;
	s->saved_ok = 0;
	s->sp_lost = 0;
	s->verdict = LEAF_GOING;
}

static __always_inline __s32 leaf_imm32(const __u8 *p)
{
	return (__s32)((__u32)p[0] | (__u32)p[1] << 8 | (__u32)p[2] << 16 | (__u32)p[3] << 24);
}

/* The scan stops at an instruction it does not follow: what it saw of rbp says. */
static __always_inline int leaf_scan_stop(struct leaf_scan *s)
{
	if (!s->bp_set)
		s->verdict = LEAF_RECORD;
	else if (!s->bp_known || s->sp_lost)
		s->verdict = LEAF_CUT;
	else if (s->saved_ok && s->saved == s->bp_rel)
		s->verdict = LEAF_RA;
	else if (!s->saved_ok && s->bp_rel >= 0)
		s->verdict = LEAF_RA_BP;
	else
		s->verdict = LEAF_CUT;
	if (s->verdict == LEAF_RA || s->verdict == LEAF_RA_BP)
		s->off = s->bp_rel + 8;
	return s->verdict;
}

/* The scan's end, after its steps: stopped where it went no further, and a return address
 * outside [sp, sp + 4 KiB], unaligned, or with the caller's rbp below sp, taken for LEAF_CUT.
 * Returns the verdict. (The one check BPF's walks and userspace's unwinder both go by.) */
static __always_inline int leaf_scan_finish(struct leaf_scan *s)
{
	if (s->verdict == LEAF_GOING)
		leaf_scan_stop(s);
	if ((s->verdict == LEAF_RA || s->verdict == LEAF_RA_BP) &&
	    (s->off < 0 || s->off > 4096 || (s->off & 7) ||
	     (s->verdict == LEAF_RA_BP && s->off < 8)))
		s->verdict = LEAF_CUT;
	return s->verdict;
}

/* One instruction of the scan; returns its verdict, LEAF_GOING to go on. */
static __always_inline int leaf_scan_step(struct leaf_scan *s)
{
	const __u8 *p;
	__u8 op, o, m;
	__s32 v;

	if (s->i >= LEAF_SCAN_BYTES)
		return leaf_scan_stop(s);
	p = &s->c[s->i & (LEAF_SCAN_BYTES - 1)];
	op = p[0];
	o = p[1];
	m = p[2];
	/* ret, ret imm16 */
	if (op == 0xc3 || op == 0xc2) {
		if (s->bp_set || s->sp_lost)
			return s->verdict = LEAF_CUT;
		s->off = s->d;
		return s->verdict = LEAF_RA;
	}
	/* pop rbp */
	if (op == 0x5d) {
		if (s->bp_set)
			return s->verdict = LEAF_CUT;
		if (s->sp_lost)
			return s->verdict = LEAF_FRAMED;
		s->off = s->d + 8;
		/* (What the scan saw pushed is still in rbp; below sp it is not written.) */
		if (s->saved_ok && s->saved == s->d)
			return s->verdict = LEAF_RA;
		return s->verdict = s->d >= 0 ? LEAF_RA_BP : LEAF_CUT;
	}
	/* leave */
	if (op == 0xc9)
		return s->verdict = s->bp_set ? LEAF_CUT : LEAF_FRAMED;
	/* push and pop of the other registers; push rbp stores it */
	if (op >= 0x50 && op <= 0x5f) {
		if (op == 0x55 && !s->bp_set && !s->sp_lost) {
			s->saved = s->d - 8;
			s->saved_ok = 1;
		}
		s->d += op < 0x58 ? -8 : 8;
		s->i += 1;
		return LEAF_GOING;
	}
	if (op == 0x41 && o >= 0x50 && o <= 0x5f) {
		s->d += o < 0x58 ? -8 : 8;
		s->i += 2;
		return LEAF_GOING;
	}
	/* nop, endbr64, vzeroupper, the long nops */
	if (op == 0x90) {
		s->i += 1;
		return LEAF_GOING;
	}
	if (op == 0xf3 && o == 0x0f && m == 0x1e && p[3] == 0xfa) {
		s->i += 4;
		return LEAF_GOING;
	}
	if (op == 0xc5 && o == 0xf8 && m == 0x77) {
		s->i += 3;
		return LEAF_GOING;
	}
	if (op == 0x0f && o == 0x1f && (m & 0x38) == 0 && (m >> 6) != 3) {
		s->i += 3 + ((m >> 6) == 1 ? 1 : (m >> 6) == 2 ? 4 : 0) +
			((m & 7) == 4 ? 1 : 0) + ((m >> 6) == 0 && (m & 7) == 5 ? 4 : 0);
		return LEAF_GOING;
	}
	/* jcc rel8, jcc rel32: not taken */
	if (op >= 0x70 && op <= 0x7f) {
		s->i += 2;
		return LEAF_GOING;
	}
	if (op == 0x0f && o >= 0x80 && o <= 0x8f) {
		s->i += 6;
		return LEAF_GOING;
	}
	/* mov eax, disp32(rsp): HotSpot's stack bang, below sp */
	if (op == 0x89 && o == 0x84 && m == 0x24) {
		s->i += 7;
		return LEAF_GOING;
	}
	/* cmp disp(r15), rsp: HotSpot's stack watermark check before its ret */
	if (op == 0x49 && o == 0x3b && (m == 0xa7 || m == 0x67)) {
		s->i += m == 0xa7 ? 7 : 4;
		return LEAF_GOING;
	}
	if (op != 0x48)
		return leaf_scan_stop(s);
	/* mov rsp, rbp */
	if ((o == 0x89 && m == 0xe5) || (o == 0x8b && m == 0xec)) {
		s->bp_known = !s->sp_lost;
		s->bp_rel = s->d;
		s->bp_set = 1;
		s->i += 3;
		return LEAF_GOING;
	}
	/* mov rbp, rsp */
	if ((o == 0x89 && m == 0xec) || (o == 0x8b && m == 0xe5)) {
		if (s->bp_set && s->bp_known)
			s->d = s->bp_rel;
		else
			s->sp_lost = 1;
		s->i += 3;
		return LEAF_GOING;
	}
	/* add and sub of an immediate to rsp or rbp */
	if ((o == 0x83 || o == 0x81) && (m == 0xc4 || m == 0xec || m == 0xc5 || m == 0xed)) {
		v = o == 0x83 ? (__s32)(__s8)p[3] : leaf_imm32(p + 3);
		if (m == 0xec || m == 0xed)
			v = -v;
		if (m == 0xc4 || m == 0xec) {
			s->d += v;
		} else {
			s->bp_rel += v;
			s->bp_set = 1;
		}
		s->i += o == 0x83 ? 4 : 7;
		return LEAF_GOING;
	}
	/* lea disp(rsp), rbp */
	if (o == 0x8d && (m == 0x6c || m == 0xac) && p[3] == 0x24) {
		v = m == 0x6c ? (__s32)(__s8)p[4] : leaf_imm32(p + 4);
		s->bp_known = !s->sp_lost;
		s->bp_rel = s->d + v;
		s->bp_set = 1;
		s->i += m == 0x6c ? 5 : 8;
		return LEAF_GOING;
	}
	/* mov rbp, disp(rsp): the caller's rbp stored */
	if (o == 0x89 && (m == 0x6c || m == 0xac) && p[3] == 0x24) {
		v = m == 0x6c ? (__s32)(__s8)p[4] : leaf_imm32(p + 4);
		if (!s->bp_set && !s->sp_lost) {
			s->saved = s->d + v;
			s->saved_ok = 1;
		}
		s->i += m == 0x6c ? 5 : 8;
		return LEAF_GOING;
	}
	return leaf_scan_stop(s);
}

#endif

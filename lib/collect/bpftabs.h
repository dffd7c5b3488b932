/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * bpftabs: the files' unwind tables as BPF walks them (bpf/profile.h's struct urow, shards of
 * UTAB_SHARD_ROWS): the pure rules, for the unit tests; the session side is in
 * session_int.h.
 */
#ifndef COLLECT_BPFTABS_H
#define COLLECT_BPFTABS_H

#include <stdint.h>
#include <linux/types.h>
#include "profile.h"
#include "unwind/cfi.h"
#include "unwind/utab.h"

/*
 * The BPF row from link-time offset START with rule R (NULL: no rule there): UROW_SP_ONLY
 * where userspace goes on from the frame's rsp and rbp (no rule: a scan; a signal frame),
 * UROW_REG for a CFA from another register than rsp or rbp, UROW_NONE for whatever else the
 * BPF walk does not follow (a CFA of another register dereferenced, a return address in a
 * register, rbp kept at sp or in a register, an offset past 16 bits), which leaves a stack
 * there to userspace from its leaf; UROW_F_CS where the rule has one for a callee-saved
 * register other than rbp.
 */
struct urow bpftabs__urow(uint32_t start, const struct cfi_rule *r);

/* Shard SH made of T's rows from index FROM on (UTAB_SHARD_ROWS of them, those past T's
 * last with start UINT32_MAX and no rule); a stretch of UTAB_RECORD (V8's builtins) a row
 * of UROW_RECORD. */
void bpftabs__fill(const struct utab *t, uint32_t from, struct ushard *sh);

/* How many shards T takes in BPF: at most UTAB_FILE_SHARDS (the last one then ends the
 * rows BPF has, with one row of no rule). */
uint32_t bpftabs__nr_shards(const struct utab *t);

#endif

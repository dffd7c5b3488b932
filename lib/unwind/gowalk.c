// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * gowalk: frame-pointer walks put right where their leaf is in one of Go's windows
 * (frames_go.c): instructions of a function with a frame where rbp is not its record.
 *
 * BPF has 64 spans per process, and a Go program has a few windows in each of its thousands of
 * functions: they are trusted there, and the walks from them mended here, when their stacks
 * are drained. In a prologue (after sub, before lea) or an epilogue (after the mov that
 * restores rbp, before add), rbp is the caller's record, so the walk gives the leaf X, then
 * where the caller C1 returns to in C2, and skips C1. The return address into C1 is at sp +
 * frame size, where X's CFI says: BPF keeps the 8 words at sp for a process with Go code
 * (proc_ranges.go_windows), and the word there is C1's return address, as a DWARF unwind
 * takes it (a frame of up to 56 bytes; fibGo's recursion, 48% cut before, is whole). Past
 * them: when C2 called C1 directly, the call before that return address names C1, and when
 * one call in C1 only may go to X (the one direct call of X, or the one indirect call of a
 * function without any), that call is where C1 returns to. Anything less certain leaves the
 * leaf alone, truncated.
 */
#include <errno.h>
#include <string.h>
#include "proc/procmaps.h"
#include "unwind/unwind_int.h"

/* The file of process PID at runtime address ADDR with its table, and the bias. */
static struct ufile *ufile_at(struct unwinder *u, pid_t pid, uint64_t addr, uint64_t *bias)
{
	const struct map *m = procmaps__find(u->pm, pid, addr);
	struct ufile *f = m && map__is_dso(m) ? unwinder__file(u, pid, m) : NULL;

	if (!f || !f->tab || utab__bias(f->tab, m, addr, bias))
		return NULL;
	return f;
}

/* The return address into C1 for leaf X at link-time IP of F, skipped by a walk whose next
 * return address is RET2 (runtime); 0 when it cannot be told. */
static uint64_t lost_caller(struct unwinder *u, pid_t pid, struct ufile *f, uint64_t bias,
			    uint64_t ip, uint64_t ret2)
{
	uint64_t x, xend, c1, start, c1end, b2, at;
	struct ufile *f2 = ufile_at(u, pid, ret2 - 1, &b2);
	const struct utab *t = f->tab;

	/* Go's direct calls stay in their file. */
	if (f2 != f || b2 != bias || utab__go_function(t, ip, &x, &xend))
		return 0;
	c1 = utab__called_before(t, ret2 - bias);
	if (!c1 || utab__go_function(t, c1, &start, &c1end) || start != c1)
		return 0;
	at = utab__only_call(t, c1, c1end, x);
	return at ? at + bias : 0;
}

/* The return address of a leaf at link-time IP of F, from the words at sp at the sample
 * (WORDS, N of them; 0 where not code) where its CFI says it is; 0 when not among them. */
static uint64_t ret_in_words(struct ufile *f, uint64_t ip, const uint64_t *words, int n)
{
	struct cfi_rule r;
	int64_t at;

	if (!words || ufile__rule(f, ip, &r) || r.cfa_reg != CFI_REG_RSP || r.cfa_deref ||
	    r.ra != CFI_AT_CFA || r.signal)
		return 0;
	at = (int64_t)r.cfa_off + r.ra_off;
	if (at < 0 || at % 8 || at / 8 >= n)
		return 0;
	return words[at / 8];
}

int unwinder__fp_window(struct unwinder *u, pid_t pid, uint64_t *ips, int nr,
			const uint64_t *words, int nr_words)
{
	uint64_t bias, ret;
	struct ufile *f;

	if (nr < 1 || !(f = ufile_at(u, pid, ips[0], &bias)) || !f->tab->lost.nr)
		return nr;
	switch (frames__kind(&f->tab->lost, ips[0] - bias)) {
	case FRAME_LOST_CALLER:
		/* Where the leaf's CFI says its return address is, when the walk kept that
		 * word; else by the calls around it. */
		ret = ret_in_words(f, ips[0] - bias, words, nr_words);
		if (!ret && nr >= 2)
			ret = lost_caller(u, pid, f, bias, ips[0] - bias, ips[1]);
		if (!ret)
			return -ENOENT;
		memmove(&ips[2], &ips[1], (nr - 1) * sizeof(*ips));
		ips[1] = ret;
		return nr + 1;
	case FRAME_LOST_EXTRA:
		if (nr < 3)
			return -ENOENT;
		memmove(&ips[1], &ips[2], (nr - 2) * sizeof(*ips));
		return nr - 1;
	default:
		return nr;
	}
}

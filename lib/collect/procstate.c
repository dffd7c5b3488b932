// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/procstate: what BPF knows of each profiled process, in its `procs` entry (struct
 * proc_ranges): the executable ranges (candidate return addresses), the runtime ranges of
 * the stack-bottom functions (complete walks), and the copy hint (bytes of stack a DWARF
 * sample carries).
 */
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collect/fixup.h"
#include "collect/session_int.h"
#include "dso/elfsym.h"
#include "proc/procmaps.h"
#include "symbolize/symbolize.h"
#include "profile.skel.h"

#define HINT_MARGIN	2048	/* bytes of stack copied past what unwinds have needed */

/* Merge the two closest neighbouring ranges of PR into one. */
static void merge_closest(struct proc_ranges *pr)
{
	uint64_t gap = UINT64_MAX;
	uint32_t i, best = 0;

	for (i = 0; i + 1 < pr->nr_exec; i++) {
		if (pr->exec_start[i + 1] - pr->exec_end[i] < gap) {
			gap = pr->exec_start[i + 1] - pr->exec_end[i];
			best = i;
		}
	}
	pr->exec_end[best] = pr->exec_end[best + 1];
	for (i = best + 1; i + 1 < pr->nr_exec; i++) {
		pr->exec_start[i] = pr->exec_start[i + 1];
		pr->exec_end[i] = pr->exec_end[i + 1];
	}
	pr->nr_exec--;
}

/* Add [START, END) to the executable ranges of PR, kept sorted; with every slot taken, the
 * two closest neighbours merge (the ranges only filter candidate return addresses). */
static void add_exec_range(struct proc_ranges *pr, uint64_t start, uint64_t end)
{
	uint32_t i;

	if (pr->nr_exec > PROFILE_MAX_EXEC)
		pr->nr_exec = 0;
	for (i = 0; i < pr->nr_exec; i++)
		if (start < pr->exec_end[i] && end > pr->exec_start[i])
			return;	/* known, or inside a merged range */
	if (pr->nr_exec == PROFILE_MAX_EXEC)
		merge_closest(pr);
	for (i = pr->nr_exec; i > 0 && pr->exec_start[i - 1] > start; i--) {
		pr->exec_start[i] = pr->exec_start[i - 1];
		pr->exec_end[i] = pr->exec_end[i - 1];
	}
	pr->exec_start[i] = start;
	pr->exec_end[i] = end;
	pr->nr_exec++;
}

/* Runtime ranges of a C library's stack-bottom functions (fixup_stack_bottoms), from its ELF
 * file mapped at M in PID. */
static void add_bottoms(struct session *s, pid_t pid, const struct map *m, struct proc_ranges *pr)
{
	const struct load_seg *segs;
	struct elfsym *elf;
	uint64_t vaddr, start, end;
	size_t nsegs;
	int n = 0;

	elf = symbolizer__elf(s->sym, pid, m);
	if (!elf)
		return;
	segs = elfsym__segs(elf, &nsegs);
	if (load_segs__off_to_vaddr(segs, nsegs, m->pgoff, &vaddr))
		return;
	for (size_t i = 0; i < FIXUP_NR_STACK_BOTTOMS && n < PROFILE_MAX_BOTTOMS; i++) {
		if (elfsym__find_range(elf, fixup_stack_bottoms[i], &start, &end))
			continue;
		pr->bottom_start[n] = start - vaddr + m->start;
		pr->bottom_end[n] = end - vaddr + m->start;
		n++;
	}
}

/* Write PID's `procs` entry PR (FLAGS: BPF_ANY, BPF_EXIST), then bump the generation that
 * tells the CPUs holding a copy of an older one to read it again. */
static int update_proc(struct session *s, pid_t pid, const struct proc_ranges *pr, __u64 flags)
{
	__u32 key = pid;

	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.procs), &key, pr, flags))
		return -errno;
	__atomic_add_fetch(&s->skel->bss->procs_gen, 1, __ATOMIC_SEQ_CST);
	return 0;
}

/*
 * A mapping was added: tell BPF the process's executable ranges and, for a C library, where
 * its stacks begin, so that frame-pointer walks ending there count as complete without
 * DWARF.
 */
void session__on_map_added(void *ctx, pid_t pid, const struct map *m)
{
	struct session *s = ctx;
	int fd = bpf_map__fd(s->skel->maps.procs);
	const char *base = strrchr(m->path, '/');
	struct proc_ranges pr;
	__u32 key = pid;

	if (bpf_map_lookup_elem(fd, &key, &pr))
		memset(&pr, 0, sizeof(pr));
	add_exec_range(&pr, m->start, m->end);
	if (base && !strncmp(base + 1, "libc.so", 7))
		add_bottoms(s, pid, m, &pr);
	update_proc(s, pid, &pr, BPF_ANY);
}

/*
 * A DWARF unwind of PID read USED bytes of stack from sp (STOP: how it ended). Make the
 * process's samples carry that much stack plus a margin, not the whole --stack-copy: the
 * copy is most of a DWARF sample's cost. Deeper stacks later are read past the copy from the
 * live process, and raise it; an unwind that ran out of stack memory restores the whole copy.
 */
void session__learn_copy_size(struct session *s, pid_t pid, size_t used, enum unwind_stop stop)
{
	uint32_t max = session__stack_copy_max(&s->opts), need;
	int fd = bpf_map__fd(s->skel->maps.procs);
	__typeof__(s->hints[0]) *h = &s->hints[(uint32_t)pid % HINT_SLOTS];
	struct proc_ranges pr;
	__u32 key = pid;

	need = stop == UNWIND_STOP_NO_MEMORY ? max : (uint32_t)((used + HINT_MARGIN + 1023) & ~1023ul);
	if (need > max)
		need = max;
	if (h->pid == pid && h->bytes >= need)
		return;
	if (bpf_map_lookup_elem(fd, &key, &pr))
		return;
	if (!pr.copy_hint || pr.copy_hint < need) {
		pr.copy_hint = need;
		if (update_proc(s, pid, &pr, BPF_EXIST))
			return;
	}
	h->pid = pid;
	h->bytes = pr.copy_hint;
}

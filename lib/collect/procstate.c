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
#include "dso/dso.h"
#include "dso/dsos.h"
#include "proc/procmaps.h"
#include "symbolize/symbolize.h"
#include "profile.skel.h"

#define HINT_MARGIN	2048	/* bytes of stack copied past what unwinds have needed */
#define HINT_WINDOW	256	/* unwinds after which a copy_hint above their need comes down */

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
	struct dso *elf;
	uint64_t start, end, rt;
	int n = 0;

	elf = dsos__get(s->dsos, pid, m, NULL);
	if (!elf)
		return;
	for (size_t i = 0; i < FIXUP_NR_STACK_BOTTOMS && n < PROFILE_MAX_BOTTOMS; i++) {
		if (dso__find_range(elf, fixup_stack_bottoms[i], &start, &end))
			continue;
		if (dso__vaddr_to_runtime(elf, m, start, &rt))
			continue;
		pr->bottom_start[n] = rt;
		pr->bottom_end[n] = rt + (end - start);
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
 * PID ran execve: its BPF state described the old program. Forget its executable ranges and
 * stack bottoms (the new program's mappings follow this record) and its copy size (the
 * stack of a new program, the dynamic linker's start-up first, is another).
 */
void session__on_exec(struct session *s, pid_t pid)
{
	int fd = bpf_map__fd(s->skel->maps.procs);
	__typeof__(s->hints[0]) *h = &s->hints[(uint32_t)pid % HINT_SLOTS];
	struct proc_ranges pr;
	__u32 key = pid;

	if (h->pid == pid)
		h->pid = 0;
	if (bpf_map_lookup_elem(fd, &key, &pr))
		return;
	memset(&pr, 0, sizeof(pr));
	update_proc(s, pid, &pr, BPF_EXIST);
}

/*
 * A DWARF unwind of PID read USED bytes of stack from sp (STOP: how it ended). Make the
 * process's samples carry that much stack plus a margin, not the whole --stack-copy: the
 * copy is most of a DWARF sample's cost. A deeper stack raises the copy at once (it was read
 * past the copy from the live process this time); an unwind that ran out of stack memory
 * restores the whole copy. The copy comes down again after HINT_WINDOW unwinds that all
 * needed less: a deep phase (the dynamic linker's start-up, say) does not cost the rest of
 * the run.
 */
void session__learn_copy_size(struct session *s, pid_t pid, size_t used, enum unwind_stop stop)
{
	uint32_t max = session__stack_copy_max(&s->opts), need, want;
	int fd = bpf_map__fd(s->skel->maps.procs);
	__typeof__(s->hints[0]) *h = &s->hints[(uint32_t)pid % HINT_SLOTS];
	struct proc_ranges pr;
	__u32 key = pid;

	need = stop == UNWIND_STOP_NO_MEMORY ? max : (uint32_t)((used + HINT_MARGIN + 1023) & ~1023ul);
	if (need > max)
		need = max;
	if (h->pid != pid)
		*h = (__typeof__(*h)){ .pid = pid };
	if (need > h->peak)
		h->peak = need;
	want = h->bytes;
	if (need > h->bytes)
		want = need;
	else if (++h->n >= HINT_WINDOW) {
		want = h->peak;
		h->n = 0;
		h->peak = 0;
	}
	if (want == h->bytes)
		return;
	if (bpf_map_lookup_elem(fd, &key, &pr))
		return;
	pr.copy_hint = want;
	if (update_proc(s, pid, &pr, BPF_EXIST))
		return;
	h->bytes = want;
}

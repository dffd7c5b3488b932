// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/procstate: what BPF knows of each profiled process, in its `procs` entry (struct
 * proc_ranges): the kinds of its code, which the frame-pointer walk checks every step
 * against (where frame records are kept, where threads start; unwind/frames.h), and the copy
 * hint (bytes of stack a DWARF sample carries).
 *
 * A process is described when it becomes a target (-p, the command and its children) or,
 * with -a, when its first sample reaches userspace: BPF sends the samples of a process it
 * knows nothing of down the DWARF path, so that no walk goes unchecked and only processes
 * that run pay for reading their files' CFI. Here each described process keeps its
 * executable mappings since its last exec with their spans, and the `procs` entry is made
 * again from them when one is added.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/bsearch.h"
#include "base/grow.h"
#include "base/htab.h"
#include "base/log.h"
#include "collect/fixup.h"
#include "dso/dsos.h"
#include "collect/session_int.h"
#include "proc/procmaps.h"
#include "unwind/frames.h"
#include "profile.skel.h"

#define HINT_MARGIN	2048	/* bytes of stack copied past what unwinds have needed */
#define HINT_WINDOW	256	/* unwinds after which a copy_hint above their need comes down */
#define MAX_BOTTOMS	8	/* stack-bottom functions per process */

_Static_assert((int)FRAME_NONE == SPAN_NONE && (int)FRAME_TRUSTED == SPAN_TRUSTED &&
	       (int)FRAME_THIN == SPAN_THIN && (int)FRAME_NOREC == SPAN_NOREC &&
	       (int)FRAME_BOTTOM == SPAN_BOTTOM, "unwind/frames.h kinds are bpf/profile.h's");

/* One executable mapping of a described process and its spans (runtime addresses). */
struct pmap {
	uint64_t start, end;
	uint64_t time;		/* struct map's */
	struct frame_spans spans;
	bool later;		/* all FRAME_NOREC: its file's table is still being made */
	bool jit;		/* anonymous code (or a memfd's): JIT code */
	const struct utab *tab;	/* its file's table for BPF's walk (NULL: none), of file */
	uint32_t tab_id;	/* (dso id) tab_id, with the bias of its rows (bpftab_map) */
	uint64_t tab_bias;
	uint64_t ino, pgoff;	/* struct map's */
};

struct pstate {
	pid_t pid;
	bool dirty;		/* mappings added since its `procs` entry was written */
	uint64_t exec_time;	/* of its last exec (the records' clock), 0: none seen */
	struct pmap *maps;	/* sorted by start, not overlapping */
	size_t nr, cap;
};

struct pstates {
	struct htab index;	/* pid -> v[] */
	struct pstate *v;
	size_t nr, cap;
	uint32_t *dirty;	/* indices in v[] of the dirty ones */
	uint32_t nr_dirty, cap_dirty;
	size_t nr_later;	/* mappings whose spans wait for their file's table */
};

static uint64_t pid_hash(pid_t pid)
{
	return hash_u64(HASH_SEED, (uint32_t)pid);
}

static struct pstate *pstate__find(struct pstates *ps, pid_t pid)
{
	uint64_t h = pid_hash(pid);
	uint32_t pos, id;

	if (!ps)
		return NULL;
	for (id = htab__first(&ps->index, h, &pos); id != HTAB_NONE;
	     id = htab__next(&ps->index, h, &pos))
		if (ps->v[id].pid == pid)
			return &ps->v[id];
	return NULL;
}

/* Drop P's mappings from index I on, up to J (exclusive). */
static void pstate__drop(struct pstates *ps, struct pstate *p, size_t i, size_t j)
{
	for (size_t k = i; k < j; k++) {
		frames__free(&p->maps[k].spans);
		ps->nr_later -= p->maps[k].later;
	}
	if (j < p->nr)	/* (maps is NULL when nr is 0: no memmove of nothing from NULL) */
		memmove(&p->maps[i], &p->maps[j], (p->nr - j) * sizeof(*p->maps));
	p->nr -= j - i;
}

void session__free_procstate(struct session *s)
{
	struct pstates *ps = s->procstate;

	if (!ps)
		return;
	for (size_t i = 0; i < ps->nr; i++) {
		pstate__drop(ps, &ps->v[i], 0, ps->v[i].nr);
		free(ps->v[i].maps);
	}
	htab__free(&ps->index);
	free(ps->v);
	free(ps->dirty);
	free(ps);
	s->procstate = NULL;
}

/* --- one mapping's spans ----------------------------------------------------------------- */

/* Add mapping M to P (replacing those it overlaps, as mmap does), with its spans. Returns 0
 * or -ENOMEM. */
static int pstate__add(struct session *s, struct pstate *p, const struct map *m)
{
	struct pmap pm = { .start = m->start, .end = m->end, .time = m->time,
			   .ino = m->ino, .pgoff = m->pgoff,
			   .jit = (m->path[0] != '/' && m->path[0] != '[') ||
				  !strncmp(m->path, "[anon:", 6) ||
				  !strncmp(m->path, "/memfd:", 7) };
	size_t i, j;
	int err;

	/* Stacks begin in fixup_stack_bottoms (session.c): the C library's, Go's. */
	err = unwinder__map_spans(s->unw, p->pid, m, PROFILE_MAX_SPANS, &pm.spans);
	pm.later = err == 1;
	if (err == 1)
		err = 0;
	if (!err && !pm.later && s->table_walk)
		pm.tab = unwinder__map_table(s->unw, p->pid, m, &pm.tab_id, &pm.tab_bias);
	if (!err)
		err = array_grow(&p->maps, &p->cap, sizeof(*p->maps), p->nr);
	if (err) {
		frames__free(&pm.spans);
		return err;
	}
	/* The first mapping ending past M's start (a process may have thousands). */
	i = BSEARCH_PREFIX(p->nr, mid, p->maps[mid].end <= m->start);
	for (j = i; j < p->nr && p->maps[j].start < m->end; j++)
		;
	pstate__drop(s->procstate, p, i, j);
	memmove(&p->maps[i + 1], &p->maps[i], (p->nr - i) * sizeof(*p->maps));
	p->maps[i] = pm;
	p->nr++;
	s->procstate->nr_later += pm.later;
	return 0;
}

/* --- the `procs` entry --------------------------------------------------------------------- */

/* Write PID's `procs` entry PR (FLAGS: BPF_ANY, BPF_EXIST), then bump the generation that
 * tells the CPUs holding a copy of an older one to read it again. */
static int update_proc(struct session *s, pid_t pid, const struct proc_ranges *pr, __u64 flags)
{
	struct proc_ranges v = *pr;
	__u32 key = pid;

	v.version = session__bpf_version(s);
	v.tgid = v.tgid_end = (__u32)pid;
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.procs), &key, &v, flags))
		return -errno;
	session__bpf_changed(s);
	return 0;
}

/* P's mappings with tables into its `proc_tabs` entry. Returns 0 or negative errno. */
static int pstate__write_tabs(struct session *s, const struct pstate *p)
{
	struct bpftab_map *v = calloc(p->nr ? p->nr : 1, sizeof(*v));
	size_t n = 0;
	int err;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < p->nr; i++)
		if (p->maps[i].tab)
			v[n++] = (struct bpftab_map){
				.start = p->maps[i].start, .end = p->maps[i].end,
				.bias = p->maps[i].tab_bias, .ino = p->maps[i].ino,
				.pgoff = p->maps[i].pgoff, .id = p->maps[i].tab_id,
				.tab = p->maps[i].tab,
			};
	err = session__write_tabs(s, p->pid, v, n);
	free(v);
	return err;
}

/*
 * The seq of PID's program now (`execs`) into *SEQ, for an entry made from what is known of
 * it: 0, or -EAGAIN while the records read may not be past its last exec (then what is known
 * may be the program before's).
 */
static int exec_seq_now(struct session *s, pid_t pid, __u32 *seq)
{
	struct exec_seen ex;
	__u32 key = pid;

	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.execs), &key, &ex)) {
		*seq = 0;
		return 0;
	}
	if (ex.time >= s->sideband_seen)
		return -EAGAIN;
	*seq = ex.seq;
	return 0;
}

/* P's mappings and their spans, gaps between them SPAN_NONE, merged down to what BPF holds,
 * into P's `procs` entry (its copy hint kept). Returns 0, -EAGAIN when the records read are
 * not past the process's last exec yet (nothing written: written again at a flush), or
 * another negative errno. */
static int pstate__write(struct session *s, const struct pstate *p)
{
	struct frame_spans all = { 0 };
	struct proc_ranges pr;
	size_t total = 1;
	__u32 key = p->pid, seq;
	int err;

	err = exec_seq_now(s, p->pid, &seq);
	if (err)
		return err;
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.procs), &key, &pr))
		memset(&pr, 0, sizeof(pr));
	/* (A copy hint learnt of the program before its exec, at the exec's reset: 0.) */
	if (pr.exec_seq != seq)
		pr.copy_hint = 0;
	pr.exec_seq = seq;
	pr.nr_spans = 0;
	pr.span_end = 0;
	pr.go_windows = 0;
	pr.jit = 0;
	for (size_t i = 0; i < p->nr; i++) {
		total += p->maps[i].spans.nr + 1;
		pr.go_windows |= p->maps[i].spans.windows;
		pr.jit |= p->maps[i].jit;
	}
	err = frames__reserve(&all, total);
	for (size_t i = 0; i < p->nr && !err; i++) {
		const struct frame_spans *ms = &p->maps[i].spans;

		if (all.nr && all.v[all.nr - 1].end < p->maps[i].start) {
			uint64_t gap = all.v[all.nr - 1].end;

			all.v[all.nr++] = (struct frame_span){ gap, p->maps[i].start, FRAME_NONE };
		}
		memcpy(&all.v[all.nr], ms->v, ms->nr * sizeof(*ms->v));
		all.nr += ms->nr;
	}
	/* The tables first: a walk that finds the new spans finds them too. */
	if (!err && s->table_walk)
		err = pstate__write_tabs(s, p);
	if (!err) {
		all.nr = frames__reduce(all.v, all.nr, PROFILE_MAX_SPANS);
		if (all.nr > PROFILE_MAX_SPANS)
			all.nr = 0;	/* bottoms only, more than BPF holds: every stack to DWARF */
		for (size_t i = 0; i < all.nr; i++) {
			pr.span_start[i] = all.v[i].start;
			pr.span_kind[i] = all.v[i].kind;
			pr.span_end = all.v[i].end;
		}
		pr.nr_spans = all.nr;
		err = update_proc(s, p->pid, &pr, BPF_ANY);
	}
	frames__free(&all);
	if (!err)
		python__describe(s, p->pid);
	return err;
}

/* P made dirty (its `procs` entry written again at the next flush). Returns 0 or -ENOMEM. */
static int pstate__dirty(struct pstates *ps, struct pstate *p)
{
	if (p->dirty)
		return 0;
	if (array_grow(&ps->dirty, &ps->cap_dirty, sizeof(*ps->dirty), ps->nr_dirty))
		return -ENOMEM;
	ps->dirty[ps->nr_dirty++] = (uint32_t)(p - ps->v);
	p->dirty = true;
	return 0;
}

/* P's `procs` entry written now, or at a flush once the records read are past its last exec.
 * Returns 0 or negative errno. */
static int pstate__write_or_later(struct session *s, struct pstate *p)
{
	int err = pstate__write(s, p);

	return err == -EAGAIN ? pstate__dirty(s->procstate, p) : err;
}

/* --- the hooks ------------------------------------------------------------------------------ */

int session__describe(struct session *s, pid_t pid)
{
	struct pstates *ps = s->procstate;
	struct pstate *p = pstate__find(ps, pid);
	const struct map *maps;
	size_t n;
	int err;

	if (p)
		return 0;
	if (!ps) {
		ps = s->procstate = calloc(1, sizeof(*ps));
		if (!ps)
			return -ENOMEM;
	}
	if (array_grow(&ps->v, &ps->cap, sizeof(*ps->v), ps->nr))
		return -ENOMEM;
	err = htab__insert(&ps->index, pid_hash(pid), (uint32_t)ps->nr);
	if (err)
		return err;
	p = &ps->v[ps->nr++];
	*p = (struct pstate){ .pid = pid };
	maps = procmaps__maps(s->maps, pid, &n);
	for (size_t i = 0; i < n && !err; i++)
		err = pstate__add(s, p, &maps[i]);
	if (!err)
		err = pstate__write_or_later(s, p);
	if (err)
		pr_warn("cannot describe the code of pid %d to BPF: %s", pid, strerror(-err));
	return err;
}

bool session__described(struct session *s, pid_t pid)
{
	return pstate__find(s->procstate, pid) != NULL;
}

uint8_t session__span_kind(struct session *s, pid_t pid, uint64_t addr)
{
	struct pstate *p = pstate__find(s->procstate, pid);
	size_t lo = p ? BSEARCH_PREFIX(p->nr, mid, p->maps[mid].end <= addr) : 0;

	if (!p || lo == p->nr || p->maps[lo].start > addr)
		return SPAN_NONE;
	return frames__kind(&p->maps[lo].spans, addr);
}

/* A mapping was added: a described process's `procs` entry is made again at the next
 * session__flush_procstate (a program maps a dozen files at start, one record each). */
void session__on_map_added(void *ctx, pid_t pid, const struct map *m)
{
	struct session *s = ctx;
	struct pstates *ps = s->procstate;
	struct pstate *p = pstate__find(ps, pid);
	int err;

	/* Anonymous code: JIT code, perhaps named in a perf map, followed as it grows. */
	if (m->path[0] != '/' && m->path[0] != '[')
		session__jitwatch_want(s, pid);
	/* A mapping of the program before the last exec, reported late. */
	if (!p || (m->time && m->time < p->exec_time))
		return;
	err = pstate__add(s, p, m);
	if (!err)
		err = pstate__dirty(ps, p);
	if (err)
		pr_warn("cannot describe the code of pid %d to BPF: %s", pid, strerror(-err));
}

void session__flush_procstate(struct session *s)
{
	struct pstates *ps = s->procstate;
	size_t left = 0;

	for (size_t i = 0; ps && i < ps->nr_dirty; i++) {
		struct pstate *p = &ps->v[ps->dirty[i]];
		int err = pstate__write(s, p);

		/* (Past an exec whose record is still to come: at the next flush.) */
		if (err == -EAGAIN) {
			ps->dirty[left++] = ps->dirty[i];
			continue;
		}
		p->dirty = false;
		if (err)
			pr_warn("cannot describe the code of pid %d to BPF: %s", p->pid,
				strerror(-err));
	}
	if (ps)
		ps->nr_dirty = left;
}

void session__respan(struct session *s)
{
	struct pstates *ps = s->procstate;

	for (size_t i = 0; ps && ps->nr_later && i < ps->nr; i++) {
		struct pstate *p = &ps->v[i];

		for (size_t k = 0; k < p->nr; k++) {
			struct pmap *pm = &p->maps[k];
			const struct map *m = pm->later ? procmaps__find(s->maps, p->pid, pm->start) :
							  NULL;
			struct frame_spans spans = { 0 };
			int r;

			/* (A mapping since replaced is made again by its own record.) */
			if (!m || m->start != pm->start || m->end != pm->end)
				continue;
			r = unwinder__map_spans(s->unw, p->pid, m, PROFILE_MAX_SPANS, &spans);
			if (r) {
				frames__free(&spans);
				continue;	/* still coming (or no memory: as it was) */
			}
			pr_debug("pid %d: spans of %#llx-%#llx made from its file's table", p->pid,
				 (unsigned long long)pm->start, (unsigned long long)pm->end);
			frames__free(&pm->spans);
			pm->spans = spans;
			pm->later = false;
			if (s->table_walk)
				pm->tab = unwinder__map_table(s->unw, p->pid, m, &pm->tab_id,
							      &pm->tab_bias);
			ps->nr_later--;
			pstate__dirty(ps, p);
		}
	}
	session__flush_procstate(s);
}

void session__on_fork(struct session *s, pid_t parent, pid_t child)
{
	struct pstate *p = pstate__find(s->procstate, child);
	const struct map *maps;
	size_t n;
	int err = 0;

	/* Whatever is known under the child's pid was an earlier process's. */
	unwinder__forget(s->unw, child);
	if (!p) {
		if (session__described(s, parent))
			session__describe(s, child);
		return;
	}
	pstate__drop(s->procstate, p, 0, p->nr);
	p->exec_time = 0;
	maps = procmaps__maps(s->maps, child, &n);
	for (size_t i = 0; i < n && !err; i++)
		err = pstate__add(s, p, &maps[i]);
	if (!err)
		err = pstate__write_or_later(s, p);
	if (err)
		pr_warn("cannot describe the code of pid %d to BPF: %s", child, strerror(-err));
}

void session__evict_tables(struct session *s)
{
	struct pstates *ps = s->procstate;
	uint32_t nr = dsos__count(s->dsos);
	uint8_t *used;

	if (!ps || !s->table_walk)
		return;
	/* Processes gone: their BPF state with them (their mappings stay, to name their
	 * samples at the end). */
	for (size_t i = 0; i < ps->nr; i++)
		if (ps->v[i].nr && kill(ps->v[i].pid, 0) && errno == ESRCH)
			session__forget_proc(s, ps->v[i].pid);
	used = calloc(nr ? nr : 1, 1);
	if (!used)
		return;
	for (size_t i = 0; i < ps->nr; i++)
		for (size_t j = 0; j < ps->v[i].nr; j++)
			if (ps->v[i].maps[j].tab && ps->v[i].maps[j].tab_id < nr)
				used[ps->v[i].maps[j].tab_id] = 1;
	session__bpftabs_keep(s, used, nr);
	free(used);
}

void session__forget_proc(struct session *s, pid_t pid)
{
	struct pstate *p = pstate__find(s->procstate, pid);
	__u32 key = pid;

	if (!p)
		return;
	pstate__drop(s->procstate, p, 0, p->nr);
	free(p->maps);
	p->maps = NULL;
	p->cap = 0;
	p->exec_time = 0;
	bpf_map_delete_elem(bpf_map__fd(s->skel->maps.procs), &key);
	bpf_map_delete_elem(bpf_map__fd(s->skel->maps.proc_tabs), &key);
	session__bpf_changed(s);
	python__forget(s, pid);
}

/*
 * PID ran execve at TIME: its BPF state described the old program. Forget its mappings made
 * before (those of the new program may have come first, from another CPU's buffer) and their
 * kinds (BPF has forgotten them already), and its copy size (the stack of a new program,
 * the dynamic linker's start-up first, is another).
 */
void session__on_exec(struct session *s, pid_t pid, uint64_t time)
{
	int fd = bpf_map__fd(s->skel->maps.procs);
	__typeof__(s->hints[0]) *h = &s->hints[(uint32_t)pid % HINT_SLOTS];
	struct pstate *p = pstate__find(s->procstate, pid);
	struct proc_ranges pr;
	__u32 key = pid, seq;

	if (h->pid == pid)
		h->pid = 0;
	unwinder__forget(s->unw, pid);
	python__forget(s, pid);
	if (p) {
		size_t i = 0;

		if (time < p->exec_time)
			return;		/* an older exec, reported late */
		p->exec_time = time;
		while (i < p->nr) {
			if (!time || p->maps[i].time < time)
				pstate__drop(s->procstate, p, i, i + 1);
			else
				i++;
		}
		if (p->nr) {
			pstate__write_or_later(s, p);
			return;
		}
	}
	/* (Nothing known of the new program yet: no spans. Written when the records read are
	 * past the last exec; a write of the program before's kinds is not used meanwhile.) */
	if (bpf_map_lookup_elem(fd, &key, &pr) || exec_seq_now(s, pid, &seq))
		return;
	memset(&pr, 0, sizeof(pr));
	pr.exec_seq = seq;
	update_proc(s, pid, &pr, BPF_EXIST);
}

void session__proc_has_deep(struct session *s, pid_t pid)
{
	struct proc_ranges pr;
	__u32 key = pid;

	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.procs), &key, &pr) || pr.has_deep)
		return;
	pr.has_deep = 1;
	update_proc(s, pid, &pr, BPF_EXIST);
}

/*
 * A DWARF unwind of PID read USED bytes of stack from sp (STOP: how it ended). Make the
 * process's samples carry that much stack plus a margin, not the whole --stack-copy: the
 * copy is most of a DWARF sample's cost. A deeper stack raises the copy at once (that sample
 * was read past the copy from the live process when its task was off the CPU, cut there
 * when it ran on); an unwind that ran out of stack memory or copy restores the whole copy. The copy comes down again after HINT_WINDOW unwinds that all
 * needed less: a deep phase (the dynamic linker's start-up, say) does not cost the rest of
 * the run.
 */
bool session__copy_learnt(const struct session *s, pid_t pid)
{
	const __typeof__(s->hints[0]) *h = &s->hints[(uint32_t)pid % HINT_SLOTS];

	return h->pid == pid && h->bytes < session__stack_copy_max(&s->opts);
}

/* (PROFILE_TEST_RMW_EXEC_MS, tests: the first write of a copy hint in a run, once it has read
 * its entry, sends the process SIGUSR1 (tests/workloads/execdeep execs then) and waits until
 * it has exec'd (at most 10 s), and once written holds the loop this many ms: the write
 * straddles the exec, and the new program's samples meet what it wrote, however busy the
 * machine. Returns whether this write is that one.) */
static bool test_rmw_exec(struct session *s, pid_t pid, bool after)
{
	static int ms = -1;
	static bool done;
	struct exec_seen ex;
	__u32 key = pid;
	const char *v;

	if (ms < 0)
		ms = (v = getenv("PROFILE_TEST_RMW_EXEC_MS")) ? atoi(v) : 0;
	if (ms <= 0 || done)
		return false;
	if (after) {
		usleep((useconds_t)ms * 1000);
		done = true;
		return true;
	}
	kill(pid, SIGUSR1);
	for (int i = 0; i < 10000; i++) {
		if (!bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.execs), &key, &ex) &&
		    ex.time >= s->sideband_seen)
			break;
		usleep(1000);
	}
	return true;
}

void session__learn_copy_size(struct session *s, pid_t pid, size_t used, enum unwind_stop stop)
{
	uint32_t max = session__stack_copy_max(&s->opts), need, want;
	int fd = bpf_map__fd(s->skel->maps.procs);
	__typeof__(s->hints[0]) *h = &s->hints[(uint32_t)pid % HINT_SLOTS];
	struct proc_ranges pr;
	__u32 key = pid;
	int err;

	need = stop == UNWIND_STOP_NO_MEMORY || stop == UNWIND_STOP_COPY ? max : (uint32_t)((used + HINT_MARGIN + 1023) & ~1023ul);
	if (need > max)
		need = max;
	/* A process's samples carry the whole copy (copy_hint 0) until a window of unwinds
	 * says how much less they need: its first unwinds may be shallow ones, its start-up or
	 * stacks cut where a table was still coming. */
	if (h->pid != pid)
		*h = (__typeof__(*h)){ .pid = pid, .bytes = max };
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
	test_rmw_exec(s, pid, false);
	pr.copy_hint = want;
	err = update_proc(s, pid, &pr, BPF_EXIST);
	test_rmw_exec(s, pid, true);
	if (err)
		return;
	h->bytes = want;
}

// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "base/htab.h"
#include "base/limits.h"
#include "dso/dsos.h"
#include "symbolize/inlines.h"
#include "dso/dso.h"
#include "symbolize/kallsyms.h"
#include "base/log.h"
#include "symbolize/perfmap.h"
#include "proc/procmaps.h"
#include "symbolize/symbolize.h"

#define UNKNOWN "[unknown]"

/* What the symbolizer keeps of one file (by its dso id), shared by every process mapping it. */
struct file {
	char *label;		/* "[basename]" for addresses without a symbol */
	struct dso *dso;	/* NULL when it could not be read */
	struct inlines *inl;	/* inline chains; NULL when none */
	bool inl_tried;
};

/* A resolved address: its frames, root first, in one blob of strings. */
struct name_ent {
	const void *file;	/* the file, perf map or NULL (kernel) it was resolved in */
	uint64_t addr;
	char *blob;
	int nr;
	const char *names[];
};


/* JIT symbols of one process, loaded once. */
struct jit {
	pid_t pid;
	struct perfmap *map;	/* NULL when the process has none */
	struct jit *next;
};

#define JIT_BUCKETS 256

struct symbolizer {
	struct procmaps *pm;
	struct jit *jits[JIT_BUCKETS];
	struct dsos *dsos;
	struct file **files;	/* by dso id */
	uint32_t cap_files;
	struct name_ent **names;	/* every address resolved, indexed by names_index */
	uint32_t nr_names, cap_names;
	struct htab names_index;
	struct ksyms *ksyms;
	bool ksyms_tried;
	unsigned int flags;	/* SYMBOLIZE_* */
	/* symbolizer__prepare's background thread and what it works on. */
	pthread_t prepare_tid;
	volatile pid_t prepare_os_tid;	/* its kernel tid, once it runs */
	bool preparing, prepare_kernel;
	struct file **prepare;
	size_t nr_prepare;
};

static void symbolizer__wait(struct symbolizer *s);
static void file__free(struct file *f);

struct symbolizer *symbolizer__new(struct procmaps *pm, struct dsos *dsos, unsigned int flags)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (s) {
		s->pm = pm;
		s->dsos = dsos;
		s->flags = flags;
	}
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	symbolizer__wait(s);
	free(s->prepare);
	for (uint32_t i = 0; i < s->cap_files; i++)
		file__free(s->files[i]);
	free(s->files);
	for (uint32_t i = 0; i < s->nr_names; i++) {
		free(s->names[i]->blob);
		free(s->names[i]);
	}
	free(s->names);
	htab__free(&s->names_index);
	for (int b = 0; b < JIT_BUCKETS; b++) {
		struct jit *j, *next;

		for (j = s->jits[b]; j; j = next) {
			next = j->next;
			perfmap__free(j->map);
			free(j);
		}
	}
	ksyms__free(s->ksyms);
	free(s);
}

/* --- the address cache ------------------------------------------------------------------ */

static uint64_t name_hash(const void *file, uint64_t addr)
{
	return hash_u64(hash_u64(0, (uintptr_t)file), addr);
}

static const struct name_ent *names__find(struct symbolizer *s, const void *file,
					  uint64_t addr)
{
	uint64_t h = name_hash(file, addr);
	uint32_t pos, id;

	for (id = htab__first(&s->names_index, h, &pos); id != HTAB_NONE;
	     id = htab__next(&s->names_index, h, &pos))
		if (s->names[id]->file == file && s->names[id]->addr == addr)
			return s->names[id];
	return NULL;
}

/* Remember the NR frames NAMES (copied; SUFFIX after all but the first) for (FILE, ADDR). */
static const struct name_ent *names__add(struct symbolizer *s, const void *file,
					 uint64_t addr, const char *const *names, int nr,
					 const char *suffix)
{
	static const struct name_ent unknown = { .nr = 1, .names = { UNKNOWN } };
	size_t len = 0, slen = suffix ? strlen(suffix) : 0;
	struct name_ent *n;
	char *p;

	if (s->nr_names == s->cap_names) {
		uint32_t cap = s->cap_names ? 2 * s->cap_names : 1024;
		struct name_ent **all = realloc(s->names, cap * sizeof(*all));

		if (!all)
			return &unknown;
		s->names = all;
		s->cap_names = cap;
	}

	for (int i = 0; i < nr; i++)
		len += strlen(names[i]) + 1 + (i ? slen : 0);
	n = malloc(sizeof(*n) + nr * sizeof(n->names[0]));
	if (!n || !(n->blob = malloc(len))) {
		free(n);
		return &unknown;
	}
	p = n->blob;
	for (int i = 0; i < nr; i++) {
		n->names[i] = p;
		p = stpcpy(p, names[i]);
		if (i && suffix)
			p = stpcpy(p, suffix);
		p++;
	}
	n->file = file;
	n->addr = addr;
	n->nr = nr;
	if (htab__insert(&s->names_index, name_hash(file, addr), s->nr_names)) {
		free(n->blob);
		free(n);
		return &unknown;
	}
	s->names[s->nr_names++] = n;
	limits__charge(sizeof(*n) + nr * sizeof(n->names[0]) + len);	/* kept to the end */
	return n;
}

/* A single name, remembered. */
static const struct name_ent *names__add1(struct symbolizer *s, const void *file,
					  uint64_t addr, const char *name)
{
	return names__add(s, file, addr, &name, 1, NULL);
}

/* --- ELF files -------------------------------------------------------------------------- */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* A file entry for DSO (NULL: unreadable) named PATH. NULL on ENOMEM. */
static struct file *file__new(struct dso *dso, const char *path)
{
	struct file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->dso = dso;
	if (asprintf(&f->label, path[0] == '[' ? "%s" : "[%s]", base_name(path)) < 0) {
		free(f);
		return NULL;
	}
	return f;
}

static void file__free(struct file *f)
{
	if (!f)
		return;
	inlines__free(f->inl);
	free(f->label);
	free(f);
}

/* DWARF for inline chains, opened at the first lookup: the debug file when symbols came from
 * one, else the file itself. */
static struct inlines *file__inlines(struct file *f)
{
	const char *path;

	if (f->inl_tried)
		return f->inl;
	f->inl_tried = true;
	/* What BFD would read must fit the file and the memory budget, and lead nowhere else. */
	if (dso__dwarf_check(f->dso))
		return NULL;
	/* Our own descriptors of the files: still the very files after the process is gone,
	 * and a debug file found inside a container's root is not at its path here. */
	path = dso__debug_fd_path(f->dso) ? dso__debug_fd_path(f->dso) : dso__fd_path(f->dso);
	f->inl = inlines__open(path);
	return f->inl;
}

/* The symbolizer's entry of file ID (DSO, PATH), made at the first use; NULL on ENOMEM. */
static struct file *file__at(struct symbolizer *s, uint32_t id, struct dso *dso,
			     const char *path)
{
	if (id >= s->cap_files) {
		uint32_t cap = s->cap_files ? s->cap_files : 64;
		struct file **files;

		while (cap <= id)
			cap *= 2;
		files = realloc(s->files, cap * sizeof(*files));
		if (!files)
			return NULL;
		memset(files + s->cap_files, 0, (cap - s->cap_files) * sizeof(*files));
		s->files = files;
		s->cap_files = cap;
	}
	if (!s->files[id])
		s->files[id] = file__new(dso, path);
	return s->files[id];
}

/* The symbolizer's entry of the file M of PID maps; NULL on ENOMEM. */
static struct file *file__get(struct symbolizer *s, pid_t pid, const struct map *m)
{
	uint32_t id;
	struct dso *dso = dsos__get(s->dsos, pid, m, &id);

	return id == UINT32_MAX ? NULL : file__at(s, id, dso, m->path);
}

/* --- JIT code and the vDSO --------------------------------------------------------------- */

static const struct perfmap *jit__get(struct symbolizer *s, pid_t pid)
{
	unsigned int b = (unsigned int)pid % JIT_BUCKETS;
	struct jit *j;

	for (j = s->jits[b]; j; j = j->next)
		if (j->pid == pid)
			return j->map;
	j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->pid = pid;
	j->map = perfmap__load(pid);
	j->next = s->jits[b];
	s->jits[b] = j;
	return j->map;
}

/* An address in anonymous or unknown memory: a JIT symbol marked _[j], or [unknown]. */
static const char *symbolize_jit(struct symbolizer *s, pid_t pid, uint64_t addr)
{
	const struct perfmap *pm = jit__get(s, pid);
	const char *name = pm ? perfmap__lookup(pm, addr) : NULL;
	const char *names[2] = { "", name };
	const struct name_ent *n;

	if (!name)
		return UNKNOWN;
	n = names__find(s, pm, addr);
	if (!n)	/* the suffix goes after all but the first name: skip an empty first */
		n = names__add(s, pm, addr, names, 2, "_[j]");
	return n->names[n->nr - 1];
}

bool symbolizer__has_perfmap(struct symbolizer *s, pid_t pid)
{
	return jit__get(s, pid) != NULL;
}

/* --- lookups ---------------------------------------------------------------------------- */

/*
 * A name for VADDR of F where no symbol covers it: FILE+0xSTART, START that of the last FDE
 * starting at or before VADDR (every function with unwind info has one, named or not), unless
 * a symbol says that function ends before VADDR: then [FILE].
 */
static const struct name_ent *symbolize_unnamed(struct symbolizer *s, struct file *f,
						uint64_t vaddr)
{
	char name[PROCMAPS_PATH_MAX + 24];
	uint64_t start = dso__fde_start(f->dso, vaddr), sym_start, sym_end;

	if (start != UINT64_MAX && dso__lookup_range(f->dso, start, &sym_start, &sym_end) &&
	    vaddr >= sym_end)
		start = UINT64_MAX;
	/* A file not parsed (the memory budget), or truncated under us: the address itself. */
	if (start == UINT64_MAX && !dso__usable(f->dso))
		start = vaddr;
	if (start == UINT64_MAX)
		return names__add1(s, f, vaddr, f->label);
	snprintf(name, sizeof(name), "%s+0x%" PRIx64, dso__base_name(f->dso), start);
	return names__add1(s, f, vaddr, name);
}

/* The frames of (F, VADDR), root first: the function (demangled), then what DWARF says was
 * inlined into it at VADDR, down to the innermost, marked _[i]. VADDR of a return address
 * (IS_RETURN) is already one byte back. */
static const struct name_ent *symbolize_in_file(struct symbolizer *s, struct file *f,
						uint64_t vaddr, bool is_return)
{
	const char *names[INLINES_MAX + 1], *inl[INLINES_MAX], *name;
	char *owned[INLINES_MAX + 1] = { 0 };
	const struct name_ent *n;
	uint64_t at = vaddr, off;
	int nr = 1, ni = 0;

	n = names__find(s, f, vaddr);
	if (n)
		return n;
	name = dso__lookup(f->dso, vaddr, NULL);
	/* A return address (looked up one byte back) at a function's very first byte: a signal
	 * trampoline such as __restore_rt, which the kernel "called". Named at the address. */
	if (!name && is_return) {
		const char *next = dso__lookup(f->dso, vaddr + 1, &off);

		if (next && !off) {
			name = next;
			at = vaddr + 1;
		}
	}
	if (!name)
		return symbolize_unnamed(s, f, vaddr);
	if ((s->flags & SYMBOLIZE_DEMANGLE) && (owned[0] = demangle(name)))
		name = owned[0];
	names[0] = name;
	if ((s->flags & SYMBOLIZE_INLINE) && file__inlines(f))
		ni = inlines__at(f->inl, at, inl, INLINES_MAX);
	/* inl[ni - 1] is the function itself (named above from the symbol table). */
	for (int i = ni - 2; i >= 0; i--, nr++) {
		names[nr] = inl[i];
		if ((s->flags & SYMBOLIZE_DEMANGLE) && (owned[nr] = demangle(inl[i])))
			names[nr] = owned[nr];
	}
	n = names__add(s, f, vaddr, names, nr, "_[i]");
	for (int i = 0; i < nr; i++)
		free(owned[i]);
	return n;
}

int symbolizer__user_frames(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return,
			    const char **out, int max)
{
	const struct name_ent *n;
	const struct map *m;
	struct file *f;
	uint64_t vaddr, off;
	int nr;

	if (max < 1)
		return 0;
	symbolizer__wait(s);
	out[0] = UNKNOWN;
	if (is_return && addr)
		addr--;
	m = procmaps__find(s->pm, pid, addr);
	/* "", "//anon" (mmap records), [anon:...], [heap]: JIT code, if anything */
	if (!m || !map__is_dso(m) || !strcmp(m->path, "//anon")) {
		out[0] = symbolize_jit(s, pid, addr);
		return 1;
	}
	f = file__get(s, pid, m);
	if (!f)
		return 1;
	off = map__file_offset(m, addr);
	if (!f->dso || dso__off_to_vaddr(f->dso, off, &vaddr)) {
		out[0] = f->label;
		return 1;
	}
	n = symbolize_in_file(s, f, vaddr, is_return);
	nr = n->nr < max ? n->nr : max;
	memcpy(out, n->names, nr * sizeof(*out));
	return nr;
}

const char *symbolizer__user(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return)
{
	const char *names[INLINES_MAX + 1];

	symbolizer__user_frames(s, pid, addr, is_return, names, INLINES_MAX + 1);
	return names[0];
}

static void symbolizer__load_ksyms(struct symbolizer *s)
{
	if (s->ksyms_tried)
		return;
	s->ksyms_tried = true;
	s->ksyms = ksyms__load("/proc/kallsyms");
	if (!s->ksyms)
		pr_warn("cannot read kernel symbols from /proc/kallsyms: %s", strerror(errno));
}

/* The background warm-up: its own snapshot of files, fields nothing else reads until it is
 * joined (see symbolizer__wait). */
static void *prepare_thread(void *arg)
{
	struct symbolizer *s = arg;
	struct sched_param sp = { 0 };

	/* Only idle CPU while sampling: never time taken from the profiled programs. */
	sched_setscheduler(0, SCHED_IDLE, &sp);
	s->prepare_os_tid = gettid();
	if (s->prepare_kernel)
		symbolizer__load_ksyms(s);
	for (size_t i = 0; i < s->nr_prepare; i++)
		if (!s->prepare[i]->inl_tried && file__inlines(s->prepare[i]))
			inlines__warm(s->prepare[i]->inl);
	return NULL;
}

void symbolizer__prepare(struct symbolizer *s, bool kernel)
{
	uint32_t n;

	if (s->preparing)
		return;
	n = dsos__count(s->dsos);
	s->prepare = calloc(n ? n : 1, sizeof(*s->prepare));
	if (!s->prepare)
		return;
	/* Every file opened so far (by the unwinder, for stack bottoms): its symbols are read
	 * here, not in the thread, as the dso is shared; its DWARF there. */
	for (uint32_t i = 0; i < n && (s->flags & SYMBOLIZE_INLINE); i++) {
		struct dso *dso = dsos__at(s->dsos, i);
		struct file *f = dso ? file__at(s, i, dso, dso__path(dso)) : NULL;

		if (f) {
			dso__debug_path(dso);
			s->prepare[s->nr_prepare++] = f;
		}
	}
	s->prepare_kernel = kernel;
	s->preparing = pthread_create(&s->prepare_tid, NULL, prepare_thread, s) == 0;
}

/* Lookups start: the warm-up must be over (it touches the same BFD and kallsyms state). It
 * gets a normal priority first: sampling is over, and on a busy machine an idle thread may
 * wait seconds for a CPU. */
static void symbolizer__wait(struct symbolizer *s)
{
	struct sched_param sp = { 0 };

	if (s->preparing) {
		if (s->prepare_os_tid)
			sched_setscheduler(s->prepare_os_tid, SCHED_OTHER, &sp);
		pthread_join(s->prepare_tid, NULL);
		s->preparing = false;
	}
}

const char *symbolizer__kernel(struct symbolizer *s, uint64_t addr, bool is_return)
{
	const char *name;

	if (is_return && addr)
		addr--;
	symbolizer__wait(s);
	symbolizer__load_ksyms(s);
	if (!s->ksyms)
		return UNKNOWN;
	name = ksyms__lookup(s->ksyms, addr, NULL, NULL);
	return name ? name : UNKNOWN;
}

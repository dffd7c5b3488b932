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
#include "symbolize/inlines.h"
#include "dso/elfsym.h"
#include "symbolize/kallsyms.h"
#include "base/log.h"
#include "symbolize/perfmap.h"
#include "proc/procmaps.h"
#include "symbolize/symbolize.h"

#define UNKNOWN "[unknown]"

/* One ELF file, shared by every process that maps it. */
struct file {
	uint64_t dev, ino;
	char *path;		/* as the process saw it */
	char *read_path;	/* where we read it (for DWARF), or NULL */
	char *label;		/* "[basename]" for addresses without a symbol */
	struct elfsym *elf;	/* NULL when it could not be read */
	struct inlines *inl;	/* inline chains; NULL when none */
	bool inl_tried;
	struct file *next;
};

/* A resolved address: its frames, root first, in one blob of strings. */
struct name_ent {
	const void *file;	/* the file, perf map or NULL (kernel) it was resolved in */
	uint64_t addr;
	struct name_ent *next;
	char *blob;
	int nr;
	const char *names[];
};

#define FILE_BUCKETS 512
#define NAME_BUCKETS 16384

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
	struct elfsym *vdso;	/* the vDSO image, read once */
	bool vdso_tried;
	struct file *files[FILE_BUCKETS];
	struct name_ent *names[NAME_BUCKETS];
	struct ksyms *ksyms;
	bool ksyms_tried;
	unsigned int flags;	/* SYMBOLIZE_* */
	/* symbolizer__prepare's background thread and what it works on. */
	pthread_t prepare_tid;
	bool preparing, prepare_kernel;
	struct file **prepare;
	size_t nr_prepare;
};

static void symbolizer__wait(struct symbolizer *s);

struct symbolizer *symbolizer__new(struct procmaps *pm, unsigned int flags)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (s) {
		s->pm = pm;
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
	for (int b = 0; b < FILE_BUCKETS; b++) {
		struct file *f, *next;

		for (f = s->files[b]; f; f = next) {
			next = f->next;
			elfsym__free(f->elf);
			inlines__free(f->inl);
			free(f->read_path);
			free(f->path);
			free(f->label);
			free(f);
		}
	}
	for (int b = 0; b < NAME_BUCKETS; b++) {
		struct name_ent *n, *next;

		for (n = s->names[b]; n; n = next) {
			next = n->next;
			free(n->blob);
			free(n);
		}
	}
	for (int b = 0; b < JIT_BUCKETS; b++) {
		struct jit *j, *next;

		for (j = s->jits[b]; j; j = next) {
			next = j->next;
			perfmap__free(j->map);
			free(j);
		}
	}
	elfsym__free(s->vdso);
	ksyms__free(s->ksyms);
	free(s);
}

/* --- the address cache ------------------------------------------------------------------ */

static unsigned int name_bucket(const void *file, uint64_t addr)
{
	uint64_t h = (addr ^ (uintptr_t)file) * 0x9e3779b97f4a7c15ULL;

	return (unsigned int)(h >> 40) % NAME_BUCKETS;
}

static const struct name_ent *names__find(struct symbolizer *s, const void *file,
					  uint64_t addr)
{
	struct name_ent *n = s->names[name_bucket(file, addr)];

	for (; n; n = n->next)
		if (n->file == file && n->addr == addr)
			return n;
	return NULL;
}

/* Remember the NR frames NAMES (copied; SUFFIX after all but the first) for (FILE, ADDR). */
static const struct name_ent *names__add(struct symbolizer *s, const void *file,
					 uint64_t addr, const char *const *names, int nr,
					 const char *suffix)
{
	static const struct name_ent unknown = { .nr = 1, .names = { UNKNOWN } };
	size_t len = 0, slen = suffix ? strlen(suffix) : 0;
	unsigned int b = name_bucket(file, addr);
	struct name_ent *n;
	char *p;

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
	n->next = s->names[b];
	s->names[b] = n;
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

static void file__open(struct file *f, pid_t pid, const struct map *m)
{
	char path[PROCMAPS_PATH_MAX + 64];

	if (map__file_path(pid, m, path, sizeof(path)) == 0) {
		f->elf = elfsym__open(path, m->path);
		/* DWARF is read later, maybe after the process (and its /proc/PID/map_files/) is
		 * gone: prefer the plain path when it is the same file. */
		if (f->elf) {
			struct stat st;

			if (!strncmp(path, "/proc/", 6) && stat(m->path, &st) == 0 &&
			    st.st_ino == m->ino)
				snprintf(path, sizeof(path), "%s", m->path);
			f->read_path = strdup(path);
		}
	}
	if (!f->elf)
		pr_debug("cannot read %s mapped by pid %d", m->path, pid);
}

/* DWARF for inline chains, opened at the first lookup: the debug file when symbols came from
 * one, else the file itself. */
static struct inlines *file__inlines(struct file *f)
{
	const char *path;

	if (f->inl_tried)
		return f->inl;
	f->inl_tried = true;
	path = elfsym__debug_path(f->elf) ? elfsym__debug_path(f->elf) : f->read_path;
	if (path)
		f->inl = inlines__open(path);
	return f->inl;
}

static struct file *file__get(struct symbolizer *s, pid_t pid, const struct map *m)
{
	unsigned int b = map__file_bucket(m, FILE_BUCKETS);
	struct file *f;

	for (f = s->files[b]; f; f = f->next)
		if (map__is_file(m, f->dev, f->ino, f->path))
			return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->dev = m->dev;
	f->ino = m->ino;
	f->path = strdup(m->path);
	if (!f->path || asprintf(&f->label, "[%s]", base_name(m->path)) < 0) {
		free(f->path);
		free(f);
		return NULL;
	}
	if (m->path[0] == '/')
		file__open(f, pid, m);
	f->next = s->files[b];
	s->files[b] = f;
	return f;
}

struct elfsym *symbolizer__elf(struct symbolizer *s, pid_t pid, const struct map *m)
{
	struct file *f;

	if (m->path[0] != '/')
		return NULL;
	f = file__get(s, pid, m);
	return f ? f->elf : NULL;
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

/*
 * The vDSO is the kernel's, the same image in every process of this kernel: read it from
 * PID while it lives, else from our own, into a memfd that elfsym can open.
 */
static struct elfsym *vdso__get(struct symbolizer *s, pid_t pid, const struct map *m)
{
	size_t len = m->end - m->start;
	char path[64];
	void *buf;
	int fd;

	if (s->vdso_tried)
		return s->vdso;
	s->vdso_tried = true;
	if (len > (1 << 20) || !(buf = malloc(len)))
		return NULL;
	{
		struct iovec local = { buf, len }, remote = { (void *)m->start, len };
		unsigned long self = getauxval(AT_SYSINFO_EHDR);

		if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)len) {
			if (!self) {
				free(buf);
				return NULL;
			}
			memcpy(buf, (void *)self, len);
		}
	}
	fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd >= 0 && write(fd, buf, len) == (ssize_t)len) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		s->vdso = elfsym__open(path, NULL);
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return s->vdso;
}

static const char *symbolize_vdso(struct symbolizer *s, pid_t pid, const struct map *m,
				  uint64_t addr)
{
	struct elfsym *elf = vdso__get(s, pid, m);
	const struct load_seg *segs;
	const char *name;
	uint64_t vaddr;
	size_t n;

	if (!elf)
		return m->path;
	segs = elfsym__segs(elf, &n);
	if (load_segs__off_to_vaddr(segs, n, addr - m->start, &vaddr))
		return m->path;
	name = elfsym__lookup(elf, vaddr, NULL);
	return name ? name : m->path;
}

/* --- lookups ---------------------------------------------------------------------------- */

/* The frames of (F, VADDR), root first: the function (demangled), then what DWARF says was
 * inlined into it at VADDR, down to the innermost, marked _[i]. */
static const struct name_ent *symbolize_in_file(struct symbolizer *s, struct file *f,
						uint64_t vaddr)
{
	const char *names[INLINES_MAX + 1], *inl[INLINES_MAX], *name;
	char *owned[INLINES_MAX + 1] = { 0 }, fde_name[PROCMAPS_PATH_MAX + 24];
	const struct name_ent *n;
	int nr = 1, ni = 0;

	n = names__find(s, f, vaddr);
	if (n)
		return n;
	name = elfsym__lookup(f->elf, vaddr, NULL);
	if (!name) {
		/* No symbol anywhere: a stable name per function, from its FDE's start. */
		uint64_t start = elfsym__fde_start(f->elf, vaddr);

		if (start == UINT64_MAX)
			return names__add1(s, f, vaddr, f->label);
		snprintf(fde_name, sizeof(fde_name), "%s+0x%" PRIx64, base_name(f->path), start);
		return names__add1(s, f, vaddr, fde_name);
	}
	if ((s->flags & SYMBOLIZE_DEMANGLE) && (owned[0] = demangle(name)))
		name = owned[0];
	names[0] = name;
	if ((s->flags & SYMBOLIZE_INLINE) && file__inlines(f))
		ni = inlines__at(f->inl, vaddr, inl, INLINES_MAX);
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
	const struct load_seg *segs;
	struct file *f;
	uint64_t vaddr;
	size_t nsegs;
	int nr;

	if (max < 1)
		return 0;
	symbolizer__wait(s);
	out[0] = UNKNOWN;
	if (is_return && addr)
		addr--;
	m = procmaps__find(s->pm, pid, addr);
	if (!m) {
		out[0] = symbolize_jit(s, pid, addr);
		return 1;
	}
	if (!strcmp(m->path, "[vdso]")) {
		out[0] = symbolize_vdso(s, pid, m, addr);
		return 1;
	}
	/* "", "//anon" (mmap records), [anon:...], [heap]: JIT code, if anything */
	if (m->path[0] != '/' || !strcmp(m->path, "//anon")) {
		out[0] = symbolize_jit(s, pid, addr);
		return 1;
	}
	f = file__get(s, pid, m);
	if (!f)
		return 1;
	if (!f->elf) {
		out[0] = f->label;
		return 1;
	}
	segs = elfsym__segs(f->elf, &nsegs);
	if (load_segs__off_to_vaddr(segs, nsegs, map__file_offset(m, addr), &vaddr)) {
		out[0] = f->label;
		return 1;
	}
	n = symbolize_in_file(s, f, vaddr);
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

	/* Only idle CPU: never time taken from the profiled programs. */
	sched_setscheduler(0, SCHED_IDLE, &sp);
	if (s->prepare_kernel)
		symbolizer__load_ksyms(s);
	for (size_t i = 0; i < s->nr_prepare; i++)
		if (!s->prepare[i]->inl_tried && file__inlines(s->prepare[i]))
			inlines__warm(s->prepare[i]->inl);
	return NULL;
}

void symbolizer__prepare(struct symbolizer *s, bool kernel)
{
	size_t n = 0;

	if (s->preparing)
		return;
	for (int b = 0; b < FILE_BUCKETS; b++)
		for (struct file *f = s->files[b]; f; f = f->next)
			n += f->elf && (s->flags & SYMBOLIZE_INLINE);
	s->prepare = calloc(n ? n : 1, sizeof(*s->prepare));
	if (!s->prepare)
		return;
	for (int b = 0; b < FILE_BUCKETS; b++)
		for (struct file *f = s->files[b]; f; f = f->next)
			if (f->elf && (s->flags & SYMBOLIZE_INLINE))
				s->prepare[s->nr_prepare++] = f;
	s->prepare_kernel = kernel;
	s->preparing = pthread_create(&s->prepare_tid, NULL, prepare_thread, s) == 0;
}

/* Lookups start: the warm-up must be over (it touches the same BFD and kallsyms state). */
static void symbolizer__wait(struct symbolizer *s)
{
	if (s->preparing) {
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

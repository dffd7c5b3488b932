// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include "elfsym.h"
#include "kallsyms.h"
#include "log.h"
#include "perfmap.h"
#include "procmaps.h"
#include "symbolize.h"

#define UNKNOWN "[unknown]"

/* One ELF file, shared by every process that maps it. */
struct file {
	uint64_t dev, ino;
	char *path;		/* as the process saw it */
	char *label;		/* "[basename]" for addresses without a symbol */
	struct elfsym *elf;	/* NULL when it could not be read */
	struct file *next;
};

/* A resolved address: FILE (NULL for the kernel) and the runtime or link-time address. */
struct name_ent {
	const void *file;
	uint64_t addr;
	const char *name;
	char *owned;		/* NAME when it had to be allocated */
	struct name_ent *next;
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
};

struct symbolizer *symbolizer__new(struct procmaps *pm)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (s)
		s->pm = pm;
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	for (int b = 0; b < FILE_BUCKETS; b++) {
		struct file *f, *next;

		for (f = s->files[b]; f; f = next) {
			next = f->next;
			elfsym__free(f->elf);
			free(f->path);
			free(f->label);
			free(f);
		}
	}
	for (int b = 0; b < NAME_BUCKETS; b++) {
		struct name_ent *n, *next;

		for (n = s->names[b]; n; n = next) {
			next = n->next;
			free(n->owned);
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

static const char *names__find(struct symbolizer *s, const void *file, uint64_t addr)
{
	struct name_ent *n = s->names[name_bucket(file, addr)];

	for (; n; n = n->next)
		if (n->file == file && n->addr == addr)
			return n->name;
	return NULL;
}

/* Remember NAME for (FILE, ADDR); OWNED is freed with the symbolizer. Returns NAME. */
static const char *names__add(struct symbolizer *s, const void *file, uint64_t addr,
			      const char *name, char *owned)
{
	struct name_ent *n = malloc(sizeof(*n));
	unsigned int b = name_bucket(file, addr);

	if (!n) {
		free(owned);
		return UNKNOWN;
	}
	n->file = file;
	n->addr = addr;
	n->name = name;
	n->owned = owned;
	n->next = s->names[b];
	s->names[b] = n;
	return name;
}

/* --- ELF files -------------------------------------------------------------------------- */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static struct elfsym *open_mapped_file(pid_t pid, const struct map *m)
{
	char path[PROCMAPS_PATH_MAX + 64];
	struct elfsym *elf = NULL;

	if (map__file_path(pid, m, path, sizeof(path)) == 0)
		elf = elfsym__open(path, m->path);
	if (!elf)
		pr_debug("cannot read %s mapped by pid %d", m->path, pid);
	return elf;
}

static struct file *file__get(struct symbolizer *s, pid_t pid, const struct map *m)
{
	unsigned int b = (unsigned int)((m->ino * 31 + m->dev) % FILE_BUCKETS);
	struct file *f;

	for (f = s->files[b]; f; f = f->next)
		if (f->ino == m->ino && f->dev == m->dev && !strcmp(f->path, m->path))
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
		f->elf = open_mapped_file(pid, m);
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
	char *owned;

	if (!name)
		return UNKNOWN;
	if (names__find(s, pm, addr))
		return names__find(s, pm, addr);
	if (asprintf(&owned, "%s_[j]", name) < 0)
		return UNKNOWN;
	return names__add(s, pm, addr, owned, owned);
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

const char *symbolizer__user(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return)
{
	const struct map *m;
	const struct load_seg *segs;
	const char *name;
	struct file *f;
	uint64_t vaddr;
	size_t nsegs;

	if (is_return && addr)
		addr--;
	m = procmaps__find(s->pm, pid, addr);
	if (!m)
		return symbolize_jit(s, pid, addr);
	if (!strcmp(m->path, "[vdso]"))
		return symbolize_vdso(s, pid, m, addr);
	/* "", "//anon" (mmap records), [anon:...], [heap]: JIT code, if anything */
	if (m->path[0] != '/' || !strcmp(m->path, "//anon"))
		return symbolize_jit(s, pid, addr);
	f = file__get(s, pid, m);
	if (!f)
		return UNKNOWN;
	if (!f->elf)
		return f->label;
	segs = elfsym__segs(f->elf, &nsegs);
	if (load_segs__off_to_vaddr(segs, nsegs, map__file_offset(m, addr), &vaddr))
		return f->label;
	name = names__find(s, f, vaddr);
	if (name)
		return name;
	name = elfsym__lookup(f->elf, vaddr, NULL);
	if (!name) {
		/* No symbol anywhere: a stable name per function, from its FDE's start. */
		uint64_t start = elfsym__fde_start(f->elf, vaddr);
		char *owned;

		if (start == UINT64_MAX ||
		    asprintf(&owned, "%s+0x%" PRIx64, base_name(f->path), start) < 0)
			return names__add(s, f, vaddr, f->label, NULL);
		return names__add(s, f, vaddr, owned, owned);
	}
	return names__add(s, f, vaddr, name, NULL);
}

const char *symbolizer__kernel(struct symbolizer *s, uint64_t addr, bool is_return)
{
	const char *name;

	if (is_return && addr)
		addr--;
	if (!s->ksyms_tried) {
		s->ksyms_tried = true;
		s->ksyms = ksyms__load("/proc/kallsyms");
		if (!s->ksyms)
			pr_warn("cannot read kernel symbols from /proc/kallsyms: %s",
				strerror(errno));
	}
	if (!s->ksyms)
		return UNKNOWN;
	name = ksyms__lookup(s->ksyms, addr, NULL, NULL);
	return name ? name : UNKNOWN;
}

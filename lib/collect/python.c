// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/python: processes running CPython, and the names of their Python frames.
 *
 * A described process that maps a file named *python* whose table found _PyRuntime
 * (unwind/utab's py_runtime) gets a `py_procs` entry: that address and its version's layout
 * (python/pylayout: the version from the file's name, python3.N or libpython3.N). BPF then
 * reads each sample's Python frames behind its native ones (bpf/python.bpf.h) and sends each
 * code object it meets first in a process; its names (qualified name, file, line table,
 * first line) are read here from the process's memory as they come, while it lives, bounded
 * at every step: a code object whose memory cannot be read, or does not look like one, is
 * `[python: unreadable]`. At the end the model (model.c) puts each stack's Python frames in
 * place of the interpreter's frames that ran them (python__merge).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/grow.h"
#include "base/htab.h"
#include "base/log.h"
#include "collect/session_int.h"
#include "proc/procmaps.h"
#include "python/pylayout.h"
#include "python/pyline.h"
#include "python/pystr.h"
#include "unwind/unwind.h"
#include "unwind/utab.h"
#include "profile.skel.h"

#define PY_NAME_MAX	512		/* bytes of a name or file name kept */
#define PY_TABLE_MAX	(64u << 10)	/* bytes of a line table read */
#define PY_CODES_MAX	(1u << 18)	/* code objects remembered */

/* A code object of a process, as read when BPF first met it. */
struct pycode {
	pid_t pid;
	uint64_t code;
	const struct py_layout *l;
	char *name, *file;	/* NULL: unreadable */
	uint8_t *table;
	uint32_t table_len;
	int firstlineno;
};

struct pyproc {
	pid_t pid;
	const struct py_layout *l;
	uint64_t runtime;
};

struct pythons {
	struct pyproc *procs;
	size_t nr_procs, cap_procs;
	struct htab index;	/* (pid, code) -> codes[] */
	struct pycode *codes;
	size_t nr, cap;
	uint64_t unreadable;	/* code objects whose names could not be read */
};

static struct pythons *pythons(struct session *s)
{
	if (!s->py) {
		s->py = calloc(1, sizeof(*s->py));
		if (s->py && htab__init(&s->py->index, 64)) {
			free(s->py);
			s->py = NULL;
		}
	}
	return s->py;
}

static struct pyproc *pyproc__find(struct pythons *py, pid_t pid)
{
	for (size_t i = 0; py && i < py->nr_procs; i++)
		if (py->procs[i].pid == pid)
			return &py->procs[i];
	return NULL;
}

/* The minor version of CPython 3 in the file name PATH (python3.N, libpython3.N.so), or -1. */
static int version_of(const char *path)
{
	const char *base = strrchr(path, '/'), *p;
	int minor = 0, digits = 0;

	base = base ? base + 1 : path;
	p = strstr(base, "python3.");
	if (!p)
		return -1;
	for (p += 8; *p >= '0' && *p <= '9' && digits < 3; p++, digits++)
		minor = minor * 10 + (*p - '0');
	return digits ? minor : -1;
}

void python__describe(struct session *s, pid_t pid)
{
	const struct map *maps;
	struct pythons *py;
	struct py_proc entry = { 0 };
	const struct py_layout *l = NULL;
	struct pyproc *pp;
	size_t n;
	__u32 key = pid;

	if (s->opts.no_runtime || !s->skel || !s->skel->rodata->python)
		return;
	maps = procmaps__maps(s->maps, pid, &n);
	for (size_t i = 0; i < n && !l; i++) {
		const struct map *m = &maps[i];
		const struct utab *t;
		uint32_t id;
		uint64_t bias;
		int minor;

		if (!strstr(m->path, "python") || (minor = version_of(m->path)) < 0)
			continue;
		t = unwinder__map_table(s->unw, pid, m, &id, &bias);
		if (!t || !t->py_runtime || utab__bias(t, m, m->start, &bias))
			continue;
		l = py_layout__for(3, minor);
		if (!l) {
			pr_debug("pid %d: CPython 3.%d has no layout here", pid, minor);
			continue;
		}
		entry.runtime = t->py_runtime + bias;
		entry.off = l->bpf;
	}
	py = l ? pythons(s) : s->py;
	pp = pyproc__find(py, pid);
	if (!l) {
		if (pp) {
			bpf_map_delete_elem(bpf_map__fd(s->skel->maps.py_procs), &key);
			*pp = py->procs[--py->nr_procs];
		}
		return;
	}
	if (!py)
		return;
	if (!pp) {
		if (array_grow(&py->procs, &py->cap_procs, sizeof(*py->procs), py->nr_procs))
			return;
		pp = &py->procs[py->nr_procs++];
	} else if (pp->runtime == entry.runtime && pp->l == l) {
		return;
	}
	*pp = (struct pyproc){ pid, l, entry.runtime };
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.py_procs), &key, &entry, BPF_ANY))
		pr_warn("cannot describe CPython 3.%d of pid %d to BPF: %s", l->minor, pid,
			strerror(errno));
	else
		pr_debug("pid %d: CPython 3.%d, _PyRuntime at %#llx", pid, l->minor,
			 (unsigned long long)entry.runtime);
}

void python__forget(struct session *s, pid_t pid)
{
	struct pythons *py = s->py;
	struct pyproc *pp = pyproc__find(py, pid);
	__u32 key = pid;

	if (!pp)
		return;
	bpf_map_delete_elem(bpf_map__fd(s->skel->maps.py_procs), &key);
	*pp = py->procs[--py->nr_procs];
}

/* LEN bytes of PID's memory at ADDR into BUF: 0, or -1 when not all of them could be read. */
static int peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	if (!addr || addr + len < addr)
		return -1;
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* The str object at ADDR of PID as UTF-8 (a new string), or NULL. */
static char *read_str(pid_t pid, const struct py_layout *l, uint64_t addr)
{
	uint8_t hdr[128], *obj;
	char out[PY_NAME_MAX];
	size_t need;
	int n;

	if (peek(pid, addr, hdr, l->str_compact_data) ||
	    !(need = py_str__need(l, hdr, l->str_compact_data)))
		return NULL;
	obj = malloc(need);
	if (!obj)
		return NULL;
	n = peek(pid, addr, obj, need) ? -1 : py_str__utf8(l, obj, need, out, sizeof(out));
	free(obj);
	return n < 0 ? NULL : strdup(out);
}

/* The bytes object at ADDR of PID: its data (a new buffer) and length, or NULL. */
static uint8_t *read_bytes(pid_t pid, const struct py_layout *l, uint64_t addr, uint32_t *len)
{
	uint8_t hdr[64], *obj, *out = NULL;
	const uint8_t *data;
	int64_t size;
	size_t n, total;

	if (l->bytes_data > sizeof(hdr) || peek(pid, addr, hdr, l->bytes_data))
		return NULL;
	memcpy(&size, hdr + l->bytes_size, sizeof(size));
	if (size < 0 || size > (int64_t)PY_TABLE_MAX)
		return NULL;
	total = l->bytes_data + (size_t)size + 1;
	obj = malloc(total);
	if (obj && !peek(pid, addr, obj, total) && !py_bytes__data(l, obj, total, &data, &n) &&
	    (out = malloc(n ? n : 1))) {
		memcpy(out, data, n);
		*len = (uint32_t)n;
	}
	free(obj);
	return out;
}

static uint64_t code_hash(pid_t pid, uint64_t code)
{
	return hash_u64(hash_u64(HASH_SEED, code), (uint32_t)pid);
}

static struct pycode *pycode__find(struct pythons *py, pid_t pid, uint64_t code)
{
	uint64_t h = code_hash(pid, code);
	uint32_t pos, id;

	if (!py)
		return NULL;
	for (id = htab__first(&py->index, h, &pos); id != HTAB_NONE;
	     id = htab__next(&py->index, h, &pos))
		if (py->codes[id].pid == pid && py->codes[id].code == code)
			return &py->codes[id];
	return NULL;
}

/* The names of code object CODE of PID (layout L) read into C. */
static void read_code(pid_t pid, const struct py_layout *l, uint64_t code, struct pycode *c)
{
	uint8_t obj[512];
	uint64_t name = 0, qual = 0, file = 0, table = 0;
	int32_t first = 0;

	if (l->code_read > sizeof(obj) || peek(pid, code, obj, l->code_read))
		return;
	memcpy(&name, obj + l->code_name, 8);
	if (l->code_qualname != PY_NO_FIELD)
		memcpy(&qual, obj + l->code_qualname, 8);
	memcpy(&file, obj + l->code_filename, 8);
	memcpy(&table, obj + l->code_linetable, 8);
	memcpy(&first, obj + l->code_firstlineno, 4);
	c->firstlineno = first;
	c->name = qual ? read_str(pid, l, qual) : NULL;
	if (!c->name)
		c->name = read_str(pid, l, name);
	if (!c->name)
		return;
	c->file = read_str(pid, l, file);
	c->table = table ? read_bytes(pid, l, table, &c->table_len) : NULL;
}

int python__on_code(struct session *s, const struct py_code_event *ev)
{
	struct pythons *py = s->py;
	struct pyproc *pp = pyproc__find(py, (pid_t)ev->pid);
	struct pycode c = { .pid = (pid_t)ev->pid, .code = ev->code }, *old;

	if (!pp)
		return 0;
	c.l = pp->l;
	read_code(c.pid, pp->l, ev->code, &c);
	if (!c.name)
		py->unreadable++;
	old = pycode__find(py, c.pid, c.code);
	if (old) {
		/* Its place taken by another code object (BPF saw another first line). */
		free(old->name);
		free(old->file);
		free(old->table);
		*old = c;
		return 0;
	}
	if (py->nr >= PY_CODES_MAX ||
	    array_grow(&py->codes, &py->cap, sizeof(*py->codes), py->nr) ||
	    htab__insert(&py->index, code_hash(c.pid, c.code), (uint32_t)py->nr)) {
		free(c.name);
		free(c.file);
		free(c.table);
		return 0;
	}
	py->codes[py->nr++] = c;
	return 0;
}

int python__frame(struct session *s, pid_t pid, uint64_t word, struct python_frame *out)
{
	const struct pycode *c = pycode__find(s->py, pid, word & PY_WORD_ADDR);
	uint64_t unit = word >> PY_UNIT_SHIFT;

	*out = (struct python_frame){ .name = "[python: unreadable]" };
	if (!c || !c->name)
		return -ENOENT;
	out->name = c->name;
	out->file = c->file;
	out->line = unit == PY_UNIT_UNKNOWN || !c->table ? -1 :
		    py_line__for(c->l, c->table, c->table_len, c->firstlineno, (uint32_t)unit);
	if (out->line < 0)
		out->line = 0;	/* not known */
	return 0;
}

uint64_t python__unreadable(const struct session *s)
{
	return s->py ? s->py->unreadable : 0;
}

size_t python__procs(const struct session *s)
{
	return s->py ? s->py->nr_procs : 0;
}

void session__free_python(struct session *s)
{
	struct pythons *py = s->py;

	if (!py)
		return;
	for (size_t i = 0; i < py->nr; i++) {
		free(py->codes[i].name);
		free(py->codes[i].file);
		free(py->codes[i].table);
	}
	free(py->codes);
	free(py->procs);
	htab__free(&py->index);
	free(py);
	s->py = NULL;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/python: processes running an interpreter whose frames BPF reads (CPython 3.8-3.13,
 * CRuby 3.1), and the names of those frames.
 *
 * A described process that maps a file named python3.N / libpython3.N whose table found
 * _PyRuntime (unwind/utab's py_runtime) gets a `py_procs` entry: that address and its
 * version's python/pylayout offsets; one that maps libruby-3.N with ruby_current_vm_ptr
 * (rb_vm_ptr) an `rb_procs` entry with ruby/rblayout's. BPF then reads each sample's
 * frames behind its native ones (bpf/python.bpf.h, ruby.bpf.h) and sends each code object
 * (iseq) it meets first in a process. Their bytes are read here from the process's memory
 * as they come, while it lives (the object, the str/String objects of its names, its line
 * table), sized by their headers and bounded, never decoded: the worker decodes them
 * (symbolizer__python) for the instructions the stacks hold when a profile is made; a code
 * object whose memory cannot be read is unreadable. In continuous mode they are kept a
 * period (BPF sends each again in the next). The model (model.c's python_merge) puts each
 * stack's interpreter frames in place of the interpreter's loop frames that ran them.
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
#include "sandbox/symbolizer.h"
#include "python/pylayout.h"
#include "python/pyline.h"
#include "python/pystr.h"
#include "ruby/rblayout.h"
#include "ruby/rbline.h"
#include "ruby/rbstr.h"
#include "unwind/unwind.h"
#include "unwind/utab.h"
#include "profile.skel.h"

#define PY_BLOBS_MAX	(64u << 20)	/* bytes of code objects kept, in all, */
#define PY_PROC_BLOBS_MAX (16u << 20)	/* and of one process's (one process's, a hostile
					 * one's, leave room for the others') */
#define PY_CODES_MAX	(1u << 16)	/* code objects remembered (as BPF's py_codes) */

/* A code object of a process, its bytes as read when BPF first met it, and the names the
 * worker gave its instructions so far. */
struct pycode {
	pid_t pid;
	uint64_t code;
	bool ruby;			/* a CRuby iseq (its blobs: sym_pycode's) */
	int minor;
	uint64_t period;		/* the session's period when BPF sent it last */
	uint8_t *blob[SYM_PY_BLOBS];	/* sandbox/symbolizer.h's order; NULL: not read */
	uint32_t len[SYM_PY_BLOBS];
	bool unreadable;		/* the object itself could not be read */
	char *name, *file;		/* as the worker named it (NULL: not yet) */
	bool named;			/* not "[python: unreadable]" */
	uint32_t *units, *lines;	/* the instructions named, sorted, and their lines */
	uint32_t nr_units, cap_units;
	uint32_t *want;			/* instructions to name at the next resolve */
	uint32_t nr_want, cap_want;
};

/* A process running an interpreter: CPython (L: its struct py_layout) or CRuby (struct
 * rb_layout), and where BPF starts (_PyRuntime, ruby_current_vm_ptr). */
struct rtproc {
	pid_t pid;
	bool ruby;
	int minor;
	const void *l;
	uint64_t addr;
	uint64_t bytes;		/* of its code objects' (iseqs') blobs */
};

struct pythons {
	struct rtproc *procs;
	size_t nr_procs, cap_procs;
	struct htab index;	/* (pid, code) -> codes[] */
	struct pycode *codes;
	size_t nr, cap;
	uint64_t bytes;		/* of the blobs */
	uint64_t unreadable;	/* code objects whose bytes could not be read */
	uint64_t dropped;	/* code objects not kept (PY_CODES_MAX, PY_BLOBS_MAX) */
	uint64_t described[2];	/* processes given a `py_procs` / `rb_procs` entry, in all */
	uint32_t minors;	/* bit N: a CPython 3.N among them */
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

static struct rtproc *rtproc__find(struct pythons *py, pid_t pid, bool ruby)
{
	for (size_t i = 0; py && i < py->nr_procs; i++)
		if (py->procs[i].pid == pid && py->procs[i].ruby == ruby)
			return &py->procs[i];
	return NULL;
}

/* The minor version in the file name PATH after TAG ("python3.": python3.N, libpython3.N.so;
 * "ruby-3.": libruby-3.N.so), or -1. */
static int version_of(const char *path, const char *tag)
{
	const char *base = strrchr(path, '/'), *p;
	int minor = 0, digits = 0;

	base = base ? base + 1 : path;
	p = strstr(base, tag);
	if (!p)
		return -1;
	for (p += strlen(tag); *p >= '0' && *p <= '9' && digits < 3; p++, digits++)
		minor = minor * 10 + (*p - '0');
	return digits ? minor : -1;
}

/*
 * PID's interpreter of the kind RUBY said to BPF: the first of its mappings named for one
 * whose table found where BPF starts, with a layout known here, gives its `py_procs` or
 * `rb_procs` entry; none: the entry deleted.
 */
static void describe(struct session *s, pid_t pid, bool ruby)
{
	const char *kind = ruby ? "CRuby" : "CPython", *tag = ruby ? "ruby-3." : "python3.";
	int fd = ruby ? bpf_map__fd(s->skel->maps.rb_procs) : bpf_map__fd(s->skel->maps.py_procs);
	struct rtproc found = { .pid = pid, .ruby = ruby };
	const struct map *maps;
	struct pythons *py;
	struct rtproc *rp;
	size_t n;
	__u32 key = pid;
	int err;

	maps = procmaps__maps(s->maps, pid, &n);
	for (size_t i = 0; i < n && !found.l; i++) {
		const struct map *m = &maps[i];
		const struct utab *t;
		uint32_t id;
		uint64_t bias, at;

		if ((found.minor = version_of(m->path, tag)) < 0)
			continue;
		t = unwinder__map_table(s->unw, pid, m, &id, &bias);
		at = !t ? 0 : ruby ? t->rb_vm_ptr : t->py_runtime;
		if (!at || utab__bias(t, m, m->start, &bias))
			continue;
		found.l = ruby ? (const void *)rb_layout__for(3, found.minor) :
				 (const void *)py_layout__for(3, found.minor);
		if (!found.l)
			pr_debug("pid %d: %s 3.%d has no layout here", pid, kind, found.minor);
		found.addr = at + bias;
	}
	py = found.l ? pythons(s) : s->py;
	rp = rtproc__find(py, pid, ruby);
	if (!found.l) {
		if (rp) {
			bpf_map_delete_elem(fd, &key);
			*rp = py->procs[--py->nr_procs];
		}
		return;
	}
	if (!py || (rp && rp->addr == found.addr && rp->l == found.l))
		return;
	/* (A process described again: its code objects' bytes still held.) */
	found.bytes = rp ? rp->bytes : 0;
	if (!rp) {
		if (array_grow(&py->procs, &py->cap_procs, sizeof(*py->procs), py->nr_procs))
			return;
		rp = &py->procs[py->nr_procs++];
		py->described[ruby]++;
		if (!ruby)
			py->minors |= 1u << (found.minor & 31);
	}
	*rp = found;
	/* (Before the entry: samples look for entries once one may be there.) */
	if (ruby)
		s->skel->bss->rb_any = true;
	else
		s->skel->bss->py_any = true;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (ruby) {
		struct rb_proc e = { .vm_ptr = found.addr,
				     .off = ((const struct rb_layout *)found.l)->bpf };

		err = bpf_map_update_elem(fd, &key, &e, BPF_ANY);
	} else {
		const struct py_layout *l = found.l;
		struct py_proc e = { .runtime = found.addr, .off = l->bpf };
		uint16_t nm = l->code_qualname != PY_NO_FIELD ? l->code_qualname : l->code_name;

		/* The signature BPF checks a code object by: its name's and file name's
		 * addresses too, when they are within PY_CODE_SIG bytes of its first line. */
		e.off.code_sig_name = nm > l->code_firstlineno &&
				      nm - l->code_firstlineno <= PY_CODE_SIG - 8 ? nm : PY_NO_FIELD;
		e.off.code_sig_file = l->code_filename > l->code_firstlineno &&
				      l->code_filename - l->code_firstlineno <= PY_CODE_SIG - 8 ?
				      l->code_filename : PY_NO_FIELD;

		err = bpf_map_update_elem(fd, &key, &e, BPF_ANY);
	}
	if (err)
		pr_warn("cannot describe %s 3.%d of pid %d to BPF: %s", kind, found.minor, pid,
			strerror(errno));
	else
		pr_debug("pid %d: %s 3.%d, BPF starts at %#llx", pid, kind, found.minor,
			 (unsigned long long)found.addr);
}

void python__describe(struct session *s, pid_t pid)
{
	if (!s->opts.no_runtime && s->skel && s->skel->rodata->python)
		describe(s, pid, false);
	if (!s->opts.no_runtime && s->skel && s->skel->rodata->ruby)
		describe(s, pid, true);
}

void python__forget(struct session *s, pid_t pid)
{
	for (int ruby = 0; ruby < 2; ruby++) {
		struct rtproc *rp = rtproc__find(s->py, pid, ruby);
		__u32 key = pid;

		if (!rp)
			continue;
		bpf_map_delete_elem(ruby ? bpf_map__fd(s->skel->maps.rb_procs) :
				    bpf_map__fd(s->skel->maps.py_procs), &key);
		*rp = s->py->procs[--s->py->nr_procs];
	}
}

/* Up to LEN bytes of PID's memory at ADDR into BUF: how many were read (0: none). */
static size_t peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (!addr || addr + len < addr)
		return 0;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	return n > 0 ? (size_t)n : 0;
}

/* LEN bytes of PID's memory at ADDR, in a new buffer; NULL when not all could be read. */
static uint8_t *peek_new(pid_t pid, uint64_t addr, size_t len)
{
	uint8_t *b = len ? malloc(len) : NULL;

	if (b && peek(pid, addr, b, len) != len) {
		free(b);
		b = NULL;
	}
	return b;
}

/*
 * The bytes of the objects code object C (of layout L) points at: its names' str objects
 * and its line table's bytes object, sized by their headers (a length and a kind, a size:
 * bounded by py_str__need and py_bytes__need; the text and the table are the worker's to
 * decode). Whatever cannot be read is left out.
 */
static void read_blobs(struct pycode *c, const struct py_layout *l)
{
	static const int strs[] = { SYM_PY_QUALNAME, SYM_PY_NAME, SYM_PY_FILE };
	uint8_t hdr[128];
	uint64_t at;

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		int k = strs[i];
		uint16_t off = k == SYM_PY_QUALNAME ? l->code_qualname :
			       k == SYM_PY_NAME ? l->code_name : l->code_filename;
		size_t need;

		if (off == PY_NO_FIELD || l->str_compact_data > sizeof(hdr))
			continue;
		memcpy(&at, c->blob[SYM_PY_CODE] + off, sizeof(at));
		if (peek(c->pid, at, hdr, l->str_compact_data) < l->str_ascii_data)
			continue;
		need = py_str__need(l, hdr, l->str_compact_data);
		if (need && need <= SYM_PY_BLOB_MAX && (c->blob[k] = peek_new(c->pid, at, need)))
			c->len[k] = (uint32_t)need;
	}
	memcpy(&at, c->blob[SYM_PY_CODE] + l->code_linetable, sizeof(at));
	if (l->bytes_data <= sizeof(hdr) && peek(c->pid, at, hdr, l->bytes_data) == l->bytes_data) {
		size_t need = py_bytes__need(l, hdr, l->bytes_data);

		if (need && need <= SYM_PY_BLOB_MAX && (c->blob[SYM_PY_TABLE] = peek_new(c->pid, at, need)))
			c->len[SYM_PY_TABLE] = (uint32_t)need;
	}
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

/* What C holds, freed (it stays in the index, empty). */
static void pycode__clear(struct pythons *py, struct pycode *c)
{
	struct rtproc *rp = rtproc__find(py, c->pid, c->ruby);

	for (int i = 0; i < SYM_PY_BLOBS; i++) {
		py->bytes -= c->len[i];
		/* (A pid described again since: what is left of its count.) */
		if (rp)
			rp->bytes -= rp->bytes < c->len[i] ? rp->bytes : c->len[i];
		free(c->blob[i]);
	}
	free(c->name);
	free(c->file);
	free(c->units);
	free(c->lines);
	free(c->want);
	*c = (struct pycode){ .pid = c->pid, .code = c->code, .ruby = c->ruby };
}

/*
 * The entry of code object (iseq) CODE of process RP, new or emptied (another in a freed
 * one's place: BPF saw another first line), or NULL when over the limits (counted).
 */
static struct pycode *pycode__slot(struct pythons *py, struct rtproc *rp, uint64_t code,
				   uint64_t period)
{
	struct pycode *c = pycode__find(py, rp->pid, code);

	if (c) {
		pycode__clear(py, c);
	} else {
		if (py->nr >= PY_CODES_MAX || py->bytes >= PY_BLOBS_MAX ||
		    rp->bytes >= PY_PROC_BLOBS_MAX ||
		    array_grow(&py->codes, &py->cap, sizeof(*py->codes), py->nr) ||
		    htab__insert(&py->index, code_hash(rp->pid, code), (uint32_t)py->nr)) {
			py->dropped++;
			return NULL;
		}
		c = &py->codes[py->nr++];
		*c = (struct pycode){ .pid = rp->pid, .code = code, .ruby = rp->ruby };
	}
	c->minor = rp->minor;
	c->period = period;
	return c;
}

/* What C's blobs hold, charged to its process RP (and in all). */
static void pycode__charge(struct pythons *py, struct rtproc *rp, const struct pycode *c)
{
	for (int i = 0; i < SYM_PY_BLOBS; i++) {
		py->bytes += c->len[i];
		rp->bytes += c->len[i];
	}
}

int python__on_code(struct session *s, const struct py_code_event *ev)
{
	struct pythons *py = s->py;
	struct rtproc *rp = rtproc__find(py, (pid_t)ev->pid, false);
	const struct py_layout *l;
	struct pycode *c;

	if (!rp || !(c = pycode__slot(py, rp, ev->code, s->period)))
		return 0;
	l = rp->l;
	c->blob[SYM_PY_CODE] = peek_new(c->pid, c->code, l->code_read);
	if (!c->blob[SYM_PY_CODE]) {
		c->unreadable = true;
		py->unreadable++;
		return 0;
	}
	c->len[SYM_PY_CODE] = l->code_read;
	read_blobs(c, l);
	pycode__charge(py, rp, c);
	return 0;
}

/* The bytes of a String of PID at ADDR (layout L), located (embedded in it, or on its heap:
 * rb_str__locate, bounded) and read into *BLOB, *LEN. */
static void read_rstr(pid_t pid, const struct rb_layout *l, uint64_t addr, uint8_t **blob,
		      uint32_t *len)
{
	uint8_t obj[64];
	uint64_t at;
	size_t n;

	if (!addr || l->str_size > sizeof(obj) || peek(pid, addr, obj, l->str_size) != l->str_size ||
	    rb_str__locate(l, addr, obj, l->str_size, &at, &n) || !n)
		return;
	if ((*blob = peek_new(pid, at, n)))
		*len = (uint32_t)n;
}

int python__on_iseq(struct session *s, const struct rb_iseq_event *ev)
{
	struct pythons *py = s->py;
	struct rtproc *rp = rtproc__find(py, (pid_t)ev->pid, true);
	const struct rb_layout *l;
	struct pycode *c;
	uint64_t body = 0, a, path = 0, slot = 0, info = 0, succ = 0;
	uint32_t size = 0, info_size = 0;
	uint8_t obj[64];

	if (!rp || !(c = pycode__slot(py, rp, ev->iseq, s->period)))
		return 0;
	l = rp->l;
	if (peek(c->pid, ev->iseq + l->bpf.iseq_body, &body, sizeof(body)) != sizeof(body) ||
	    !(c->blob[SYM_PY_CODE] = peek_new(c->pid, body, l->body_read))) {
		c->unreadable = true;
		py->unreadable++;
		return 0;
	}
	c->len[SYM_PY_CODE] = l->body_read;
	memcpy(&a, c->blob[SYM_PY_CODE] + l->body_label, sizeof(a));
	read_rstr(c->pid, l, a, &c->blob[SYM_PY_QUALNAME], &c->len[SYM_PY_QUALNAME]);
	memcpy(&a, c->blob[SYM_PY_CODE] + l->body_pathobj, sizeof(a));
	if (l->str_size <= sizeof(obj) && peek(c->pid, a, obj, l->str_size) == l->str_size &&
	    !rb_path__locate(l, a, obj, l->str_size, &path, &slot) && !path && slot &&
	    peek(c->pid, slot, &path, sizeof(path)) != sizeof(path))
		path = 0;
	read_rstr(c->pid, l, path, &c->blob[SYM_PY_FILE], &c->len[SYM_PY_FILE]);
	/* The line table: its entries, and its succinct index (sized by the iseq's size). */
	memcpy(&size, c->blob[SYM_PY_CODE] + l->body_iseq_size, sizeof(size));
	memcpy(&info_size, c->blob[SYM_PY_CODE] + l->body_insns_size, sizeof(info_size));
	memcpy(&info, c->blob[SYM_PY_CODE] + l->body_insns_info, sizeof(info));
	memcpy(&succ, c->blob[SYM_PY_CODE] + l->body_succ_table, sizeof(succ));
	if (info && info_size && (uint64_t)info_size * l->insn_info_size <= SYM_PY_BLOB_MAX &&
	    (c->blob[SYM_PY_TABLE] = peek_new(c->pid, info, (size_t)info_size * l->insn_info_size)))
		c->len[SYM_PY_TABLE] = info_size * l->insn_info_size;
	if (succ && size < 0x10000 && rb_line__succ_len(size) <= SYM_PY_BLOB_MAX &&
	    (c->blob[SYM_PY_NAME] = peek_new(c->pid, succ, rb_line__succ_len(size))))
		c->len[SYM_PY_NAME] = (uint32_t)rb_line__succ_len(size);
	pycode__charge(py, rp, c);
	return 0;
}

/* The index of UNIT among C's named ones, or -1. */
static int64_t pycode__unit(const struct pycode *c, uint32_t unit)
{
	uint32_t lo = 0, hi = c->nr_units;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (c->units[mid] < unit)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nr_units && c->units[lo] == unit ? (int64_t)lo : -1;
}

void python__want(struct session *s, pid_t pid, uint64_t word)
{
	struct pycode *c = pycode__find(s->py, pid, word & PY_WORD_ADDR);
	uint32_t unit = (uint32_t)(word >> PY_UNIT_SHIFT);

	if (!c || c->unreadable || pycode__unit(c, unit) >= 0)
		return;
	for (uint32_t i = 0; i < c->nr_want; i++)
		if (c->want[i] == unit)
			return;
	if (!array_grow(&c->want, &c->cap_want, sizeof(*c->want), c->nr_want))
		c->want[c->nr_want++] = unit;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* C's wanted instructions named by the worker. Returns 0 or a negative errno. */
static int pycode__resolve(struct session *s, struct pycode *c)
{
	struct sym_pycode sc = { .ruby = c->ruby, .minor = c->minor };
	struct sym_pyname *out = calloc(c->nr_want, sizeof(*out));
	uint32_t n = c->nr_want, total = c->nr_units + n, *units;
	int err;

	if (!out)
		return -ENOMEM;
	qsort(c->want, n, sizeof(*c->want), u32_cmp);
	/* (A Python frame before its first instruction: its first line.) */
	units = malloc(n * sizeof(*units));
	if (!units) {
		free(out);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		units[i] = !c->ruby && c->want[i] == PY_UNIT_BEFORE_FIRST ? PY_UNIT_BEFORE :
			   c->want[i];
	for (int i = 0; i < SYM_PY_BLOBS; i++) {
		sc.blob[i] = c->blob[i];
		sc.len[i] = c->len[i];
	}
	err = symbolizer__python(s->sym, &sc, units, n, out);
	free(units);
	if (!err && (!(c->name || (c->name = strdup(out[0].name))) ||
		     (!c->file && out[0].file[0] && !(c->file = strdup(out[0].file))) ||
		     array_grow(&c->units, &c->cap_units, sizeof(*c->units), total - 1) ||
		     !(c->lines = realloc(c->lines, (size_t)c->cap_units * sizeof(*c->lines)))))
		err = -ENOMEM;
	if (!err) {
		c->named = out[0].named;
		/* Both sorted: merged from the end. */
		for (uint32_t i = c->nr_units, j = n, k = total; k-- > 0;) {
			if (j && (!i || c->want[j - 1] > c->units[i - 1])) {
				j--;
				c->units[k] = c->want[j];
				c->lines[k] = out[j].line;
			} else {
				i--;
				c->units[k] = c->units[i];
				c->lines[k] = c->lines[i];
			}
		}
		c->nr_units = total;
	}
	c->nr_want = 0;
	free(out);
	return err;
}

int python__resolve(struct session *s)
{
	struct pythons *py = s->py;

	for (size_t i = 0; py && i < py->nr; i++) {
		int err = py->codes[i].nr_want ? pycode__resolve(s, &py->codes[i]) : 0;

		if (err == -ENOMEM)
			return err;
	}
	return 0;
}

int python__frame(struct session *s, pid_t pid, uint64_t word, bool ruby,
		  struct python_frame *out)
{
	const struct pycode *c = pycode__find(s->py, pid, word & PY_WORD_ADDR);
	int64_t i = c ? pycode__unit(c, (uint32_t)(word >> PY_UNIT_SHIFT)) : -1;

	*out = (struct python_frame){ .name = ruby ? "[ruby: unreadable]" : "[python: unreadable]" };
	if (!c || !c->name || !c->named)
		return -ENOENT;
	out->name = c->name;
	out->file = c->file;
	out->line = i >= 0 ? (int)c->lines[i] : 0;
	return 0;
}

uint64_t python__unreadable(const struct session *s)
{
	return s->py ? s->py->unreadable : 0;
}

void python__period_named(struct session *s)
{
	struct pythons *py = s->py;
	size_t k = 0;

	if (!py)
		return;
	for (size_t i = 0; i < py->nr; i++) {
		if (py->codes[i].period < s->period)
			pycode__clear(py, &py->codes[i]);
		else
			py->codes[k++] = py->codes[i];
	}
	if (k == py->nr)
		return;
	py->nr = k;
	htab__free(&py->index);
	if (htab__init(&py->index, 64))
		py->nr = 0;	/* (no memory: all forgotten; BPF sends them again) */
	for (size_t i = 0; i < py->nr; i++)
		if (htab__insert(&py->index, code_hash(py->codes[i].pid, py->codes[i].code),
				 (uint32_t)i)) {
			py->nr = i;
			break;
		}
}

uint64_t ruby__procs(const struct session *s)
{
	return s->py ? s->py->described[1] : 0;
}

uint64_t python__procs(const struct session *s, uint32_t *minors)
{
	*minors = s->py ? s->py->minors : 0;
	return s->py ? s->py->described[0] : 0;
}

void session__free_python(struct session *s)
{
	struct pythons *py = s->py;

	if (!py)
		return;
	for (size_t i = 0; i < py->nr; i++)
		pycode__clear(py, &py->codes[i]);
	free(py->codes);
	free(py->procs);
	htab__free(&py->index);
	free(py);
	s->py = NULL;
}

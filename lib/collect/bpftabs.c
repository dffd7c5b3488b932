// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/bpftabs: the files' unwind tables in BPF, for the walk from them there
 * (bpf/tabwalk.bpf.h). A file's rows (the worker's utab, its rules made BPF's struct urow)
 * go into shards of UTAB_SHARD_ROWS, elements of the hash map `ushards` (added without
 * privileges: those are dropped after attach, and a new map would need CAP_BPF), once per
 * file (by dso id: whichever processes map it), when a described process first maps it;
 * `ufiles` says where each shard begins; each described process's `proc_tabs` entry gives
 * its mappings' files and biases, written before its `procs` entry.
 *
 * A file's tables stay until it is forgotten (no process maps it: between periods of
 * --every), its slot and shards then given to files added later; bounded by the maps'
 * sizes and --max-memory (the shards' bytes), a file that does not fit counted
 * (LIMIT_BPF_TABLES) and its stacks left to userspace, as all were before.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/grow.h"
#include "base/limits.h"
#include "base/log.h"
#include "collect/bpftabs.h"
#include "collect/session_int.h"
#include "unwind/utab.h"
#include "profile.skel.h"

#define SLOT_NONE	0		/* slot_of: not in BPF yet */
#define SLOT_FAILED	UINT32_MAX	/* slot_of: did not fit (counted once) */

struct bpftabs {
	uint32_t *slot_of;	/* dso id -> its slot in `ufiles` + 1, or SLOT_* */
	size_t cap_slot_of;
	struct ufile_dir *dirs;	/* slot -> what `ufiles` holds there */
	uint32_t cap_dirs;
	uint32_t nr_files, nr_shards;	/* slots and shard keys given so far */
	uint32_t *free_slots, nr_free_slots, cap_free_slots;	/* given back: taken first */
	uint32_t *free_shards, nr_free_shards, cap_free_shards;
	uint32_t files, shards;		/* in use */
};

/* A free entry of FREE (NR of them), else NEXT's value, moved on; UINT32_MAX when NEXT has
 * reached MAX. */
static uint32_t take_id(uint32_t *free, uint32_t *nr, uint32_t *next, uint32_t max)
{
	if (*nr)
		return free[--*nr];
	return *next < max ? (*next)++ : UINT32_MAX;
}

struct urow bpftabs__urow(uint32_t start, const struct cfi_rule *r)
{
	struct urow u = { .start = start, .cfa = UROW_NONE };

	/* (Userspace's, needing no register of the frame but rsp and rbp.) */
	if (!r || r->signal) {
		u.cfa = UROW_SP_ONLY;
		return u;
	}
	if (r->ra == CFI_UNDEFINED) {
		u.cfa = UROW_OUTERMOST;
		return u;
	}
	if (r->ra != CFI_AT_CFA || r->ra_off < INT16_MIN || r->ra_off > INT16_MAX)
		return u;
	for (int i = 0; i < CFI_NR_CS; i++)
		if (r->cs[i] != CFI_SAME)
			u.flags |= UROW_F_CS;
	switch (r->bp) {
	case CFI_SAME:
		u.bp = UROW_BP_SAME;
		break;
	case CFI_UNDEFINED:
		u.bp = UROW_BP_UNDEFINED;
		break;
	case CFI_AT_CFA:
		if (r->bp_off < INT16_MIN || r->bp_off > INT16_MAX)
			return u;
		u.bp = UROW_BP_AT_CFA;
		u.bp_off = (int16_t)r->bp_off;
		break;
	default:
		return u;	/* at sp, in a register: userspace's */
	}
	u.ra_off = (int16_t)r->ra_off;
	u.cfa_off = r->cfa_off;
	if (r->cfa_reg != CFI_REG_RSP && r->cfa_reg != CFI_REG_RBP) {
		/* Another register, as the sample had it or a frame since restored it: the
		 * walk has the sample's. */
		if (r->cfa_reg < 16 && r->cfa_deref == CFI_CFA_REG) {
			u.cfa = UROW_REG;
			u.reg = r->cfa_reg;
		}
		return u;
	}
	switch (r->cfa_deref) {
	case CFI_CFA_REG:
		u.cfa = r->cfa_reg == CFI_REG_RSP ? UROW_RSP : UROW_RBP;
		break;
	case CFI_CFA_DEREF:
		u.cfa = r->cfa_reg == CFI_REG_RSP ? UROW_DEREF_RSP : UROW_DEREF_RBP;
		break;
	case CFI_CFA_PLT:
		/* bp_off holds the cut: rbp must stay as it was. */
		if (r->cfa_reg != CFI_REG_RSP || u.bp != UROW_BP_SAME)
			return u;
		u.cfa = UROW_PLT;
		u.bp_off = r->plt_cut;
		break;
	}
	return u;
}

void bpftabs__fill(const struct utab *t, uint32_t from, struct ushard *sh)
{
	uint32_t n = from < t->nr_rows ? t->nr_rows - from : 0;

	if (n > UTAB_SHARD_ROWS)
		n = UTAB_SHARD_ROWS;
	for (uint32_t i = 0; i < n; i++) {
		const struct utab_row *row = &t->rows[from + i];
		const struct cfi_rule *r = row->rule < t->nr_rules ? &t->rules[row->rule] : NULL;

		sh->rows[i] = bpftabs__urow(row->start, r);
		if (row->rule == UTAB_RECORD)
			sh->rows[i] = UROW_RECORD_ROW(row->start);
	}
	for (uint32_t i = n; i < UTAB_SHARD_ROWS; i++)
		sh->rows[i] = (struct urow){ .start = UINT32_MAX, .cfa = UROW_NONE };
}

uint32_t bpftabs__nr_shards(const struct utab *t)
{
	uint32_t n = (t->nr_rows + UTAB_SHARD_ROWS - 1) / UTAB_SHARD_ROWS;

	return n < UTAB_FILE_SHARDS ? n : UTAB_FILE_SHARDS;
}

/* One more shard in `ushards` holding SH; its index into *ID. Returns 0 or negative errno. */
static int add_shard(struct session *s, struct bpftabs *bt, const struct ushard *sh, uint32_t *id)
{
	__u32 key = take_id(bt->free_shards, &bt->nr_free_shards, &bt->nr_shards,
			    UTAB_MAX_SHARDS);

	if (key == UINT32_MAX)
		return -ENOSPC;
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.ushards), &key, sh, BPF_NOEXIST)) {
		int err = -errno;

		bt->free_shards[bt->nr_free_shards++] = key;	/* (room: it was taken) */
		return err;
	}
	*id = key;
	bt->shards++;
	return 0;
}

/* Give back slot SLOT's shards (the first NR of DIR) and the slot (when not UINT32_MAX). */
static void give_back(struct session *s, struct bpftabs *bt, const struct ufile_dir *dir,
		      uint32_t nr, uint32_t slot)
{
	int fd = bpf_map__fd(s->skel->maps.ushards);

	for (uint32_t k = 0; k < nr; k++) {
		bpf_map_delete_elem(fd, &dir->shard[k]);
		bt->free_shards[bt->nr_free_shards++] = dir->shard[k];
		bt->shards--;
	}
	limits__release((size_t)nr * sizeof(struct ushard));
	if (slot != UINT32_MAX)
		bt->free_slots[bt->nr_free_slots++] = slot;
}

/* Table T into BPF: its slot into *SLOT. Returns 0 or negative errno. */
static int load_file(struct session *s, struct bpftabs *bt, const struct utab *t,
		     uint32_t *slot)
{
	uint32_t nr = bpftabs__nr_shards(t), key, added = 0;
	size_t bytes = (size_t)nr * sizeof(struct ushard);
	struct ufile_dir dir = { 0 };
	struct ushard *sh;
	int err = 0;

	if (!nr || bt->shards + nr > UTAB_MAX_SHARDS)
		return -ENOSPC;
	/* (Room to give back all that can be taken, and a directory per slot.) */
	if (array_grow(&bt->free_slots, &bt->cap_free_slots, sizeof(uint32_t), UTAB_MAX_FILES) ||
	    array_grow(&bt->free_shards, &bt->cap_free_shards, sizeof(uint32_t),
		       UTAB_MAX_SHARDS) ||
	    array_grow(&bt->dirs, &bt->cap_dirs, sizeof(*bt->dirs), UTAB_MAX_FILES))
		return -ENOMEM;
	key = take_id(bt->free_slots, &bt->nr_free_slots, &bt->nr_files, UTAB_MAX_FILES);
	if (key == UINT32_MAX)
		return -ENOSPC;
	if (!limits__reserve(bytes)) {
		bt->free_slots[bt->nr_free_slots++] = key;
		return -ENOSPC;
	}
	sh = malloc(sizeof(*sh));
	for (uint32_t k = 0; k < nr && sh && !err; k++) {
		uint32_t from = k * UTAB_SHARD_ROWS;

		bpftabs__fill(t, from, sh);
		/* More rows than a file may have in BPF: the last shard ends them, its one
		 * row no rule (the code past it is left to userspace). */
		if (k == UTAB_FILE_SHARDS - 1 && t->nr_rows > from + UTAB_SHARD_ROWS) {
			struct urow end = { .start = sh->rows[0].start, .cfa = UROW_NONE };

			bpftabs__fill(t, UINT32_MAX, sh);
			sh->rows[0] = end;
		}
		dir.first[k] = sh->rows[0].start;
		err = add_shard(s, bt, sh, &dir.shard[k]);
		added += !err;
	}
	free(sh);
	if (!sh)
		err = -ENOMEM;
	dir.nr = nr;
	if (!err && bpf_map_update_elem(bpf_map__fd(s->skel->maps.ufiles), &key, &dir, BPF_ANY))
		err = -errno;
	if (err) {
		/* The shards added, the budget, the slot. */
		limits__release((size_t)(nr - added) * sizeof(struct ushard));
		give_back(s, bt, &dir, added, key);
		return err;
	}
	bt->dirs[key] = dir;
	bt->files++;
	*slot = key;
	pr_debug("bpftabs: file in slot %u of BPF: %u rows in %u shards", key, t->nr_rows, nr);
	return 0;
}

/* The slot of file ID (table T) in `ufiles`, loaded now if need be; -1 when it is not
 * there. */
static int64_t file_slot(struct session *s, uint32_t id, const struct utab *t)
{
	struct bpftabs *bt = s->bpftabs;
	uint32_t slot;
	int err;

	if (!bt) {
		bt = s->bpftabs = calloc(1, sizeof(*bt));
		if (!bt)
			return -1;
	}
	if (array_grow(&bt->slot_of, &bt->cap_slot_of, sizeof(*bt->slot_of), id))
		return -1;
	if (id >= bt->cap_slot_of)
		return -1;
	if (bt->slot_of[id] == SLOT_FAILED)
		return -1;
	if (bt->slot_of[id] != SLOT_NONE)
		return bt->slot_of[id] - 1;
	err = load_file(s, bt, t, &slot);
	if (err) {
		bt->slot_of[id] = SLOT_FAILED;
		limits__hit(LIMIT_BPF_TABLES, 1);
		pr_debug("bpftabs: the unwind table of file %u not in BPF: %s", id, strerror(-err));
		return -1;
	}
	bt->slot_of[id] = slot + 1;
	return slot;
}

int session__write_tabs(struct session *s, pid_t pid, const struct bpftab_map *maps, size_t n)
{
	struct proc_tabs pt = { 0 };
	__u32 key = (__u32)pid;
	int fd = bpf_map__fd(s->skel->maps.proc_tabs);

	for (size_t i = 0; i < n && pt.nr < PROFILE_MAX_TABS; i++) {
		int64_t slot = maps[i].tab ? file_slot(s, maps[i].id, maps[i].tab) : -1;

		if (slot < 0)
			continue;
		pt.start[pt.nr] = maps[i].start;
		pt.end[pt.nr] = maps[i].end;
		pt.bias[pt.nr] = maps[i].bias;
		pt.ino[pt.nr] = maps[i].ino;
		pt.pgoff[pt.nr] = maps[i].pgoff;
		pt.file[pt.nr] = (uint32_t)slot;
		pt.nr++;
	}
	pr_debug("bpftabs: pid %d: %u of %zu mappings with tables in BPF", pid, pt.nr, n);
	pt.version = session__bpf_version(s);
	if (!pt.nr) {
		bpf_map_delete_elem(fd, &key);
		return 0;
	}
	return bpf_map_update_elem(fd, &key, &pt, BPF_ANY) ? -errno : 0;
}

void session__bpftabs_keep(struct session *s, const uint8_t *used, uint32_t nr)
{
	struct bpftabs *bt = s->bpftabs;
	uint32_t *ids;
	size_t n = 0;

	if (!bt)
		return;
	ids = malloc((bt->cap_slot_of ? bt->cap_slot_of : 1) * sizeof(*ids));
	if (!ids)
		return;
	for (uint32_t id = 0; id < bt->cap_slot_of; id++) {
		if (id < nr && used[id])
			continue;
		/* (One that did not fit may, when a process maps it again.) */
		if (bt->slot_of[id] == SLOT_FAILED)
			bt->slot_of[id] = SLOT_NONE;
		else if (bt->slot_of[id] != SLOT_NONE)
			ids[n++] = id;
	}
	if (n)
		pr_debug("bpftabs: %zu files no live process maps given back", n);
	session__bpftabs_forget(s, ids, n);
	s->stats.bpf_evicted += n;
	free(ids);
}

void session__bpftabs_forget(struct session *s, const uint32_t *ids, size_t n)
{
	struct bpftabs *bt = s->bpftabs;
	struct ufile_dir none = { 0 };

	for (size_t i = 0; bt && i < n; i++) {
		uint32_t id = ids[i], slot;

		if (id >= bt->cap_slot_of || bt->slot_of[id] == SLOT_NONE)
			continue;
		if (bt->slot_of[id] != SLOT_FAILED) {
			slot = bt->slot_of[id] - 1;
			/* No process maps it: no `proc_tabs` entry leads here any more. */
			bpf_map_update_elem(bpf_map__fd(s->skel->maps.ufiles), &slot, &none,
					    BPF_ANY);
			give_back(s, bt, &bt->dirs[slot], bt->dirs[slot].nr, slot);
			bt->dirs[slot] = none;
			bt->files--;
		}
		bt->slot_of[id] = SLOT_NONE;	/* the id is another file's next */
	}
}

void session__bpftabs_stats(const struct session *s, uint32_t *files, uint32_t *shards)
{
	const struct bpftabs *bt = s->bpftabs;

	*files = bt ? bt->files : 0;
	*shards = bt ? bt->shards : 0;
}

void session__free_bpftabs(struct session *s)
{
	struct bpftabs *bt = s->bpftabs;

	if (!bt)
		return;
	limits__release((size_t)bt->shards * sizeof(struct ushard));
	free(bt->slot_of);
	free(bt->dirs);
	free(bt->free_slots);
	free(bt->free_shards);
	free(bt);
	s->bpftabs = NULL;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * rbhostile: a program profile takes for CRuby 3.1: it is linked against
 * libruby-3.1-hostile.so (this file built with -DRBHOSTILE_LIB: the data object
 * ruby_current_vm_ptr and one function), so /proc/PID/maps names a "ruby-3.1" library
 * exporting that symbol, and it lays out what the pointer leads to as lib/ruby/rblayout.c's
 * 3.1 table says:
 * ruby_current_vm_ptr -> rb_vm_t -> main ractor -> threads.running_ec -> an ec (vm_stack,
 * vm_stack_size, cfp, thread_ptr -> thread_id: the pthread_self() of a spinning thread) ->
 * control frames of 64 bytes (pc, iseq, ep; ep[0] the frame's flags, ep[-2] its method
 * entry) -> iseqs -> bodies -> label and pathobj (RString embedded or on the heap, RArray
 * [path, realpath] embedded or not), first_lineno (a Fixnum), iseq_encoded and iseq_size,
 * insns_info entries and the succinct index table.
 *
 * Its spinning threads run in a native function named rb_vm_exec (where the model puts
 * Ruby frames), taking turns as CRuby's threads do under the GVL (the one running sets
 * running_ec to its ec; the other waits, off the CPU), while the main thread scribbles on
 * all of it for the whole run: cycles, pointers into unmapped memory, to kernel, odd and
 * non-canonical addresses, a vm_stack_size of 2^60, cfp past the end or between frames,
 * bad frame flags, Strings and Arrays of huge or negative lengths and bad flags, iseq_size
 * and insns_info.size huge (a line table claiming gigabytes), pages made PROT_NONE, and the
 * region holding the iseqs unmapped and mapped again. Every few milliseconds all of it is
 * rebuilt intact, so names can be read between the scribbles. A scribble never makes a
 * well-formed object with other text or lines: pointers to bytes (a String's, a line
 * table's) go only where nothing can be read, the junk page holds no byte a String's or an
 * Array's flags could start with, and every text and table ends before a PROT_NONE page.
 *
 * Usage: rbhostile SECONDS [hostile|intact]
 *   hostile   the above (default)
 *   intact    the same objects, never scribbled on
 * `rbhostile names` prints the fake iseqs' labels and paths (as hex: some are not
 * UTF-8), first lines and line counts as JSON, for the test.
 */
#ifdef RBHOSTILE_LIB
/* libruby-3.1-hostile.so: what profile finds by its symbol (STT_OBJECT, in .dynsym). */
__attribute__((visibility("default"), aligned(64))) void *ruby_current_vm_ptr;

/* A function, so the file has CFI: profile takes the pointer from the table it makes of a
 * file with FDEs only (a file of data alone is not described). */
__attribute__((visibility("default"))) void **rbhostile_vm_slot(void)
{
	return &ruby_current_vm_ptr;
}
#else
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "spin.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

extern void *ruby_current_vm_ptr;

/* CRuby 3.1's offsets, as rb_layout__for(3, 1) gives them. */
enum {
	VM_MAIN_RACTOR = 32,
	RACTOR_RUNNING_EC = 520, RACTOR_SIZE = 1024,
	TH_PTHREAD = 80, TH_SIZE = 128,
	EC_VM_STACK = 0, EC_VM_STACK_SIZE = 8, EC_CFP = 16, EC_THREAD = 48, EC_SIZE = 64,
	CFP_PC = 0, CFP_SP = 8, CFP_ISEQ = 16, CFP_SELF = 24, CFP_EP = 32, CFP_SIZE = 64,
	ISEQ_BODY = 16, ISEQ_SIZE = 64,
	BODY_TYPE = 0, BODY_ISEQ_SIZE = 4, BODY_ISEQ_ENCODED = 8, BODY_PATHOBJ = 64,
	BODY_BASE_LABEL = 72, BODY_LABEL = 80, BODY_FIRST_LINENO = 88, BODY_INSNS_INFO = 120,
	BODY_INSNS_POSITIONS = 128, BODY_INSNS_SIZE = 136, BODY_SUCC = 144, BODY_SIZE = 256,
	INSN_INFO_SIZE = 12,
	OBJ_FLAGS = 0, STR_HEAP_LEN = 16, STR_HEAP_PTR = 24, STR_EMBED = 16, STR_SIZE = 40,
	ARY_EMBED = 16, ARY_HEAP_LEN = 16, ARY_HEAP_PTR = 32,
};
#define T_STRING		0x05u
#define T_ARRAY			0x07u
#define T_IMEMO			0x1au
#define STR_NOEMBED		0x2000u
#define STR_EMBED_LEN_SHIFT	14
#define ARY_EMBED_FLAG		0x2000u
#define ARY_EMBED_LEN_SHIFT	15
#define FRAME_METHOD		0x11110001u
#define FRAME_BLOCK		0x22220001u
#define FRAME_TOP		0x33330001u
#define FRAME_CFUNC		0x55550001u
#define FRAME_IFUNC		0x66660001u
#define FRAME_DUMMY		0x79990001u
#define FRAME_FINISH		0x0020u
#define FRAME_CFRAME		0x0080u
#define QNIL			0x08u

#define PAGE		4096
#define NR_SPIN		2		/* spinning threads */
#define NR_EC		4		/* ecs: two decoys (other threads'), the spinners' */
#define NR_FRAMES	8		/* control frames a chain (6 Ruby, a C method, an IFUNC) */
#define STACK_VALUES	512		/* VALUEs of each VM stack: a page */
#define NR_VARIANTS	8		/* kinds of iseq (names) */
#define COPIES		4		/* iseqs of each kind */
#define NR_ISEQS	(NR_VARIANTS * COPIES)
#define NR_LINES	4		/* entries of every line table: first_lineno + 0..3 */
#define LONG_LABEL	3000		/* bytes of the long label (profile cuts it) */

/* ---- the fake iseqs' texts ------------------------------------------------------------ */

struct variant {
	const char *label;	/* NULL: the long one */
	size_t label_len;	/* bytes (NULs and bad UTF-8 included) */
	int label_heap;		/* the label's bytes on the heap (else embedded: <= 23 bytes) */
	const char *path;
	int path_kind;		/* 0 String embedded, 1 String on the heap, 2 Array embedded,
				 * 3 Array on the heap */
	int type;		/* iseq type: 0 top, 1 method, 2 block */
	int first;		/* first_lineno */
	uint32_t size;		/* iseq_size, in VALUEs */
	uint32_t pos[NR_LINES];	/* the positions with a line table entry */
};

#define S(x) x, sizeof(x) - 1
static struct variant variants[NR_VARIANTS] = {
	{ S("rbh_outer"), 0, "/srv/rbhostile/rbh_main.rb", 1, 1, 10, 20, { 0, 5, 10, 15 } },
	{ S("block in rbh_work"), 0, "rbh_work.rb", 2, 2, 100, 40, { 0, 9, 18, 35 } },
	/* UTF-8: U+0192, U+00FC, U+00F6, U+03BB */
	{ S("rbh_\xc6\x92\xc3\xbcncti\xc3\xb6n_\xce\xbb"), 0, "/lib/rbh_mod\xc3\xbcl\xc3\xa9.rb",
	  1, 1, 200, 53, { 0, 13, 30, 52 } },
	/* U+1F40D, on the heap though short */
	{ S("rbh_snake_\xf0\x9f\x90\x8d"), 1, "rbh_emoji.rb", 0, 1, 300, 9, { 0, 2, 4, 6 } },
	/* control characters and the folded separator */
	{ S("rbh_evil\nname;x\t"), 0, "rbh_ctl.rb", 3, 1, 400, 30, { 0, 1, 2, 3 } },
	/* 3000 bytes: "rbh_" and 1498 U+03BB (2 bytes each): cut, at a character */
	{ NULL, LONG_LABEL, 1, "/very/long/rbh_long.rb", 1, 1, 500, 16, { 0, 4, 8, 12 } },
	/* not UTF-8: a lone 0xff, a cut sequence, an encoded surrogate, a NUL */
	{ S("rbh_bad\xff\xc3(\xed\xa0\x80x\0z"), 0, "rbh_bytes.rb", 2, 1, 600, 25,
	  { 0, 6, 12, 24 } },
	/* 700 positions: the succinct table's blocks past the first 54 */
	{ S("block in rbh_deep"), 0, "/srv/rbhostile/rbh_deep.rb", 3, 2, 700, 700,
	  { 0, 60, 300, 650 } },
};
static char long_label[LONG_LABEL];

static volatile int stop;
static pthread_t spin_ids[NR_SPIN];
static volatile int spinners_ready;
static pthread_t main_id;

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void put64(void *base, size_t off, uint64_t v)
{
	memcpy((char *)base + off, &v, 8);
}

static void put32(void *base, size_t off, uint32_t v)
{
	memcpy((char *)base + off, &v, 4);
}

static uint64_t get64(const void *base, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)base + off, 8);
	return v;
}

#define A(p) ((uint64_t)(uintptr_t)(p))

/* ---- the state: VM, ractor, threads, ecs, VM stacks (never unmapped) ------------------ */

static unsigned char *state;
#define ST_VM		0
#define ST_RACTOR	256
#define ST_TH(i)	(1280 + (i) * TH_SIZE)		/* .. 1792 */
#define ST_EC(i)	(1792 + (i) * EC_SIZE)		/* .. 2048 */
#define ST_ME(i)	(2048 + (i) * 64)		/* method entries: .. 2560 */
#define ST_IFUNC	2560
#define ST_STACK(i)	((1 + (i)) * PAGE)		/* a page each */
#define ST_SIZE		((1 + NR_EC) * PAGE)
static unsigned char *junk, *zeros;	/* a page of bytes no object starts with, of zeros */
static uint64_t hole;			/* an address nothing maps */
static volatile int owner;		/* the spinner whose turn it is (holds the "GVL") */
static int stacks_hidden;		/* a VM stack's page is PROT_NONE */

static uint64_t ec_addr(int i)
{
	return A(state + ST_EC(i));
}

/* ---- the objects: iseqs, bodies, Strings, Arrays, line tables (unmapped and mapped
 * again) ------------------------------------------------------------------------------ */

static unsigned char *objs;
static size_t objs_size;
#define OBJ_ISEQ(i)	((i) * ISEQ_SIZE)			/* page 0: 32 x 64 */
#define OBJ_BODY(i)	(PAGE + (i) * BODY_SIZE)		/* pages 1-2 */
#define OBJ_RSTR(k)	(3 * PAGE + (k) * 64)			/* page 3: 64 slots */
/* Then (page, PROT_NONE page) pairs: the heap bytes of Strings, line tables' entries,
 * succinct tables, each at the end of its page. */
#define NR_PAIRS	(4 * NR_VARIANTS)
#define OBJ_PAIR(k)	(4 * PAGE + (k) * 2 * PAGE)
#define PAIR_LABEL(v)	(v)
#define PAIR_PATH(v)	(NR_VARIANTS + (v))
#define PAIR_INFO(v)	(2 * NR_VARIANTS + (v))
#define PAIR_SUCC(v)	(3 * NR_VARIANTS + (v))
/* RString / RArray slots */
#define RS_LABEL(v)	(v)
#define RS_PATH(v)	(NR_VARIANTS + (v))		/* the path String */
#define RS_ARY(v)	(2 * NR_VARIANTS + (v))		/* the pathobj Array, when one */
#define RS_ARYBUF(v)	(3 * NR_VARIANTS + (v))		/* a heap Array's elements */
static int codes_hidden;
static uint64_t encoded;	/* iseq_encoded of every iseq: PROT_NONE (never read) */

static uint64_t iseq_addr(int i)
{
	return A(objs + OBJ_ISEQ(i));
}

static uint64_t pair_end(int k)
{
	return A(objs + OBJ_PAIR(k) + PAGE);
}

/* BYTES (N of them) at the end of pair K's page; their address. */
static uint64_t put_tail(int k, const void *bytes, size_t n)
{
	unsigned char *page = objs + OBJ_PAIR(k);

	memset(page, 0, PAGE);
	memcpy(page + PAGE - n, bytes, n);
	return A(page + PAGE - n);
}

/* String slot K holding BYTES (N), embedded or with its bytes at the end of pair PAIR. */
static uint64_t build_str(int k, const char *bytes, size_t n, int heap, int pair)
{
	unsigned char *o = objs + OBJ_RSTR(k);

	memset(o, 0, 64);
	if (!heap && n <= 23) {
		put64(o, OBJ_FLAGS, T_STRING | (uint64_t)n << STR_EMBED_LEN_SHIFT);
		memcpy(o + STR_EMBED, bytes, n);
	} else {
		put64(o, OBJ_FLAGS, T_STRING | STR_NOEMBED);
		put64(o, STR_HEAP_LEN, n);
		put64(o, STR_HEAP_PTR, put_tail(pair, bytes, n));
		put64(o, 32, n);		/* capa */
	}
	return A(o);
}

/* The succinct index table of iseq positions 0..SIZE-1 with entries at POS (NR_LINES of
 * them), as iseq.c's succ_index_table_create makes it, at the end of pair K. */
static uint64_t build_succ(int k, uint32_t size, const uint32_t *pos)
{
	uint8_t t[PAGE];
	size_t imm = size < 54 ? (size + 8) / 9 * 8 : 48;
	size_t len = size < 54 ? imm : 48 + (size_t)((size - 54 + 511) / 512) * 80;

	memset(t, 0, sizeof(t));
	for (uint32_t x = 0; x < size; x++) {
		uint64_t rank = 0;

		for (int e = 0; e < NR_LINES; e++)
			rank += pos[e] <= x;
		if (x < 54) {
			uint64_t w = get64(t, x / 9 * 8);

			w |= rank << (x % 9 * 7);
			put64(t, x / 9 * 8, w);
		} else {
			uint32_t b = (x - 54) / 512, bit = (x - 54) % 512, sb = bit / 64;
			uint8_t *blk = t + 48 + b * 80;
			int has = 0;

			for (int e = 0; e < NR_LINES; e++)
				has |= pos[e] == x;
			if (bit == 0) {	/* the block's rank: entries before it */
				uint32_t r = 0;

				for (int e = 0; e < NR_LINES; e++)
					r += pos[e] < x;
				put32(blk, 0, r);
			}
			if (bit % 64 == 0 && sb) {	/* entries of the block before word sb */
				uint64_t small = get64(blk, 8), r = 0;

				for (int e = 0; e < NR_LINES; e++)
					r += pos[e] >= x - bit && pos[e] < x;
				small |= r << ((sb - 1) * 9);
				put64(blk, 8, small);
			}
			if (has)
				put64(blk, 16 + sb * 8, get64(blk, 16 + sb * 8) | 1ull << (bit % 64));
		}
	}
	return put_tail(k, t, len);
}

static uint64_t label_str[NR_VARIANTS], path_obj[NR_VARIANTS], info_addr[NR_VARIANTS],
		succ_addr[NR_VARIANTS];

static void build_variant(int v)
{
	const struct variant *va = &variants[v];
	uint8_t info[NR_LINES * INSN_INFO_SIZE];
	uint64_t path;
	size_t pn = strlen(va->path);

	label_str[v] = build_str(RS_LABEL(v), va->label, va->label_len, va->label_heap,
				 PAIR_LABEL(v));
	path = build_str(RS_PATH(v), va->path, pn, va->path_kind == 1, PAIR_PATH(v));
	if (va->path_kind < 2) {
		path_obj[v] = path;
	} else {
		unsigned char *a = objs + OBJ_RSTR(RS_ARY(v));

		memset(a, 0, 64);
		if (va->path_kind == 2) {	/* [path, path] in place */
			put64(a, OBJ_FLAGS, T_ARRAY | ARY_EMBED_FLAG | 2u << ARY_EMBED_LEN_SHIFT);
			put64(a, ARY_EMBED, path);
			put64(a, ARY_EMBED + 8, path);
		} else {			/* [path, path] on the heap */
			unsigned char *buf = objs + OBJ_RSTR(RS_ARYBUF(v));

			memset(buf, 0, 64);
			put64(buf, 0, path);
			put64(buf, 8, path);
			put64(a, OBJ_FLAGS, T_ARRAY);
			put64(a, ARY_HEAP_LEN, 2);
			put64(a, 24, 2);		/* capa */
			put64(a, ARY_HEAP_PTR, A(buf));
		}
		path_obj[v] = A(a);
	}
	memset(info, 0, sizeof(info));
	for (int e = 0; e < NR_LINES; e++) {
		put32(info, e * INSN_INFO_SIZE, (uint32_t)(va->first + e));	/* line_no */
		put32(info, e * INSN_INFO_SIZE + 4, (uint32_t)e);		/* node_id */
		put32(info, e * INSN_INFO_SIZE + 8, 1);				/* events */
	}
	info_addr[v] = put_tail(PAIR_INFO(v), info, sizeof(info));
	succ_addr[v] = build_succ(PAIR_SUCC(v), va->size, va->pos);
}

static void build_iseq(int i)
{
	int v = i % NR_VARIANTS;
	const struct variant *va = &variants[v];
	unsigned char *is = objs + OBJ_ISEQ(i), *b = objs + OBJ_BODY(i);

	memset(is, 0, ISEQ_SIZE);
	put64(is, OBJ_FLAGS, T_IMEMO | 7u << 12);	/* imemo_iseq */
	put64(is, ISEQ_BODY, A(b));
	memset(b, 0, BODY_SIZE);
	put32(b, BODY_TYPE, (uint32_t)va->type);
	put32(b, BODY_ISEQ_SIZE, va->size);
	put64(b, BODY_ISEQ_ENCODED, encoded);
	put64(b, BODY_PATHOBJ, path_obj[v]);
	put64(b, BODY_BASE_LABEL, label_str[v]);
	put64(b, BODY_LABEL, label_str[v]);
	put64(b, BODY_FIRST_LINENO, (uint64_t)va->first << 1 | 1);
	put64(b, BODY_INSNS_INFO, info_addr[v]);
	put64(b, BODY_INSNS_POSITIONS, 0);
	put32(b, BODY_INSNS_SIZE, NR_LINES);
	put64(b, BODY_SUCC, succ_addr[v]);
}

static void build_objects(void)
{
	mprotect(objs, 3 * PAGE, PROT_READ | PROT_WRITE);
	codes_hidden = 0;
	for (int v = 0; v < NR_VARIANTS; v++)
		build_variant(v);
	for (int i = 0; i < NR_ISEQS; i++)
		build_iseq(i);
	for (int k = 0; k < NR_PAIRS; k++)
		mprotect(objs + OBJ_PAIR(k) + PAGE, PAGE, PROT_NONE);
}

/* Ec E's VM stack: its frames at its end, leaf first from cfp; ep of each frame below. */
static void build_frames(int e)
{
	unsigned char *st = state + ST_STACK(e);
	uint64_t end = A(st) + STACK_VALUES * 8;
	memset(st, 0, PAGE);
	for (int f = 0; f <= NR_FRAMES; f++) {
		/* frame f at end - (NR_FRAMES + 1 - f) * 64: 0 the leaf, NR_FRAMES the dummy */
		unsigned char *cf = st + STACK_VALUES * 8 - (NR_FRAMES + 1 - f) * CFP_SIZE;
		uint64_t *ep = (uint64_t *)(void *)(st + 64 + f * 32 + 16);
		uint64_t iseq = 0, pc = 0, flags;
		int ruby = 0;

		memset(cf, 0, CFP_SIZE);
		switch (f) {
		case 1:		/* a C method (Array#map) */
			flags = FRAME_CFUNC | FRAME_CFRAME;
			ep[-2] = A(state + ST_ME(f % 8));
			break;
		case 3:		/* an IFUNC frame: an iseq (an ifunc), no pc: not in backtraces */
			flags = FRAME_IFUNC | FRAME_CFRAME;
			iseq = A(state + ST_IFUNC);
			break;
		case NR_FRAMES:	/* the thread's dummy frame (not read) */
			flags = FRAME_DUMMY | FRAME_CFRAME;
			break;
		default:
			ruby = 1;
			flags = f == NR_FRAMES - 1 ? FRAME_TOP : f % 3 ? FRAME_BLOCK : FRAME_METHOD;
			/* two runs of vm_exec: the outermost frame and the one above the IFUNC */
			if (f == NR_FRAMES - 1 || f == 4)
				flags |= FRAME_FINISH;
			ep[-2] = A(state + ST_ME(f % 8));
			break;
		}
		if (ruby) {
			int v = (f + e * 3) % NR_VARIANTS;

			iseq = iseq_addr(v + NR_VARIANTS * (int)(rnd() % COPIES));
			pc = encoded + 8 * (rnd() % (variants[v].size + 1));
		}
		ep[-1] = 0;
		ep[0] = flags;
		put64(cf, CFP_PC, pc);
		put64(cf, CFP_SP, A(ep + 1));
		put64(cf, CFP_ISEQ, iseq);
		put64(cf, CFP_SELF, QNIL);
		put64(cf, CFP_EP, A(ep));
	}
	put64(state, ST_EC(e) + EC_VM_STACK, A(st));
	put64(state, ST_EC(e) + EC_VM_STACK_SIZE, STACK_VALUES);
	put64(state, ST_EC(e) + EC_CFP, end - (NR_FRAMES + 1) * CFP_SIZE);
	put64(state, ST_EC(e) + EC_THREAD, A(state + ST_TH(e)));
}

static void build_state(void)
{
	mprotect(state, ST_SIZE, PROT_READ | PROT_WRITE);
	stacks_hidden = 0;
	ruby_current_vm_ptr = state + ST_VM;
	put64(state, ST_VM + VM_MAIN_RACTOR, A(state + ST_RACTOR));
	for (int e = 0; e < NR_EC; e++) {
		memset(state + ST_TH(e), 0, TH_SIZE);
		/* decoys: ecs of threads that are not these (pthread_t of none) */
		put64(state, ST_TH(e) + TH_PTHREAD, e < 2 ? 0x1000 + e : (uint64_t)spin_ids[e - 2]);
		build_frames(e);
	}
	for (int m = 0; m < 8; m++) {
		memset(state + ST_ME(m), 0, 64);
		put64(state, ST_ME(m), T_IMEMO | 6u << 12);	/* imemo_ment */
	}
	memset(state + ST_IFUNC, 0, 64);
	put64(state, ST_IFUNC, T_IMEMO | 5u << 12);		/* imemo_ifunc */
	put64(state, ST_RACTOR + RACTOR_RUNNING_EC, ec_addr(2 + owner));
}

/* ---- the scribbles ------------------------------------------------------------------- */

/* An address nothing can be read at. */
static uint64_t unreadable_pointer(void)
{
	switch (rnd() % 7) {
	case 0: return rnd() | 1ull << 63;				/* kernel half */
	case 1: return 0xffffffff81000000ull + (rnd() % 4096) * 8;	/* kernel text */
	case 2: return 0xffff888000000000ull + (rnd() & 0xfffff8);	/* kernel direct map */
	case 3: return 0x0000800000000000ull + (rnd() & 0xfff8);	/* non-canonical */
	case 4: return hole + (rnd() % PAGE);				/* unmapped */
	case 5: return pair_end((int)(rnd() % NR_PAIRS)) + rnd() % PAGE;	/* PROT_NONE */
	default: return 8 + (rnd() % 64) * 8;			/* near NULL */
	}
}

/* A pointer to where no object is: the above, or readable bytes no object starts with. */
static uint64_t bad_pointer(void)
{
	switch (rnd() % 6) {
	case 0: return A(junk) + rnd() % (PAGE - 256);		/* junk, any alignment */
	case 1: return A(zeros) + (rnd() % (PAGE - 256));		/* zeros */
	case 2: return A(objs) + objs_size - 8;			/* at a mapping's end */
	case 3: return rnd();					/* random */
	default: return unreadable_pointer();
	}
}

static unsigned char *any_ec(int *e)
{
	*e = 2 + (int)(rnd() % NR_SPIN);
	return state + ST_EC(*e);
}

static unsigned char *any_frame(int *e, int *f)
{
	*e = 2 + (int)(rnd() % NR_SPIN);
	*f = (int)(rnd() % NR_FRAMES);
	return state + ST_STACK(*e) + STACK_VALUES * 8 - (NR_FRAMES + 1 - *f) * CFP_SIZE;
}

static void scribble_state(void)
{
	int e, f;
	unsigned char *p;
	int k = (int)(rnd() % 16);

	if (stacks_hidden && k >= 8)	/* (those write to the VM stacks) */
		return;
	switch (k) {
	case 0:
		ruby_current_vm_ptr = (void *)(uintptr_t)(rnd() % 2 ? bad_pointer() :
							   A(state + ST_RACTOR));
		break;
	case 1:	/* the VM's ractor: bad, or the VM itself (a cycle) */
		put64(state, ST_VM + VM_MAIN_RACTOR, rnd() % 2 ? bad_pointer() : A(state + ST_VM));
		break;
	case 2: {	/* running_ec: bad, a decoy's, the ractor itself */
		static const int kinds = 3;
		int k = (int)(rnd() % kinds);

		put64(state, ST_RACTOR + RACTOR_RUNNING_EC,
		      k == 0 ? bad_pointer() : k == 1 ? ec_addr((int)(rnd() % 2)) :
		      A(state + ST_RACTOR));
		break;
	}
	case 3:	/* the ec's thread: bad, or the ec itself */
		p = any_ec(&e);
		put64(p, EC_THREAD, rnd() % 2 ? bad_pointer() : A(p));
		break;
	case 4:	/* the thread id: random, or the main thread's (no rb_vm_exec there) */
		put64(state, ST_TH(2 + rnd() % NR_SPIN) + TH_PTHREAD,
		      rnd() % 2 ? rnd() : (uint64_t)main_id);
		break;
	case 5: {	/* vm_stack_size: 2^60, wrapping, 0, one frame's worth, huge */
		static const uint64_t sizes[] = { 1ull << 60, (uint64_t)-1, 0, 8, 64ull << 20,
						  (1ull << 61) + STACK_VALUES };

		p = any_ec(&e);
		put64(p, EC_VM_STACK_SIZE, sizes[rnd() % 6]);
		break;
	}
	case 6:
		p = any_ec(&e);
		put64(p, EC_VM_STACK, rnd() % 2 ? bad_pointer() : get64(p, EC_VM_STACK) - PAGE);
		break;
	case 7: {	/* cfp: past the end, at the end, between frames, odd, elsewhere */
		uint64_t end;

		p = any_ec(&e);
		end = get64(state, ST_EC(e) + EC_VM_STACK) + STACK_VALUES * 8;
		switch (rnd() % 6) {
		case 0: put64(p, EC_CFP, end + (rnd() % 64) * 8); break;
		case 1: put64(p, EC_CFP, end - CFP_SIZE); break;
		case 2: put64(p, EC_CFP, get64(p, EC_CFP) + 8 * (1 + rnd() % 7)); break;
		case 3: put64(p, EC_CFP, get64(p, EC_CFP) + 1 + rnd() % 7); break;
		case 4: put64(p, EC_CFP, end - PAGE + 8 * (rnd() % 64)); break;	/* the envs */
		default: put64(p, EC_CFP, bad_pointer()); break;
		}
		break;
	}
	case 8:
		p = any_frame(&e, &f);
		put64(p, CFP_PC, rnd() % 2 ? rnd() : encoded - 8 * (1 + rnd() % 100));
		break;
	case 9:
	case 10:	/* the iseq: bad, odd, another frame's ep, the frame itself */
		p = any_frame(&e, &f);
		switch (rnd() % 4) {
		case 0: put64(p, CFP_ISEQ, bad_pointer()); break;
		case 1: put64(p, CFP_ISEQ, get64(p, CFP_ISEQ) + 1 + rnd() % 7); break;
		case 2: put64(p, CFP_ISEQ, get64(p, CFP_EP)); break;
		default: put64(p, CFP_ISEQ, A(p)); break;
		}
		break;
	case 11:	/* ep: bad, or at the frame itself */
		p = any_frame(&e, &f);
		put64(p, CFP_EP, rnd() % 2 ? bad_pointer() : A(p));
		break;
	case 12: {	/* ep[0]: a random word, a bad magic, FINISH everywhere, CFUNC */
		uint64_t ep;

		p = any_frame(&e, &f);
		ep = get64(p, CFP_EP);
		if (ep < A(state) || ep >= A(state) + ST_SIZE)
			break;
		switch (rnd() % 4) {
		case 0: put64((void *)(uintptr_t)ep, 0, rnd()); break;
		case 1: put64((void *)(uintptr_t)ep, 0, 0x12340001u); break;
		case 2: put64((void *)(uintptr_t)ep, 0, get64((void *)(uintptr_t)ep, 0) |
			      FRAME_FINISH); break;
		default: put64((void *)(uintptr_t)ep, 0, FRAME_CFUNC | FRAME_CFRAME); break;
		}
		break;
	}
	case 13: {	/* ep[-2]: the method entry */
		uint64_t ep;

		p = any_frame(&e, &f);
		ep = get64(p, CFP_EP);
		if (ep >= A(state) + 16 && ep < A(state) + ST_SIZE)
			put64((void *)(uintptr_t)ep, -16, rnd() % 2 ? bad_pointer() : rnd());
		break;
	}
	case 14:	/* a frame of random words */
		p = any_frame(&e, &f);
		for (int i = 0; i < CFP_SIZE / 8; i++)
			put64(p, i * 8, rnd() % 2 ? rnd() : bad_pointer());
		break;
	default:	/* the whole VM stack's page unreadable for a while */
		mprotect(state + ST_STACK(2 + rnd() % NR_SPIN), PAGE, PROT_NONE);
		stacks_hidden = 1;
		break;
	}
}

static void scribble_objects(void)
{
	int i = (int)(rnd() % NR_ISEQS), v = (int)(rnd() % NR_VARIANTS);
	unsigned char *is = objs + OBJ_ISEQ(i), *b = objs + OBJ_BODY(i), *s;
	int k = (int)(rnd() % 12);

	if (codes_hidden && k <= 4)	/* (the iseqs' and bodies' pages are PROT_NONE) */
		return;
	switch (k) {
	case 0:	/* the body: bad, the iseq itself, another iseq's */
		switch (rnd() % 3) {
		case 0: put64(is, ISEQ_BODY, bad_pointer()); break;
		case 1: put64(is, ISEQ_BODY, A(is)); break;
		default: put64(is, ISEQ_BODY, A(objs + OBJ_ISEQ((i + 1) % NR_ISEQS))); break;
		}
		break;
	case 1: {	/* the label or the path: bad, the body, the iseq (cycles) */
		static const int fields[] = { BODY_LABEL, BODY_PATHOBJ };
		int fl = fields[rnd() % 2];

		switch (rnd() % 3) {
		case 0: put64(b, fl, bad_pointer()); break;
		case 1: put64(b, fl, A(b)); break;
		default: put64(b, fl, A(is)); break;
		}
		break;
	}
	case 2: {	/* first_lineno: another (or not a Fixnum), so BPF sends it again */
		uint64_t l = rnd() % 2 ? rnd() & ~1ull : (rnd() % 100000) << 1 | 1;

		put64(b, BODY_FIRST_LINENO, l);
		break;
	}
	case 3: {	/* iseq_size: huge, 2^16, past the table; iseq_encoded elsewhere */
		static const uint32_t sizes[] = { 0xffffffffu, 0x10000, 0xffff, 0x7fffffff, 0 };

		if (rnd() % 3)
			put32(b, BODY_ISEQ_SIZE, sizes[rnd() % 5]);
		else
			put64(b, BODY_ISEQ_ENCODED, rnd() % 2 ? rnd() : encoded + 8 * (rnd() % 64));
		put64(b, BODY_FIRST_LINENO, get64(b, BODY_FIRST_LINENO) + 2);
		break;
	}
	case 4: {	/* the line table: gigabytes of entries, none, nowhere */
		static const uint32_t sizes[] = { 0xffffffffu, 1u << 28, 1u << 20, 0x15556,
						  NR_LINES + 1, 0 };

		switch (rnd() % 3) {
		case 0: put32(b, BODY_INSNS_SIZE, sizes[rnd() % 6]); break;
		case 1: put64(b, BODY_INSNS_INFO, rnd() % 2 ? unreadable_pointer() : A(zeros)); break;
		default: put64(b, BODY_SUCC, rnd() % 2 ? unreadable_pointer() : bad_pointer()); break;
		}
		put64(b, BODY_FIRST_LINENO, get64(b, BODY_FIRST_LINENO) + 2);
		break;
	}
	case 5:
	case 6: {	/* a String: a bad type, an embedded length past its slot, heap or
			 * embedded the wrong way round, huge or negative lengths, bytes nowhere */
		static const uint64_t lens[] = { 1ull << 62, INT64_MAX, (uint64_t)-1,
						 (uint64_t)INT64_MIN, 1ull << 40, 4097, 100000 };
		uint64_t fl;

		s = objs + OBJ_RSTR(rnd() % 2 ? RS_LABEL(v) : RS_PATH(v));
		fl = get64(s, OBJ_FLAGS);
		switch (rnd() % 5) {
		case 0: put64(s, OBJ_FLAGS, (fl & ~0x1full) | (rnd() % 2 ? 0x1b : T_ARRAY)); break;
		case 1:
			if (!(fl & STR_NOEMBED))
				put64(s, OBJ_FLAGS, (fl & ~(0x1full << STR_EMBED_LEN_SHIFT)) |
				      (uint64_t)(25 + rnd() % 7) << STR_EMBED_LEN_SHIFT);
			break;
		case 2: put64(s, OBJ_FLAGS, fl ^ STR_NOEMBED); break;
		case 3:
			if (fl & STR_NOEMBED)
				put64(s, STR_HEAP_LEN, lens[rnd() % 7]);
			break;
		default:
			if (fl & STR_NOEMBED)
				put64(s, STR_HEAP_PTR, unreadable_pointer());
			break;
		}
		break;
	}
	case 7: {	/* an Array path: no elements, negative or huge, elements nowhere, itself */
		unsigned char *a = objs + OBJ_RSTR(RS_ARY(v));
		uint64_t fl = get64(a, OBJ_FLAGS);

		if (variants[v].path_kind < 2)
			break;
		switch (rnd() % 4) {
		case 0: put64(a, OBJ_FLAGS, fl & ~(3ull << ARY_EMBED_LEN_SHIFT)); break;
		case 1:
			if (fl & ARY_EMBED_FLAG)
				put64(a, ARY_EMBED, A(a));
			else
				put64(a, ARY_HEAP_LEN, rnd() % 2 ? (uint64_t)-1 : 0);
			break;
		case 2:
			if (!(fl & ARY_EMBED_FLAG))
				put64(a, ARY_HEAP_PTR, unreadable_pointer());
			else
				put64(a, ARY_EMBED, bad_pointer());
			break;
		default: put64(a, OBJ_FLAGS, fl ^ ARY_EMBED_FLAG); break;
		}
		break;
	}
	case 8:	/* a line that is not one */
		put32((void *)(uintptr_t)info_addr[v], (rnd() % NR_LINES) * INSN_INFO_SIZE,
		      (uint32_t)-(int32_t)(1 + rnd() % 1000));
		break;
	case 9:	/* ranks past the table's entries */
		put64((void *)(uintptr_t)succ_addr[v], 0, rnd() | 0x7full);
		break;
	default:	/* the iseqs and bodies unreadable for a while */
		mprotect(objs, 3 * PAGE, PROT_NONE);
		codes_hidden = 1;
		break;
	}
}

/* The object region unmapped, a moment without it, then mapped again (at the same place
 * when it is free) and rebuilt. */
static void remap_objects(void)
{
	void *old = objs, *p;

	munmap(objs, objs_size);
	codes_hidden = 0;
	usleep(1000 + rnd() % 20000);
	p = mmap(old, objs_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED || p != old) {
		if (p != MAP_FAILED)
			munmap(p, objs_size);
		p = mmap(NULL, objs_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			exit(1);
		}
	}
	objs = p;
	build_objects();
	build_state();
}

static void rebuild(void)
{
	build_objects();
	build_state();
}

/* ---- the spinners ------------------------------------------------------------------ */

static volatile uint64_t sink;
static pthread_mutex_t gvl = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gvl_cond = PTHREAD_COND_INITIALIZER;

__attribute__((noinline)) static uint64_t rbhostile_leaf(uint64_t x)
{
	for (int i = 0; i < 20000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* The "GVL" passed to the other spinner, then waited for: the one running has its ec in
 * running_ec (as rb_ractor_thread_switch sets it). */
__attribute__((noinline)) static void rbhostile_gvl(int me)
{
	pthread_mutex_lock(&gvl);
	owner = (me + 1) % NR_SPIN;
	pthread_cond_broadcast(&gvl_cond);
	while (owner != me && !stop)
		pthread_cond_wait(&gvl_cond, &gvl);
	put64(state, ST_RACTOR + RACTOR_RUNNING_EC, ec_addr(2 + me));
	pthread_mutex_unlock(&gvl);
	__asm__ volatile("" ::: "memory");	/* no tail call: this frame stays */
}

__attribute__((noinline)) static double rbhostile_now(void)
{
	return spin_now();
}

/* The VM's loop, as far as profile can tell: Ruby frames go in its place. */
__attribute__((noinline, visibility("default"))) uint64_t rb_vm_exec(uint64_t x)
{
	int me = (int)x - 1;

	rbhostile_gvl(me);
	while (!stop) {
		double slice = rbhostile_now() + 0.002 + (x % 2000) / 1e6;

		while (!stop && rbhostile_now() < slice) {
			x = rbhostile_leaf(x);
			__asm__ volatile("" : "+r"(x));
		}
		rbhostile_gvl(me);
	}
	return x;
}

__attribute__((noinline)) static void *rbhostile_thread(void *arg)
{
	__sync_fetch_and_add(&spinners_ready, 1);
	sink = rb_vm_exec((uint64_t)(uintptr_t)arg);
	return NULL;
}

/* ---- names, for the test ------------------------------------------------------------ */

static void json_hex(const char *s, size_t n)
{
	putchar('"');
	for (size_t i = 0; i < n; i++)
		printf("%02x", (unsigned char)s[i]);
	putchar('"');
}

static void print_names(void)
{
	printf("[");
	for (int v = 0; v < NR_VARIANTS; v++) {
		printf("%s{\"label\": ", v ? ", " : "");
		json_hex(variants[v].label, variants[v].label_len);
		printf(", \"path\": ");
		json_hex(variants[v].path, strlen(variants[v].path));
		printf(", \"first\": %d, \"lines\": %d}", variants[v].first, NR_LINES);
	}
	printf("]\n");
}

int main(int argc, char **argv)
{
	double seconds, end, next_rebuild, next_remap;
	const char *mode = argc > 2 ? argv[2] : "hostile";
	int hostile = !strcmp(mode, "hostile");
	void *p, *enc;

	memcpy(long_label, "rbh_", 4);
	for (int i = 4; i + 1 < LONG_LABEL; i += 2)
		memcpy(long_label + i, "\xce\xbb", 2);
	variants[5].label = long_label;
	if (argc > 1 && !strcmp(argv[1], "names")) {
		print_names();
		return 0;
	}
	seconds = spin_seconds(argc, argv);
	rng ^= (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL);
	main_id = pthread_self();

	state = mmap(NULL, ST_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	junk = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	enc = mmap(NULL, 8 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	objs_size = OBJ_PAIR(NR_PAIRS);
	objs = mmap(NULL, objs_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (state == MAP_FAILED || junk == MAP_FAILED || p == MAP_FAILED || enc == MAP_FAILED ||
	    objs == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	hole = A(p);
	munmap(p, PAGE);
	encoded = A(enc);
	zeros = junk + PAGE;
	/* No byte a String's or an Array's flags could start with (types 5 and 7). */
	for (size_t i = 0; i < PAGE; i++) {
		unsigned char c = (unsigned char)rnd();

		if ((c & 0x1f) == T_STRING || (c & 0x1f) == T_ARRAY)
			c ^= 0x08;
		junk[i] = c;
	}
	build_objects();
	for (int t = 0; t < NR_SPIN; t++)
		if (pthread_create(&spin_ids[t], NULL, rbhostile_thread, (void *)(uintptr_t)(t + 1))) {
			perror("pthread_create");
			return 1;
		}
	while (spinners_ready < NR_SPIN)
		usleep(100);
	build_state();

	end = spin_now() + seconds;
	next_rebuild = spin_now() + 0.002;
	next_remap = spin_now() + 0.2;
	while (spin_now() < end) {
		double now = spin_now();

		if (!hostile) {
			usleep(10000);
			continue;
		}
		if (now >= next_remap) {
			remap_objects();
			next_remap = now + 0.1 + (rnd() % 200) / 1000.0;
			continue;
		}
		if (now >= next_rebuild) {
			rebuild();
			next_rebuild = now + 0.001 + (rnd() % 4000) / 1e6;
		}
		if (rnd() % 2)
			scribble_state();
		else
			scribble_objects();
		usleep(20 + rnd() % 100);
	}
	stop = 1;
	pthread_mutex_lock(&gvl);
	pthread_cond_broadcast(&gvl_cond);
	pthread_mutex_unlock(&gvl);
	for (int t = 0; t < NR_SPIN; t++)
		pthread_join(spin_ids[t], NULL);
	fprintf(stderr, "rbhostile: %s done\n", mode);
	return 0;
}
#endif

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * pyhostile: a program profile takes for CPython 3.11 (its file is named python3.11-hostile
 * and it exports a data object _PyRuntime), laid out as lib/python/pylayout.c's 3.11 table
 * says: _PyRuntime -> interpreter -> thread states (thread ids: pthread_self() of the
 * spinning threads) -> _PyCFrame -> a chain of _PyInterpreterFrame-like records -> code
 * objects -> str and bytes objects. Its spinning threads run in a native function named
 * _PyEval_EvalFrameDefault (where the model puts Python frames) while the main thread
 * scribbles on all of it for the whole run: random words into the thread-state list, frame
 * chains with cycles and pointers into unmapped memory, to kernel, odd and non-canonical
 * addresses, code objects whose strs claim huge or negative lengths and bad kinds, a line
 * table claiming 2^62 bytes, pages of objects made unreadable, and the region holding the
 * objects unmapped and mapped again (then rebuilt intact). Every few milliseconds all of it
 * is rebuilt intact, so names can be read between the scribbles.
 *
 * Usage: python3.11-hostile SECONDS [hostile|intact|tables]
 *   hostile   the above (default)
 *   intact    the same objects, never scribbled on
 *   tables    no scribbles; frames run through TABLE_CODES distinct code objects that all
 *             share one line table of about 64 KiB (what profile keeps per code object)
 *
 * The names of the fake code objects (the test checks that every Python frame is one of
 * them or [python: unreadable]) are printed by `python3.11-hostile names` as JSON.
 */
#define _GNU_SOURCE
#include <errno.h>
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

/* CPython 3.11's offsets, as py_layout__for(3, 11) gives them. */
enum {
	RT_INTERP_HEAD = 40,
	INTERP_TSTATE_HEAD = 16,
	TS_NEXT = 8, TS_CFRAME = 56, TS_THREAD_ID = 152, TS_SIZE = 256,
	CF_CURRENT = 8, CF_SIZE = 32,
	FR_CODE = 32, FR_PREVIOUS = 48, FR_INSTR = 56, FR_ENTRY = 68, FR_SIZE = 96,
	CO_FIRSTLINENO = 72, CO_FILENAME = 112, CO_NAME = 120, CO_QUALNAME = 128,
	CO_LINETABLE = 136, CO_ADAPTIVE = 184, CO_SIZE = 256,
	STR_LENGTH = 16, STR_STATE = 32, STR_ASCII_DATA = 48, STR_COMPACT_DATA = 72,
	BYTES_SIZE = 16, BYTES_DATA = 32,
};

#define PAGE		4096
#define NR_SPIN		2		/* spinning threads */
#define NR_TS		4		/* thread states: the spinners', two others */
#define DEPTH		6		/* frames a chain */
#define NR_VARIANTS	8		/* kinds of code object (names) */
#define COPIES		4		/* code objects of each kind */
#define NR_CODES	(NR_VARIANTS * COPIES)
#define TABLE_CODES	4096		/* `tables`: distinct code objects */
#define BIG_TABLE	(64 * 1024 - 64)

/* The names, as the objects hold them (str kind 1, 2 or 4; ascii or not). */
struct variant {
	const uint32_t *name, *qual, *file;	/* code points, 0-terminated; qual may be NULL */
	int firstlineno;
};

#define U(...) ((const uint32_t[]){ __VA_ARGS__, 0 })
static uint32_t long_name[1001];
static struct variant variants[NR_VARIANTS] = {
	{ U('s','p','i','n','_','o','u','t','e','r'),
	  U('H','o','s','t','i','l','e','.','s','p','i','n','_','o','u','t','e','r'),
	  U('/','s','r','v','/','h','o','s','t','i','l','e','_','m','a','i','n','.','p','y'), 10 },
	{ U('w','o','r','k'), NULL, U('w','o','r','k','.','p','y'), 100 },
	/* kind 2: U+0192, U+00FC, U+03BB */
	{ U(0x192,'u','n','c'), U(0x192,0xfc,'n','c','t','i','o','n','_',0x3bb),
	  U('m','o','d',0xfc,'l',0xe9,'.','p','y'), 200 },
	/* kind 4: U+1F40D */
	{ U('s','n','a','k','e','_',0x1f40d), NULL, U('e','m','o','j','i','.','p','y'), 300 },
	/* control characters and the folded separator in a name */
	{ U('e','v','i','l','\n','n','a','m','e',';','x','\t'), NULL,
	  U('c','t','l','.','p','y'), 400 },
	/* 1000 characters: profile keeps 511 bytes */
	{ NULL, NULL, U('l','o','n','g','.','p','y'), 500 },
	/* a lone surrogate (kind 2): U+FFFD when written as UTF-8 */
	{ U('s','u','r',0xd800,'r','o','g','a','t','e'), NULL, U('s','u','r','.','p','y'), 600 },
	{ U('d','e','e','p'), U('O','u','t','e','r','.','<','l','o','c','a','l','s','>','.',
				'd','e','e','p'), U('d','e','e','p','.','p','y'), 700 },
};

/* The line table of every code object: units 0-7 at firstlineno, 8-15 one more, up to 3. */
static const uint8_t table[] = { 0xef, 0x00, 0xef, 0x02, 0xef, 0x02, 0xef, 0x02 };

static volatile int stop;
static pthread_t spin_ids[NR_SPIN];
static volatile int spinners_ready;

/* What profile finds by its symbol: the interpreter list's head at RT_INTERP_HEAD. */
__attribute__((used, visibility("default"), aligned(64))) unsigned char _PyRuntime[4096];

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

/* ---- the objects -------------------------------------------------------------------- */

/* The state region (never unmapped): the interpreter, thread states, frames; junk pages. */
static unsigned char *state;
#define ST_INTERP	0
#define ST_TS(i)	(256 + (i) * TS_SIZE)
#define ST_CF(i)	(2048 + (i) * CF_SIZE)
#define ST_FR(t, i)	(4096 + ((t) * DEPTH + (i)) * FR_SIZE)
#define ST_SIZE		(4 * PAGE)
static unsigned char *junk, *zeros;	/* a page of random bytes, a page of zeros */
static uint64_t hole;			/* an address nothing maps */

/* The object region (unmapped and mapped again): code objects, then each str and bytes
 * object at the end of a page of its own, a PROT_NONE page after it (so a length claimed past
 * the object's end cannot be read). */
static unsigned char *objs;
static size_t objs_size;
#define OBJ_CODES	0				/* NR_CODES * CO_SIZE: 2 pages */
#define OBJ_STR(k)	(2 * PAGE + (k) * 2 * PAGE)	/* (page, guard) each */
#define NR_STRS		(3 * NR_VARIANTS + 1)		/* names, quals, files; the table */
static uint64_t str_addr[NR_STRS];
static size_t str_len[NR_STRS];			/* code points */
static int str_kind[NR_STRS];

static int tables_mode;
static unsigned char *many;			/* `tables`: TABLE_CODES code objects */

static int kind_of(const uint32_t *s)
{
	int k = 1;

	for (; *s; s++)
		if (*s > 0xffff)
			k = 4;
		else if (*s > 0xff && k < 2)
			k = 2;
	return k;
}

static int is_ascii(const uint32_t *s)
{
	for (; *s; s++)
		if (*s > 0x7f)
			return 0;
	return 1;
}

/* Str SLOT holding S, at the end of its page. */
static void build_str(int slot, const uint32_t *s)
{
	unsigned char *page = objs + OBJ_STR(slot), *o;
	size_t n = 0;
	int kind = kind_of(s), ascii = is_ascii(s);
	size_t data = ascii ? STR_ASCII_DATA : STR_COMPACT_DATA;

	while (s[n])
		n++;
	/* the terminating NUL (a code point of KIND) too, as CPython keeps it */
	o = page + PAGE - data - (n + 1) * kind;
	o = (unsigned char *)((uintptr_t)o & ~(uintptr_t)7);
	memset(page, 0, PAGE);
	put64(o, 0, 1);					/* ob_refcnt */
	put64(o, STR_LENGTH, n);
	put64(o, 24, 0);				/* hash */
	{
		uint32_t st = (uint32_t)kind << 2 | 1u << 5 | (uint32_t)ascii << 6 | 1u << 7;

		memcpy(o + STR_STATE, &st, 4);
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t c = s[i];

		memcpy(o + data + i * kind, &c, kind);	/* little-endian */
	}
	str_addr[slot] = (uint64_t)(uintptr_t)o;
	str_len[slot] = n;
	str_kind[slot] = kind;
}

/* A bytes object of LEN bytes (TABLE repeated) at the end of PAGE (PAGELEN bytes), its NUL
 * within 8 bytes of the end (zeros after it). */
static uint64_t build_bytes(unsigned char *page, size_t pagelen, size_t len)
{
	unsigned char *o = page + pagelen - BYTES_DATA - len - 1;

	o = (unsigned char *)((uintptr_t)o & ~(uintptr_t)7);
	memset(page, 0, pagelen);
	put64(o, 0, 1);
	put64(o, BYTES_SIZE, len);
	for (size_t i = 0; i < len; i++)
		o[BYTES_DATA + i] = table[i % sizeof(table)];
	return (uint64_t)(uintptr_t)o;
}

static uint64_t table_addr;

static uint64_t code_addr(int i)
{
	return (uint64_t)(uintptr_t)(objs + OBJ_CODES + i * CO_SIZE);
}

static void build_code(unsigned char *c, int v)
{
	const struct variant *va = &variants[v];

	memset(c, 0, CO_SIZE);
	put64(c, 0, 1);
	memcpy(c + CO_FIRSTLINENO, &va->firstlineno, 4);
	put64(c, CO_NAME, str_addr[3 * v]);
	put64(c, CO_QUALNAME, va->qual ? str_addr[3 * v + 1] : 0);
	put64(c, CO_FILENAME, str_addr[3 * v + 2]);
	put64(c, CO_LINETABLE, table_addr);
}

static void build_objects(void)
{
	for (int v = 0; v < NR_VARIANTS; v++) {
		build_str(3 * v, variants[v].name);
		if (variants[v].qual)
			build_str(3 * v + 1, variants[v].qual);
		build_str(3 * v + 2, variants[v].file);
	}
	table_addr = build_bytes(objs + OBJ_STR(NR_STRS - 1), PAGE, sizeof(table));
	for (int i = 0; i < NR_CODES; i++)
		build_code(objs + OBJ_CODES + i * CO_SIZE, i % NR_VARIANTS);
	for (int k = 0; k < NR_STRS; k++)
		mprotect(objs + OBJ_STR(k) + PAGE, PAGE, PROT_NONE);
}

/* The frame chain of thread state T: DEPTH frames, the outermost an entry frame. */
static void build_chain(int t)
{
	for (int i = 0; i < DEPTH; i++) {
		unsigned char *f = state + ST_FR(t, i);
		uint64_t code;
		int u = (int)(rnd() % 32);

		if (tables_mode)
			code = (uint64_t)(uintptr_t)(many + (rnd() % TABLE_CODES) * CO_SIZE);
		else
			code = code_addr((int)((i + t * 3) % NR_VARIANTS +
					       NR_VARIANTS * (rnd() % COPIES)));
		memset(f, 0, FR_SIZE);
		put64(f, FR_CODE, code);
		put64(f, FR_PREVIOUS, i + 1 < DEPTH ? (uint64_t)(uintptr_t)(state + ST_FR(t, i + 1))
						    : 0);
		put64(f, FR_INSTR, code + CO_ADAPTIVE + 2 * u);
		f[FR_ENTRY] = i + 1 == DEPTH;
	}
}

static void build_state(void)
{
	put64(_PyRuntime, RT_INTERP_HEAD, (uint64_t)(uintptr_t)(state + ST_INTERP));
	put64(state, ST_INTERP + INTERP_TSTATE_HEAD, (uint64_t)(uintptr_t)(state + ST_TS(0)));
	for (int t = 0; t < NR_TS; t++) {
		unsigned char *ts = state + ST_TS(t);

		memset(ts, 0, TS_SIZE);
		/* decoys first: the spinners' states are further down the list */
		put64(ts, TS_NEXT, t + 1 < NR_TS ? (uint64_t)(uintptr_t)(state + ST_TS(t + 1)) : 0);
		put64(ts, TS_THREAD_ID, t < 2 ? 0x1000 + t : (uint64_t)spin_ids[t - 2]);
		put64(ts, TS_CFRAME, (uint64_t)(uintptr_t)(state + ST_CF(t)));
		put64(state, ST_CF(t) + CF_CURRENT, (uint64_t)(uintptr_t)(state + ST_FR(t, 0)));
		build_chain(t);
	}
}

/* ---- the scribbles ------------------------------------------------------------------- */

/* A pointer nothing good is at. */
static uint64_t bad_pointer(void)
{
	switch (rnd() % 10) {
	case 0: return rnd();					/* random */
	case 1: return 0xffffffff81000000ull + (rnd() % 4096) * 8;	/* kernel text */
	case 2: return 0xffff888000000000ull + (rnd() & 0xfffff8);	/* kernel direct map */
	case 3: return 0x0000800000000000ull;			/* non-canonical */
	case 4: return hole + (rnd() % PAGE);			/* unmapped */
	case 5: return (uint64_t)(uintptr_t)junk + (rnd() % (PAGE - 256));	/* random bytes */
	case 6: return (uint64_t)(uintptr_t)zeros + (rnd() % (PAGE - 256));	/* zeros */
	case 7: return code_addr((int)(rnd() % NR_CODES)) + 1 + rnd() % 7;	/* odd */
	case 8: return 8;					/* near NULL */
	default: return (uint64_t)(uintptr_t)(objs + objs_size - 8);	/* at a mapping's end */
	}
}

static unsigned char *any_frame(int *t, int *i)
{
	*t = 2 + (int)(rnd() % 2);
	*i = (int)(rnd() % DEPTH);
	return state + ST_FR(*t, *i);
}

static void scribble_state(void)
{
	int t, i;
	unsigned char *f;

	switch (rnd() % 14) {
	case 0:
		put64(_PyRuntime, RT_INTERP_HEAD, bad_pointer());
		break;
	case 1:
		put64(state, ST_INTERP + INTERP_TSTATE_HEAD, bad_pointer());
		break;
	case 2:	/* a thread state pointing at itself: a list with a cycle */
		t = (int)(rnd() % NR_TS);
		put64(state, ST_TS(t) + TS_NEXT, (uint64_t)(uintptr_t)(state + ST_TS(t)));
		break;
	case 3:
		put64(state, ST_TS(rnd() % NR_TS) + TS_NEXT, bad_pointer());
		break;
	case 4:
		put64(state, ST_TS(rnd() % NR_TS) + TS_THREAD_ID, rnd());
		break;
	case 5:
		put64(state, ST_TS(rnd() % NR_TS) + TS_CFRAME, bad_pointer());
		break;
	case 6:
		put64(state, ST_CF(rnd() % NR_TS) + CF_CURRENT, bad_pointer());
		break;
	case 7:	/* a frame whose previous is itself */
		f = any_frame(&t, &i);
		put64(f, FR_PREVIOUS, (uint64_t)(uintptr_t)f);
		break;
	case 8:	/* a longer cycle: back to the leaf */
		f = any_frame(&t, &i);
		put64(f, FR_PREVIOUS, (uint64_t)(uintptr_t)(state + ST_FR(t, 0)));
		break;
	case 9:
		f = any_frame(&t, &i);
		put64(f, FR_PREVIOUS, bad_pointer());
		break;
	case 10:
	case 11:
		f = any_frame(&t, &i);
		put64(f, FR_CODE, bad_pointer());
		break;
	case 12:
		f = any_frame(&t, &i);
		put64(f, FR_INSTR, rnd());
		break;
	default:
		f = any_frame(&t, &i);
		f[FR_ENTRY] = (unsigned char)rnd();
		break;
	}
}

static int codes_hidden;	/* the page of code objects is PROT_NONE */

static void scribble_objects(void)
{
	unsigned char *c = objs + OBJ_CODES + (rnd() % NR_CODES) * CO_SIZE;
	int k = (int)(rnd() % NR_STRS);
	unsigned char *s;
	uint32_t st;

	switch (rnd() % 8) {
	case 0: {
		static const int fields[] = { CO_NAME, CO_QUALNAME, CO_FILENAME, CO_LINETABLE };

		if (codes_hidden)
			break;
		put64(c, fields[rnd() % 4], bad_pointer());
		break;
	}
	case 1: {	/* firstlineno: only negative (no line then), so BPF sends it again */
		int32_t neg = -(int32_t)(1 + rnd() % 1000000);

		if (codes_hidden)
			break;
		memcpy(c + CO_FIRSTLINENO, &neg, 4);
		break;
	}
	case 2:
	case 3:	/* a str's length: huge, negative, one past its page */
		if (!str_addr[k] || k == NR_STRS - 1)
			break;
		s = (unsigned char *)(uintptr_t)str_addr[k];
		{
			static const uint64_t lens[] = { 1ull << 62, INT64_MAX, (uint64_t)-1,
							 (uint64_t)INT64_MIN, 1ull << 40 };
			uint64_t v = rnd() % 6 == 5 ? str_len[k] + 8 + rnd() % 64 : lens[rnd() % 5];

			put64(s, STR_LENGTH, v);
		}
		break;
	case 4:
	case 5:	/* a str's state: a bad kind, not compact, not ready, ascii of kind 2 */
		if (!str_addr[k] || k == NR_STRS - 1)
			break;
		s = (unsigned char *)(uintptr_t)str_addr[k];
		memcpy(&st, s + STR_STATE, 4);
		switch (rnd() % 4) {
		case 0: { static const uint32_t bad[] = { 0, 3, 5, 6, 7 };
			  st = (st & ~(7u << 2)) | bad[rnd() % 5] << 2; break; }
		case 1: st &= ~(1u << 5); break;
		case 2: st &= ~(1u << 7); break;
		default: st = (st & ~(7u << 2)) | 2u << 2 | 1u << 6; break;
		}
		memcpy(s + STR_STATE, &st, 4);
		break;
	case 6: {	/* the line table: 2^62 bytes, negative, past profile's cap */
		static const uint64_t sizes[] = { 1ull << 62, (uint64_t)-1, (uint64_t)INT64_MIN,
						  (256u << 10) + 1, INT64_MAX };

		put64((void *)(uintptr_t)table_addr, BYTES_SIZE, sizes[rnd() % 5]);
		break;
	}
	default:	/* the page of code objects unreadable for a while */
		mprotect(objs + OBJ_CODES, 2 * PAGE, PROT_NONE);
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
	mprotect(objs + OBJ_CODES, 2 * PAGE, PROT_READ | PROT_WRITE);
	codes_hidden = 0;
	build_objects();
	build_state();
}

/* ---- the spinners ------------------------------------------------------------------ */

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t hostile_leaf(uint64_t x)
{
	for (int i = 0; i < 20000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* The interpreter's loop, as far as profile can tell: Python frames go in its place. */
__attribute__((noinline, visibility("default"))) uint64_t _PyEval_EvalFrameDefault(uint64_t x)
{
	while (!stop) {
		x = hostile_leaf(x);
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline)) static void *hostile_thread(void *arg)
{
	__sync_fetch_and_add(&spinners_ready, 1);
	sink = _PyEval_EvalFrameDefault((uint64_t)(uintptr_t)arg);
	return NULL;
}

/* ---- names, for the test ------------------------------------------------------------ */

static void json_str(const uint32_t *s)
{
	putchar('"');
	for (; s && *s; s++) {
		if (*s > 0xffff)	/* a surrogate pair */
			printf("\\u%04x\\u%04x", 0xd800 + ((*s - 0x10000) >> 10),
			       0xdc00 + ((*s - 0x10000) & 0x3ff));
		else
			printf("\\u%04x", *s);
	}
	putchar('"');
}

static void print_names(void)
{
	printf("[");
	for (int v = 0; v < NR_VARIANTS; v++) {
		printf("%s{\"name\": ", v ? ", " : "");
		json_str(variants[v].name);
		printf(", \"qual\": ");
		if (variants[v].qual)
			json_str(variants[v].qual);
		else
			printf("null");
		printf(", \"file\": ");
		json_str(variants[v].file);
		printf(", \"firstlineno\": %d, \"lines\": %d}", variants[v].firstlineno,
		       (int)sizeof(table) / 2);
	}
	printf("]\n");
}

int main(int argc, char **argv)
{
	double seconds, end, next_rebuild, next_remap;
	const char *mode = argc > 2 ? argv[2] : "hostile";
	int hostile = !strcmp(mode, "hostile");
	void *p;

	for (int i = 0; i < 1000; i++)
		long_name[i] = 'L';
	variants[5].name = long_name;
	if (argc > 1 && !strcmp(argv[1], "names")) {
		print_names();
		return 0;
	}
	seconds = spin_seconds(argc, argv);
	tables_mode = !strcmp(mode, "tables");
	rng ^= (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL);

	state = mmap(NULL, ST_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	junk = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	objs_size = OBJ_STR(NR_STRS);
	objs = mmap(NULL, objs_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (state == MAP_FAILED || junk == MAP_FAILED || p == MAP_FAILED || objs == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	hole = (uint64_t)(uintptr_t)p;
	munmap(p, PAGE);
	zeros = junk + PAGE;
	for (size_t i = 0; i < PAGE / 8; i++)
		put64(junk, i * 8, rnd());
	build_objects();
	if (tables_mode) {
		/* TABLE_CODES code objects of one name, one line table of ~64 KiB */
		size_t tl = BIG_TABLE + 4 * PAGE;
		unsigned char *tp = mmap(NULL, tl, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		many = mmap(NULL, (size_t)TABLE_CODES * CO_SIZE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (tp == MAP_FAILED || many == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		table_addr = build_bytes(tp, tl, BIG_TABLE);
		for (int i = 0; i < TABLE_CODES; i++)
			build_code(many + (size_t)i * CO_SIZE, 2);
	}
	for (int t = 0; t < NR_SPIN; t++)
		if (pthread_create(&spin_ids[t], NULL, hostile_thread, (void *)(uintptr_t)(t + 1))) {
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

		if (tables_mode) {
			/* new code objects in the chains all the time */
			for (int t = 2; t < NR_TS; t++)
				build_chain(t);
			usleep(200);
			continue;
		}
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
		if (rnd() % 3)
			scribble_state();
		else
			scribble_objects();
		usleep(20 + rnd() % 100);
	}
	stop = 1;
	for (int t = 0; t < NR_SPIN; t++)
		pthread_join(spin_ids[t], NULL);
	fprintf(stderr, "pyhostile: %s done\n", mode);
	return 0;
}

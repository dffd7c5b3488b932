// SPDX-License-Identifier: GPL-3.0-or-later
/* ruby: the 3.1 layout table, frame kinds and the words BPF records (values read from a live
 * ruby3.1), lines from real iseqs' insns_info and succinct tables (rbline_vectors.h) and
 * hostile ones, String and Array objects of the real interpreter to UTF-8, hostile too. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "ruby/rblayout.h"
#include "ruby/rbline.h"
#include "ruby/rbstr.h"
#include "suites.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

#include "rbline_vectors.h"

/* ---- rblayout ----------------------------------------------------------------------------- */

static void test_layout_table(void)
{
	const struct rb_layout *l = rb_layout__for(3, 1);

	CU_ASSERT_PTR_NULL(rb_layout__for(3, 0));
	CU_ASSERT_PTR_NULL(rb_layout__for(3, 2));
	CU_ASSERT_PTR_NULL(rb_layout__for(2, 7));
	CU_ASSERT_PTR_NOT_NULL_FATAL(l);
	/* Debian's build (offsetof with its config.h): the frame, the ec, the body. */
	CU_ASSERT_EQUAL(l->bpf.cfp_size, 64);
	CU_ASSERT_EQUAL(l->bpf.cfp_pc, 0);
	CU_ASSERT_EQUAL(l->bpf.cfp_iseq, 16);
	CU_ASSERT_EQUAL(l->bpf.cfp_ep, 32);
	CU_ASSERT(l->bpf.cfp_read >= l->bpf.cfp_ep + 8);
	CU_ASSERT_EQUAL(l->bpf.ractor_running_ec, 520);
	CU_ASSERT_EQUAL(l->bpf.ec_cfp, 16);
	CU_ASSERT_EQUAL(l->body_label, 80);
	CU_ASSERT_EQUAL(l->body_succ_table, 144);
	CU_ASSERT(l->body_read >= l->body_succ_table + 8);
	CU_ASSERT(l->body_read >= l->body_first_lineno + 8);
	CU_ASSERT_EQUAL(l->insn_info_size, 12);
	CU_ASSERT_EQUAL(l->str_size, 40);
	CU_ASSERT_EQUAL(l->str_noembed, 1u << 13);
}

/* Frames of a live ruby3.1 (tests/integration/rblayout_check.py's chain): pc, iseq, ep[0],
 * ep[-2]. */
static void test_frame_words(void)
{
	/* "third" (a method), its pc 48 VALUEs past iseq_encoded */
	uint64_t pc = 0x55b15d48dbb0, iseq = 0x7f2316863ae0, enc = pc - 48 * 8, w;
	uint32_t pos = 0;

	CU_ASSERT_EQUAL(rb_frame__kind(pc, iseq, 0x11110003), RB_FRAME_RUBY);
	w = rb_word__make(pc, iseq, 0x11110003, 0x7f23168633d8);
	CU_ASSERT_EQUAL(w & RB_WORD_ADDR, iseq);
	CU_ASSERT_FALSE(w & (RB_WORD_ENTRY | RB_WORD_CFUNC));
	CU_ASSERT_EQUAL(rb_word__pos(w, enc, 49, &pos), 0);
	CU_ASSERT_EQUAL(pos, 48);
	CU_ASSERT_EQUAL(rb_word__pos(w, enc, 47, &pos), -EINVAL);	/* past iseq_size */
	CU_ASSERT_EQUAL(rb_word__pos(w, enc, 0x10000, &pos), -EINVAL);
	/* iseq_encoded across a 0x80000-byte boundary from pc: the 16 bits wrap */
	CU_ASSERT_EQUAL(rb_word__pos(rb_word__make(0x7f0000080008, iseq, 0x11110003, 0),
				     0x7f000007fff0, 10, &pos), 0);
	CU_ASSERT_EQUAL(pos, 3);

	/* "block in first", called from Array#each (C): a run of vm_exec begins there */
	w = rb_word__make(0x55b15d47a630, 0x7f2316863e50, 0x22220021, 0);
	CU_ASSERT_EQUAL(w & RB_WORD_ENTRY, RB_WORD_ENTRY);
	CU_ASSERT_EQUAL(w & RB_WORD_ADDR, 0x7f2316863e50);
	/* <main> (EVAL | FINISH) */
	CU_ASSERT(rb_word__make(0x55b15d35ced0, 0x7f231685c100, 0x77770021, 0) & RB_WORD_ENTRY);

	/* IO#read, Array#each: CFUNC frames, no iseq nor pc, the method entry at ep[-2] */
	CU_ASSERT_EQUAL(rb_frame__kind(0, 0, 0x55550083), RB_FRAME_CFUNC);
	w = rb_word__make(0, 0, 0x55550083, 0x7f2319d5c8c8);
	CU_ASSERT_EQUAL(w, 0x7f2319d5c8c8 | RB_WORD_CFUNC);
	CU_ASSERT_EQUAL(rb_word__pos(w, enc, 49, &pos), -EINVAL);
	CU_ASSERT_EQUAL(rb_word__make(0, 0, 0x55550083, 0), 0);		/* no entry */

	/* not recorded: IFUNC, the thread's dummy frame without iseq, an iseq without pc */
	CU_ASSERT_EQUAL(rb_frame__kind(0, 0, 0x66660001), RB_FRAME_SKIP);
	CU_ASSERT_EQUAL(rb_frame__kind(0, 0, 0x799900a3), RB_FRAME_SKIP);
	CU_ASSERT_EQUAL(rb_frame__kind(0, iseq, 0x11110003), RB_FRAME_SKIP);
	CU_ASSERT_EQUAL(rb_word__make(0, 0, 0x66660001, 0x1000), 0);
	/* addresses a word cannot hold */
	CU_ASSERT_EQUAL(rb_word__make(pc, 0x1000000000000, 0x11110003, 0), 0);
	CU_ASSERT_EQUAL(rb_word__make(pc, iseq + 4, 0x11110003, 0), 0);
	CU_ASSERT_EQUAL(rb_word__make(0, 0, 0x55550083, 0x7f2319d5c8c9), 0);
}

/* ---- rbline ------------------------------------------------------------------------------- */

/* Every position of each real iseq: the line of the instruction holding it, as disasm says. */
static void test_line_vectors(void)
{
	const struct rb_layout *l = rb_layout__for(3, 1);
	size_t checked = 0;

	for (size_t v = 0; v < N(rbline_vecs); v++) {
		const struct rbline_vec *t = &rbline_vecs[v];
		size_t k = 0;

		CU_ASSERT_EQUAL(t->info_len, (size_t)t->info_size * 12);
		if (t->info_size > 1)
			CU_ASSERT_EQUAL(t->succ_len, rb_line__succ_len(t->iseq_size));
		for (uint32_t pos = 0; pos < t->iseq_size; pos++) {
			int line;

			while (k + 1 < t->nr_insns && t->insns[k + 1][0] <= pos)
				k++;
			/* the pc of a frame at POS is one past it */
			line = rb_line__for(l, t->iseq_size, t->info_size, t->info, t->info_len,
					    t->succ, t->succ_len, pos + 1);
			if (line != (int)t->insns[k][1])
				fprintf(stderr, "\n%s: pos %u: line %d, ruby says %u\n", t->name, pos,
					line, t->insns[k][1]);
			CU_ASSERT_EQUAL(line, (int)t->insns[k][1]);
			checked++;
		}
		/* pc at iseq_encoded (a frame not begun): position 0's line */
		CU_ASSERT_EQUAL(rb_line__for(l, t->iseq_size, t->info_size, t->info, t->info_len,
					     t->succ, t->succ_len, 0), (int)t->insns[0][1]);
		CU_ASSERT_EQUAL(rb_line__for(l, t->iseq_size, t->info_size, t->info, t->info_len,
					     t->succ, t->succ_len, t->iseq_size + 1), -1);
	}
	CU_ASSERT(checked > 2400);
}

/* The big iseq reaches its table's blocks: the vectors test what they mean to. */
static void test_line_vectors_reach(void)
{
	bool big = false;

	for (size_t v = 0; v < N(rbline_vecs); v++)
		if (rbline_vecs[v].iseq_size > 54 + 4 * 512)
			big = true;
	CU_ASSERT(big);
	CU_ASSERT_EQUAL(rb_line__succ_len(0), 0);
	CU_ASSERT_EQUAL(rb_line__succ_len(1), 8);
	CU_ASSERT_EQUAL(rb_line__succ_len(10), 16);
	CU_ASSERT_EQUAL(rb_line__succ_len(53), 48);
	CU_ASSERT_EQUAL(rb_line__succ_len(54), 48);
	CU_ASSERT_EQUAL(rb_line__succ_len(55), 48 + 80);
	CU_ASSERT_EQUAL(rb_line__succ_len(54 + 512), 48 + 80);
	CU_ASSERT_EQUAL(rb_line__succ_len(54 + 513), 48 + 160);
}

static void test_line_hostile(void)
{
	const struct rb_layout *l = rb_layout__for(3, 1);
	const struct rbline_vec *big = NULL, *small = &rbline_vecs[0];
	uint8_t succ[48 + 80], info[24];

	for (size_t v = 0; v < N(rbline_vecs); v++)
		if (rbline_vecs[v].iseq_size > 600)
			big = &rbline_vecs[v];
	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	/* no entries: 0, as Ruby says; one entry: no table read */
	CU_ASSERT_EQUAL(rb_line__for(l, 10, 0, NULL, 0, NULL, 0, 3), 0);
	memset(info, 0, sizeof(info));
	info[0] = 7;
	CU_ASSERT_EQUAL(rb_line__for(l, 10, 1, info, 12, NULL, 0, 3), 7);
	CU_ASSERT_EQUAL(rb_line__for(l, 10, 1, info, 3, NULL, 0, 3), -1);
	CU_ASSERT_EQUAL(rb_line__for(NULL, 10, 1, info, 12, NULL, 0, 3), -1);
	/* tables short of what the position needs */
	CU_ASSERT_EQUAL(rb_line__for(l, big->iseq_size, big->info_size, big->info, big->info_len,
				     big->succ, big->succ_len - 1, 1), -1);
	/* a pc at iseq_encoded + iseq_size (the last position's line) is in bounds */
	CU_ASSERT(rb_line__for(l, big->iseq_size, big->info_size, big->info, big->info_len,
			       big->succ, big->succ_len, big->iseq_size) > 0);
	/* the entries cut short of the one the position has */
	CU_ASSERT_EQUAL(rb_line__for(l, big->iseq_size, big->info_size, big->info, 12,
				     big->succ, big->succ_len, big->iseq_size), -1);
	CU_ASSERT_EQUAL(rb_line__for(l, small->iseq_size, small->info_size, small->info,
				     small->info_len, NULL, 0, 2), -1);
	/* ranks past the entries, a rank of 0, garbage blocks */
	memset(succ, 0xff, sizeof(succ));
	CU_ASSERT_EQUAL(rb_line__for(l, 100, 2, info, 24, succ, sizeof(succ), 5), -1);
	CU_ASSERT_EQUAL(rb_line__for(l, 100, 2, info, 24, succ, sizeof(succ), 90), -1);
	memset(succ, 0, sizeof(succ));
	CU_ASSERT_EQUAL(rb_line__for(l, 100, 2, info, 24, succ, sizeof(succ), 5), -1);
	CU_ASSERT_EQUAL(rb_line__for(l, 100, 2, info, 24, succ, sizeof(succ), 90), -1);
	/* a negative line */
	memset(succ, 0, sizeof(succ));
	succ[0] = 1;
	memset(info, 0xff, 4);
	CU_ASSERT_EQUAL(rb_line__for(l, 5, 2, info, 24, succ, 8, 1), -1);
}

/* ---- rbstr -------------------------------------------------------------------------------- */

static void test_str_real(void)
{
	const struct rb_layout *l = rb_layout__for(3, 1);
	const uint64_t addr = 0x7f0000001000;

	for (size_t v = 0; v < N(rbstr_vecs); v++) {
		const struct rbstr_vec *t = &rbstr_vecs[v];
		const uint8_t *bytes;
		uint64_t at = 0, path = 1, slot = 1;
		size_t n = 0;
		char out[256];

		CU_ASSERT_EQUAL_FATAL(rb_str__locate(l, addr, t->obj, sizeof(t->obj), &at, &n), 0);
		if (t->heap) {
			CU_ASSERT_NOT_EQUAL(at, addr + l->str_embed);
			CU_ASSERT_EQUAL(n, t->heap_len);
			bytes = (const uint8_t *)t->heap;
		} else {
			CU_ASSERT_EQUAL(at, addr + l->str_embed);
			CU_ASSERT_FATAL(n <= sizeof(t->obj) - l->str_embed);
			bytes = t->obj + l->str_embed;
		}
		rb_str__utf8(bytes, n, out, sizeof(out));
		if (strcmp(out, t->text))
			fprintf(stderr, "\n%s: \"%s\", ruby says \"%s\"\n", t->name, out, t->text);
		CU_ASSERT_STRING_EQUAL(out, t->text);
		/* a String pathobj is its own path */
		CU_ASSERT_EQUAL(rb_path__locate(l, addr, t->obj, sizeof(t->obj), &path, &slot), 0);
		CU_ASSERT_EQUAL(path, addr);
		CU_ASSERT_EQUAL(slot, 0);
	}
}

static void test_str_hostile(void)
{
	const struct rb_layout *l = rb_layout__for(3, 1);
	uint8_t obj[40];
	uint64_t at, path, slot;
	size_t n;

	memset(obj, 0, sizeof(obj));
	obj[0] = 0x05;
	CU_ASSERT_EQUAL(rb_str__locate(l, 0x1000, obj, 39, &at, &n), -EINVAL);	/* short */
	CU_ASSERT_EQUAL(rb_str__locate(l, 0x1000, obj, 40, &at, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	obj[0] = 0x06;		/* T_REGEXP */
	CU_ASSERT_EQUAL(rb_str__locate(l, 0x1000, obj, 40, &at, &n), -EINVAL);
	/* an embedded length past the slot: 31 << 14 */
	obj[0] = 0x05;
	obj[1] = 0xc0;
	obj[2] = 0x07;
	CU_ASSERT_EQUAL(rb_str__locate(l, 0x1000, obj, 40, &at, &n), -EINVAL);
	/* heap: negative length, NULL pointer, a huge length capped */
	obj[1] = 0x20;
	obj[2] = 0;
	memset(obj + 16, 0xff, 8);
	CU_ASSERT_EQUAL(rb_str__locate(l, 0x1000, obj, 40, &at, &n), -EINVAL);
	memset(obj + 16, 0, 8);
	obj[18] = 0x10;
	CU_ASSERT_EQUAL(rb_str__locate(l, 0x1000, obj, 40, &at, &n), -EINVAL);
	obj[24] = 0x08;
	CU_ASSERT_EQUAL(rb_str__locate(l, 0x1000, obj, 40, &at, &n), 0);
	CU_ASSERT_EQUAL(at, 0x08);
	CU_ASSERT_EQUAL(n, RB_STR_MAX_BYTES);
	/* pathobj: an embedded Array [path, realpath], a heap one, an empty one */
	memset(obj, 0, sizeof(obj));
	obj[0] = 0x07;
	obj[1] = 0xa0;		/* RARRAY_EMBED_FLAG, length 1 (bit 15) */
	CU_ASSERT_EQUAL(rb_path__locate(l, 0x1000, obj, 40, &path, &slot), 0);
	CU_ASSERT_EQUAL(path, 0);
	CU_ASSERT_EQUAL(slot, 0x1000 + 16);
	obj[1] = 0x20;		/* embedded, length 0 */
	CU_ASSERT_EQUAL(rb_path__locate(l, 0x1000, obj, 40, &path, &slot), -EINVAL);
	obj[1] = 0x00;		/* heap: len 2, ptr */
	obj[16] = 2;
	obj[32] = 0x40;
	CU_ASSERT_EQUAL(rb_path__locate(l, 0x1000, obj, 40, &path, &slot), 0);
	CU_ASSERT_EQUAL(slot, 0x40);
	obj[32] = 0;
	CU_ASSERT_EQUAL(rb_path__locate(l, 0x1000, obj, 40, &path, &slot), -EINVAL);
	obj[0] = 0x0c;		/* T_DATA */
	CU_ASSERT_EQUAL(rb_path__locate(l, 0x1000, obj, 40, &path, &slot), -EINVAL);
	CU_ASSERT_EQUAL(rb_path__locate(l, 0x1000, obj, 39, &path, &slot), -EINVAL);
}

static void test_str_utf8(void)
{
	char out[32];

	CU_ASSERT_EQUAL(rb_str__utf8((const uint8_t *)"abc", 3, out, 8), 3);
	CU_ASSERT_STRING_EQUAL(out, "abc");
	/* cut before a character that would not fit: 6 + 3 + the NUL > 9 */
	CU_ASSERT_EQUAL(rb_str__utf8((const uint8_t *)"abcdef\xe2\x98\x83", 9, out, 9), 6);
	CU_ASSERT_STRING_EQUAL(out, "abcdef");
	/* NUL, a lone continuation byte, a truncated sequence, an overlong, a surrogate */
	CU_ASSERT_EQUAL(rb_str__utf8((const uint8_t *)"\0", 1, out, 8), 3);
	CU_ASSERT_STRING_EQUAL(out, "\xef\xbf\xbd");
	CU_ASSERT_EQUAL(rb_str__utf8((const uint8_t *)"\x80", 1, out, 8), 3);
	CU_ASSERT_EQUAL(rb_str__utf8((const uint8_t *)"\xe2\x98", 2, out, 8), 6);
	CU_ASSERT_EQUAL(rb_str__utf8((const uint8_t *)"\xc0\xaf", 2, out, 8), 6);
	CU_ASSERT_EQUAL(rb_str__utf8((const uint8_t *)"\xed\xa0\x80", 3, out, 10), 9);
	CU_ASSERT_EQUAL(rb_str__utf8((const uint8_t *)"\xf4\x90\x80\x80", 4, out, 16), 12);
	CU_ASSERT_EQUAL(rb_str__utf8((const uint8_t *)"\xf0\x9f\x98\x80", 4, out, 8), 4);
	CU_ASSERT_EQUAL(rb_str__utf8(NULL, 4, out, 8), 0);
	CU_ASSERT_STRING_EQUAL(out, "");
	CU_ASSERT_EQUAL(rb_str__utf8((const uint8_t *)"abc", 3, out, 0), 0);
	CU_ASSERT_EQUAL(rb_str__utf8((const uint8_t *)"abc", 3, out, 1), 0);
	CU_ASSERT_STRING_EQUAL(out, "");
}

int register_ruby_suite(void)
{
	CU_pSuite s = CU_add_suite("ruby", NULL, NULL);

	if (!s ||
	    !CU_add_test(s, "3.1 layout table", test_layout_table) ||
	    !CU_add_test(s, "frame kinds and words of a live 3.1", test_frame_words) ||
	    !CU_add_test(s, "lines of real iseqs", test_line_vectors) ||
	    !CU_add_test(s, "line vectors reach the table's blocks", test_line_vectors_reach) ||
	    !CU_add_test(s, "line tables hostile", test_line_hostile) ||
	    !CU_add_test(s, "Strings of a live 3.1", test_str_real) ||
	    !CU_add_test(s, "Strings and pathobjs hostile", test_str_hostile) ||
	    !CU_add_test(s, "bytes to UTF-8", test_str_utf8))
		return -1;
	return 0;
}

/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * rbstr: CRuby 3.1 String and Array objects as read from another process's memory
 * (untrusted): where a String's bytes are (embedded in its 40-byte slot, or on the heap),
 * the path out of an iseq's pathobj (a String, or an Array [path, realpath]), and a
 * String's bytes as UTF-8.
 */
#ifndef RUBY_RBSTR_H
#define RUBY_RBSTR_H

#include <stddef.h>
#include <stdint.h>
#include "ruby/rblayout.h"

#define RB_STR_MAX_BYTES	4096	/* bytes of a String taken, at most */

/*
 * Where the bytes of the String object at address ADDR are, given its first LEN bytes OBJ
 * (l->str_size do): *AT their address in the process, *N their count (capped at
 * RB_STR_MAX_BYTES); for an embedded String *AT is ADDR + l->str_embed, its bytes already in
 * OBJ. Returns 0, or -EINVAL when OBJ is short, is not a T_STRING, or gives a negative
 * length, an embedded length past the slot, or a NULL heap pointer with bytes.
 */
int rb_str__locate(const struct rb_layout *l, uint64_t addr, const uint8_t *obj, size_t len,
		   uint64_t *at, size_t *n);

/*
 * The address of the path String of the pathobj whose first LEN bytes are OBJ: *PATH is
 * ADDR itself for a String; the address of its first element's slot for an Array (*SLOT:
 * read 8 bytes there: ADDR + l->ary_embed when embedded, its heap pointer otherwise) with
 * *PATH 0. Returns 0, or -EINVAL when OBJ is short, neither, or an Array with no element.
 */
int rb_path__locate(const struct rb_layout *l, uint64_t addr, const uint8_t *obj, size_t len,
		    uint64_t *path, uint64_t *slot);

/*
 * The N bytes BYTES of a String as UTF-8 into OUT (OUTLEN bytes, NUL-terminated whenever
 * OUTLEN > 0): valid UTF-8 kept, each byte of an invalid sequence (and NUL) replaced by
 * U+FFFD (String#scrub would give one for a run of them); cut before the first character that
 * would not fit whole, so OUT is always valid UTF-8. Reads at most RB_STR_MAX_BYTES of
 * BYTES. Returns the bytes written (not counting the NUL).
 */
size_t rb_str__utf8(const uint8_t *bytes, size_t n, char *out, size_t outlen);

#endif

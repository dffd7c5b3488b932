// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * libFuzzer: the messages between the profiler and its symbolizer worker (and the debuginfod
 * fetcher's answers), decoded as each
 * side decodes the other's (each side's input is the other's output: a worker may be
 * compromised by a hostile file, and the worker trusts nothing either). The first byte says
 * how many descriptors came with the message; everything a decoded message points to is
 * read, as its receiver reads it.
 */
#include <stdint.h>
#include <string.h>
#include "sandbox/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Read all of M as its receiver does: addresses, candidates, strings, entries. */
static void use(const struct sb_msg *m)
{
	static const char *strs[SB_MSG_MAX / 5];
	struct sb_frame fr[SB_FRAMES_MAX];
	volatile size_t sink = 0;
	size_t pos = 0;

	switch (m->type) {
	case SB_LOOKUP:
	case SB_JIT:
		for (uint32_t i = 0; i < m->n; i++)
			sink += sb_msg__addr(m, i);
		break;
	case SB_DEBUG:
		for (uint32_t i = 0; i < m->n; i++)
			sink += strlen(m->cand[i].path) + m->cand[i].by_id;
		break;
	case SB_FILE:
		sink += strlen(m->path);
		break;
	case SB_WANT_DEBUG:
		sink += strlen(m->build_id) + strlen(m->link);
		break;
	case SB_NAMES:
		sb_names__strings(m, strs);
		for (uint32_t i = 0; i < m->n; i++) {
			int nr = sb_names__next(m, &pos, fr);

			for (int k = 0; k < nr; k++)
				sink += strlen(strs[fr[k].name]) + fr[k].line + fr[k].kind +
					(fr[k].file == SB_NO_STR ? 0 : strlen(strs[fr[k].file]));
		}
		break;
	default:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char id[SB_BUILD_ID_MAX + 1];
	struct sb_msg m;
	int32_t st;

	/* The debuginfod fetcher's answers too (another process of ours without privileges,
	 * talking to the network). */
	if (sb_fetch_answer__decode(data, size, &st, id) == 0 && strlen(id) + 4 != size)
		__builtin_trap();
	if (size < 1)
		return 0;
	for (int to_worker = 0; to_worker < 2; to_worker++)
		if (sb_msg__decode(data + 1, size - 1, data[0] % (SB_FDS_MAX + 2), to_worker, &m) == 0)
			use(&m);
	return 0;
}

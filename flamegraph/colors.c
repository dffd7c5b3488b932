// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * flamegraph colours: flamegraph.pl's palettes, a frame's colour from a hash of its name,
 * the differential red/blue scale, and the _[k]/_[i]/_[j]/_[w] hint suffixes that pick one.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "base/htab.h"
#include "internal.h"

/* The runtime of frame NAME (LEN bytes) written "function (FILE:LINE)" or "function (FILE)":
 * HINT_PYTHON, HINT_RUBY, or HINT_NONE. */
static enum hint runtime_hint(const char *name, size_t len)
{
	size_t open = len, end;

	if (len < 5 || name[len - 1] != ')')
		return HINT_NONE;
	while (open > 1 && !(name[open - 1] == '(' && name[open - 2] == ' '))
		open--;
	if (open <= 1)
		return HINT_NONE;
	/* FILE is [open, end): up to ":LINE" when the digits end it. */
	end = len - 1;
	while (end > open && name[end - 1] >= '0' && name[end - 1] <= '9')
		end--;
	end = end > open && end < len - 1 && name[end - 1] == ':' ? end - 1 : len - 1;
	if (end - open >= 3 && !memcmp(name + end - 3, ".rb", 3))
		return HINT_RUBY;
	if (end - open >= 10 && !memcmp(name + open, "<internal:", 10))
		return HINT_RUBY;
	if ((end - open >= 3 && !memcmp(name + end - 3, ".py", 3)) || name[open] == '<')
		return HINT_PYTHON;
	return HINT_NONE;
}

/* The length of NAME without its _[k]/_[i]/_[j]/_[w] suffix, and which one it had (or the
 * runtime of an interpreter's frame). */
size_t colors__strip_hint(const char *name, size_t len, enum hint *hint)
{
	*hint = runtime_hint(name, len);
	if (len >= 4 && name[len - 4] == '_' && name[len - 3] == '[' && name[len - 1] == ']') {
		switch (name[len - 2]) {
		case 'k': *hint = HINT_KERNEL; break;
		case 'i': *hint = HINT_INLINE; break;
		case 'j': *hint = HINT_JIT; break;
		case 'w': *hint = HINT_WAKER; break;
		default: return len;
		}
		return len - 4;
	}
	return len;
}

/* flamegraph.pl's palettes, with three values in [0, 1) from a hash of the name. */
static struct rgb palette(enum fg_palette p, double v1, double v2, double v3)
{
	unsigned int x;

	switch (p) {
	case FG_HOT:
		return (struct rgb){ 205 + (int)(50 * v3), (int)(230 * v1), (int)(55 * v2) };
	case FG_MEM:
		return (struct rgb){ 0, 190 + (int)(50 * v2), (int)(210 * v1) };
	case FG_IO:
		x = 80 + (int)(60 * v1);
		return (struct rgb){ x, x, 190 + (int)(55 * v2) };
	case FG_RED:
		x = 50 + (int)(80 * v1);
		return (struct rgb){ 200 + (int)(55 * v1), x, x };
	case FG_GREEN:
		x = 50 + (int)(60 * v1);
		return (struct rgb){ x, 200 + (int)(55 * v1), x };
	case FG_BLUE:
		x = 80 + (int)(60 * v1);
		return (struct rgb){ x, x, 205 + (int)(50 * v1) };
	case FG_AQUA:
		return (struct rgb){ 50 + (int)(60 * v1), 165 + (int)(55 * v1),
				     165 + (int)(55 * v1) };
	case FG_YELLOW:
		x = 175 + (int)(55 * v1);
		return (struct rgb){ x, x, 50 + (int)(20 * v1) };
	case FG_PURPLE:
		x = 190 + (int)(65 * v1);
		return (struct rgb){ x, 80 + (int)(60 * v1), x };
	case FG_ORANGE:
		return (struct rgb){ 190 + (int)(65 * v1), 90 + (int)(65 * v1), 0 };
	}
	return (struct rgb){ 0, 0, 0 };
}

/* The colour of frame NAME (suffix stripped, hint given): the same name, the same colour. */
struct rgb colors__frame(const struct fg_opts *o, const char *name, size_t len,
			 enum hint hint)
{
	uint64_t h = hash_bytes(HASH_SEED, name, len);
	enum fg_palette p = o->colors;
	double v1, v2, v3;

	h ^= h >> 33;	/* mix the high bits into the low ones (murmur3's finalizer) */
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	v1 = (double)(h & 0xffff) / 65536;
	v2 = (double)(h >> 16 & 0xffff) / 65536;
	v3 = (double)(h >> 32 & 0xffff) / 65536;

	if ((len == 1 && name[0] == '-') || (len == 2 && !memcmp(name, "--", 2)))
		return (struct rgb){ 160, 160, 160 };	/* separators, as flamegraph.pl */
	/* Time off the CPU (--wall): blue, as flamegraph.pl's off-CPU graphs (--colors=io). */
	if (len == 9 && !memcmp(name, "[off-cpu]", 9))
		p = FG_IO;
	if (p == FG_HOT) {
		if (hint == HINT_KERNEL)
			p = FG_ORANGE;
		else if (hint == HINT_INLINE)
			p = FG_AQUA;
		else if (hint == HINT_JIT)
			p = FG_GREEN;
		else if (hint == HINT_PYTHON)
			p = FG_YELLOW;
		else if (hint == HINT_RUBY)
			p = FG_PURPLE;
	}
	return palette(p, v1, v2, v3);
}

/* flamegraph.pl's differential scale: red for more samples, blue for fewer. */
struct rgb colors__diff(double delta, double maxdelta)
{
	struct rgb c = { 255, 255, 255 };

	if (!(maxdelta > 0))
		return c;
	delta = fmax(-maxdelta, fmin(maxdelta, delta));
	if (delta > 0)
		c.g = c.b = (unsigned int)(210 * (maxdelta - delta) / maxdelta);
	else if (delta < 0)
		c.r = c.g = (unsigned int)(210 * (maxdelta + delta) / maxdelta);
	return c;
}

struct rgb colors__legend(const struct fg_opts *o, enum hint hint, bool off_cpu)
{
	enum fg_palette p = o->colors;

	if (off_cpu)
		p = FG_IO;
	else if (p == FG_HOT && hint == HINT_KERNEL)
		p = FG_ORANGE;
	else if (p == FG_HOT && hint == HINT_INLINE)
		p = FG_AQUA;
	else if (p == FG_HOT && hint == HINT_JIT)
		p = FG_GREEN;
	else if (p == FG_HOT && hint == HINT_PYTHON)
		p = FG_YELLOW;
	else if (p == FG_HOT && hint == HINT_RUBY)
		p = FG_PURPLE;
	return palette(p, 0.5, 0.5, 0.5);
}

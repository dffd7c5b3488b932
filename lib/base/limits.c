// SPDX-License-Identifier: GPL-3.0-or-later
/* limits: bounds met, and the memory budget (see limits.h). Atomics only: any thread. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/limits.h"

#define DEFAULT_MAX	(1ull << 30)

static uint64_t counts[LIMIT__MAX];
static uint64_t budget;			/* 0: not set, the default */
static uint64_t used, peak;

/* What each bound met means, for the report, after its count. */
static const char *const sentences[LIMIT__MAX] = {
	[LIMIT_MEMORY_FILES] = "files not parsed (their frames are FILE+0xADDR): "
			       "the memory budget was spent (--max-memory)",
	[LIMIT_MEMORY_DWARF] = "files without inline frames: their DWARF did not fit "
			       "the memory budget (--max-memory)",
	[LIMIT_MEMORY_STACKS] = "samples dropped: their stacks did not fit the "
				"memory budget (--max-memory)",
	[LIMIT_MEMORY_PERFMAP] = "perf maps cut short: the memory budget was "
				 "spent (--max-memory)",
	[LIMIT_STACKS] = "samples dropped: more than 1048576 distinct stacks",
	[LIMIT_MAPS] = "mappings left out: a process had more than 16384 "
		       "executable mappings",
	[LIMIT_SYMS] = "files with their symbols cut at 4194304",
	[LIMIT_PERFMAP_ENTRIES] = "perf maps cut at 4194304 entries",
	[LIMIT_PERFMAP_LINES] = "perf-map lines skipped: longer than 1023 bytes "
				"of name",
	[LIMIT_SECTION_SIZE] = "compressed sections not read: the size their "
			       "header claims is past the file's or the cap",
	[LIMIT_DWARF_LINK] = "files without inline frames: their "
			     ".gnu_debugaltlink leads out of the debug directories",
	[LIMIT_FILE_FAULTS] = "files changed while read (truncated: SIGBUS); "
			      "what was read of them since is dropped",
	[LIMIT_INCARNATIONS] = "programs that ended under a pid (exec, exit) named "
			       "with the next one's mappings: more than 65536",
	[LIMIT_EPOCHS] = "mapping changes (a library replaced where another was) whose "
			 "samples were named as after the next one: more than 256 in a process",
	[LIMIT_TABLE_QUEUE] = "DWARF samples cut where a file's unwind table was still being "
			      "made: more waited for tables than 64 MiB hold",
	[LIMIT_BPF_TABLES] = "files whose unwind tables did not fit in BPF (2048 files, "
			     "8192 shards of 4096 rows, or --max-memory): their stacks unwound "
			     "in userspace, from a copy",
};

_Static_assert(LIMIT_MAPS_MAX == 16384 && LIMIT_SYMS_MAX == 4194304 &&
	       LIMIT_PERFMAP_ENTRIES_MAX == 4194304 && LIMIT_STACKS_MAX == 1048576 &&
	       LIMIT_PERFMAP_NAME_MAX == 1023 && LIMIT_INCARNATIONS_MAX == 65536,
	       "the report's sentences say these numbers");

void limits__hit(enum limit l, uint64_t n)
{
	if (l < LIMIT__MAX)
		__atomic_add_fetch(&counts[l], n, __ATOMIC_RELAXED);
}

uint64_t limits__count(enum limit l)
{
	return l < LIMIT__MAX ? __atomic_load_n(&counts[l], __ATOMIC_RELAXED) : 0;
}

void limits__reset(void)
{
	for (int i = 0; i < LIMIT__MAX; i++)
		__atomic_store_n(&counts[i], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&used, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&peak, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&budget, 0, __ATOMIC_RELAXED);
}

uint64_t limits__default_budget(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	uint64_t ram = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;

	return ram && ram / 8 < DEFAULT_MAX ? ram / 8 : DEFAULT_MAX;
}

void limits__set_budget(uint64_t bytes)
{
	__atomic_store_n(&budget, bytes, __ATOMIC_RELAXED);
}

uint64_t limits__budget(void)
{
	uint64_t b = __atomic_load_n(&budget, __ATOMIC_RELAXED);

	return b ? b : limits__default_budget();
}

static void peak__raise(uint64_t now)
{
	uint64_t p = __atomic_load_n(&peak, __ATOMIC_RELAXED);

	while (now > p && !__atomic_compare_exchange_n(&peak, &p, now, false, __ATOMIC_RELAXED,
							 __ATOMIC_RELAXED))
		;
}

bool limits__reserve(uint64_t bytes)
{
	uint64_t max = limits__budget(), u = __atomic_load_n(&used, __ATOMIC_RELAXED);

	do {
		if (bytes > max || u > max - bytes)
			return false;
	} while (!__atomic_compare_exchange_n(&used, &u, u + bytes, false, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	peak__raise(u + bytes);
	return true;
}

void limits__charge(uint64_t bytes)
{
	peak__raise(__atomic_add_fetch(&used, bytes, __ATOMIC_RELAXED));
}

void limits__release(uint64_t bytes)
{
	uint64_t u = __atomic_load_n(&used, __ATOMIC_RELAXED);

	while (!__atomic_compare_exchange_n(&used, &u, u > bytes ? u - bytes : 0, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

bool limits__spent(void)
{
	return __atomic_load_n(&used, __ATOMIC_RELAXED) >= limits__budget();
}

uint64_t limits__used(void)
{
	return __atomic_load_n(&used, __ATOMIC_RELAXED);
}

uint64_t limits__peak(void)
{
	return __atomic_load_n(&peak, __ATOMIC_RELAXED);
}

int limits__parse_size(const char *s, uint64_t *bytes)
{
	static const char units[] = "KMGT";
	unsigned long long v;
	const char *u;
	char *end;
	int shift = 0;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end) {
		u = strchr(units, toupper((unsigned char)*end));
		if (!u)
			return -EINVAL;
		shift = 10 * (int)(u - units + 1);
		end++;
		if (!strcasecmp(end, "iB") || !strcasecmp(end, "B"))
			end += strlen(end);
		if (*end)
			return -EINVAL;
	}
	if (shift && v > (UINT64_MAX >> shift))
		return -EINVAL;
	*bytes = (uint64_t)v << shift;
	return 0;
}

int limits__report(FILE *f, const char *prefix)
{
	int lines = 0;

	for (int i = 0; i < LIMIT__MAX; i++) {
		uint64_t n = limits__count(i);

		if (!n)
			continue;
		fprintf(f, "%s: bound met: %" PRIu64 " %s\n", prefix, n, sentences[i]);
		lines++;
	}
	return lines;
}

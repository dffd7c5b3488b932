// SPDX-License-Identifier: GPL-3.0-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "base/htab.h"
#include "base/log.h"
#include "base/grow.h"
#include "collect/explain.h"
#include "profile.h"
#include "unwind/unwind.h"

/* One file: its samples by reason. */
struct explain_file {
	char *path;
	uint64_t count[EXPLAIN__MAX];
	uint64_t whole[EXPLAIN__MAX];
};

struct explain {
	struct explain_file *files;	/* by id */
	size_t nr, cap;
	struct htab index;		/* hash of the path -> files[] */
};

#define STR_(x)	#x
#define STR(x)	STR_(x)

/* What each reason says after "in FILE: ". */
static const char *const reason_text[EXPLAIN__MAX] = {
	[EXPLAIN_CUT_NO_INFO] = "no unwind info covers the code there (the file was built or "
				"stripped without .eh_frame, or it is assembly without CFI)",
	[EXPLAIN_CUT_BAD_FRAME] = "its unwind info led to a frame that could not be read",
	[EXPLAIN_CUT_NO_STACK] = "the stack could not be read (the process exited, or the "
				 "memory was gone)",
	[EXPLAIN_CUT_DEPTH] = "the stack was deeper than the frame limit",
	[EXPLAIN_CUT_COPY] = "the stack was deeper than the copy taken at the sample "
			     "(--stack-copy, at most " STR(PROFILE_MAX_STACK_COPY) " bytes), and "
			     "its thread ran on: what it held then could not be read later",
	[EXPLAIN_CUT_FP] = "frame pointers broke off there (built without them?)",
	[EXPLAIN_NOREC] = "(a function there keeps no frame record): DWARF unwound",
	[EXPLAIN_SCANNED] = "(code without CFI): caller found by its code's way to its ret, or "
			    "a scan of the stack copy; checked by the call before it and the "
			    "unwind from there by CFI:",
	[EXPLAIN_UNNAMED_NO_SYMS] = "no symbols and no debug file (install its debug symbols: "
				    "on Debian, its -dbgsym package)",
	[EXPLAIN_UNNAMED_NO_DEBUG] = "its symbol table leaves them out and no debug file was "
				     "found (install its debug symbols: on Debian, its -dbgsym "
				     "package)",
	[EXPLAIN_UNNAMED_DEBUG] = "not even its debug file has symbols for them",
	[EXPLAIN_UNNAMED_UNREADABLE] = "the file could not be read",
	[EXPLAIN_UNNAMED_WORKER] = "the symbolizer worker crashed or stalled on the file (see "
				   "the warning)",
	[EXPLAIN_UNNAMED_JIT] = "JIT code without a perf map (node --perf-basic-prof; a JVM: "
				"jcmd PID Compiler.perfmap, which profile asks, or "
				"perf-map-agent)",
	[EXPLAIN_UNNAMED_JIT_MISSING] = "JIT code missing from the process's /tmp/perf-PID.map",
	[EXPLAIN_UNNAMED_VDSO] = "the kernel's vDSO names only its entry points",
	[EXPLAIN_UNNAMED_SPECIAL] = "a special mapping without symbols",
	[EXPLAIN_UNNAMED_NO_MAPPING] = "addresses in no mapping the process was seen to have",
	[EXPLAIN_UNNAMED_REPLACED] = "the file was rewritten in place after this version was "
				     "mapped: its content is gone (not guessed from the new one)",
	[EXPLAIN_PY_READ] = "Python frames read at the sample (the interpreter's loop frames "
			    "replaced by the functions they ran)",
	[EXPLAIN_RB_READ] = "Ruby frames read at the sample (the VM's entry frames replaced by "
			    "the methods and blocks they ran)",
	[EXPLAIN_RB_MISSING] = "the VM's entry frames with no Ruby frames read (the thread did "
			       "not hold the GVL, its frames were unreadable, a version not "
			       "known here, or --no-runtime)",
	[EXPLAIN_PY_MISSING] = "the interpreter's loop frames with no Python frames read (its "
			       "thread state not found, its frames unreadable, a version not "
			       "known here, or --no-runtime)",
};

struct explain *explain__new(void)
{
	return calloc(1, sizeof(struct explain));
}

void explain__free(struct explain *ex)
{
	if (!ex)
		return;
	for (size_t i = 0; i < ex->nr; i++)
		free(ex->files[i].path);
	free(ex->files);
	htab__free(&ex->index);
	free(ex);
}

int explain__file(struct explain *ex, const char *path)
{
	uint64_t h = hash_bytes(HASH_SEED, path, strlen(path));
	struct explain_file *f;
	uint32_t pos, id;

	for (id = htab__first(&ex->index, h, &pos); id != HTAB_NONE;
	     id = htab__next(&ex->index, h, &pos))
		if (!strcmp(ex->files[id].path, path))
			return (int)id;
	if (array_grow(&ex->files, &ex->cap, sizeof(*ex->files), ex->nr))
		return -ENOMEM;
	f = &ex->files[ex->nr];
	*f = (struct explain_file){ .path = strdup(path) };
	if (!f->path || htab__insert(&ex->index, h, (uint32_t)ex->nr)) {
		free(f->path);
		return -ENOMEM;
	}
	return (int)ex->nr++;
}

int explain__add(struct explain *ex, int file, enum explain_reason reason, uint64_t count,
		 uint64_t whole)
{
	if (file < 0 || (size_t)file >= ex->nr || (unsigned int)reason >= EXPLAIN__MAX)
		return -EINVAL;
	ex->files[file].count[reason] += count;
	ex->files[file].whole[reason] += whole;
	return 0;
}

enum explain_reason explain__cut_reason(bool no_stack, enum unwind_stop stop)
{
	if (no_stack)
		return EXPLAIN_CUT_NO_STACK;
	switch (stop) {
	case UNWIND_STOP_NO_INFO: return EXPLAIN_CUT_NO_INFO;
	case UNWIND_STOP_BAD_FRAME: return EXPLAIN_CUT_BAD_FRAME;
	case UNWIND_STOP_NO_MEMORY: return EXPLAIN_CUT_NO_STACK;
	case UNWIND_STOP_DEPTH: return EXPLAIN_CUT_DEPTH;
	case UNWIND_STOP_COPY: return EXPLAIN_CUT_COPY;
	default: return EXPLAIN_CUT_FP;
	}
}

static int line_cmp(const void *a, const void *b)
{
	const struct explain_line *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->reason != y->reason)
		return x->reason < y->reason ? -1 : 1;
	return strcmp(x->file, y->file);
}

int explain__lines(const struct explain *ex, struct explain_line **out)
{
	struct explain_line *lines;
	size_t n = 0;

	*out = NULL;
	for (size_t i = 0; i < ex->nr; i++)
		for (int r = 0; r < EXPLAIN__MAX; r++)
			n += ex->files[i].count[r] != 0;
	if (!n)
		return 0;
	lines = malloc(n * sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < ex->nr; i++)
		for (int r = 0; r < EXPLAIN__MAX; r++)
			if (ex->files[i].count[r])
				lines[n++] = (struct explain_line){
					ex->files[i].path, r, ex->files[i].count[r],
					ex->files[i].whole[r],
				};
	qsort(lines, n, sizeof(*lines), line_cmp);
	*out = lines;
	return (int)n;
}

void explain__escape(const char *path, char *buf, size_t len)
{
	log_escape_buf(path, buf, len);
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* What line L says after "in FILE: ". */
static const char *line_text(const struct explain_line *l)
{
	/* Not a file: no unwind info is not for want of .eh_frame. */
	if (l->reason == EXPLAIN_CUT_NO_INFO && !strcmp(l->file, EXPLAIN_ANON_CODE))
		return "JIT code has no unwind info to go on with, only frame records (node "
		       "keeps them; a JVM with -XX:+PreserveFramePointer, which profile gives "
		       "the JVMs it starts)";
	if (l->reason == EXPLAIN_CUT_NO_INFO && !strcmp(l->file, EXPLAIN_NO_MAPPING))
		return reason_text[EXPLAIN_UNNAMED_NO_MAPPING];
	return reason_text[l->reason];
}

int explain__format(const struct explain_line *l, uint64_t samples, char *buf, size_t len)
{
	char file[1024];
	const char *what = l->reason == EXPLAIN_NOREC ? "frame pointers not trusted" :
			   l->reason == EXPLAIN_SCANNED ? "stack scanned" :
			   l->reason == EXPLAIN_PY_READ ? "Python" :
			   l->reason == EXPLAIN_PY_MISSING ? "Python not read" :
			   l->reason == EXPLAIN_RB_READ ? "Ruby" :
			   l->reason == EXPLAIN_RB_MISSING ? "Ruby not read" :
			   l->reason <= EXPLAIN_CUT_FP ? "cut" : "unnamed";

	explain__escape(l->file, file, sizeof(file));
	if (l->reason == EXPLAIN_PY_READ || l->reason == EXPLAIN_RB_READ)
		return snprintf(buf, len, "%5.1f%%  %s in %s: %s; every one named in %.1f%% of "
				"these", share(l->count, samples), what, file, reason_text[l->reason],
				share(l->whole, l->count));
	if (l->reason == EXPLAIN_NOREC || l->reason == EXPLAIN_SCANNED)
		return snprintf(buf, len, "%5.1f%%  %s in %s %s %.1f%% of these whole",
				share(l->count, samples), what, file, reason_text[l->reason],
				share(l->whole, l->count));
	return snprintf(buf, len, "%5.1f%%  %s in %s: %s", share(l->count, samples), what, file,
			line_text(l));
}

int explain__write(const struct explain *ex, FILE *f, uint64_t samples, bool ns, size_t max)
{
	struct explain_line *lines;
	int n = explain__lines(ex, &lines);
	char buf[2048], of[64];

	if (n < 0)
		return n;
	if (ns)
		snprintf(of, sizeof(of), "%.3f s", samples / 1e9);
	else
		snprintf(of, sizeof(of), "%llu samples", (unsigned long long)samples);
	if (!n) {
		fprintf(f, "profile: no stack was cut, untrusted or left unnamed (--explain), of "
			"%s\n", of);
		return 0;
	}
	fprintf(f, "profile: where stacks were cut, untrusted or left unnamed (--explain), of "
		"%s:\n", of);
	for (int i = 0; i < n && (size_t)i < max; i++) {
		explain__format(&lines[i], samples, buf, sizeof(buf));
		fprintf(f, "  %s\n", buf);
	}
	if ((size_t)n > max)
		fprintf(f, "  and %zu more, each %.1f%% of the %s or less\n", n - max,
			share(lines[max].count, samples), ns ? "time" : "samples");
	free(lines);
	return 0;
}

/* Whether the LEN bytes at S are "0x" and lowercase hex digits. */

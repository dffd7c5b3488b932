// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/sideband: PERF_RECORD_MMAP2, FORK, COMM (of an exec) and LOST records of every process, from a dummy
 * software event per CPU (perf's own mechanism): executable mappings are known as they
 * appear, so a process that exits before the end of the profile still symbolizes.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/sysmacros.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/clock.h"
#include "base/log.h"
#include "collect/session_int.h"
#include "dso/dsos.h"
#include "proc/procmaps.h"
#include "profile.skel.h"

#define MMAP_PAGES	64	/* per-CPU buffer for mmap records: 256 KiB */

/* PERF_RECORD_MMAP2 as the kernel writes it (without the build-id variant). */
struct mmap2_record {
	struct perf_event_header header;
	__u32 pid, tid;
	__u64 addr, len, pgoff;
	__u32 maj, min;
	__u64 ino, ino_generation;
	__u32 prot, flags;
	char filename[];
};

struct comm_record {
	struct perf_event_header header;
	__u32 pid, tid;
	char comm[];
};

struct fork_record {
	struct perf_event_header header;
	__u32 pid, ppid, tid, ptid;
	__u64 time;
};

struct lost_record {
	struct perf_event_header header;
	__u64 id, lost;
};

/* The time of record H: the last 8 bytes, the sample_id trailer of PERF_SAMPLE_TIME (0 when
 * the record is too short to have one). The buffers are per CPU: an exec on one CPU and the
 * new program's mappings on another arrive in either order, their times say which came
 * first. */
static __u64 record_time(const struct perf_event_header *h)
{
	__u64 t;

	if (h->size < sizeof(*h) + sizeof(t))
		return 0;
	memcpy(&t, (const char *)h + h->size - sizeof(t), sizeof(t));
	return t;
}

/*
 * Whether the program that PID ran before the fork or exec whose record (at TIME) is read
 * had samples, as BPF's `incarns` says (INCARN_PREV_SAMPLED); when it cannot say, yes: its
 * mappings are kept. The records are written before BPF's hooks run: a fork's as the child
 * is made, before on_fork; an exec's as it begins, on_exec once the new program is loaded
 * (`execs` then has a time past the record's). A record read before its hook ran finds the
 * value of the program before (an epoch of it, its flags kept), whose own flag says. (Read
 * in that window, a shell's loop that exec'd the next program had its samples left
 * unnamed: its mappings dropped as never sampled.)
 */
static bool prev_sampled(struct session *s, __u32 pid, __u64 time, bool exec)
{
	struct exec_seen ex;
	__u64 v;

	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.incarns), &pid, &v))
		return true;
	if (exec ? bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.execs), &pid, &ex) ||
		   ex.time < time : (v & ~INCARN_FLAGS) < time)
		return v & INCARN_SAMPLED;
	return v & INCARN_PREV_SAMPLED;
}

static enum bpf_perf_event_ret on_mmap_record(void *ctx, int cpu, struct perf_event_header *h)
{
	struct session *s = ctx;
	const __u32 *pid = (const __u32 *)(h + 1);
	(void)cpu;

	/* The kernel numbers pids in our namespace: 0 is a process outside it. */
	if (h->type != PERF_RECORD_LOST && (h->size < sizeof(*h) + sizeof(*pid) || !*pid))
		return LIBBPF_PERF_EVENT_CONT;
	if (h->type != PERF_RECORD_LOST)
		s->sideband_records++;
	if (h->type == PERF_RECORD_LOST) {
		s->stats.mmap_lost += ((struct lost_record *)h)->lost;
	} else if (h->type == PERF_RECORD_FORK && h->size >= sizeof(struct fork_record)) {
		struct fork_record *r = (struct fork_record *)h;

		/* A new process starts with its parent's mappings: no mmap records for those
		 * (none known when the parent is outside our pid namespace, ppid 0). */
		if (r->pid != r->ppid && r->pid == r->tid && r->ppid) {
			if (!prev_sampled(s, r->pid, record_time(h), false))
				procmaps__unsampled(s->maps, r->pid);
			if (procmaps__fork(s->maps, r->ppid, r->pid, r->time))
				pr_warn("out of memory recording mappings of pid %u", r->pid);
			session__on_fork(s, r->ppid, r->pid);
		}
	} else if (h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC) &&
		   h->size >= sizeof(struct comm_record)) {
		struct comm_record *r = (struct comm_record *)h;
		size_t room = h->size - sizeof(*r);
		char comm[PROCMAPS_COMM_LEN] = "";

		memcpy(comm, r->comm, room < sizeof(comm) - 1 ? room : sizeof(comm) - 1);
		__u32 key = r->pid;
		__u8 v;

		if (r->pid == r->tid && (s->opts.all || procmaps__has(s->maps, r->pid) ||
					 !bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.pids),
							      &key, &v))) {
			/* The program before keeps its mappings for its samples, if it had any. */
			if (!prev_sampled(s, r->pid, record_time(h), true))
				procmaps__unsampled(s->maps, r->pid);
			if (procmaps__exec(s->maps, r->pid, record_time(h), comm))
				pr_warn("out of memory recording mappings of pid %u", r->pid);
		}
		if (r->pid == r->tid)
			session__on_exec(s, r->pid, record_time(h));
	} else if (h->type == PERF_RECORD_MMAP2 && h->size > sizeof(struct mmap2_record)) {
		struct mmap2_record *r = (struct mmap2_record *)h;
		size_t max = h->size - sizeof(*r);
		__u32 key = r->pid;
		__u8 v;
		struct map m = {
			.start = r->addr,
			.end = r->addr + r->len,
			.pgoff = r->pgoff,
			.ino = r->ino,
			.dev = makedev(r->maj, r->min),
			.time = record_time(h),
		};

		if (!s->opts.all &&
		    bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.pids), &key, &v))
			return LIBBPF_PERF_EVENT_CONT;
		if (!memchr(r->filename, '\0', max))
			return LIBBPF_PERF_EVENT_CONT;
		/* The kernel names anonymous code "//anon" (as /proc/PID/maps names it ""): no
		 * file to read, code without CFI to judge by (a JIT's, mapped or made executable
		 * after the profile began). Taken for a path, it was a file whose unwind table
		 * never came: every walk through it untrusted. */
		m.path = strcmp(r->filename, "//anon") ? r->filename : "";
		/* Which version of its file (one rewritten in place is another program): as
		 * the file is now, when a version of it is open (fstat; a stat through
		 * map_files would wait for the process's mmap lock, in this loop); else not
		 * known, taken for the earliest version. */
		if (m.path[0] == '/')
			m.mtime = dsos__current_mtime(s->dsos, &m);
		if (procmaps__add(s->maps, r->pid, &m))
			pr_warn("out of memory recording mappings of pid %u", r->pid);
	}
	return LIBBPF_PERF_EVENT_CONT;
}

/* mmap records of every process, from now on: new executables and libraries are known even
 * when their process exits before the profile ends. */
int session__open_sideband(struct session *s)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.mmap = 1,
		.mmap2 = 1,
		.task = 1,
		.comm = 1,
		.comm_exec = 1,
		.sample_id_all = 1,
		.sample_type = PERF_SAMPLE_TIME,	/* each record ends with its time */
		/* bpf_ktime_get_ns's clock: a sample's `incarns` time is compared with the
		 * records' (procmaps__incarnation). */
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	s->mmap_pb = perf_buffer__new_raw(bpf_map__fd(s->skel->maps.mmap_events), MMAP_PAGES,
					  &attr, on_mmap_record, s, NULL);
	if (!s->mmap_pb)
		return session__fail(s, SESSION_ERR_RUNTIME, -errno,
				     "cannot open mmap events: %s", strerror(errno));
	return 0;
}

int session__read_sideband(struct session *s)
{
	uint64_t start = clock_mono_ns();
	int err = perf_buffer__consume(s->mmap_pb);

	/* (An exec's record is written before the new program is loaded, and BPF's on_exec
	 * takes its time, `execs`, after: an exec BPF saw before the read began has had its
	 * record read.) */
	s->sideband_seen = start;
	return err;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/* collect/pids: the processes of -p. A thread's id (not its process's leader) stands for its
 * process, with a note; a process given twice is profiled once; with --children, the
 * processes under them too. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/grow.h"
#include "base/log.h"
#include <bpf/bpf.h>
#include "collect/session_int.h"
#include "proc/children.h"
#include "proc/procfile.h"
#include "profile.skel.h"

/* Processes at most, the pids' descendants with them (the BPF filter holds 65,536). */
#define PIDS_MAX	16384

/* The process (thread group) of thread TID, from /proc/TID/status; TID itself when it cannot
 * be read (check_pids then says it is gone). */
static pid_t tgid_of(pid_t tid)
{
	char text[1024], *p;

	if (proc__read(tid, "status", text, sizeof(text)) < 0)
		return tid;
	p = strstr(text, "\nTgid:");
	return p ? (pid_t)strtol(p + 6, NULL, 10) : tid;
}

int session__resolve_pids(struct session *s)
{
	size_t n = 0, cap = 0;

	if (!s->opts.nr_pids)
		return 0;
	if (array_grow(&s->pids, &cap, sizeof(*s->pids), s->opts.nr_pids))
		return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM, "out of memory");
	for (size_t i = 0; i < s->opts.nr_pids; i++) {
		pid_t pid = s->opts.pids[i], tgid = tgid_of(pid);
		size_t k = 0;

		if (tgid > 0 && tgid != pid) {
			pr_warn("pid %d is a thread of process %d: profiling the process, all its "
				"threads", pid, tgid);
			pid = tgid;
		}
		while (k < n && s->pids[k] != pid)
			k++;
		if (k == n)
			s->pids[n++] = pid;
	}
	s->opts.pids = s->pids;
	s->opts.nr_pids = n;
	return 0;
}

int session__add_children(struct session *s)
{
	size_t n = s->opts.nr_pids, cap = n;

	/* Their descendants now (breadth first); BPF adds those forked later. */
	if (s->opts.children && proc__descendants(&s->pids, n, &cap, PIDS_MAX, &n) < 0)
		return session__fail(s, SESSION_ERR_RUNTIME, -ENOMEM,
				     "too many processes under the pids (at most %d)", PIDS_MAX);
	if (n > s->opts.nr_pids)
		pr_info("--children: %zu processes under the pids", n - s->opts.nr_pids);
	s->opts.pids = s->pids;
	s->opts.nr_pids = n;
	return 0;
}

int session__add_children_late(struct session *s)
{
	size_t had = s->opts.nr_pids, n = had, cap = had;
	__u8 one = 1;

	/* Those forked between the first look and on_fork's attach (too many: those found). */
	if (s->opts.children)
		proc__descendants(&s->pids, n, &cap, PIDS_MAX, &n);
	s->opts.pids = s->pids;
	s->opts.nr_pids = n;
	for (size_t i = had; i < n; i++) {
		__u32 key = (__u32)s->pids[i];

		/* The map only: fast_pids[] is read by samples already. */
		bpf_map_update_elem(bpf_map__fd(s->skel->maps.pids), &key, &one, BPF_ANY);
		s->skel->bss->pids_spill = true;
	}
	if (n > had)
		pr_info("--children: %zu more processes under the pids as sampling began", n - had);
	return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * profile: a run that sampled nothing says why when it can (the targets did not run on a
 * CPU, ran too briefly for the rate, or their children did the work) and what to try.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "proc/children.h"
#include "cli.h"

/* Process PID's CPU time in clock ticks (utime + stime), and its name into COMM (LEN
 * bytes); -1 when it cannot be read (gone). */
static long long proc_cpu(pid_t pid, char *comm, size_t len)
{
	char path[64], buf[1024], *open, *close;
	unsigned long long ut, st;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	open = strchr(buf, '(');
	close = strrchr(buf, ')');
	if (!open || !close || close < open)
		return -1;
	if (comm) {
		size_t c = (size_t)(close - open - 1) < len - 1 ? (size_t)(close - open - 1) : len - 1;

		memcpy(comm, open + 1, c);
		comm[c] = '\0';
	}
	/* After ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
	 * utime stime. */
	if (sscanf(close + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
		   &st) != 2)
		return -1;
	return (long long)(ut + st);
}

void cpu_snapshot(const struct settings *st, long long *ticks)
{
	for (size_t i = 0; i < st->session.nr_pids && i < MAX_PIDS; i++)
		ticks[i] = proc_cpu(st->session.pids[i], NULL, 0);
}

/* -p: why each pid gave nothing. Whether one reason was said. */
static bool why_pids(const struct settings *st, const long long *before, double seconds)
{
	bool said = false;

	for (size_t i = 0; i < st->session.nr_pids && i < MAX_PIDS; i++) {
		pid_t pid = st->session.pids[i], *kids = malloc(sizeof(*kids));
		char comm[64] = "?", line[512] = "";
		long long now = proc_cpu(pid, comm, sizeof(comm));
		long hz = sysconf(_SC_CLK_TCK);
		size_t nk = 0, cap = 1, len = 0;

		/* Its descendants (a shell's, timeout's children's: kids[1..]) that used the CPU:
		 * the ones that did the work. */
		if (kids) {
			kids[0] = pid;
			proc__descendants(&kids, 1, &cap, 64, &nk);
		}
		for (size_t k = 1; k < nk && len < sizeof(line) - 80; k++) {
			char kc[64] = "?";

			if (proc_cpu(kids[k], kc, sizeof(kc)) > 0)
				len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%d (%s)",
							len ? ", " : "", (int)kids[k], kc);
		}
		free(kids);
		if (now < 0)
			continue;
		if (before[i] >= 0 && now - before[i] <= 0)
			fprintf(stderr, "profile: pid %d (%s) did not run on a CPU in the %.1f s "
				"sampled: it waited (--off-cpu shows where)\n", (int)pid, comm,
				seconds);
		else if (before[i] >= 0)
			fprintf(stderr, "profile: pid %d (%s) used %.2f s of CPU, too little for a "
				"sample at %u Hz (-F takes a higher rate)\n", (int)pid, comm,
				(double)(now - before[i]) / (double)(hz > 0 ? hz : 100),
				st->session.freq);
		if (len)
			fprintf(stderr, "profile: processes under pid %d ran: %s (--children "
				"profiles them too)\n", (int)pid, line);
		said = true;
	}
	return said;
}

int say_why_nothing(const struct settings *st, const struct session_stats *ss,
		    const long long *before)
{
	const struct session_opts *o = &st->session;
	bool said = false;

	fprintf(stderr, "profile: nothing was sampled in %.1f s: no file written%s\n",
		ss->seconds, st->nr_out && st->out[0].path ? " (the -o files are as they were)" : "");
	if (o->off_cpu || o->wall) {
		fprintf(stderr, "profile: no waits off the CPU%s by the targets\n",
			o->min_block_us ? " as long as --min-block" : "");
		said = true;
	} else if (o->event && counts_events(o->event)) {
		fprintf(stderr, "profile: no %s came from the targets\n", o->event);
		said = true;
	} else if (o->argv) {
		struct rusage ru;
		double cpu = 0;

		/* The command was waited for: its CPU time is among our children's. */
		if (!getrusage(RUSAGE_CHILDREN, &ru))
			cpu = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			      (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
		if (cpu < 0.001)
			fprintf(stderr, "profile: the command did not run on a CPU: it waited "
				"(--off-cpu shows where)\n");
		else
			fprintf(stderr, "profile: the command used %.3f s of CPU, too little for "
				"a sample at %u Hz (-F takes a higher rate)\n", cpu, o->freq);
		said = true;
	} else if (o->nr_pids) {
		said = why_pids(st, before, ss->seconds);
	}
	if (!said)
		fprintf(stderr, "profile: the targets did not run on a CPU while sampled\n");
	return EXIT_TARGET;
}

// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * collect/signals: SIGINT, SIGTERM and SIGHUP. While sampling, one ends the sampling (the
 * poll loop sees session_stop_signal); in continuous mode SIGHUP ends only the period
 * (session_flush_signal). Once the profile is being finished (the command
 * stopped, the maps drained, stacks symbolized, the output written), one more does not lose
 * the profile: it says how to abort; a second within ABORT_WINDOW_S aborts at once, the
 * command killed, profile killed by that signal.
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "collect/session_int.h"

#define ABORT_WINDOW_S	3

volatile sig_atomic_t session_stop_signal;
volatile sig_atomic_t session_flush_signal;
static volatile sig_atomic_t hup_flushes;	/* continuous mode: SIGHUP ends a period */
static volatile sig_atomic_t finishing;
static volatile sig_atomic_t command_pid;	/* killed on abort; 0: none */
static time_t armed;			/* when the last signal while finishing came; only
					 * the handler, never nested (sa_mask), touches it */

static void say(const char *s)
{
	if (write(STDERR_FILENO, s, strlen(s)) < 0)
		return;
}

/* getdents64's record. */
struct dirent64_rec {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/* Every thread of this process at SCHED_OTHER, before it ends: a process is gone once each
 * of its threads has run to its end, and one at SCHED_IDLE (the kallsyms reader, while
 * sampling) waits for a CPU no one else wants: 2.8 s to abort beside three busy loops on
 * two CPUs. Syscalls only: it runs in the handler. */
static void threads_out_of_idle(void)
{
	struct sched_param sp = { 0 };
	char buf[1024];
	long n;
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off + (long)sizeof(struct dirent64_rec) <= n;) {
			const struct dirent64_rec *d = (const void *)(buf + off);
			pid_t tid = 0;

			if (!d->reclen)
				break;
			for (const char *c = d->name; *c >= '0' && *c <= '9' && tid < 1 << 26; c++)
				tid = tid * 10 + (*c - '0');
			if (tid > 0)
				sched_setscheduler(tid, SCHED_OTHER, &sp);
			off += d->reclen;
		}
	}
	close(fd);
}

static void on_signal(int sig)
{
	struct timespec now;
	sigset_t set;

	if (!finishing && sig == SIGHUP && hup_flushes) {
		session_flush_signal = 1;
		return;
	}
	if (!finishing) {
		session_stop_signal = sig;
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!armed || now.tv_sec - armed > ABORT_WINDOW_S) {
		armed = now.tv_sec ? now.tv_sec : 1;
		say("\nprofile: finishing the profile; interrupt again within 3 s to abort "
		    "without it\n");
		return;
	}
	say("\nprofile: interrupted again: aborted, no profile written\n");
	if (command_pid > 0)
		kill(command_pid, SIGKILL);
	threads_out_of_idle();
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	_exit(128 + sig);
}

/* While starting (loading BPF, before session__catch_signals): nothing was sampled, nothing
 * is to be kept. A sentence, and out at once (the held command reads EOF and exits, the
 * worker its socket's end, the -o janitor removes what was made). */
static void on_start_signal(int sig)
{
	say("\nprofile: interrupted while starting (loading the BPF programs): nothing was "
	    "sampled\n");
	_exit(sig == SIGINT ? 130 : 128 + sig);
}

void session__signals_starting(void)
{
	struct sigaction sa = { .sa_handler = on_start_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static void install(bool restart)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = restart ? SA_RESTART : 0 };
	int sigs[] = { SIGINT, SIGTERM, SIGHUP };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

void session__catch_signals(bool flush_on_hup)
{
	hup_flushes = flush_on_hup;
	/* Without SA_RESTART: a signal ends the loop's wait at once. */
	install(false);
}

void session__signals_restart(bool restart)
{
	if (!finishing)
		install(restart);
}

void session__finishing(void)
{
	finishing = 1;
	/* From here on a signal only says how to abort: what it interrupts goes on. */
	install(true);
}

void session__signals_command(pid_t pid)
{
	command_pid = pid;
}

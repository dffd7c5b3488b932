// SPDX-License-Identifier: GPL-3.0-or-later
/* profile: what --help, -e list and a usage error print. */
#include <stdio.h>
#include <unistd.h>
#include "collect/events.h"
#include "cli.h"

static const char usage_text[] =
"Usage: profile [OPTIONS] -p PID[,PID...]\n"
"       profile [OPTIONS] -a\n"
"       profile [OPTIONS] [--] COMMAND [ARGS...]\n"
"       profile flamegraph [OPTIONS] [FILE...]   (see profile flamegraph --help)\n"
"       profile diff [OPTIONS] BEFORE AFTER      (see profile diff --help)\n"
"       profile report [OPTIONS] FILE...         (see profile report --help)\n"
"       profile top [OPTIONS] -p PID | -a | COMMAND   the hottest functions, live\n"
"\n"
"Sample on-CPU stacks with BPF (or time off the CPU, by stack) and write them as folded\n"
"stacks, a flame graph or pprof.\n"
"\n"
"Targets:\n"
"  -p, --pid PID[,PID...]   profile these running processes and all their threads\n"
"      --children           with -p: the processes under them too, those there and those\n"
"                           they start (a command's always are)\n"
"  -a, --all                profile the whole system (but profile's own processes)\n"
"      --self               with -a: profile's own processes too (itself, its worker)\n"
"      --cgroup PATH        only tasks in this cgroup (v2: a path under /sys/fs/cgroup or\n"
"                           relative to it) or below it; several allowed; alone: -a\n"
"  COMMAND [ARGS...]        start COMMAND held, attach, then run it; profile it until it exits\n"
"      --no-runtime         no Python or Ruby frames read, COMMAND's environment as it is:\n"
"                           without it, node and JVMs are asked to name their JIT frames\n"
"                           (NODE_OPTIONS gets --perf-basic-prof-only-functions,\n"
"                           JAVA_TOOL_OPTIONS -XX:+DumpPerfMapAtExit; a JVM, COMMAND or\n"
"                           -p's, jcmd Compiler.perfmap through its attach socket), and a\n"
"                           JVM to keep frame records (-XX:+PreserveFramePointer)\n"
"      --user USER[:GROUP]  run COMMAND as USER (a name or uid) with USER's groups, or GROUP;\n"
"                           without it, COMMAND runs as profile does: as root under sudo\n"
"                           (--user \"$SUDO_USER\" runs it as you)\n"
"\n"
"Options:\n"
"  -F, --frequency HZ       samples per second per CPU (default 99; 4000 for -e's\n"
"                           events that count, as perf)\n"
"  -e, --event EVENT        what to sample, as perf names it (default cpu-clock):\n"
"                           page-faults, context-switches, cycles ..., or a tracepoint\n"
"                           CATEGORY:NAME (syscalls:sys_enter_write); -e list lists them;\n"
"                           several (-e a,b, up to 8): each event's stacks under its name\n"
"  -c, --count N            a sample every N events (counts are events; default: -F a\n"
"                           second, each event of a tracepoint)\n"
"  -d, --duration SECONDS   stop after SECONDS (default: Ctrl-C, or when the targets exit)\n"
"  -o, --output FILE        write to FILE instead of standard output; several -o write the\n"
"                           same profile in several formats\n"
"  -f, --format FORMAT      folded, svg, pprof or speedscope (default, by FILE's end: .svg\n"
"                           svg, .pb.gz .pb .pprof pprof (gzip'd profile.proto),\n"
"                           .speedscope.json speedscope (a timeline per thread), else\n"
"                           folded)\n"
"  -U, --user-only          user frames only\n"
"  -K, --kernel-only        kernel frames only\n"
"      --idle               with -a, keep the idle task's samples\n"
"      --threads            a frame NAME/TID per thread under the process name\n"
"      --group-by cgroup    the process's cgroup path as the root frame (pprof: a label)\n"
"      --map-size N         entries of the BPF stack and count maps (default: derived)\n"
"      --unwind MODE        auto (default: frame pointers, DWARF where they break), fp, dwarf\n"
"      --stack-copy BYTES   user stack copied per DWARF sample (default 16384, at most 24576)\n"
"      --no-inline          no frames for inlined functions (from DWARF)\n"
"      --no-demangle        C++ and Rust names as mangled in the symbol table\n"
"      --lines              frames as NAME (FILE:LINE), from DWARF, in folded and SVG output\n"
"                           (pprof output always has the lines)\n"
"      --no-debuginfod      fetch no debug files, whatever DEBUGINFOD_URLS says\n"
"      --debuginfod-timeout SECONDS\n"
"                           a debug file's fetch, and the end's wait for those under way,\n"
"                           at most SECONDS (default 15)\n"
"      --top N              after the summary: the N hottest functions by self time, with\n"
"                           their total (default 10 on a terminal, else none; 0: none)\n"
"      --explain            after the summary: where stacks were cut, untrusted or left\n"
"                           unnamed, per file, and what to do about it\n"
"      --max-memory SIZE    memory for what grows with the profiled programs' files and\n"
"                           stacks (symbols, CFI, DWARF, perf maps, stacks); past it new\n"
"                           files are not parsed (default: 1/8 of RAM, at most 1G)\n"
"\n"
"Off-CPU time (where threads wait: locks, I/O, sleeps, the run queue):\n"
"      --off-cpu            time off the CPU by the stack it left with, in microseconds\n"
"                           (the kernel frames say why: futex_wait, do_nanosleep, pipe_read)\n"
"      --wall               on-CPU samples (as 1/HZ s each) and off-CPU time in one profile;\n"
"                           off-CPU stacks end in a frame [off-cpu]\n"
"      --min-block US       with either: leave out times off the CPU under US microseconds\n"
"\n"
"Continuous mode:\n"
"      --every SECONDS      one profile per period of SECONDS, written to each -o FILE, which\n"
"                           is a strftime(3) pattern expanded at the period's start\n"
"                           (%%Y%%m%%d-%%H%%M%%S...); SIGHUP ends a period at once\n"
"      --push URL           send each period to a Pyroscope server: POST URL/ingest, pprof\n"
"                           (http:// only; a server that is down or slow loses periods, with\n"
"                           a warning each, never samples)\n"
"      --app-name NAME      the application name pushed (default profile.cpu{hostname=HOST})\n"
"\n"
"  -q, --quiet              no summary at the end\n"
"  -v, --verbose            more messages (-vv: libbpf's too)\n"
"  -h, --help               this text\n"
"  -V, --version            the version\n"
"\n"
"Examples:\n"
"  profile -p 1234 -d 10 -o app.folded        a running process for 10 seconds\n"
"  profile -o ls.folded -- ls -R /usr          a command, until it exits\n"
"  profile -a -d 5 > all.folded                the whole system for 5 seconds\n"
"  profile -p 1234 -d 10 -o app.svg            an interactive flame graph\n"
"  profile -o make.svg --title 'make -j2' -- make -j2\n"
"  profile flamegraph app.folded > app.svg     a flame graph of any folded file\n"
"  profile report app.pb.gz                    its hottest functions as text\n"
"  profile diff a.folded b.folded -o d.svg     what changed between two profiles\n"
"  profile top -p 1234                         the hottest functions, every second\n"
"  profile --off-cpu -p 1234 -d 10 -o blocked.svg\n"
"                                              where a process waits, for 10 seconds\n"
"  profile --wall -o server.svg -- ./server --once\n"
"                                              on- and off-CPU time of a command\n"
"  profile --off-cpu --min-block 1000 -a -d 5  waits of 1 ms or more, whole system\n"
"  profile -e page-faults -o faults.svg -- ./app\n"
"                                              where a command faults its memory in\n"
"  profile -e syscalls:sys_enter_write -p 1234 -d 5\n"
"                                              who calls write(2), by stack\n"
"  profile -e page-faults,context-switches -o app.pb.gz -- ./app\n"
"                                              two events, a pprof sample type each\n"
"  DEBUGINFOD_URLS=https://debuginfod.debian.net profile -p 1234 -d 10 -o app.svg\n"
"                                              names of stripped Debian binaries, their\n"
"                                              debug files fetched by build id\n"
"  profile --cgroup system.slice/nginx.service -d 10 -o nginx.svg\n"
"                                              a systemd service (or a container's cgroup)\n"
"  profile -a --group-by cgroup -d 10 -o host.svg\n"
"                                              the whole system, by cgroup\n"
"  profile -a --every 60 -o 'host-%%Y%%m%%d-%%H%%M%%S.pb.gz'\n"
"                                              the whole system, one pprof file a minute\n"
"  profile -a --every 10 --push http://pyroscope:4040 --app-name 'web.cpu{env=prod}'\n"
"                                              the whole system, sent to Pyroscope\n"
"\n"
"Flame graph options (with -f svg or -o FILE.svg):\n"
"%s"
"\n"
"Exit status: 0 written, 1 runtime failure, 2 bad usage, 3 bad target (pid, command;\n"
"nothing sampled: the -o files as they were),\n"
"4 environment (privileges, BTF). See profile(1).\n";

int usage_error(const char *fmt, const char *arg)
{
	fputs("profile: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'profile --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

void print_usage(void)
{
	printf(usage_text, FG_OPTIONS_HELP);
}

/* profile -e list: the events -e takes, and where the tracepoints are. */
int list_events(void)
{
	static const char *const kinds[] = {
		[EVENT_CLOCK] = "software, time", [EVENT_SOFTWARE] = "software",
		[EVENT_HARDWARE] = "hardware", [EVENT_TRACEPOINT] = "tracepoint",
	};
	enum event_kind kind;
	const char *name;

	for (size_t i = 0; (name = events__name(i, &kind)); i++)
		printf("  %-28s %s%s\n", name, kinds[kind],
		       kind == EVENT_HARDWARE && access("/sys/bus/event_source/devices/cpu", F_OK) ?
		       " (not on this machine: no PMU)" : "");
	printf("  %-28s tracepoint (those of /sys/kernel/tracing/available_events)\n",
	       "CATEGORY:NAME");
	return EXIT_OK;
}

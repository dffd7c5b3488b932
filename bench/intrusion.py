#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a profiler takes from the program it samples, measured from inside that program.

The fixed-work benchmark (overhead.py) compares wall times that move by 5-10% between
identical runs on a shared VM: it cannot tell a 1% slowdown from none. This one measures the
cost directly. bench/gaps (one thread pinned per CPU, so the machine is saturated, as under
overhead.py) reads the TSC in a tight loop a few calls deep, and adds up every step longer
than 300 ns: time its threads did not run their own code. Interrupts (the sampling timer and
the BPF program or perf's handler, the scheduler tick) make short gaps; the profiler's own
process running on a busy CPU, other tasks and the hypervisor make longer ones. Per run:

    alone      gaps SECONDS
    profile    profile -F HZ -p PID -o /dev/null
    perf       perf record -F HZ -e cpu-clock -g -p PID (FP) | --call-graph dwarf (no FP)

The tool attaches first (2 s), then gaps is started with SIGUSR1, so start-up is not counted;
what the tool does after the target exits (writing its output) is not either. Gap time is
given as a share of the target's CPU time (threads x seconds); "extra" is that share minus
the median share alone, i.e. the slowdown the tool causes, and "ns per sample" is the extra
gap time divided by the extra interruptions: what each sample costs the target. Runs of one
target alternate within a round, their order rotated every round; medians over the rounds.
Nothing asserts on timings: it prints figures, and the aims of issue 7 beside them.

With --trace, one more run per row is traced (perf record -a of the hrtimer and sched_switch
tracepoints, during the measurement) and counted by cause: the sampling timer, the tick,
other timers, the tool's own process preempting the target, other tasks. Where the extra
shares are too close to tell apart (99 Hz: about 100 samples a second, a few us each),
this shows whether the tools interrupt the target equally often; ns/sample at 999 Hz then
says which interruption costs more.
"""
import argparse
import collections
import os
import platform
import re
import shutil
import signal
import subprocess
import tempfile
import time
from benchlib import loadavg, median, require

GAPS_RE = re.compile(r"gaps: threads=(\d+) seconds=([0-9.]+) short=(\d+) short_ns=(\d+) "
                     r"long=(\d+) long_ns=(\d+)")
SAMPLES_RE = re.compile(r"profile: (\d+) samples in")
ATTACH_WAIT = 2.0

# Aims of issue 7 for the frame-pointer target: extra share at most this, and not above perf's.
AIMS = {("fp", 99): 1.0, ("fp", 999): 3.0, ("nofp", 999): 5.0}


TRACE_EVENTS = "timer:hrtimer_expire_entry,sched:sched_switch"
TRACE_RE = re.compile(r"^\s*(\S+)\s+(\d+)\s+([a-z_]+:[a-z_]+):\s*(.*)$")


def count_interruptions(perf, data, tracer_pid):
    """What interrupted the gaps threads in a trace of TRACE_EVENTS: a Counter of
    'samples' (perf_swevent_hrtimer: the sampling timer), 'tick', 'other timers', and
    'switch to COMM' (the thread preempted by that task)."""
    out = subprocess.run([perf, "script", "-i", data, "-F", "comm,tid,event,trace"],
                         capture_output=True, text=True, errors="replace").stdout
    c = collections.Counter()
    for line in out.splitlines():
        m = TRACE_RE.match(line)
        if not m or not m.group(1).startswith("gaps"):
            continue
        event, trace = m.group(3), m.group(4)
        if event == "timer:hrtimer_expire_entry":
            fn = re.search(r"function=(\S+)", trace)
            fn = fn.group(1) if fn else ""
            c["samples" if fn == "perf_swevent_hrtimer" else
              "tick" if fn.startswith("tick_") else "other timers"] += 1
        elif event == "sched:sched_switch":
            nxt = re.search(r"next_comm=(.*?) next_pid=(\d+)", trace)
            if nxt and int(nxt.group(2)) != tracer_pid:
                c["switch to " + nxt.group(1).strip()] += 1
    return c


def one_run(gaps, seconds, tool_argv, trace_perf=None):
    """Run gaps under TOOL_ARGV (a list with {pid} in it, or None); returns a dict or an
    error string. With TRACE_PERF, the run is traced (perf record -a of TRACE_EVENTS for
    all but its last second) and the dict has 'trace', a Counter of count_interruptions."""
    t = subprocess.Popen([gaps, f"{seconds:g}"], stdout=subprocess.PIPE, text=True)
    line = t.stdout.readline()
    m = re.match(r"gaps: ready pid=(\d+)", line)
    if not m:
        t.kill()
        t.wait()
        return f"gaps did not start: {line.strip()!r}"
    tool = None
    try:
        if tool_argv:
            argv = [a.replace("{pid}", str(t.pid)) for a in tool_argv]
            tool = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True, errors="replace")
        time.sleep(ATTACH_WAIT)
        if tool and tool.poll() is not None:
            return f"{argv[0]} exited {tool.returncode}: {tool.stderr.read().strip()[-200:]}"
        t.send_signal(signal.SIGUSR1)
        if trace_perf:
            tdata = os.path.join(tempfile.gettempdir(), f"intrusion-trace.{os.getpid()}")
            tracer = subprocess.Popen([trace_perf, "record", "-q", "-a", "-e", TRACE_EVENTS,
                                       "-o", tdata, "--", "sleep", f"{seconds - 1:g}"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            tracer.wait()
        out, _ = t.communicate(timeout=seconds + 60)
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()
    err = ""
    if tool:
        try:
            _, err = tool.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            tool.kill()
            _, err = tool.communicate()
    m = GAPS_RE.search(out)
    if not m:
        return f"no result from gaps: {out.strip()!r}"
    threads, secs, sn, sns, ln, lns = m.groups()
    cpu_ns = int(threads) * float(secs) * 1e9
    s = SAMPLES_RE.search(err or "")
    trace = None
    if trace_perf:
        trace = count_interruptions(trace_perf, tdata, tracer.pid)
        for f in (tdata, tdata + ".old"):
            if os.path.exists(f):
                os.unlink(f)
    return dict(trace=trace, trace_s=(seconds - 1) * int(threads),short_n=int(sn), short_pct=100 * int(sns) / cpu_ns, long_pct=100 * int(lns) / cpu_ns,
                total_pct=100 * (int(sns) + int(lns)) / cpu_ns, short_per_s=int(sn) / (cpu_ns / 1e9),
                short_ns=int(sns), cpu_s=cpu_ns / 1e9, samples=int(s.group(1)) if s else None)


def plan(target, freqs, profile, perf, data):
    """The runs of one round for TARGET: (tool, hz, argv or None)."""
    perf_cg = ["-g"] if target == "fp" else ["--call-graph", "dwarf"]
    cmds = [("alone", 0, None)]
    for hz in freqs:
        cmds.append(("profile", hz, [profile, "-F", str(hz), "-p", "{pid}", "-o", "/dev/null"]))
        if perf:
            cmds.append(("perf", hz, [perf, "record", "-q", "-F", str(hz), "-e", "cpu-clock"] +
                         perf_cg + ["-p", "{pid}", "-o", data]))
    return cmds


def print_traced(traced):
    """What interrupted the target's threads, per second and thread, in the traced runs."""
    print("\nWhat interrupted the target's threads (one traced run each; per second per "
          "thread):\n")
    head = (f"{'target':<6} {'tool':<8} {'Hz':>4} {'samples':>8} {'tick':>6} "
            f"{'timers':>7} {'by tool':>8} {'by others':>10}")
    print(head)
    print("-" * len(head))
    for (target, tool, hz), r in traced.items():
        c, secs = r["trace"], r["trace_s"]
        by_tool = sum(v for k, v in c.items() if k == f"switch to {tool}")
        others = sum(v for k, v in c.items() if k.startswith("switch to ")) - by_tool
        print(f"{target:<6} {tool:<8} {hz or '':>4} {c['samples'] / secs:>8.1f} "
              f"{c['tick'] / secs:>6.1f} {c['other timers'] / secs:>7.1f} "
              f"{by_tool / secs:>8.1f} {others / secs:>10.1f}")
    print("\nsamples: the sampling timer (perf_swevent_hrtimer) fired on the thread; tick: "
          "the scheduler\ntick; timers: other timers expiring there (e.g. a tool's poll "
          "timeout); by tool / by others:\nthe thread preempted by the tool's process "
          "(its wakeups) / by other tasks.")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="build directory (default: build)")
    ap.add_argument("--freqs", default="99,999", help="comma-separated (default 99,999)")
    ap.add_argument("--seconds", type=float, default=5, help="seconds per run (default 5)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    ap.add_argument("--quick", action="store_true", help="2 rounds of 3 s")
    ap.add_argument("--targets", default="fp,nofp", help="fp, nofp or both (default)")
    ap.add_argument("--perf", default=shutil.which("perf"), help="perf binary (default: PATH)")
    ap.add_argument("--trace", action="store_true",
                    help="one more run per row, traced: what interrupted the target")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.seconds = 2, 3
    freqs = [int(f) for f in args.freqs.split(",")]
    profile = os.path.join(args.build, "profile")
    require("intrusion", [profile] + [os.path.join(args.build, "bench", f"gaps_{t}")
                                       for t in args.targets.split(",")],
            root_for="profile and perf")
    tmp = tempfile.mkdtemp(prefix="intrusion.")
    data = os.path.join(tmp, "perf.data")
    print(f"intrusion: {platform.node()}, kernel {platform.release()}, {os.cpu_count()} CPUs, "
          f"load {loadavg()}; {args.rounds} rounds of {args.seconds:g} s per run")
    if not args.perf:
        print("intrusion: perf not found in PATH (Debian: apt-get install linux-perf): "
              "profile only")

    results = {}    # (target, tool, hz) -> list of run dicts
    traced = {}     # (target, tool, hz) -> the traced run's dict
    t_start = time.monotonic()
    try:
        for rnd in range(args.rounds):
            for target in args.targets.split(","):
                gaps = os.path.join(args.build, "bench", f"gaps_{target}")
                cmds = plan(target, freqs, profile, args.perf, data)
                k = rnd % len(cmds)
                for tool, hz, argv in cmds[k:] + cmds[:k]:
                    r = one_run(gaps, args.seconds, argv)
                    if isinstance(r, str):
                        print(f"  round {rnd + 1} {target:<5} {tool:<8} {hz or '':>4} FAILED: {r}")
                        continue
                    results.setdefault((target, tool, hz), []).append(r)
                    print(f"  round {rnd + 1} {target:<5} {tool:<8} {hz or '':>4}  "
                          f"gaps {r['total_pct']:6.3f}% (short {r['short_pct']:.3f}%, "
                          f"{r['short_per_s']:.0f}/s)", flush=True)
        if args.trace and args.perf:
            for target in args.targets.split(","):
                gaps = os.path.join(args.build, "bench", f"gaps_{target}")
                for tool, hz, argv in plan(target, freqs, profile, args.perf, data):
                    r = one_run(gaps, args.seconds, argv, trace_perf=args.perf)
                    if not isinstance(r, str):
                        traced[(target, tool, hz)] = r
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"intrusion: {time.monotonic() - t_start:.0f} s\n")

    head = (f"{'target':<6} {'tool':<34} {'gaps/s':>7} {'short %':>8} {'long %':>7} "
            f"{'total %':>8} {'min-max':>13} {'extra %':>8} {'ns/sample':>9}")
    print("Share of the target's CPU time it did not run (medians over rounds):\n")
    print(head)
    print("-" * len(head))
    extra = {}
    for target in args.targets.split(","):
        base = results.get((target, "alone", 0))
        if not base:
            continue
        base_total = median([r["total_pct"] for r in base])
        base_short_n = median([r["short_per_s"] for r in base])
        rows = [("alone", 0)] + [(tool, hz) for hz in freqs for tool in ("profile", "perf")]
        for tool, hz in rows:
            rs = results.get((target, tool, hz))
            if not rs:
                continue
            label = {"alone": "alone",
                     "profile": f"profile -F {hz}",
                     "perf": f"perf record -F {hz} " +
                             ("-g" if target == "fp" else "--call-graph dwarf")}[tool]
            tot = [r["total_pct"] for r in rs]
            ex = median(tot) - base_total
            # Cost per extra interruption, from the short gaps only (the samples themselves).
            base_short_pct = median([b["short_pct"] for b in base])
            per = [(r["short_ns"] - base_short_pct / 100 * r["cpu_s"] * 1e9) /
                   max(1.0, (r["short_per_s"] - base_short_n) * r["cpu_s"]) for r in rs]
            if tool != "alone":
                extra[(target, tool, hz)] = ex
            # Only meaningful when the tool's interruptions stand out of the noise.
            if median([r["short_per_s"] for r in rs]) - base_short_n < hz / 2:
                per = None
            print(f"{target:<6} {label:<34} {median([r['short_per_s'] for r in rs]):>7.0f} "
                  f"{median([r['short_pct'] for r in rs]):>8.3f} "
                  f"{median([r['long_pct'] for r in rs]):>7.3f} {median(tot):>8.3f} "
                  f"{min(tot):>6.3f}-{max(tot):<6.3f} "
                  f"{'-' if tool == 'alone' else f'{ex:+.3f}':>8} "
                  f"{'-' if tool == 'alone' or not per else f'{median(per):.0f}':>9}")
    print("\ngaps/s: short gaps per second per target thread (interruptions); extra: total "
          "minus alone;\nns/sample: extra short-gap time per extra interruption (- where "
          "they do not stand out of\nthe noise: fewer than HZ/2 more than alone).\n")
    print("Aims (issue 7), from the extra share:")
    for (target, hz), aim in AIMS.items():
        ours = extra.get((target, "profile", hz))
        if ours is None:
            continue
        theirs = extra.get((target, "perf", hz))
        perf_name = "perf -g" if target == "fp" else "perf --call-graph dwarf"
        verdict = "met" if ours <= aim else "NOT met"
        line = f"  {target} target at {hz} Hz: {ours:+.3f}% (aim <= {aim:g}%: {verdict})"
        if theirs is not None:
            line += (f"; {perf_name} {theirs:+.3f}% "
                     f"({'not more than perf' if ours <= theirs else 'MORE than perf'})")
        print(line)
    if traced:
        print_traced(traced)


if __name__ == "__main__":
    main()

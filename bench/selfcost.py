#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The profiler's own cost, system-wide: CPU per second of profiling and peak memory.

Run as root after `make bench` has built build/profile and build/bench/{fixedwork_*,spin}.
A fixed background load keeps both CPUs busy for the whole run (7 runnable threads on a
2-CPU machine): fixedwork_fp and fixedwork_nofp (2 threads each, real stacks, with and without
frame pointers), Debian's `xz -6 -T1` compressing /dev/urandom (no frame pointers, libc and
liblzma) and two `spin` processes (shallow C, main -> spin). Then, for each round and each
frequency (--freqs, default 99,999), one after the other:

    profile  profile -a -F HZ -d SECONDS -o /dev/null
    perf -g  perf record -a -F HZ -e cpu-clock -g -o DATA -- sleep SECONDS
    perf dw  perf record -a -F HZ -e cpu-clock --call-graph dwarf -o DATA -- sleep SECONDS

For each it reports:
  - during sampling: the tool's own CPU (all its threads, /proc/PID/task/*/schedstat, in ns)
    between 1 s after the start and 1 s before the end, as a percentage of one CPU;
  - whole run: user+sys of the whole run (start-up and tear-down included: for profile the
    symbolization and the output; for perf record its build-id pass over the data file) from
    wait4's rusage, divided by SECONDS, as a percentage of one CPU;
  - peak RSS (GNU time's %M: wait4's ru_maxrss would start from this script's own);
  - samples (profile's summary line) or the size of perf's data file.

perf's cost is split: it unwinds DWARF stacks and names symbols later, in perf report or perf
script. --perf-script also times `perf script` over the last round's data files.
Nothing here asserts anything about timings: it prints figures, and the aim of issue 7.
"""
import argparse
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from benchlib import loadavg, median, require, spread

GNU_TIME = "/usr/bin/time"


def proc_cpu(pid):
    """CPU seconds PID's threads have run so far (schedstat: nanoseconds, not clock ticks), or
    None."""
    total = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e9


def child_of(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = f.read().split()
        return int(kids[0]) if kids else None
    except (OSError, ValueError):
        return None


class Result:
    cpu_total = None    # s, whole run
    cpu_during = None   # s of CPU per s of wall time, while sampling
    rss_mb = None
    wall = None
    detail = ""
    err = ""


def measure(argv, seconds, tmp, stop_signal=None):
    """Run ARGV under GNU time; sample the tool's CPU while it runs."""
    res = Result()
    tfile = os.path.join(tmp, "time.out")
    errfile = os.path.join(tmp, "stderr")
    with open(errfile, "wb") as err:
        t0 = time.monotonic()
        p = subprocess.Popen([GNU_TIME, "-f", "%M", "-o", tfile] + argv,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        tool = None
        marks = {}
        # CPU readings at 1 s and at SECONDS - 1 s after the start.
        for name, at in (("a", 1.0), ("b", seconds - 1.0)):
            while time.monotonic() - t0 < at and p.poll() is None:
                time.sleep(0.05)
            tool = tool or child_of(p.pid)
            if tool:
                marks[name] = (time.monotonic(), proc_cpu(tool))
        if stop_signal:
            while time.monotonic() - t0 < seconds and p.poll() is None:
                time.sleep(0.02)
            if tool and p.poll() is None:
                os.kill(tool, stop_signal)
        _, status, ru = os.wait4(p.pid, 0)
        res.wall = time.monotonic() - t0
    rc = os.waitstatus_to_exitcode(status)
    with open(errfile, errors="replace") as f:
        stderr = f.read()
    if rc != 0:
        last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
        res.err = f"exit status {rc}: {last}"
        return res, stderr
    res.cpu_total = ru.ru_utime + ru.ru_stime
    if "a" in marks and "b" in marks and marks["a"][1] is not None and marks["b"][1] is not None:
        dt = marks["b"][0] - marks["a"][0]
        if dt > 0.5:
            res.cpu_during = (marks["b"][1] - marks["a"][1]) / dt
    try:
        with open(tfile) as f:
            res.rss_mb = int(f.read().strip().splitlines()[-1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return res, stderr


def start_load(build, tmp):
    bench = os.path.join(build, "bench")
    procs = []
    devnull = subprocess.DEVNULL
    for argv in ([os.path.join(bench, "fixedwork_fp"), "1000000"],
                 [os.path.join(bench, "fixedwork_nofp"), "1000000"],
                 ["xz", "-6", "-T1", "-c"],
                 [os.path.join(bench, "spin")],
                 [os.path.join(bench, "spin")]):
        stdin = open("/dev/urandom", "rb") if argv[0] == "xz" else devnull
        procs.append(subprocess.Popen(argv, stdin=stdin, stdout=devnull, stderr=devnull))
        if stdin is not devnull:
            stdin.close()
    return procs


def stop_load(procs):
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="build directory (default: build)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds (default 2)")
    ap.add_argument("--freqs", default="99,999", help="frequencies (default 99,999)")
    ap.add_argument("-d", "--duration", type=float, default=10, help="seconds per run (default 10)")
    ap.add_argument("--quick", action="store_true", help="1 round of 5 s (about 40 s)")
    ap.add_argument("--no-dwarf", action="store_true", help="leave out perf --call-graph dwarf")
    ap.add_argument("--perf-script", action="store_true",
                    help="also time `perf script` over the last round's perf data")
    ap.add_argument("--perf", default=shutil.which("perf"), help="perf binary (default: from PATH)")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.duration = 1, 5
    if args.duration < 3:
        ap.error("--duration must be at least 3 s")
    freqs = [int(f) for f in args.freqs.split(",") if f]
    profile = os.path.join(args.build, "profile")
    require("selfcost", [profile] + [os.path.join(args.build, "bench", b)
                                      for b in ("fixedwork_fp", "fixedwork_nofp", "spin")])
    if not os.access(GNU_TIME, os.X_OK):
        sys.exit(f"selfcost: {GNU_TIME} is missing (Debian: apt-get install time)")
    if not shutil.which("xz"):
        sys.exit("selfcost: xz is missing (Debian: apt-get install xz-utils)")
    perf_ok = bool(args.perf)

    secs = f"{args.duration:g}"
    tmp = tempfile.mkdtemp(prefix="profile-selfcost-")
    data = os.path.join(tmp, "perf.data")
    configs = []  # (label, hz, argv, stop_signal, data file or None)
    for hz in freqs:
        configs.append((f"profile -a -F {hz}", hz,
                        [profile, "-a", "-F", str(hz), "-d", secs, "-o", "/dev/null"], None, None))
        if perf_ok:
            for cg, short in ((["-g"], "-g"), (["--call-graph", "dwarf"], "--call-graph dwarf")):
                if args.no_dwarf and short != "-g":
                    continue
                d = f"{data}.{hz}.{cg[-1]}"
                configs.append((f"perf record -a -F {hz} {short}", hz,
                                [args.perf, "record", "-a", "-F", str(hz), "-e", "cpu-clock"] + cg
                                + ["-q", "-o", d, "--", "sleep", secs], None, d))

    print(f"selfcost: {platform.node()}, kernel {platform.release()}, {os.cpu_count()} CPUs, "
          f"{args.rounds} rounds of {secs} s at {args.freqs} Hz, load average {loadavg()}")
    if not perf_ok:
        print("selfcost: PERF MISSING (Debian: apt-get install linux-perf): only profile is run")
    print("selfcost: background load: fixedwork_fp, fixedwork_nofp (2 threads each), "
          "xz -6 -T1 < /dev/urandom, 2 x spin")
    load = start_load(args.build, tmp)
    results = {}
    try:
        time.sleep(1)
        for i in range(args.rounds):
            k = i % len(configs)
            for label, hz, argv, sig, d in configs[k:] + configs[:k]:
                res, stderr = measure(argv, args.duration, tmp, sig)
                if d and not res.err:
                    try:
                        res.detail = f"data {os.path.getsize(d) / 1e6:.0f} MB"
                    except OSError:
                        pass
                m = re.search(r"profile: (\d+) samples in ([0-9.]+) s", stderr)
                if m:
                    res.detail = f"{m.group(1)} samples"
                results.setdefault(label, []).append(res)
                print(f"  round {i + 1} {label:<36} during {fmt_pct(res.cpu_during):>7}  "
                      f"whole {fmt(res.cpu_total)} s  RSS {fmt(res.rss_mb, '.1f')} MB  "
                      f"{res.detail}" + (f"  FAILED: {res.err}" if res.err else ""), flush=True)
                if any(l.poll() is not None for l in load):
                    print("selfcost: a background process ended; restarting the load")
                    stop_load(load)
                    load = start_load(args.build, tmp)
        post = {}
        if args.perf_script and perf_ok:
            for label, hz, argv, sig, d in configs:
                if not d or not os.path.exists(d):
                    continue
                t0 = time.monotonic()
                with open(os.devnull, "wb") as null:
                    p = subprocess.Popen([args.perf, "script", "-i", d], stdout=null,
                                         stderr=subprocess.DEVNULL)
                    _, status, ru = os.wait4(p.pid, 0)
                post[label] = (time.monotonic() - t0, ru.ru_utime + ru.ru_stime)
    finally:
        stop_load(load)
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"\nselfcost: load average at the end {loadavg()}")
    print(f"\nMedians over {args.rounds} rounds of {secs} s, system-wide, both CPUs busy "
          "(CPU as % of one CPU; min-max in brackets):\n")
    head = (f"{'tool':<40} {'during sampling':>22} {'whole run / s':>22} "
            f"{'peak RSS MB':>18} {'':<14}")
    print(head)
    print("-" * len(head))
    during = {}
    for label, hz, *_ in configs:
        runs = [r for r in results.get(label, []) if not r.err]
        d = [r.cpu_during * 100 if r.cpu_during is not None else None for r in runs]
        w = [r.cpu_total / args.duration * 100 for r in runs]
        m = [r.rss_mb for r in runs]
        during[label] = median(d)
        detail = runs[-1].detail if runs else "FAILED"
        print(f"{label:<40} {fmt_pct2(median(d)):>7} {'[' + spread(d) + ']':>14} "
              f"{fmt_pct2(median(w)):>7} {'[' + spread(w) + ']':>14} "
              f"{fmt(median(m), '.1f'):>6} {'[' + spread(m) + ']':>11} {detail}")
    if post:
        print("\nperf script over the last round's data (perf's deferred cost):")
        for label, (wall, cpu) in post.items():
            print(f"  {label:<40} perf script: {wall:.2f} s wall, {cpu:.2f} s CPU "
                  f"({cpu / args.duration * 100:.1f}% of one CPU per second profiled)")

    print("\nRatios (during sampling, profile / perf at the same frequency):")
    for hz in freqs:
        ours = during.get(f"profile -a -F {hz}")
        for short in ("-g", "--call-graph dwarf"):
            theirs = during.get(f"perf record -a -F {hz} {short}")
            if ours is not None and theirs:
                print(f"  {hz:>4} Hz: profile / perf record {short}: {ours / theirs:.2f}")
    ours = during.get("profile -a -F 99")
    if ours is not None:
        print(f"\nAim (issue 7): profile's own CPU at 99 Hz system-wide under 1% of one CPU: "
              f"{ours:.2f}% during sampling: {'met' if ours < 1 else 'NOT met'}")
    if any(r.err for runs in results.values() for r in runs):
        print("\nselfcost: some runs failed; they are left out")


def fmt(x, spec=".2f"):
    return "-" if x is None else format(x, spec)


def fmt_pct(x):
    return "-" if x is None else f"{x * 100:.2f}%"


def fmt_pct2(x):
    return "-" if x is None else f"{x:.2f}%"


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Overhead of profile on a fixed-work target, side by side with perf record.

Run as root after building build/profile and build/bench/fixedwork_{nofp,fp}; `make bench`
does both. For each target (fixedwork_nofp: no frame pointers, the DWARF path; fixedwork_fp:
frame pointers) and each round, in this order:

    alone      TARGET
    profile    profile -F HZ -q -o /dev/null -- TARGET
    perf       perf record -F HZ -e cpu-clock --call-graph dwarf -q -o DATA -- TARGET   (no-FP)
               perf record -F HZ -e cpu-clock -g -q -o DATA -- TARGET                  (FP)

The time compared is the one the target prints itself (the wall time of its work only), so the
start-up and tear-down of the tools are not counted. Slowdown = median under the tool / median
alone - 1. Tool CPU is the profiler process's own user+system time (its children, i.e. the
target, left out). One extra profile run per target with -v (not counted in the medians)
gives profile's summary and its "DWARF unwinding: ..." line.

Nothing here asserts anything about timings: it prints figures.
"""
import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

TARGET_RE = re.compile(r"fixedwork: units=(\d+) threads=(\d+) elapsed=([0-9.]+) cpu=([0-9.]+)")
CLK_TCK = os.sysconf("SC_CLK_TCK")


class Run:
    def __init__(self, elapsed=None, target_cpu=None, tool_cpu=None, rc=0, err="", stderr=""):
        self.elapsed = elapsed          # seconds, as the target reported them; None on failure
        self.target_cpu = target_cpu
        self.tool_cpu = tool_cpu        # seconds of the tool's own CPU; None when alone
        self.rc = rc
        self.err = err                  # why this run failed, if it did
        self.stderr = stderr


def self_cpu_of_zombie(pid):
    """User+system seconds of PID itself (not its children), read while it is a zombie."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    # fields[0] is field 3 (state); utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def run(argv, timeout):
    """Run ARGV; returns a Run with the target's figures and the top process's own CPU."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        except OSError as e:
            return Run(rc=-1, err=str(e))
        try:
            # Wait without reaping, so /proc/PID/stat still has the process's own times.
            os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
            cpu = self_cpu_of_zombie(p.pid)
        except (OSError, ValueError, IndexError):
            cpu = None
        _, status, _ = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    m = TARGET_RE.search(stdout)
    r = Run(tool_cpu=cpu, rc=p.returncode, stderr=stderr)
    if m:
        r.elapsed = float(m.group(3))
        r.target_cpu = float(m.group(4))
    if p.returncode != 0:
        first = stderr.strip().splitlines()[-1] if stderr.strip() else ""
        r.err = f"exit status {p.returncode}" + (f": {first}" if first else "")
    elif not m:
        r.err = "no 'fixedwork: ... elapsed=' line on stdout"
    return r


def perf_works(perf, data):
    """None if `perf record -e cpu-clock` runs here, else why not."""
    if not perf:
        return "perf not found in PATH (Debian: apt-get install linux-perf)"
    try:
        p = subprocess.run([perf, "record", "-e", "cpu-clock", "-q", "-o", data, "--", "true"],
                           capture_output=True, text=True, timeout=60, errors="replace")
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{perf} record failed: {e}"
    if p.returncode != 0:
        lines = (p.stderr or p.stdout).strip().splitlines()
        return f"{perf} record exited {p.returncode}" + (f": {lines[-1]}" if lines else "")
    return None


def fmt(x, spec=".3f"):
    return "-" if x is None else format(x, spec)


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="build directory (default: build)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds per configuration (default 5)")
    ap.add_argument("-F", "--freq", type=int, default=999, help="sampling frequency (default 999)")
    ap.add_argument("--units", type=int, help="work units per thread (default: the target's)")
    ap.add_argument("--perf", default=shutil.which("perf"), help="perf binary (default: from PATH)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per run before giving up")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")

    profile = os.path.join(args.build, "profile")
    targets = [("nofp", os.path.join(args.build, "bench", "fixedwork_nofp"), "dwarf"),
               ("fp", os.path.join(args.build, "bench", "fixedwork_fp"), "fp")]
    for path in [profile] + [t[1] for t in targets]:
        if not os.access(path, os.X_OK):
            sys.exit(f"overhead: {path} is missing; run `make bench`")
    if os.geteuid() != 0:
        print("overhead: not root; profile and perf will probably fail", file=sys.stderr)

    tmp = tempfile.mkdtemp(prefix="profile-bench-")
    data = os.path.join(tmp, "perf.data")
    try:
        perf_missing = perf_works(args.perf, data)
        hz = str(args.freq)
        extra = [str(args.units)] if args.units else []

        print(f"overhead: {platform.node()}, kernel {platform.release()}, "
              f"{os.cpu_count()} CPUs, {args.rounds} rounds at {hz} Hz, load average {loadavg()}")
        if perf_missing:
            print(f"overhead: PERF MISSING, its column is skipped: {perf_missing}")

        def commands(path, unwind):
            cmds = [("alone", [path] + extra),
                    ("profile", [profile, "-F", hz, "-q", "-o", "/dev/null", "--", path] + extra)]
            if not perf_missing:
                cg = ["--call-graph", "dwarf"] if unwind == "dwarf" else ["-g"]
                cmds.append(("perf", [args.perf, "record", "-F", hz, "-e", "cpu-clock"] + cg +
                             ["-q", "-o", data, "--", path] + extra))
            return cmds

        # One verbose profile run per target first: it warms the caches and is not counted.
        verbose = {}
        for name, path, _ in targets:
            r = run([profile, "-F", hz, "-v", "-o", "/dev/null", "--", path] + extra, args.timeout)
            verbose[name] = r
            print(f"  warm-up {name:4} profile -v: {fmt(r.elapsed)} s"
                  + (f"  FAILED: {r.err}" if r.err else ""), flush=True)

        results = {}  # (target, tool) -> [Run]
        for i in range(args.rounds):
            print(f"  round {i + 1}, load average {loadavg()}", flush=True)
            for name, path, unwind in targets:
                for tool, argv in commands(path, unwind):
                    r = run(argv, args.timeout)
                    results.setdefault((name, tool), []).append(r)
                    line = f"  round {i + 1} {name:4} {tool:7} {fmt(r.elapsed)} s"
                    if tool != "alone":
                        line += f"  tool CPU {fmt(r.tool_cpu)} s"
                    if r.err:
                        line += f"  FAILED: {r.err}"
                    elif tool == "perf" and r.stderr.strip():
                        line += f"  perf says: {r.stderr.strip().splitlines()[-1]}"
                    print(line, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"\noverhead: load average at the end {loadavg()}")
    print("\nMedians over %d rounds, %s Hz, target's own wall time of its work:\n" % (args.rounds, hz))
    head = f"{'target':<16} {'tool':<36} {'median s':>9} {'min-max s':>13} {'slowdown':>9} " \
           f"{'tool CPU s':>10} {'ok':>5}"
    print(head)
    print("-" * len(head))
    labels = {("nofp", "profile"): f"profile -F {hz} (auto: DWARF)",
              ("fp", "profile"): f"profile -F {hz} (auto: FP)",
              ("nofp", "perf"): "perf record --call-graph dwarf",
              ("fp", "perf"): "perf record -g"}
    for name, path, _ in targets:
        base = median(r.elapsed for r in results[(name, "alone")])
        for tool in ("alone", "profile", "perf"):
            label = labels.get((name, tool), tool)
            runs = results.get((name, tool))
            if runs is None:
                print(f"{os.path.basename(path):<16} {label:<36} {'skipped: perf missing':>9}")
                continue
            times = [r.elapsed for r in runs if not r.err]
            med = median(times)
            slow = None if tool == "alone" or med is None or not base else med / base - 1
            cpu = None if tool == "alone" else median(r.tool_cpu for r in runs if not r.err)
            rng = f"{min(times):.3f}-{max(times):.3f}" if times else "-"
            print(f"{os.path.basename(path):<16} {label:<36} {fmt(med):>9} {rng:>13} "
                  f"{'-' if slow is None else format(slow * 100, '+.1f') + '%':>9} "
                  f"{fmt(cpu):>10} {len(times):>2}/{len(runs):<2}")

    print("\nprofile -v (one extra run per target, not in the medians):")
    for name, path, _ in targets:
        r = verbose[name]
        lines = [l for l in r.stderr.splitlines() if l.startswith("profile: ")
                 and re.search(r"samples in|DWARF", l)]
        print(f"  {os.path.basename(path)}:" + (f" FAILED: {r.err}" if r.err else ""))
        for l in lines:
            print(f"    {l}")
        m = re.search(r"profile: (\d+) samples in", r.stderr)
        if m and r.target_cpu:
            # cpu-clock fires once per 1/HZ of CPU the target uses: a shortfall means samples
            # were dropped somewhere profile did not count (e.g. BPF recursion misses).
            want = r.target_cpu * args.freq
            print(f"    samples: {m.group(1)} of about {want:.0f} expected "
                  f"(target CPU {r.target_cpu:.2f} s x {hz} Hz): {100 * int(m.group(1)) / want:.0f}%")
        if not r.err and not any("DWARF unwinding:" in l for l in lines):
            print("    (no 'DWARF unwinding:' line: no sample needed DWARF unwinding)")

    failed = sum(1 for runs in results.values() for r in runs if r.err)
    if failed:
        print(f"\noverhead: {failed} run(s) failed; their times are left out")


if __name__ == "__main__":
    main()

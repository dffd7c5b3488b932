#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Slowdown of a Python program under profile (its Python frames read at each sample, issue
29), under profile --no-runtime, and under perf record -g and --call-graph dwarf, against the
same program alone.

The target is Debian's python3.11 running bench/pywork.py iters N: pychain.py's chain (five
Python frames deep, zlib's C code under the middle one) N times in one thread, timed by
itself from the first call to the last (start-up and the profiler's set-up not counted).
Each round runs every configuration once, their order rotated every round (noise spreads
over the columns):

    alone              python3.11 pywork.py iters N
    profile            profile -F HZ -q -o /dev/null -- python3.11 ...
    profile-noruntime  the same with --no-runtime
    perf-g             perf record -F HZ -e cpu-clock -g -q -o DATA -- python3.11 ...
    perf-dwarf         perf record -F HZ -e cpu-clock --call-graph dwarf -q -o DATA -- ...

For each: the target's elapsed time (median, min-max), its slowdown against alone, and the
profiler's own CPU seconds (its process and children, less the target's own CPU). Debian's
python3.11 has no frame pointers in the interpreter: perf -g's stacks stop in it; profile
walks it from its unwind tables. Nothing fails on timings.
"""
import argparse
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from benchlib import loadavg, median as med, require, spread

PYTHON = "/usr/bin/python3.11"


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="build directory (default: build)")
    ap.add_argument("-F", "--freq", type=int, default=999, help="frequency (default 999)")
    ap.add_argument("--iters", type=int, default=12000,
                    help="calls of the chain (default 12000: about 3 s here)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    ap.add_argument("--perf", default=shutil.which("perf"), help="perf binary")
    ap.add_argument("--quick", action="store_true", help="2 rounds of 4000 calls")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.iters = 2, 4000
    profile = os.path.abspath(os.path.join(args.build, "profile"))
    pywork = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pywork.py")
    require("pyoverhead", [profile, PYTHON], root_for="profile and perf")
    tmp = tempfile.mkdtemp(prefix="pyoverhead-")
    data = os.path.join(tmp, "perf.data")
    hz = str(args.freq)
    # (a shell's `times` gives the target's CPU: the profiler's is what its run took more)
    target = ["sh", "-c", '"$@"; times >&2', "sh", PYTHON, pywork, "iters", str(args.iters)]
    cmds = [("alone", target),
            ("profile", [profile, "-F", hz, "-q", "-o", "/dev/null", "--"] + target),
            ("profile-noruntime", [profile, "-F", hz, "-q", "--no-runtime", "-o", "/dev/null",
                                   "--"] + target)]
    if args.perf:
        cmds += [("perf-g", [args.perf, "record", "-F", hz, "-e", "cpu-clock", "-g", "-q",
                             "-o", data, "--"] + target),
                 ("perf-dwarf", [args.perf, "record", "-F", hz, "-e", "cpu-clock",
                                 "--call-graph", "dwarf", "-q", "-o", data, "--"] + target)]
    print(f"pyoverhead: {platform.node()}, kernel {platform.release()}, {os.cpu_count()} CPUs, "
          f"load {loadavg()}; {args.rounds} rounds of {args.iters} calls at {hz} Hz")
    elapsed, own = {}, {}
    try:
        for i in range(args.rounds):
            order = cmds[i % len(cmds):] + cmds[:i % len(cmds)]
            for key, argv in order:
                c0 = children_cpu()
                r = subprocess.run(argv, capture_output=True, text=True, timeout=600)
                c1 = children_cpu()
                m = re.search(r"pywork: iters=\d+ elapsed=([\d.]+)", r.stdout)
                # `times`: the shell's children (the target) user and system, second line
                t = re.findall(r"^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$", r.stderr, re.M)
                if r.returncode != 0 or not m or len(t) < 2:
                    print(f"  round {i + 1} {key:18} FAILED ({r.returncode}): "
                          f"{(r.stderr or r.stdout).strip().splitlines()[-1:]}")
                    continue
                tgt = int(t[-1][0]) * 60 + float(t[-1][1]) + int(t[-1][2]) * 60 + \
                    float(t[-1][3])
                elapsed.setdefault(key, []).append(float(m.group(1)))
                own.setdefault(key, []).append(max(0.0, (c1 - c0) - tgt))
                print(f"  round {i + 1} {key:18} {float(m.group(1)):.3f} s  profiler CPU "
                      f"{own[key][-1]:.3f} s", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    base = med(elapsed.get("alone", []))
    print(f"\nPython target (python3.11 bench/pywork.py iters {args.iters}) at {hz} Hz, "
          f"medians over {args.rounds} rounds:\n")
    head = f"{'run':<20} {'elapsed s':>9} {'min-max':>13} {'slowdown':>9} {'profiler CPU s':>14}"
    print(head)
    print("-" * len(head))
    for key, _ in cmds:
        xs = elapsed.get(key)
        if not xs:
            continue
        slow = f"{100 * (med(xs) / base - 1):+.1f}%" if base and key != "alone" else "-"
        cpu = f"{med(own[key]):.3f}" if key != "alone" else "-"
        print(f"{key:<20} {med(xs):>9.3f} {spread(xs, 3):>13} {slow:>9} {cpu:>14}")


if __name__ == "__main__":
    main()

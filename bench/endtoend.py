#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""From the end of sampling to a flame graph: profile against the perf pipeline, on xz.

Run as root after `make bench`. The workload is Debian's xz (no frame pointers: the DWARF
path) compressing random data, `xz -6 -T1 -c FILE` (64 MB, more than the 10 s of sampling).

profile   profile -v -F 999 -d 10 -o OUT.svg -- xz ...
          - "end of sampling to output written" as profile -v prints it (drain the maps,
            unwind what is left, symbolize, render, write);
          - the wall time of the whole command minus the 10 s of sampling (start-up too).
perf      perf record -F 999 -e cpu-clock --call-graph dwarf -o p.data -- xz ...
          stopped with SIGINT after 10 s, as profile stops after -d 10; then each stage
          timed on its own, through files:
            perf record's tear-down (SIGINT to exit: it writes the data and its build ids)
            perf script -i p.data > p.perf
            stackcollapse-perf.pl p.perf > p.folded
            flamegraph.pl p.folded > p.svg
          and the same three as one pipe, timed as a whole:
            perf script -i p.data | stackcollapse-perf.pl | flamegraph.pl > p.svg

The FlameGraph scripts come from STACKCOLLAPSE_PERF and FLAMEGRAPH_PL (paths to
stackcollapse-perf.pl and flamegraph.pl of a FlameGraph checkout); without them only perf
script is timed, and the script says so.

Ratio: (perf's post-processing to p.svg) / (profile's end of sampling to its SVG written).
Nothing here asserts anything about timings: it prints figures, and the aims of issue 7.
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
from benchlib import median as med, spread as rng, xz_work


def timed(argv, stdout=None, stdin=None):
    """Run ARGV; (wall s, CPU s of it and its children, exit status)."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdin=stdin or subprocess.DEVNULL, stdout=stdout or
                         subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    return time.monotonic() - t0, ru.ru_utime + ru.ru_stime, os.waitstatus_to_exitcode(status)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="build directory (default: build)")
    ap.add_argument("-F", "--freq", type=int, default=999, help="frequency (default 999)")
    ap.add_argument("-d", "--duration", type=float, default=10,
                    help="seconds of sampling (default 10)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds (default 2)")
    ap.add_argument("--quick", action="store_true", help="1 round")
    ap.add_argument("--mb", type=int, default=64, help="MB of random input for xz (default 64)")
    ap.add_argument("--keep", help="keep the outputs in this directory")
    ap.add_argument("--perf", default=shutil.which("perf"), help="perf binary (default: from PATH)")
    args = ap.parse_args()
    if args.quick:
        args.rounds = 1
    profile = os.path.join(args.build, "profile")
    if not os.access(profile, os.X_OK):
        sys.exit(f"endtoend: {profile} is missing; run `make bench`")
    fg = os.environ.get("FLAMEGRAPH_PL")
    sc = os.environ.get("STACKCOLLAPSE_PERF")
    missing = [n for n, v in (("FLAMEGRAPH_PL", fg), ("STACKCOLLAPSE_PERF", sc))
               if not v or not os.access(v, os.R_OK)]

    hz, secs = str(args.freq), f"{args.duration:g}"
    tmp = args.keep or tempfile.mkdtemp(prefix="profile-endtoend-")
    os.makedirs(tmp, exist_ok=True)
    work = xz_work(tmp, args.mb, "endtoend")

    print(f"endtoend: {platform.node()}, kernel {platform.release()}, {os.cpu_count()} CPUs, "
          f"{args.rounds} rounds; workload: xz -6 -T1 -c ({args.mb} MB of random data) for "
          f"{secs} s at {hz} Hz")
    if missing:
        print(f"endtoend: FLAMEGRAPH SCRIPTS MISSING: set {' and '.join(missing)} to "
              "flamegraph.pl / stackcollapse-perf.pl of a FlameGraph checkout; only perf "
              "script is timed on perf's side")
    if not args.perf:
        print("endtoend: PERF MISSING (Debian: apt-get install linux-perf): only profile is run")

    R = {}  # name -> [values]

    def add(name, v):
        R.setdefault(name, []).append(v)

    try:
        for i in range(args.rounds):
            # profile
            svg = os.path.join(tmp, "profile.svg")
            t0 = time.monotonic()
            p = subprocess.run([profile, "-v", "-F", hz, "-d", secs, "-o", svg, "--"] + work,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, errors="replace")
            wall = time.monotonic() - t0
            m = re.search(r"end of sampling to output written: ([0-9.]+) s", p.stderr)
            s = re.search(r"profile: (\d+) samples in", p.stderr)
            u = re.search(r"DWARF unwinding: .*", p.stderr)
            if p.returncode != 0 or not m:
                print(f"  round {i + 1} profile FAILED (exit {p.returncode}): "
                      f"{p.stderr.strip().splitlines()[-1:]}")
            else:
                add("p_end", float(m.group(1)))
                add("p_wall", wall - args.duration)
                add("p_svg", os.path.getsize(svg))
                print(f"  round {i + 1} profile: end of sampling to SVG {float(m.group(1)):.3f} s,"
                      f" whole run - {secs} s = {wall - args.duration:.3f} s, "
                      f"{s.group(1) if s else '?'} samples; {u.group(0) if u else ''}",
                      flush=True)
            if not args.perf:
                continue
            # perf record, stopped after the same duration
            pdata = os.path.join(tmp, "p.data")
            q = subprocess.Popen([args.perf, "record", "-F", hz, "-e", "cpu-clock",
                                  "--call-graph", "dwarf", "-q", "-o", pdata, "--"] + work,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            time.sleep(args.duration)
            t0 = time.monotonic()
            q.send_signal(signal.SIGINT)
            _, status, ru = os.wait4(q.pid, 0)
            rec_end = time.monotonic() - t0
            add("r_end", rec_end)
            add("r_mb", os.path.getsize(pdata) / 1e6)
            pperf = os.path.join(tmp, "p.perf")
            with open(pperf, "wb") as out:
                w, c, rc = timed([args.perf, "script", "-i", pdata], stdout=out)
            add("script", w)
            add("script_cpu", c)
            nsamp = None
            line = (f"  round {i + 1} perf: record tear-down {rec_end:.3f} s, "
                    f"data {os.path.getsize(pdata) / 1e6:.0f} MB; perf script {w:.2f} s "
                    f"(CPU {c:.2f} s)")
            if not missing:
                pfold = os.path.join(tmp, "p.folded")
                with open(pfold, "wb") as out:
                    w2, _, _ = timed(["perl", sc, pperf], stdout=out)
                with open(pfold) as f:
                    nsamp = sum(int(l.rsplit(" ", 1)[1]) for l in f if l.strip())
                psvg = os.path.join(tmp, "p.svg")
                with open(psvg, "wb") as out:
                    w3, _, _ = timed(["perl", fg, pfold], stdout=out)
                add("collapse", w2)
                add("flamegraph", w3)
                # the same as one pipe
                t0 = time.monotonic()
                sh = (f"'{args.perf}' script -i '{pdata}' 2>/dev/null | perl '{sc}' | "
                      f"perl '{fg}' > '{psvg}'")
                subprocess.run(["sh", "-c", sh], check=False)
                add("pipe", time.monotonic() - t0)
                line += (f"; stackcollapse-perf.pl {w2:.2f} s; flamegraph.pl {w3:.2f} s; "
                         f"as one pipe {R['pipe'][-1]:.2f} s; folded total {nsamp / 1e9:.2f} s "
                         "(stackcollapse-perf.pl sums the sample periods)")
            print(line, flush=True)
            os.unlink(pperf)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    print(f"\nMedians over {args.rounds} rounds (min-max), seconds:\n")
    rows = [("profile: end of sampling to SVG written (-v)", "p_end"),
            (f"profile: whole run minus the {secs} s of sampling", "p_wall"),
            ("perf record: SIGINT to exit (data written)", "r_end"),
            ("perf script -i p.data > p.perf", "script"),
            ("stackcollapse-perf.pl", "collapse"),
            ("flamegraph.pl", "flamegraph"),
            ("perf script | stackcollapse-perf.pl | flamegraph.pl", "pipe")]
    for label, k in rows:
        if k in R:
            print(f"  {label:<56} {med(R[k]):>8.3f}  [{rng(R[k])}]")
    ours = med(R.get("p_end", []))
    if "r_end" in R:
        stages = med(R["r_end"]) + med(R["script"]) + (
            med(R["collapse"]) + med(R["flamegraph"]) if "collapse" in R else 0)
        pipe = med(R["r_end"]) + med(R["pipe"]) if "pipe" in R else None
        what = "record tear-down + script + collapse + flamegraph" if "collapse" in R else \
            "record tear-down + script (FlameGraph scripts missing)"
        print(f"  {'perf, stage by stage: ' + what:<56} {stages:>8.3f}")
        if pipe is not None:
            print(f"  {'perf, record tear-down + the pipe':<56} {pipe:>8.3f}")
        if ours:
            print("\nRatios (perf / profile, end of sampling to flame graph):")
            print(f"  stage by stage: {stages / ours:.1f}x")
            if pipe is not None:
                print(f"  record tear-down + pipe: {pipe / ours:.1f}x")
            if "p_wall" in R:
                print(f"  against profile's whole run minus {secs} s: "
                      f"{(pipe or stages) / med(R['p_wall']):.1f}x")
    if ours is not None:
        print(f"\nAims (issue 7): sampling end to flame graph under 0.5 s: {ours:.3f} s: "
              f"{'met' if ours < 0.5 else 'NOT met'}", end="")
        if "r_end" in R and "collapse" in R:
            ratio = (pipe or stages) / ours
            print(f"; at least 10x faster than the perf pipeline: {ratio:.1f}x: "
                  f"{'met' if ratio >= 10 else 'NOT met'}")
        else:
            print("; the 10x aim needs perf and the FlameGraph scripts")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""What pprof output costs: its write time and size, beside folded and gzip'd folded.

Run as root after `make bench`. One profile of Debian's xz (the DWARF path, as endtoend.py)
at 999 Hz for 30 s (--quick: 10 s), written in one run as pprof, folded and SVG:

    profile -v -F 999 -d 30 -o p.pb.gz -o p.folded -o p.svg -- xz -6 -T1 -c FILE

profile -v says, per output, how long making and writing it took and how many bytes it has
("wrote FILE (FORMAT): N bytes in S s"); the folded file is also gzip'd here (level 6, as
gzip's default) for its size. `go tool pprof -raw` reading the file is timed beside it when
Debian's golang-go is there. The aim of issue 15: pprof written in under 0.1 s. Nothing here
asserts anything about timings.
"""
import argparse
import gzip
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from benchlib import median as med, spread as rng, xz_work


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="build directory (default: build)")
    ap.add_argument("-F", "--freq", type=int, default=999, help="frequency (default 999)")
    ap.add_argument("-d", "--duration", type=float, default=30,
                    help="seconds of sampling (default 30)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds (default 2)")
    ap.add_argument("--quick", action="store_true", help="1 round of 10 s")
    ap.add_argument("--mb", type=int, default=128, help="MB of random input for xz")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.duration = 1, 10
    profile = os.path.join(args.build, "profile")
    if not os.access(profile, os.X_OK):
        sys.exit(f"pprofwrite: {profile} is missing; run `make bench`")
    go = shutil.which("go") or ("/usr/lib/go/bin/go" if os.path.exists("/usr/lib/go/bin/go")
                                else None)
    tmp = tempfile.mkdtemp(prefix="profile-pprofwrite-")
    work = xz_work(tmp, args.mb, "pprofwrite")
    print(f"pprofwrite: {platform.node()}, kernel {platform.release()}, {os.cpu_count()} "
          f"CPUs, {args.rounds} rounds; xz -6 -T1 -c ({args.mb} MB) for {args.duration:g} s "
          f"at {args.freq} Hz")
    if not go:
        print("pprofwrite: GO MISSING (Debian: apt-get install golang-go): go tool pprof's "
              "read is not timed")
    R = {}

    def add(name, v):
        R.setdefault(name, []).append(v)

    outs = {"pprof": os.path.join(tmp, "p.pb.gz"), "folded": os.path.join(tmp, "p.folded"),
            "svg": os.path.join(tmp, "p.svg")}
    for _ in range(args.rounds):
        argv = [profile, "-v", "-F", str(args.freq), "-d", f"{args.duration:g}"]
        for path in outs.values():
            argv += ["-o", path]
        p = subprocess.run(argv + ["--"] + work, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, errors="replace")
        if p.returncode:
            sys.exit(f"pprofwrite: profile exited {p.returncode}: {p.stderr[-500:]}")
        for fmt, path in outs.items():
            m = re.search(rf"wrote {re.escape(path)} \({fmt}\): (\d+) bytes in ([0-9.]+) s",
                          p.stderr)
            if not m:
                sys.exit(f"pprofwrite: no -v line for {path}: {p.stderr[-800:]}")
            add(f"{fmt} bytes", int(m.group(1)))
            add(f"{fmt} s", float(m.group(2)))
        m = re.search(r"(\d+) samples", p.stderr)
        add("samples", int(m.group(1)) if m else 0)
        with open(outs["folded"], "rb") as f:
            add("folded.gz bytes", len(gzip.compress(f.read(), 6)))
        if go:
            t = time.monotonic()
            r = subprocess.run([go, "tool", "pprof", "-raw", outs["pprof"]],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            add("go tool pprof -raw s", time.monotonic() - t if r.returncode == 0 else -1)

    def row(name, unit=""):
        if name in R:
            print(f"  {name:28s} {med(R[name]):>12,.3f}{unit}  ({rng(R[name])})"
                  if isinstance(R[name][0], float) else
                  f"  {name:28s} {med(R[name]):>12,.0f}{unit}  ({rng(R[name], 0)})")

    print(f"samples: {med(R['samples']):,.0f}")
    for name in ("pprof s", "folded s", "svg s", "go tool pprof -raw s", "pprof bytes",
                 "folded bytes", "folded.gz bytes", "svg bytes"):
        row(name)
    pb, fz = med(R["pprof bytes"]), med(R["folded.gz bytes"])
    print(f"pprof / gzip'd folded size: {pb / fz:.2f}x; pprof / folded: "
          f"{pb / med(R['folded bytes']):.2f}x")
    print(f"aim (issue 15): pprof written in under 0.1 s: "
          f"{'met' if med(R['pprof s']) < 0.1 else 'NOT met'} ({med(R['pprof s']):.3f} s)")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

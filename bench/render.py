#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Rendering benchmark: `profile flamegraph` against flamegraph.pl on the same folded file.

Generates a 100,000-line folded file of deep C++-like stacks (fixed seed), renders it with
both, and prints wall time, peak memory (max RSS) and SVG size, with the ratios. Aims (issue 5):
at least 20x faster, at most a quarter of flamegraph.pl's memory, an SVG no larger.

flamegraph.pl comes from FLAMEGRAPH_PL=/path/to/flamegraph.pl; without it only ours is measured.
"""
import argparse
import os
import random
import subprocess
import sys
import time

NAMESPACES = ["std", "boost", "absl", "folly", "app", "net", "db", "io", "util", "core", "rpc"]
CLASSES = ["Vector", "HashMap", "Parser", "Session", "Connection", "Buffer", "Scheduler", "Task",
           "Allocator", "Codec", "Request", "Response", "Index", "Table", "Cursor", "Channel"]
METHODS = ["run", "poll", "read", "write", "flush", "encode", "decode", "insert", "find", "erase",
           "process", "dispatch", "handle", "visit", "resize", "commit", "operator()", "step"]
TYPES = ["int", "long", "char const*", "std::string const&", "unsigned long", "double", "void*",
         "std::vector<int, std::allocator<int> >&", "bool"]


def make_names(rng, n):
    names = set()
    while len(names) < n:
        ns = rng.choice(NAMESPACES)
        cls = rng.choice(CLASSES)
        if rng.random() < 0.4:
            cls += "<" + rng.choice(TYPES) + ">"
        args = ", ".join(rng.choice(TYPES) for _ in range(rng.randint(0, 2)))
        names.add(f"{ns}::{cls}::{rng.choice(METHODS)}({args})")
    return sorted(names)


def generate(path, lines, seed=1):
    """LINES distinct stacks, sorted: random walks 10-40 deep over a call graph of C++ names."""
    rng = random.Random(seed)
    names = make_names(rng, 4000)
    callees = {n: rng.sample(names, rng.randint(2, 6)) for n in names}
    roots = rng.sample(names, 12)
    seen = {}
    while len(seen) < lines:
        frames = ["app", "__libc_start_call_main", "main", rng.choice(roots)]
        for _ in range(rng.randint(10, 40)):
            frames.append(rng.choice(callees[frames[-1]]) if frames[-1] in callees
                          else rng.choice(names))
        if rng.random() < 0.2:
            frames += ["entry_SYSCALL_64_[k]", "do_syscall_64_[k]", "ksys_read_[k]"]
        stack = ";".join(frames)
        if stack not in seen:
            seen[stack] = rng.randint(1, 200)
    # sorted, as stackcollapse-*.pl and profile write them
    with open(path, "w") as f:
        for stack in sorted(seen):
            f.write(f"{stack} {seen[stack]}\n")


def measure(cmd, out_path):
    """Run CMD with stdout to OUT_PATH: (seconds, peak RSS in MiB, exit status)."""
    with open(out_path, "wb") as out:
        start = time.monotonic()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - start
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if p.returncode != 0:
        sys.exit(f"render: {' '.join(cmd)} exited {p.returncode}: {err.strip()}")
    return wall, ru.ru_maxrss / 1024, p.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--lines", type=int, default=100000)
    ap.add_argument("--profile", help="the profile binary (default BUILD/profile)")
    ap.add_argument("--runs", type=int, default=3, help="runs of ours (best is kept)")
    args = ap.parse_args()
    work = os.path.join(args.build, "bench")
    os.makedirs(work, exist_ok=True)
    folded = os.path.join(work, f"render-{args.lines}-v2.folded")
    if not os.path.exists(folded):
        generate(folded + ".tmp", args.lines)
        os.rename(folded + ".tmp", folded)
    size_in = os.path.getsize(folded)
    print(f"render: {args.lines} lines, {size_in / 2**20:.1f} MiB of folded stacks ({folded})")

    ours_svg = os.path.join(work, "render-ours.svg")
    profile = args.profile or os.path.join(args.build, "profile")
    runs = [measure([profile, "flamegraph", folded], ours_svg) for _ in range(args.runs)]
    t_ours = min(r[0] for r in runs)
    m_ours = max(r[1] for r in runs)
    s_ours = os.path.getsize(ours_svg)
    print(f"  profile flamegraph  {t_ours:8.2f} s  {m_ours:8.1f} MiB  SVG {s_ours / 2**20:6.2f} MiB")

    pl = os.environ.get("FLAMEGRAPH_PL")
    if not pl or not os.path.exists(pl):
        print("  flamegraph.pl       not measured: set FLAMEGRAPH_PL=/path/to/flamegraph.pl "
              "(from FlameGraph) to compare")
        return 0
    pl_svg = os.path.join(work, "render-flamegraph-pl.svg")
    t_pl, m_pl, _ = measure(["perl", pl, folded], pl_svg)
    s_pl = os.path.getsize(pl_svg)
    print(f"  flamegraph.pl       {t_pl:8.2f} s  {m_pl:8.1f} MiB  SVG {s_pl / 2**20:6.2f} MiB")
    speed, mem, size = t_pl / t_ours, m_ours / m_pl, s_ours / s_pl
    print(f"  ratios: {speed:.1f}x faster (aim >= 20x), memory {mem:.2f} of flamegraph.pl's "
          f"(aim <= 0.25), SVG {size:.2f} of its size (aim <= 1.0)")
    ok = speed >= 20 and mem <= 0.25 and size <= 1.0
    print(f"render: {'all aims met' if ok else 'an aim was missed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

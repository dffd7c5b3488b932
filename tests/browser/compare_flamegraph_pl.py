#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Compare `profile flamegraph` with flamegraph.pl on the same folded input.

Both SVGs are read back; every frame of at least 0.5% of the samples must appear in both with
the same depth, name (the call path from the root) and sample count. Inputs:
  - a perf profile (perf record -g, perf script) collapsed by FlameGraph's stackcollapse-perf.pl,
    when STACKCOLLAPSE_PERF is set (needs root and perf);
  - our own profile of the same workload (needs root);
  - any folded files given as arguments.

flamegraph.pl merges only adjacent sorted lines, so siblings "foo" and "foo.bar" can split "foo"
in two there; its frames are summed by call path before comparing, and such splits are
reported as notes, not mismatches.

Usage: FLAMEGRAPH_PL=/path/flamegraph.pl [STACKCOLLAPSE_PERF=/path/stackcollapse-perf.pl] \\
       python3 tests/browser/compare_flamegraph_pl.py [--build build] [FOLDED...]
Ends with "compare: N passed, N failed"; without FLAMEGRAPH_PL it says so and exits 0.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SVGNS = "{http://www.w3.org/2000/svg}"
SHARE = 0.005
TITLE = re.compile(r"^(.*) \(([\d,.]+) [^,]*, [\d.]+%.*\)$", re.S)


def norm(name):
    """A name as both tools show it: flamegraph.pl turns <> into (), drops _[x] suffixes."""
    name = re.sub(r"_\[[kwij]\]$", "", name.rstrip())
    name = name.replace("<", "(").replace(">", ")")
    return name[:1990]


def frames_of(svg_path):
    """The frames of an SVG flame graph: list of (depth, name, samples, x, width)."""
    with open(svg_path, "rb") as f:
        text = f.read().decode("utf-8", errors="replace")
    text = re.sub(r"<!DOCTYPE[^>]*>", "", text, count=1)
    root = ET.fromstring(text)
    raw = []
    for g in root.iter(SVGNS + "g"):
        title, rect = g.find(SVGNS + "title"), g.find(SVGNS + "rect")
        if title is None or rect is None or title.text is None:
            continue
        m = TITLE.match(title.text)
        if not m:
            continue
        raw.append((m.group(1), float(m.group(2).replace(",", "")), float(rect.get("x")),
                    float(rect.get("width")), float(rect.get("y")), float(rect.get("height"))))
    if not raw:
        raise ValueError(f"{svg_path}: no frames found")
    # the root: the widest frame, "all" (a single chain above it is as wide)
    most = max(f[1] for f in raw)
    root_frame = max((f for f in raw if f[1] == most), key=lambda f: (f[0] == "all", f[4]))
    fh = root_frame[5] + 1      # frame height: rect height plus the 1 px between frames
    y0 = root_frame[4]
    return [(round(abs(y0 - y) / fh), name, n, x, w) for name, n, x, w, y, _ in raw]


def paths(frames, total):
    """Frames of at least SHARE of TOTAL, keyed by call path: {(names...): samples}, splits."""
    big = sorted((f for f in frames if f[2] >= SHARE * total), key=lambda f: f[0])
    by_depth = collections.defaultdict(list)
    out = collections.defaultdict(float)
    seen = collections.Counter()
    for depth, name, n, x, w in big:
        path = (norm(name),)
        if depth > 0:
            mid = x + w / 2
            parents = [p for p in by_depth[depth - 1] if p[0] - 0.05 <= mid <= p[0] + p[1] + 0.05]
            if not parents:
                raise ValueError(f"frame {name!r} at depth {depth} has no parent")
            path = parents[0][2] + path
        by_depth[depth].append((x, w, path))
        out[path] += n
        seen[path] += 1
    return out, [p for p, c in seen.items() if c > 1]


def compare(label, folded, args):
    ours_svg = os.path.join(args.work, label + "-ours.svg")
    pl_svg = os.path.join(args.work, label + "-pl.svg")
    p = subprocess.run([args.profile, "flamegraph", folded, "-o", ours_svg], capture_output=True,
                       text=True)
    if p.returncode:
        print(f"FAIL  {label}: profile flamegraph exited {p.returncode}: {p.stderr.strip()}")
        return False
    with open(pl_svg, "wb") as out:
        p = subprocess.run(["perl", args.pl, folded], stdout=out, stderr=subprocess.PIPE,
                           text=False)
    if p.returncode:
        print(f"FAIL  {label}: flamegraph.pl exited {p.returncode}: {p.stderr.decode().strip()}")
        return False
    ours, pl = frames_of(ours_svg), frames_of(pl_svg)
    total = max(f[2] for f in ours)
    total_pl = max(f[2] for f in pl)
    a, _ = paths(ours, total)
    b, splits = paths(pl, total_pl)
    bad = []
    if abs(total - total_pl) > 0.5:
        bad.append(f"total samples: ours {total:g}, flamegraph.pl {total_pl:g}")
    for path in sorted(set(a) | set(b)):
        if abs(a.get(path, 0) - b.get(path, 0)) > 0.5:
            bad.append(f"depth {len(path) - 1} {' ; '.join(path[-3:])!s:.160}: "
                       f"ours {a.get(path, 0):g}, flamegraph.pl {b.get(path, 0):g}")
    for s in splits:
        print(f"note  {label}: flamegraph.pl splits {' ; '.join(s[-2:])!r} (adjacent-line merge)")
    if bad:
        print(f"FAIL  {label}: {len(bad)} of {len(set(a) | set(b))} frames >= 0.5% differ")
        for m in bad[:40]:
            print(f"      {m}")
        return False
    print(f"ok    {label}: {len(a)} frames >= 0.5% of {total:g} samples match")
    return True


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, **kw)
    if p.returncode:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: "
                           f"{p.stderr.decode(errors='replace').strip()[-300:]}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--profile", help="the binary whose `flamegraph` command renders (default BUILD/profile)")
    ap.add_argument("--workload", nargs="+", help="command to profile (default: the chain "
                    "workload and xz)")
    ap.add_argument("folded", nargs="*")
    args = ap.parse_args()
    args.profile = args.profile or os.path.join(args.build, "profile")
    args.pl = os.environ.get("FLAMEGRAPH_PL")
    if not args.pl or not os.path.exists(args.pl):
        print("compare: skipped: set FLAMEGRAPH_PL=/path/to/flamegraph.pl (and "
              "STACKCOLLAPSE_PERF=/path/to/stackcollapse-perf.pl for perf input)")
        return 0
    workload = args.workload or [os.path.join(args.build, "tests", "workloads", "chain_fp"), "2"]
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="fg-compare-") as work:
        args.work = work
        inputs = [(os.path.basename(f), f) for f in args.folded]
        root = os.geteuid() == 0
        collapse = os.environ.get("STACKCOLLAPSE_PERF")
        if collapse and root:
            data = os.path.join(work, "perf.data")
            try:
                run(["perf", "record", "-q", "-F", "999", "-g", "-o", data, "--"] + workload)
                script = run(["perf", "script", "-i", data])
                folded = os.path.join(work, "perf.folded")
                with open(folded, "wb") as f:
                    f.write(run(["perl", collapse], input=script))
                inputs.append(("perf+stackcollapse-perf.pl", folded))
            except RuntimeError as e:
                print(f"FAIL  perf input: {e}")
                failed += 1
        else:
            print("skip  perf input: needs root and STACKCOLLAPSE_PERF=/path/to/"
                  "stackcollapse-perf.pl")
        if root:
            folded = os.path.join(work, "ours.folded")
            try:
                run([os.path.join(args.build, "profile"), "-F", "999", "-q", "-o", folded, "--"] + workload)
                inputs.append(("profile-output", folded))
            except RuntimeError as e:
                print(f"FAIL  profile input: {e}")
                failed += 1
        else:
            print("skip  our own profile: needs root")
        for label, folded in inputs:
            try:
                ok = compare(re.sub(r"[^\w.+-]", "_", label), folded, args)
            except (ValueError, ET.ParseError) as e:
                print(f"FAIL  {label}: {e}")
                ok = False
            passed += ok
            failed += not ok
    print(f"compare: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Soak: `profile -a --every 5` for N minutes beside process churn (short-lived processes
started in a loop, each a new pid with its own mappings and name), to see that continuous mode
keeps a flat memory: the RSS of profile and of its symbolizer worker (the pid -v names) after
the first minute and at the end, and whether the end is within 10% of the first minute.
With --new-files each process is a new copy of the program, deleted after it: the files a
long run must forget. Not part of `make test` or `make bench`:
`sudo python3 bench/soak.py [--minutes 10] [--new-files]`."""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from benchlib import loadavg, require


def rss_kib(pid):
    """(VmRSS, RssAnon) of PID in KiB, or None when it is gone. RssAnon is what the process
    made; the rest (RssFile, RssShmem) is pages of files it maps (the files it reads, the
    ring buffer), shared with the page cache and bounded by their sizes."""
    try:
        with open(f"/proc/{pid}/status") as f:
            text = f.read()
        return tuple(int(re.search(rf"^{k}:\s+(\d+) kB", text, re.M).group(1))
                     for k in ("VmRSS", "RssAnon"))
    except (OSError, AttributeError):
        return None


def children(pid):
    """The pids of PID's children."""
    out = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def churn(stop, argv, counter, copies=None):
    """Start ARGV (about 20 ms of CPU each) one after the other until STOP is set; with
    COPIES (a directory), each run is of a new copy of the program, deleted after it (a
    build machine's test binaries, a deploy's new files)."""
    while not stop.is_set():
        if copies:
            exe = os.path.join(copies, f"sl_{counter[0]}")
            shutil.copyfile(argv[0], exe)
            os.chmod(exe, 0o755)
            subprocess.run([exe] + argv[1:])
            os.unlink(exe)
        else:
            subprocess.run(argv)
        counter[0] += 1
        time.sleep(0.03)


def fds(pid, under=None):
    """(descriptors of PID, those of deleted files under UNDER), or None when it is gone."""
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    deleted = 0
    for n in names:
        try:
            t = os.readlink(f"/proc/{pid}/fd/{n}")
        except OSError:
            continue
        deleted += bool(under) and t.startswith(under) and t.endswith(" (deleted)")
    return len(names), deleted


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10, help="length of the run (default 10)")
    ap.add_argument("--every", type=float, default=5, help="the period (default 5 s)")
    ap.add_argument("--build", default="build", help="the build directory (default build)")
    ap.add_argument("--new-files", action="store_true",
                    help="run a new copy of the program each time, deleted after it")
    args = ap.parse_args()
    prof = os.path.join(args.build, "profile")
    work = os.path.join(args.build, "tests", "workloads", "short_lived")
    require("soak", [prof, work], root_for="profile -a")
    if args.minutes < 1.5:
        sys.exit("soak: --minutes must be at least 1.5 (the first figure is at 1 minute)")

    tmp = tempfile.mkdtemp(prefix="soak-")
    copies = tempfile.mkdtemp(prefix="soak-bin-") if args.new_files else None
    stop, counter = threading.Event(), [0]
    t = threading.Thread(target=churn, args=(stop, [work], counter, copies), daemon=True)
    t.start()
    p = subprocess.Popen([prof, "-a", "-vv", "--every", str(args.every), "-o",
                          os.path.join(tmp, "p-%Y%m%d-%H%M%S.pb.gz")],
                         stderr=subprocess.PIPE, text=True, errors="replace")
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(p.stderr), daemon=True)
    reader.start()
    start = time.monotonic()
    first = last = None
    try:
        while time.monotonic() - start < args.minutes * 60:
            time.sleep(1)
            if p.poll() is not None:
                sys.exit(f"soak: profile exited {p.returncode}: {''.join(lines)[-500:]}")
            kids = [r for r in (rss_kib(c) for c in children(p.pid)) if r]
            held = [f for f in (fds(x, copies) for x in [p.pid] + children(p.pid)) if f]
            now = (rss_kib(p.pid), (sum(r[0] for r in kids), sum(r[1] for r in kids)),
                   (sum(f[0] for f in held), sum(f[1] for f in held)))
            if first is None and time.monotonic() - start >= 60:
                first = now
            last = now
    finally:
        stop.set()
        p.send_signal(signal.SIGINT)
        p.wait(timeout=60)
        reader.join(timeout=5)
        t.join(timeout=5)
    files = sorted(os.listdir(tmp))
    sizes = [os.path.getsize(os.path.join(tmp, f)) for f in files]
    for f in files:
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)
    if copies:
        shutil.rmtree(copies, ignore_errors=True)
    worker = [m.group(1) for m in (re.search(r"symbolizer worker: pid (\d+)", x) for x in lines)
              if m]
    print(f"soak: {args.minutes:g} min of profile -a --every {args.every:g}, "
          f"{counter[0]} short-lived processes started beside it"
          f"{', each a new file deleted after it' if copies else ''}, load {loadavg()}")
    print(f"soak: descriptors of profile and its worker {first[2][0]} after 1 min, "
          f"{last[2][0]} at the end"
          + (f"; of deleted copies {first[2][1]}, then {last[2][1]}" if copies else ""))
    print(f"soak: {len(files)} files written ({min(sizes) if sizes else 0}-"
          f"{max(sizes) if sizes else 0} bytes), exit {p.returncode}, "
          f"worker pid(s) {', '.join(worker) or '?'}")
    # What profile holds at period ends (-vv): after the first minute and at the end.
    ends = [(i, x.strip()) for i, x in enumerate(lines) if "period end:" in x]
    if ends:
        print(f"soak: {ends[min(len(ends) - 1, int(60 / args.every))][1]}")
        print(f"soak: {ends[-1][1]}")
    for name, a, b in (("profile", first[0], last[0]), ("worker", first[1], last[1])):
        for i, what in ((0, "RSS"), (1, "RssAnon")):
            ok = a[i] and b[i] <= a[i] * 1.10
            print(f"soak: {name} {what} {a[i] / 1024:.1f} MiB after 1 min, "
                  f"{b[i] / 1024:.1f} MiB at the end ({(b[i] - a[i]) / a[i]:+.1%}): "
                  f"{'within 10%' if ok else 'NOT within 10%'}")


if __name__ == "__main__":
    main()

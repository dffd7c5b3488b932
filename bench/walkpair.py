#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Two targets' BPF time per sample side by side, from one run of profile: Debian's xz -9e
(no frame pointers: its stacks walked from the files' unwind tables in BPF) and the same
version of xz built with frame pointers (walked by them), both running at once, one
`profile -p XZ,XZFP` sampling both (issue 28's bar: xz at or below xz-fp).

bench/bpfcost.py runs one target after the other: the VM's load moves between the two runs,
and one pair's ratio spreads +-10% (docs/PERFORMANCE.md, twentieth round). Here both
targets share every second of the window: PROFILE_BPF_TIMES=1 has the sample program time
each of its runs, and put those of the first process profiled and those of the second in
buckets of their own (`btimes`, bpf/maps.bpf.h: TIME_SAMPLE_FIRST, TIME_SAMPLE_SECOND). Each
round alternates which of the two is first, starts both, waits until profile's start-up
work is done (as bpfcost.py's --settle), reads the buckets at the window's start and end and
stops profile (SIGINT). In the window each target has a CPU of its own, and the two swap
every 0.25 s: the two vCPUs' host cores are not alike busy (one round's ratio spread
0.89-1.20 when the scheduler placed them), and each target then spends half the window on
each. It prints, per round and as medians over rounds, P50, P90 and mean
ns of each target's samples in the window and the ratio of the means; profile's and its
worker's CPU per sample is the two targets' alike (their stacks are counted in the kernel
the same way), so it is given once, beside them, and "us/own" (bpfcost.py's figure) adds it
to each mean.

    PROFILE_BENCH_XZ_FP=/path/to/xz-fp python3 bench/walkpair.py --build build [--rounds 10]
                        [-d 6] [-F 999]

PROFILE_BENCH_XZ_FP: an xz built with frame pointers, as bench/bpfcost.py's docstring says
(XZ Utils 5.4.1, Debian 12's version: -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer,
liblzma too). Without it this says so and exits 2. Run as root, on an otherwise idle machine.
"""
import argparse
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpfcost  # noqa: E402
from benchlib import loadavg, median as med, spread  # noqa: E402


SWAP = 0.25  # seconds between the targets' swaps of CPU


def window(a, b):
    """(n, P50, P90, mean) of the runs between two sample_times() readings, or None."""
    if not a or not b:
        return None
    n = sum(y - x for x, y in zip(a[0], b[0]))
    t = bpfcost.window_times(a, b)
    return (n,) + t if t and n else None


def one_round(profile, targets, hz, seconds, settle_limit):
    """Both TARGETS (argv lists, the first to be profiled first) started, profiled together;
    returns ({index: (n, P50, P90, mean)}, profile's CPU seconds a second, samples a second,
    profile's last lines) or None, why."""
    procs = [subprocess.Popen(t, stdout=subprocess.DEVNULL) for t in targets]
    p = None
    try:
        time.sleep(0.3)
        before = bpfcost.max_prog_id()
        p = subprocess.Popen([profile, "-v", "-F", str(hz), "-p",
                              ",".join(str(t.pid) for t in procs), "-d",
                              f"{seconds + settle_limit + 10:g}", "-o", "/dev/null"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, errors="replace",
                             env=dict(os.environ, PROFILE_BPF_TIMES="1"))
        prog, t0 = None, time.monotonic()
        while prog is None and p.poll() is None and time.monotonic() - t0 < 20:
            time.sleep(0.1)
            prog = bpfcost.find_prog("do_sample", before)
        if prog is None:
            return None, "no do_sample program loaded"
        times_id = bpfcost.map_named(prog, "btimes")
        time.sleep(1.0)
        if bpfcost.settle(p, p.pid, settle_limit)[0] is None:
            return None, "profile's start-up work did not end within --settle"
        fam = bpfcost.family(p.pid)
        c0, a0 = bpfcost.task_cpu(fam), time.monotonic()
        first = [bpfcost.sample_times(times_id, k)
                 for k in (bpfcost.TIME_SAMPLE_FIRST, bpfcost.TIME_SAMPLE_SECOND)]
        # Each target on a CPU of its own, the two swapped every SWAP seconds: a vCPU's
        # host core may be busier than the other's (another guest on its sibling), and
        # each target then spends half the window on each.
        cpus = sorted(os.sched_getaffinity(0))[:2]
        k, end = 0, time.monotonic() + seconds
        while time.monotonic() < end:
            if len(cpus) == 2:
                for j, t in enumerate(procs):
                    try:
                        os.sched_setaffinity(t.pid, {cpus[(j + k) % 2]})
                    except OSError:
                        pass
            k += 1
            time.sleep(max(0, min(SWAP, end - time.monotonic())))
        last = [bpfcost.sample_times(times_id, k)
                for k in (bpfcost.TIME_SAMPLE_FIRST, bpfcost.TIME_SAMPLE_SECOND)]
        c1, a1 = bpfcost.task_cpu(fam), time.monotonic()
        if p.poll() is not None:
            return None, "profile ended before the window did"
        cpu = sum(v[1] - (c0[k][1] if k in c0 else 0) for k, v in c1.items()) / (a1 - a0)
        res = {i: window(first[i], last[i]) for i in (0, 1)}
        if not all(res.values()):
            return None, "no timed samples of one target (a build without PROFILE_BPF_TIMES' kinds?)"
        rate = sum(r[0] for r in res.values()) / (a1 - a0)
        return (res, cpu, rate), None
    finally:
        if p is not None and p.poll() is None:
            p.send_signal(signal.SIGINT)
            try:
                p.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
        for t in procs:
            t.kill()
            t.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build", help="build directory (default: build)")
    ap.add_argument("-F", "--freq", type=int, default=999, help="frequency (default 999)")
    ap.add_argument("-d", "--duration", type=float, default=6,
                    help="seconds of each round's window (default 6)")
    ap.add_argument("--rounds", type=int, default=10, help="rounds (default 10)")
    ap.add_argument("--settle", type=float, default=30,
                    help="at most this long for profile's start-up work (default 30 s)")
    args = ap.parse_args()

    profile = os.path.join(args.build, "profile")
    bpfcost.require("walkpair", [profile, "/usr/bin/xz"], root_for="attaching BPF programs")
    xzfp = os.environ.get("PROFILE_BENCH_XZ_FP")
    if not xzfp or not os.access(xzfp, os.X_OK):
        print("walkpair: PROFILE_BENCH_XZ_FP is not set to an xz built with frame pointers "
              "(bench/bpfcost.py's docstring says how to build one)", file=sys.stderr)
        sys.exit(2)
    xz_in = os.path.join(args.build, "bench", "xz-input")
    bpfcost.make_xz_input(xz_in)
    cmds = {"xz": ["/usr/bin/xz", "-9e", "-T1", "-c", xz_in],
            "xz-fp": [xzfp, "-9e", "-T1", "-c", xz_in]}
    print(f"walkpair: {args.rounds} rounds of {args.duration:g} s at {args.freq} Hz, xz and "
          f"xz-fp at once ({xzfp}); load {loadavg()}")
    rows = []
    for i in range(args.rounds):
        order = ["xz", "xz-fp"] if i % 2 == 0 else ["xz-fp", "xz"]
        r, why = one_round(profile, [cmds[k] for k in order], args.freq, args.duration,
                           args.settle)
        if r is None:
            print(f"  round {i + 1}: FAILED: {why}")
            continue
        res, cpu, rate = r
        by = {order[j]: res[j] for j in (0, 1)}
        own = 1e9 * cpu / rate if rate else 0  # profile's ns per sample, both targets'
        row = dict(by=by, own=own, ratio=by["xz"][3] / by["xz-fp"][3],
                   ratio_own=(by["xz"][3] + own) / (by["xz-fp"][3] + own))
        rows.append(row)
        print(f"  round {i + 1} ({order[0]} first): "
              + "  ".join(f"{k}: P50 {by[k][1]} P90 {by[k][2]} mean {by[k][3]:.0f} ns "
                          f"({by[k][0]} samples)" for k in ("xz", "xz-fp"))
              + f"  profile {own:.0f} ns/sample  xz/xz-fp {row['ratio']:.3f} "
                f"(us/own {row['ratio_own']:.3f})", flush=True)
    if not rows:
        sys.exit("walkpair: no round ran")
    print(f"\n{'target':<46} {'P50 ns':>7} {'P90 ns':>7} {'mean ns':>8} {'min-max':>11} "
          f"{'us/own':>7}")
    own = med([r["own"] for r in rows])
    for k, label in (("xz", "Debian's xz -9e (walked from the tables)"),
                     ("xz-fp", "xz -9e built with frame pointers")):
        means = [r["by"][k][3] for r in rows]
        print(f"{label:<46} {med([r['by'][k][1] for r in rows]):>7.0f} "
              f"{med([r['by'][k][2] for r in rows]):>7.0f} {med(means):>8.0f} "
              f"{spread(means, 0):>11} {(med(means) + own) / 1000:>7.2f}")
    ratios = [r["ratio"] for r in rows]
    below = sum(x <= 1 for x in ratios)
    print(f"\nxz over xz-fp, BPF mean per sample: median {med(ratios):.3f} "
          f"({spread(ratios, 3)}), at or below 1 in {below} of {len(ratios)} rounds; "
          f"us/own (profile's {own:.0f} ns a sample added to both): median "
          f"{med([r['ratio_own'] for r in rows]):.3f}")
    print(f"Aim (issue 28): xz at or below the frame-pointer build: "
          f"{'met' if med(ratios) <= 1 else 'NOT met'} (median of the rounds)")


if __name__ == "__main__":
    main()

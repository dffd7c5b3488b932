# SPDX-License-Identifier: GPL-3.0-or-later
"""The chain of tests/workloads/pychain.py (module -> top -> recurse x3 -> middle -> leaf, and
zlib.compress, an extension's C code, under middle) as a benchmark target for
bench/bpfcost.py and bench/pyoverhead.py (issue 29: the cost of reading Python frames).

    pywork.py iters N      N calls of the chain, then "pywork: iters=N elapsed=S rate=R"
                           (its own wall time, from the first call to the last: start-up
                           and the profiler's set-up are not counted)
    pywork.py ticks S      the chain for S seconds, printing "tick T N" (CLOCK_MONOTONIC
                           seconds, calls so far) every 0.25 s: the work rate over any window
"""
import sys
import time
import zlib

DATA = bytes(range(256)) * 64


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def middle(n):
    z = zlib.compress(DATA, 9)
    return leaf(n) + len(z)


def recurse(d, n):
    if d == 0:
        return middle(n)
    return recurse(d - 1, n)


def top_iters(iters):
    t = 0
    for _ in range(iters):
        t += recurse(3, 3000)
    return t


def top_ticks(seconds):
    end = time.monotonic() + seconds
    n, nxt = 0, time.monotonic()
    while True:
        now = time.monotonic()
        if now >= nxt:
            print(f"tick {now:.6f} {n}", flush=True)
            nxt = now + 0.25
            if now >= end:
                break
        recurse(3, 3000)
        n += 1


def main():
    mode, arg = sys.argv[1], sys.argv[2]
    if mode == "iters":
        t0 = time.monotonic()
        top_iters(int(arg))
        dt = time.monotonic() - t0
        print(f"pywork: iters={arg} elapsed={dt:.6f} rate={int(arg) / dt:.1f}", flush=True)
    else:
        top_ticks(float(arg))


main()

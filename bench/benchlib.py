# SPDX-License-Identifier: GPL-3.0-or-later
"""Helpers shared by the benchmarks: medians and spreads that skip missing values."""
import os
import shutil
import statistics
import sys


def median(xs):
    """The median of the values in XS that are not None, or None when there are none."""
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def spread(xs, digits=2):
    """'min-max' of the values in XS that are not None, or '-'."""
    xs = [x for x in xs if x is not None]
    return f"{min(xs):.{digits}f}-{max(xs):.{digits}f}" if xs else "-"


def loadavg():
    """The 1, 5 and 15 minute load averages, as /proc/loadavg gives them."""
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def require(name, paths, root_for=None):
    """Exit with one sentence when one of PATHS is not an executable built by `make bench`;
    warn when not root and ROOT_FOR (what needs it) is given."""
    for path in paths:
        if not os.access(path, os.X_OK):
            sys.exit(f"{name}: {path} is missing; run `make bench`")
    if root_for and os.geteuid() != 0:
        print(f"{name}: not root; {root_for} will probably fail", file=sys.stderr)


def xz_work(tmp, mb, who):
    """The xz workload of endtoend.py and pprofwrite.py: `xz -6 -T1 -c FILE` over MB MB of
    random data written into TMP (more than the sampling takes). Exits with a sentence,
    naming WHO, when xz is missing."""
    xz = shutil.which("xz")
    if not xz:
        sys.exit(f"{who}: xz is missing (Debian: apt-get install xz-utils)")
    data = os.path.join(tmp, "random.bin")
    with open(data, "wb") as f:
        for _ in range(mb):
            f.write(os.urandom(1 << 20))
    return [xz, "-6", "-T1", "-c", data]

# SPDX-License-Identifier: GPL-3.0-or-later
"""Helpers shared by the benchmarks: medians and spreads that skip missing values."""
import statistics


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

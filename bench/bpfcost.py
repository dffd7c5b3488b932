#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""BPF program run time per sample: the frame-pointer path, the walk from the unwind tables and
the stack-copy (DWARF) path.

Run as root after `make bench`. It sets kernel.bpf_stats_enabled=1 (and restores the old
value at the end), starts a fixed-work target that runs for the whole measurement, and
profiles it with `profile -F HZ -p PID -d SECONDS -o /dev/null` (default 999 Hz, 8 s):

    fp      fixedwork_fp,   --unwind auto: frame-pointer walk, counted in the kernel
    tables  fixedwork_nofp, --unwind auto: walk breaks off, walked again from the files'
                            unwind tables in BPF, counted in the kernel (issue 28)
    copy    fixedwork_nofp, PROFILE_NO_TABLE_WALK=1: walk breaks off, 16 KiB stack copy +
                            ring buffer, unwound in userspace
    copy-fp fixedwork_fp,   --unwind dwarf: the same copy path on the frame-pointer target
    deep    recurse (200 frames of 512 bytes, no frame pointers), --unwind auto: 127 frames
                            walked from the tables in BPF, the rest from a copy taken
                            where that walk stopped
    deep-copy recurse, PROFILE_NO_TABLE_WALK=1: the copy from the leaf
    xz      Debian's xz -9e compressing (no frame pointers), --unwind auto
    xz-copy the same, PROFILE_NO_TABLE_WALK=1
    xz-fp   the same version of xz built with frame pointers (-fno-omit-frame-pointer
            -mno-omit-leaf-frame-pointer, liblzma too), its path in PROFILE_BENCH_XZ_FP:
            the frame-pointer walk on the same program and input, to set beside xz's walk
            from the tables. Debian has no such build: make one from XZ Utils' source
            (cmake -DBUILD_SHARED_LIBS=ON -DCMAKE_C_FLAGS="-O2 -g -fno-omit-frame-pointer
            -mno-omit-leaf-frame-pointer", then make xz). Skipped, and said, when unset.
    node    Debian's node running a JS loop with --perf-basic-prof, --unwind auto
    node-copy the same, PROFILE_NO_TABLE_WALK=1
    node-sort Debian's node sorting strings: most samples in V8's builtins, walked by the
            rows the worker makes from their code (unwind/frames_follow.c)
    fp-timeline, tables-timeline: fp and tables with a speedscope output as well (-o
            FILE.speedscope.json): BPF sends a record of each sample it counts, and profile
            keeps each sample's time (issue 30)
    python  Debian's python3.11 running bench/pywork.py (pychain.py's chain, one thread):
            its Python frames read at each sample (issue 29)
    python-noruntime  the same with --no-runtime: no Python frames read
    python-alone      the same target with no profiler: its work rate, the reference for
            the two above (calls of the chain per second, from the target's own ticks over
            the window profile's figures are taken in; not a BPF figure)

PROFILE_BPF_TIMES=1 (unless --no-times) has each run of the sample program timed in BPF
(two more clock reads a run, a few tens of ns): P50, P90 and mean per sample, the
distribution bpf_stats' totals do not give, read from profile's `btimes` map at the window's
first and last readings: steady state, start-up left out (the CPUs' row caches filling,
some 150 searches of the tables for xz in its first seconds, ~1 ms of BPF time; the samples
before the worker's tables were there, sent with copies). "run mean" is profile -v's mean,
of the whole run, start-up in. "us/sample all" adds profile's and its
worker's CPU per target sample to BPF's time per sample: the steady cost of a sample,
wherever it is spent. "us/own" adds it to the mean of the target's samples' runs alone: the
same cost without the runs on the other CPUs for other processes (those return at once, but
how many there are depends on what else the machine runs: 1000 or 2000 a second here from
one round to the next, a few hundred ns a target sample), the figure to set two targets side
by side with.

For each it also gives the CPU time profile and its worker used per second while sampling
(the schedstat of each of their threads, in ns, between the first and the last reading).
The readings begin once profile's start-up work is done (--settle, at most 30 s): its thread
reading the kernel's names (profile-ksyms) and its worker parsing the files it was handed
both run at idle priority while sampling begins, and on a machine the target keeps busy they
take seconds (23 s beside fixedwork's two threads on 2 CPUs, at least 60-75 ms of CPU in all): before,
that work fell into the window, 6-10 ms a second of "profile CPU" that is no cost of a
sample. Each round's line says how long it took and its CPU; profile is stopped (SIGINT)
when the window ends.

While profile runs, every --interval seconds it reads, with bpftool, the program named
do_sample (run_time_ns, run_cnt) and profile's `stats` map (slot 0: samples of a profiled
task, summed over the CPUs). For each interval, after the first second:

    ns per run     = delta run_time_ns / delta run_cnt: every run, including the cheap ones
                     that return at once because the CPU runs another process (the pid filter)
    ns per sample  = delta run_time_ns / delta samples: the whole cost of the program divided
                     by the samples of the target, the figure the aim of issue 7 is about

and it reports the median and min-max over the intervals and rounds. bpf_stats itself adds
two clock reads per run (some tens of ns) to what it measures.

With --bcc (default when /usr/sbin/profile-bpfcc exists) it measures bcc's profile the same
way on the frame-pointer target (its program: do_perf_event; ns per run only, as it has no
counter of target samples: with -p, nearly every run on a 2-CPU machine busy with the
target's 2 threads is a target sample).
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from benchlib import median as med, require, spread


def rng(xs):
    return spread(xs, 0)

BCC_PROFILE = "/usr/sbin/profile-bpfcc"


def bpftool(*args):
    out = subprocess.run(["bpftool", "--json"] + list(args), capture_output=True, text=True,
                         timeout=10)
    if out.returncode != 0:
        return None
    try:
        return json.loads(out.stdout)
    except ValueError:
        return None


def find_prog(name, after_id):
    """The newest program called NAME loaded after AFTER_ID, as bpftool shows it."""
    progs = bpftool("prog", "show") or []
    cands = [p for p in progs if p.get("name") == name and p["id"] > after_id]
    return max(cands, key=lambda p: p["id"]) if cands else None


def max_prog_id():
    progs = bpftool("prog", "show") or []
    return max((p["id"] for p in progs), default=0)


def map_named(prog, name):
    """The id of PROG's map called NAME, or None."""
    for mid in prog.get("map_ids", []):
        m = bpftool("map", "show", "id", str(mid))
        if m and m.get("name") == name:
            return mid
    return None


# bpf/profile.h: `btimes` holds PROFILE_TIME_BUCKETS buckets per kind (PROFILE_TIME_KINDS:
# a sample, a switch, a sample of the first process profiled, of the second), the first
# PROFILE_TIME_FINE of them PROFILE_TIME_STEP ns wide, the others PROFILE_TIME_COARSE; then
# each kind's total ns.
TIME_BUCKETS, TIME_FINE, TIME_STEP, TIME_COARSE, TIME_KINDS = 128, 64, 100, 1000, 4
TIME_SAMPLE, TIME_SWITCH, TIME_SAMPLE_FIRST, TIME_SAMPLE_SECOND = range(4)


def sample_times(map_id, kind=TIME_SAMPLE):
    """The runs' buckets and total ns of KIND in `btimes` (PROFILE_BPF_TIMES), summed over
    the CPUs: (list of TIME_BUCKETS counts, ns), or None."""
    slots = percpu_slots(map_id)
    if slots is None:
        return None
    return ([slots.get(kind * TIME_BUCKETS + i, 0) for i in range(TIME_BUCKETS)],
            slots.get(TIME_KINDS * TIME_BUCKETS + kind, 0))


def time_edge(i):
    """The upper edge of bucket I in ns (cmd/summary.c's bpf_time_edge)."""
    i = min(i, TIME_BUCKETS - 2)
    if i < TIME_FINE:
        return (i + 1) * TIME_STEP
    return TIME_FINE * TIME_STEP + (i + 1 - TIME_FINE) * TIME_COARSE


def window_times(a, b):
    """P50, P90 and mean ns of the sample runs between two sample_times() readings A and B
    (the window's, start-up left out), or None."""
    if not a or not b:
        return None
    d = [y - x for x, y in zip(a[0], b[0])]
    n = sum(d)
    if n <= 0:
        return None

    def share(p):
        seen = 0
        for i, c in enumerate(d):
            seen += c
            if seen * 100 >= n * p:
                return time_edge(i)
        return time_edge(TIME_BUCKETS - 1)
    # (A build from before the kinds' sums: no mean.)
    return share(50), share(90), (b[1] - a[1]) / n if b[1] > a[1] else None


def percpu_slots(map_id):
    """Each slot of a per-CPU array map, summed over the CPUs: {slot: value}, or None."""
    dump = bpftool("map", "dump", "id", str(map_id))
    if not dump:
        return None
    slots = {}
    for entry in dump:
        f = entry.get("formatted")
        if f is not None:
            slots[f.get("key")] = sum(v["value"] for v in f["values"])
            continue
        key = int.from_bytes(bytes(int(b, 16) for b in entry["key"]), "little")
        slots[key] = sum(int.from_bytes(bytes(int(b, 16) for b in v["value"]), "little")
                         for v in entry["values"])
    return slots


def samples_in_stats(map_id):
    """Slot 0 (STAT_SAMPLES) of profile's per-CPU stats array, summed over the CPUs."""
    slots = percpu_slots(map_id)
    return slots.get(0) if slots is not None else None


def family(pid):
    """Process PID and its children now alive (profile's worker, fetcher, helpers)."""
    pids = [pid]
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == pid:
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    pids.append(int(d))
        except (OSError, ValueError, IndexError):
            continue
    return pids


def task_cpu(pids):
    """{(pid, tid): (name, CPU seconds)} of every thread of PIDS, from their schedstat (ns:
    /proc/PID/stat's ticks are 10 ms, as much as a second of profile's steady work)."""
    out = {}
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    ns = int(f.read().split()[0])
                with open(f"/proc/{pid}/task/{tid}/comm") as f:
                    name = f.read().strip()
            except (OSError, ValueError, IndexError):
                continue
            out[(pid, int(tid))] = (name, ns / 1e9)
    return out


def settle(p, pid, limit, step=0.5, quiet=0.0005):
    """Wait, up to LIMIT seconds, until profile (PID, process P) is done with its start-up
    work: its thread reading the kernel's names (profile-ksyms, at idle priority) gone and
    its worker using under QUIET seconds of CPU a second (it parses the files it was
    handed at idle priority while sampling begins). Returns the seconds waited and the CPU
    seconds that work took meanwhile (a thread that ended counted as last seen), or None for
    the seconds when it did not settle."""
    t0 = time.monotonic()
    seen = task_cpu(family(pid))
    c0 = sum(v[1] for v in seen.values())
    last = None

    def spent():
        return sum(v[1] for v in seen.values()) - c0

    while p.poll() is None and time.monotonic() - t0 < limit:
        tasks = task_cpu(family(pid))
        seen.update(tasks)
        busy = any(v[0] == "profile-ksyms" for v in tasks.values())
        worker = sum(v[1] for k, v in tasks.items() if k[0] != pid)
        if last is not None and not busy and (worker - last) / step < quiet:
            return time.monotonic() - t0, spent()
        last = worker
        time.sleep(step)
    return None, spent()


def snapshot(prog_id, map_id, pid=None, times_id=None):
    p = bpftool("prog", "show", "id", str(prog_id))
    if not p:
        return None
    s = samples_in_stats(map_id) if map_id else None
    return (time.monotonic(), p.get("run_time_ns", 0), p.get("run_cnt", 0), s,
            task_cpu(family(pid)) if pid else None,
            sample_times(times_id) if times_id else None)


def measure(argv, prog_name, seconds, interval, warmup=1.0, env=None, settle_limit=0):
    """Run the profiler ARGV (ENV: variables added); return (per-run ns list, per-sample ns
    list, totals, exit code, CPU seconds a second of it and its worker while sampling),
    stderr. SETTLE_LIMIT: the window begins once profile's start-up work is done (settle(),
    at most that many seconds), and profile is stopped (SIGINT) when it ends: ARGV's -d must
    leave room for both; totals then say how long that took ("settle", None when it did
    not) and its CPU ("settle_cpu")."""
    before = max_prog_id()
    t0 = time.monotonic()
    # One stream: bcc's profile says why it failed on stdout, profile -v on stderr.
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, errors="replace",
                         env=dict(os.environ, **env) if env else None)
    prog = None
    while prog is None and p.poll() is None and time.monotonic() - t0 < 20:
        time.sleep(0.1)
        prog = find_prog(prog_name, before)
    if prog is None:
        try:
            err, _ = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            err, _ = p.communicate()
        return None, err
    map_id = map_named(prog, "stats") if prog_name == "do_sample" else None
    times_id = map_named(prog, "btimes") if env and env.get("PROFILE_BPF_TIMES") else None
    t_attach = time.monotonic()
    settled = None
    if settle_limit and prog_name == "do_sample":
        time.sleep(warmup)
        settled = settle(p, p.pid, settle_limit)
        t_attach = time.monotonic() - warmup
    snaps = []
    next_at = t_attach + warmup
    while p.poll() is None:
        now = time.monotonic()
        if now >= next_at:
            s = snapshot(prog["id"], map_id, p.pid, times_id)
            if s and p.poll() is None:
                snaps.append(s)
            next_at += interval
            if now - t_attach > seconds - 0.3:
                break
        time.sleep(0.02)
    if (prog_name != "do_sample" or settled) and p.poll() is None:
        p.send_signal(2)  # bcc's profile stops on SIGINT too
    try:
        err, _ = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        err, _ = p.communicate()
    per_run, per_sample = [], []
    for a, b in zip(snaps, snaps[1:]):
        dt_ns, runs = b[1] - a[1], b[2] - a[2]
        if runs > 0:
            per_run.append(dt_ns / runs)
        if a[3] is not None and b[3] is not None and b[3] > a[3]:
            per_sample.append(dt_ns / (b[3] - a[3]))
    # profile's and its worker's CPU per second while it sampled (start-up left out).
    # (Per thread, from the first reading to its last: a thread that ended in the window,
    # profile-ksyms when start-up had not settled, counts as last seen, not as nothing.)
    cpu = None
    if len(snaps) >= 2 and snaps[0][4] is not None and snaps[-1][0] > snaps[0][0]:
        seen = {}
        for sn in snaps:
            seen.update(sn[4])
        first = snaps[0][4]
        cpu = sum(v[1] - (first[k][1] if k in first else 0) for k, v in seen.items()) / \
            (snaps[-1][0] - snaps[0][0])
    tot = None
    if len(snaps) >= 2:
        a, b = snaps[0], snaps[-1]
        tot = dict(secs=b[0] - a[0], ns=b[1] - a[1], runs=b[2] - a[2],
                   samples=(b[3] - a[3]) if a[3] is not None and b[3] is not None else None)
    if tot is not None:
        tot["t0"], tot["t1"] = snaps[0][0], snaps[-1][0]
        # (PROFILE_BPF_TIMES: the sample runs' P50, P90 and mean in the window.)
        tot["times"] = window_times(snaps[0][5], snaps[-1][5])
        if settled:
            tot["settle"], tot["settle_cpu"] = settled
    return (per_run, per_sample, tot, p.returncode, cpu), err


class Ticks:
    """The "tick T N" lines of bench/pywork.py's ticks mode, read as it runs: its work rate
    over a window of CLOCK_MONOTONIC times."""

    def __init__(self, proc):
        import threading
        self.ticks = []
        self.thread = threading.Thread(target=self._read, args=(proc.stdout,), daemon=True)
        self.thread.start()

    def _read(self, f):
        for line in f:
            m = re.match(r"tick (\d+\.\d+) (\d+)", line)
            if m:
                self.ticks.append((float(m.group(1)), int(m.group(2))))

    def rate(self, t0, t1):
        """Calls per second between the ticks nearest T0 and T1 inside [T0, T1]."""
        inside = [t for t in self.ticks if t0 <= t[0] <= t1]
        if len(inside) < 2 or inside[-1][0] <= inside[0][0]:
            return None
        return (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0])


def make_xz_input(path):
    """PATH made, unless it is there: compressible input xz -9e takes well over a run to get
    through (the system's programs, again and again)."""
    if os.path.exists(path):
        return
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "wb") as out:
        size = 0
        for name in sorted(os.listdir("/usr/bin")):
            try:
                with open(os.path.join("/usr/bin", name), "rb") as f:
                    data = f.read(4 << 20)
            except OSError:
                continue
            out.write(data)
            size += len(data)
            if size > 64 << 20:
                break


def settled_note(tot):
    """What the round line says of the start-up work waited for."""
    if not tot or "settle" not in tot:
        return ""
    if tot["settle"] is None:
        return f"  (start-up work not done in --settle: {1000 * tot['settle_cpu']:.0f} ms CPU)"
    return (f"  (start-up work done {tot['settle']:.1f} s in: "
            f"{1000 * tot['settle_cpu']:.0f} ms CPU)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="build directory (default: build)")
    ap.add_argument("-F", "--freq", type=int, default=999, help="frequency (default 999)")
    ap.add_argument("-d", "--duration", type=float, default=8, help="seconds per run (default 8)")
    ap.add_argument("--interval", type=float, default=1.0, help="seconds between readings")
    ap.add_argument("--rounds", type=int, default=2, help="rounds (default 2)")
    ap.add_argument("--quick", action="store_true", help="1 round of 5 s")
    ap.add_argument("--settle", type=float, default=30,
                    help="at most this many seconds for profile's start-up work (the "
                         "kernel's names, the files' symbols, at idle priority) before the "
                         "window (default 30; 0: the window begins a second in)")
    ap.add_argument("--bcc", dest="bcc", action="store_true", default=None,
                    help=f"also measure bcc's profile ({BCC_PROFILE})")
    ap.add_argument("--no-bcc", dest="bcc", action="store_false")
    ap.add_argument("--no-times", dest="times", action="store_false", default=True,
                    help="without PROFILE_BPF_TIMES (no P50/P90)")
    ap.add_argument("--only", help="comma-separated configs to run, in that order (default: all)")
    ap.add_argument("--decompose", action="store_true",
                    help="also the frame-pointer target with -U and with -K: where the time goes")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.duration = 1, 5
    if args.bcc is None:
        args.bcc = os.access(BCC_PROFILE, os.X_OK)
    profile = os.path.join(args.build, "profile")
    fp = os.path.join(args.build, "bench", "fixedwork_fp")
    nofp = os.path.join(args.build, "bench", "fixedwork_nofp")
    require("bpfcost", (profile, fp, nofp))
    try:
        subprocess.run(["bpftool", "version"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        sys.exit("bpfcost: bpftool is missing (Debian: apt-get install bpftool)")

    hz, secs = str(args.freq), f"{args.duration:g}"
    no_tab = {"PROFILE_NO_TABLE_WALK": "1"}
    deep = os.path.join(args.build, "tests", "workloads", "recurse")
    xz_in = os.path.join(args.build, "bench", "xz-input")
    long = str(int(args.duration + args.settle) + 30)
    configs = [("fp", "frame pointers (fixedwork_fp, auto)", [fp, "1000000"], [], None),
               ("tables", "unwind tables in BPF (fixedwork_nofp, auto)", [nofp, "1000000"],
                [], None),
               ("copy", "stack copy (fixedwork_nofp, no table walk)", [nofp, "1000000"], [],
                no_tab),
               ("copy-fp", "stack copy (fixedwork_fp, --unwind dwarf)", [fp, "1000000"],
                ["--unwind", "dwarf"], None)]
    if os.access(deep, os.X_OK):
        configs += [("deep", "200-deep recursion (recurse, auto)", [deep, long], [], None),
                    ("deep-copy", "200-deep recursion, no table walk", [deep, long], [],
                     no_tab)]
    else:
        print(f"bpfcost: {deep} missing (make workloads): no deep configs")
    if os.access("/usr/bin/xz", os.X_OK):
        make_xz_input(xz_in)
        xz = ["/usr/bin/xz", "-9e", "-T1", "-c", xz_in]
        configs += [("xz", "Debian's xz -9e (auto)", xz, [], None),
                    ("xz-copy", "Debian's xz -9e, no table walk", xz, [], no_tab)]
        xzfp = os.environ.get("PROFILE_BENCH_XZ_FP")
        if xzfp and os.access(xzfp, os.X_OK):
            configs += [("xz-fp", "xz -9e built with frame pointers (auto)",
                         [xzfp] + xz[1:], [], None)]
        else:
            print("bpfcost: PROFILE_BENCH_XZ_FP is not set to an xz built with frame "
                  "pointers: no xz-fp config")
    node = "/usr/bin/node"
    if os.access(node, os.X_OK):
        # Debian's node: its C++ by the tables, V8's builtins and the JIT code by their
        # frame records (issue 28); against the copy path (userspace's unwind, its scans).
        js = ("function f(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i) * "
              "Math.sin(i); return s } for (;;) f(100000)")
        nodeargv = [node, "--perf-basic-prof", "-e", js]
        # Most of its samples in V8's builtins, many of them leaves that keep no record of
        # their own: walked by the rows the worker makes from their code.
        sort_js = ("let s = 0; for (;;) { const a = []; for (let i = 0; i < 2000; i++) "
                   "a.push(String(i * 7 % 13)); a.sort(); s += a.join(',').length }")
        configs += [("node", "Debian's node, JIT code (auto)", nodeargv, [], None),
                    ("node-copy", "Debian's node, no table walk", nodeargv, [], no_tab),
                    ("node-sort", "Debian's node sorting strings (auto)",
                     [node, "-e", sort_js], [], None)]
    else:
        print(f"bpfcost: {node} missing (Debian's nodejs): no node configs")
    tl = ["-o", os.path.join(args.build, "bench", "bpfcost.speedscope.json")]
    configs += [("fp-timeline", "frame pointers + speedscope timeline", [fp, "1000000"], tl,
                 None),
                ("tables-timeline", "unwind tables + speedscope timeline", [nofp, "1000000"],
                 tl, None)]
    pywork = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pywork.py")
    python = "/usr/bin/python3.11"
    if os.access(python, os.X_OK):
        # (the ticks mode runs long enough for any run; it is killed at the end)
        pyt = [python, pywork, "ticks", long]
        configs += [("python-alone", "python3.11 pywork.py, no profiler", pyt, None, None),
                    ("python", "python3.11 pywork.py (Python frames read)", pyt, [], None),
                    ("python-noruntime", "python3.11 pywork.py, --no-runtime", pyt,
                     ["--no-runtime"], None)]
    else:
        print(f"bpfcost: {python} missing (Debian's python3.11): no python configs")
    if args.decompose:
        configs += [("fp-U", "frame pointers, user stacks only (-U)", [fp, "1000000"], ["-U"],
                     None),
                    ("fp-K", "frame pointers, kernel stacks only (-K)", [fp, "1000000"],
                     ["-K"], None)]
    if args.only:
        # in the order --only names them: two targets can be run in turn, each first
        want = args.only.split(",")
        configs = sorted((c for c in configs if c[0] in want), key=lambda c: want.index(c[0]))
    times_env = {"PROFILE_BPF_TIMES": "1"} if args.times else {}
    print(f"bpfcost: {platform.node()}, kernel {platform.release()}, {os.cpu_count()} CPUs, "
          f"{args.rounds} rounds of {secs} s at {hz} Hz")
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        old = f.read().strip()
    results = {}
    rates = {}  # the python configs' work rates (calls of the chain per second), by round
    bcc_note = None
    try:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write("1")
        for i in range(args.rounds):
            for key, label, target, extra, env in configs:
                ticking = key.startswith("python")
                t = subprocess.Popen(target, stdout=subprocess.PIPE if ticking else
                                     subprocess.DEVNULL, text=True)
                ticks = Ticks(t) if ticking else None
                try:
                    time.sleep(0.3)
                    if extra is None:
                        # no profiler: the target's rate over a window as long as theirs
                        t0 = time.monotonic() + 1.0
                        time.sleep(args.duration + 0.5)
                        rate = ticks.rate(t0, t0 + args.duration - 1.0)
                        rates.setdefault(key, []).append(rate)
                        print(f"  round {i + 1} {key:8} {rate or 0:.0f} calls/s", flush=True)
                        continue
                    r, err = measure([profile, "-v", "-F", hz, "-p", str(t.pid), "-d",
                                      f"{args.duration + args.settle + 5:g}", "-o",
                                      "/dev/null"] + extra, "do_sample", args.duration,
                                     args.interval, env=dict(env or {}, **times_env),
                                     settle_limit=args.settle)
                finally:
                    t.kill()
                    t.wait()
                    if ticks:
                        ticks.thread.join(timeout=5)
                if ticks and r is not None and r[2]:
                    rates.setdefault(key, []).append(ticks.rate(r[2]["t0"], r[2]["t1"]))
                m = re.search(r"profile: (\d+) samples in", err or "")
                if r is None or r[3] != 0:
                    print(f"  round {i + 1} {key:8} FAILED: "
                          f"{(err or '').strip().splitlines()[-1:] or 'no do_sample program'}")
                    continue
                per_run, per_sample, tot, _, cpu = r
                # (A build from before the mean: no mean.)
                pt = re.search(r"BPF run time of a profiled task's sample: P50 <= (\d+) ns, "
                               r"P90 <= (\d+) ns(?:, P99 <= \d+ ns, mean (\d+) ns)?",
                               err or "")
                cp = re.search(r"user stacks ([0-9.]+)% DWARF-unwound", err or "")
                # The window's P50, P90 and mean (start-up left out: the CPUs' row caches
                # filling, the samples before the worker's tables were there); -v's, of
                # the whole run, when the map could not be read.
                wt = tot.get("times") if tot else None
                run = (int(pt.group(1)), int(pt.group(2)),
                       int(pt.group(3)) if pt.group(3) else None) if pt else None
                r = r + (wt or run, run)
                results.setdefault(key, []).append(r)
                rate = rates.get(key, [None])[-1] if key.startswith("python") else None
                print(f"  round {i + 1} {key:8} ns/run {med(per_run) or 0:.0f}  "
                      f"ns/sample {med(per_sample) or 0:.0f}  profile CPU "
                      f"{1000 * (cpu or 0):.1f} ms/s  "
                      f"({tot['runs'] if tot else 0} runs, {tot['samples'] if tot else 0} "
                      f"target samples in the window; profile: "
                      f"{m.group(1) if m else '?'} samples)"
                      f"{f'  P50 {wt[0]} P90 {wt[1]} mean {wt[2] or 0:.0f} ns' if wt else ''}"
                      f"{f'  (whole run: P50 {pt.group(1)} P90 {pt.group(2)} mean {pt.group(3)} ns)' if pt else ''}"
                      f"{f'  copied {cp.group(1)}%' if cp else ''}"
                      f"{settled_note(tot)}"
                      f"{f'  {rate:.0f} calls/s' if rate else ''}", flush=True)
            if args.bcc:
                t = subprocess.Popen([fp, "1000000"], stdout=subprocess.DEVNULL)
                try:
                    time.sleep(0.3)
                    r, err = measure([BCC_PROFILE, "-F", hz, "-p", str(t.pid), secs],
                                     "do_perf_event", args.duration, args.interval)
                finally:
                    t.kill()
                    t.wait()
                if r is None:
                    lines = [l for l in (err or "").splitlines() if l.strip()]
                    why = next((l for l in lines if "kernel headers" in l), None) or \
                        (lines[-1] if lines else "no do_perf_event program")
                    why = why.split(". Try")[0]
                    bcc_note = f"bcc's profile did not run: {why.strip()}"
                    print(f"  round {i + 1} bcc      {bcc_note}")
                    args.bcc = False
                else:
                    results.setdefault("bcc", []).append(r)
                    print(f"  round {i + 1} bcc      ns/run {med(r[0]) or 0:.0f}", flush=True)
    finally:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write(old)
    print(f"bpfcost: kernel.bpf_stats_enabled restored to {old}")

    print(f"\nBPF program time at {hz} Hz (medians over {args.interval:g}-s intervals of all "
          "rounds; min-max in brackets):\n")
    head = (f"{'path':<44} {'ns per run':>10} {'min-max':>11} {'ns/sample':>10} "
            f"{'min-max':>11} {'runs/s':>7} {'samples/s':>9} {'CPU ms/s':>8} "
            f"{'P50 ns':>7} {'P90 ns':>7} {'mean ns':>7} {'run mean':>8} {'us/sample all':>13} "
            f"{'us/own':>6}")
    print(head)
    print("-" * len(head))
    labels = {k: l for k, l, _, _, _ in configs}
    labels["bcc"] = "bcc profile (fixedwork_fp, stack maps)"
    meds = {}
    for key in [k for k, _, _, _, _ in configs if k != "python-alone"] + ["bcc"]:
        rs = results.get(key)
        if not rs:
            continue
        pr = [x for r in rs for x in r[0]]
        ps = [x for r in rs for x in r[1]]
        secs_total = sum(r[2]["secs"] for r in rs if r[2])
        runs = sum(r[2]["runs"] for r in rs if r[2])
        samples = sum(r[2]["samples"] or 0 for r in rs if r[2])
        meds[key] = (med(pr), med(ps))
        # profile's and its worker's CPU per second of the run (none for bcc's: -).
        cpus = [r[4] for r in rs if len(r) > 4 and r[4] is not None]
        # (P50 and P90 of the runs' own times, the median over rounds.)
        p50 = med([r[5][0] for r in rs if len(r) > 5 and r[5]])
        p90 = med([r[5][1] for r in rs if len(r) > 5 and r[5]])
        mean = med([r[5][2] for r in rs if len(r) > 5 and r[5] and r[5][2]])
        # (-v's mean, of the whole run: start-up in.)
        runmean = med([r[6][2] for r in rs if len(r) > 6 and r[6] and r[6][2]])
        rate = samples / secs_total if secs_total and samples else 0
        allus = (med(ps) + 1e9 * med(cpus) / rate) / 1000 if ps and cpus and rate and \
            key != "bcc" else None
        # (The same with the mean of the target's samples' runs alone for BPF's part: the
        # runs for other processes, whose number depends on what else the machine runs,
        # left out.)
        ownus = (mean + 1e9 * med(cpus) / rate) / 1000 if mean and cpus and rate and \
            key != "bcc" else None
        print(f"{labels[key]:<44} {med(pr) or 0:>10.0f} {rng(pr):>11} "
              f"{(f'{med(ps):.0f}' if ps else '-'):>10} {rng(ps):>11} "
              f"{runs / secs_total if secs_total else 0:>7.0f} "
              f"{(f'{samples / secs_total:.0f}' if samples else '-'):>9} "
              f"{(f'{1000 * med(cpus):.1f}' if cpus and key != 'bcc' else '-'):>8} "
              f"{(f'{p50:.0f}' if p50 else '-'):>7} {(f'{p90:.0f}' if p90 else '-'):>7} "
              f"{(f'{mean:.0f}' if mean else '-'):>7} "
              f"{(f'{runmean:.0f}' if runmean else '-'):>8} "
              f"{(f'{allus:.2f}' if allus else '-'):>13} "
              f"{(f'{ownus:.2f}' if ownus else '-'):>6}")
    if bcc_note:
        print(f"\n{bcc_note}")
    if rates:
        alone = med([x for x in rates.get("python-alone", []) if x])
        print(f"\nPython target's work rate (bench/pywork.py: calls of the chain per second, "
              f"median over rounds; slowdown against the same target alone):")
        for key in ("python-alone", "python", "python-noruntime"):
            xs = [x for x in rates.get(key, []) if x]
            if not xs:
                continue
            slow = f"  {100 * (alone / med(xs) - 1):+.1f}%" if alone and key != "python-alone" \
                else ""
            print(f"  {labels[key]:<44} {med(xs):>8.0f} calls/s  [{rng(xs)}]{slow}")
    if "fp" in meds and "copy" in meds and meds["fp"][1] and meds["copy"][1]:
        print(f"\nRatio copy path / frame-pointer path, per sample: "
              f"{meds['copy'][1] / meds['fp'][1]:.2f}")
    if "tables" in meds and "copy" in meds and meds["tables"][1] and meds["copy"][1]:
        print(f"Ratio unwind tables in BPF / copy path, per sample (BPF only; the copy path "
              f"also costs profile's CPU, above): {meds['tables'][1] / meds['copy'][1]:.2f}")
    if "bcc" in meds and "fp" in meds and meds["bcc"][0]:
        print(f"Ratio profile FP path / bcc profile, per run: {meds['fp'][0] / meds['bcc'][0]:.2f}")
    if "fp" in meds and meds["fp"][1]:
        v = meds["fp"][1]
        print(f"\nAim (issue 7): at most 1 us median per sample on the frame-pointer path: "
              f"{v / 1000:.3f} us: {'met' if v <= 1000 else 'NOT met'}")


if __name__ == "__main__":
    main()

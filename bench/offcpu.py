#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Off-CPU time: the slowdown of context-switch-heavy work under `profile --off-cpu`, beside
perf and bcc's offcputime in the same run, and whose stacks are whole.

Run as root after `make bench` (build/profile, build/bench/switchwork_{nofp,fp}). Workloads
(bench/switchwork.c, as Debian builds (nofp) and with frame pointers (fp)):

    pingpong   two processes pass a byte back and forth over two pipes (every step blocks)
    pool       4 threads take one mutex 400,000 times in all, a little work inside

Per workload, in each round (the order of the tools rotated from round to round):

    alone      the workload
    profile    profile --off-cpu -q -o FILE -- WORKLOAD
    perf -g    perf record -e sched:sched_switch -g -o DATA -- WORKLOAD   (a stack at every
               switch, frame pointers: what perf users run for off-CPU time without
               BUILD_BPF_SKEL's --off-cpu, which Debian's perf lacks)
    perf dwarf perf record -e sched:sched_switch --call-graph dwarf ...
    offcputime offcputime-bpfcc -f -p PID (bcc, Debian's bpfcc-tools), attached to the
               workload started with SWITCHWORK_DELAY=1; when it cannot run here (it needs
               kprobes on finish_task_switch, and the kernel's headers to compile), the
               reason is printed instead

The time compared is what the workload prints of its own work. Slowdown = median under the
tool / median alone - 1. Whole: of the time (profile, offcputime) or the switches (perf) of
the workload's processes that have user frames, the share whose user stack reaches main or
start_thread. Nothing asserts on timings.
"""
import argparse
import os
import platform
import re
import shutil
import signal
import subprocess
import tempfile
import time
from benchlib import loadavg, median, require, spread

WORK_RE = re.compile(r"switchwork: mode=(\w+) ops=(\d+) elapsed=([0-9.]+)")
WORKLOADS = {"pingpong": ["pingpong", "100000"], "pool": ["pool", "4", "400000"]}
ROOTS = ("main", "start_thread")


def run_timed(argv, env=None, timeout=300):
    """Run ARGV; (elapsed the workload printed or None, stdout, stderr)."""
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env,
                       errors="replace")
    m = WORK_RE.search(p.stdout)
    return (float(m.group(3)) if m and p.returncode == 0 else None), p.stdout, p.stderr


def folded_whole(path, comms):
    """Share of the weight of COMMS's stacks with user frames whose stack reaches a root."""
    whole = alls = 0
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        frames = stack.split(";")
        if frames[0] not in comms:
            continue
        user = [x for x in frames[1:] if not x.endswith("_[k]") and x != "[truncated]"]
        if not user:
            continue
        alls += int(count)
        if any(x in ROOTS for x in frames) and "[truncated]" not in frames:
            whole += int(count)
    return whole / alls if alls else None


def perf_whole(perf, data, comms):
    """Share of the switches of COMMS recorded in DATA with user frames reaching a root."""
    out = subprocess.run([perf, "script", "-i", data, "-F", "comm,ip,sym"],
                         capture_output=True, text=True, errors="replace").stdout
    whole = alls = 0
    for block in out.split("\n\n"):
        lines = [x.strip() for x in block.splitlines() if x.strip()]
        if not lines or lines[0].split()[0] not in comms:
            continue
        syms = [x.partition(" ")[2] for x in lines[1:]]
        ips = [int(x.partition(" ")[0], 16) for x in lines[1:] if x[:1].isalnum()]
        if not any(ip < 0xffff800000000000 for ip in ips):
            continue
        alls += 1
        whole += any(s in ROOTS for s in syms)
    return whole / alls if alls else None


def offcputime_works(tool):
    """None when offcputime-bpfcc runs here, else why not (one line)."""
    if not tool:
        return "offcputime-bpfcc not found (Debian: apt-get install bpfcc-tools)"
    try:
        p = subprocess.run([tool, "-f", "1"], capture_output=True, text=True, timeout=60,
                           errors="replace")
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{tool} failed: {e}"
    if p.returncode == 0:
        return None
    err = p.stderr.strip().splitlines()
    kprobes = os.path.exists("/sys/bus/event_source/devices/kprobe")
    why = err[-1] if err else f"exit status {p.returncode}"
    if not kprobes:
        why += "; this kernel has no kprobes (CONFIG_KPROBES is not set), which it needs"
    return why


def run_offcputime(tool, argv, out_path):
    """The workload started delayed, offcputime-bpfcc -f -p attached to it; returns the
    elapsed the workload printed (its stacks folded into OUT_PATH)."""
    env = dict(os.environ, SWITCHWORK_DELAY="1")
    w = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=env)
    with open(out_path, "w") as out:
        t = subprocess.Popen([tool, "-f", "-p", str(w.pid), "600"], stdout=out,
                             stderr=subprocess.DEVNULL)
        stdout, _ = w.communicate(timeout=300)
        time.sleep(0.2)
        t.send_signal(signal.SIGINT)
        t.wait(timeout=120)
    m = WORK_RE.search(stdout or "")
    return float(m.group(3)) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="build directory (default: build)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    ap.add_argument("--quick", action="store_true", help="one round")
    ap.add_argument("--perf", default=shutil.which("perf"), help="perf (default: from PATH)")
    ap.add_argument("--offcputime", default=os.environ.get("OFFCPUTIME") or
                    shutil.which("offcputime-bpfcc"),
                    help="bcc's offcputime (default: $OFFCPUTIME, else from PATH)")
    args = ap.parse_args()
    if args.quick:
        args.rounds = 1
    profile = os.path.join(args.build, "profile")
    targets = {t: os.path.join(args.build, "bench", f"switchwork_{t}") for t in ("nofp", "fp")}
    require("offcpu", [profile] + list(targets.values()), root_for="profile and perf")
    missing = offcputime_works(args.offcputime)
    perf = args.perf
    tmp = tempfile.mkdtemp(prefix="profile-offcpu-")
    print(f"offcpu: {platform.node()}, kernel {platform.release()}, {os.cpu_count()} CPUs, "
          f"{args.rounds} rounds, load average {loadavg()}")
    if missing:
        print(f"offcpu: offcputime left out: {missing}")
    if not perf:
        print("offcpu: perf left out: not found (Debian: apt-get install linux-perf)")
    tools = ["alone", "profile"] + (["perf -g", "perf dwarf"] if perf else []) + \
        ([] if missing else ["offcputime"])
    print(f"{'workload':<16} {'tool':<11} {'elapsed s':>10} {'min-max':>13} "
          f"{'slowdown':>9} {'whole':>7}")
    for t, binary in targets.items():
        comms = {os.path.basename(binary)[:15]}
        for wname, wargs in WORKLOADS.items():
            argv = [binary] + wargs
            times = {k: [] for k in tools}
            whole = {k: [] for k in tools}
            for r in range(args.rounds):
                order = tools[r % len(tools):] + tools[:r % len(tools)]
                for tool in order:
                    out = os.path.join(tmp, "out.folded")
                    data = os.path.join(tmp, "perf.data")
                    if tool == "alone":
                        e, _, _ = run_timed(argv)
                    elif tool == "profile":
                        e, _, _ = run_timed([profile, "--off-cpu", "-q", "-o", out, "--"] +
                                            argv)
                        whole[tool].append(folded_whole(out, comms))
                    elif tool.startswith("perf"):
                        cg = ["-g"] if tool == "perf -g" else ["--call-graph", "dwarf"]
                        e, _, _ = run_timed([perf, "record", "-q", "-e", "sched:sched_switch"]
                                            + cg + ["-o", data, "--"] + argv)
                        whole[tool].append(perf_whole(perf, data, comms))
                    else:
                        e = run_offcputime(args.offcputime, argv, out)
                        whole[tool].append(folded_whole(out, comms))
                    times[tool].append(e)
            base = median(times["alone"])
            for tool in tools:
                m = median(times[tool])
                slow = f"{m / base - 1:+.1%}" if m and base else "-"
                w = median(whole[tool])
                print(f"{t + ' ' + wname:<16} {tool:<11} "
                      f"{m if m is not None else float('nan'):>10.3f} "
                      f"{spread(times[tool], 3):>13} {slow:>9} "
                      f"{f'{w:.1%}' if w is not None else '-':>7}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

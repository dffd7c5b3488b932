# SPDX-License-Identifier: GPL-3.0-or-later
"""Hostile files: what the profiled users control (the files their processes map, those
files' debug links, /tmp/perf-PID.map) crafted to crash, hang or exhaust profile.

Each case profiles processes that map a crafted file, or whose debug link or perf map is
crafted, beside a process of the same program left alone. profile must end within its
duration plus GRACE seconds, exit 0, stay under MAX_RSS_MB, and name the frames of the code
that is not crafted. run.py registers these tests (register) in a section of their own.

hostile_files.py makes the crafted files: copies of build/tests/workloads/libhostile.so
(headers and sections past the end of the file, .eh_frame records that loop and lie, a
compressed .debug_info that claims 4 GiB, a .gnu_debugaltlink to a FIFO), stripped copies of
the hostile program with debug links to a FIFO and to devices. Here: perf maps of ten
million lines, with a line of 1 MiB, or linked to /dev/zero or out of a container, and a
process with 100,000 mappings.
"""
import os
import signal
import subprocess
import tempfile
import threading
import time
import types

from hostile_files import (altlink_to_fifo, debug_info_claims_4g, hostile_eh_frame,
                           past_eof_variants, stripped_with_debuglink)

GRACE = 20          # seconds past the duration a profile may take: no hang on a hostile file, on
                    # a shared VM under load (8 was not always enough beside two busy loops)
MAX_RSS_MB = 768    # profile's resident memory at most (its --max-memory is 1 GiB here)
DURATION = 2

r = None            # run.py, as a module: its helpers and BUILD


def lib():
    return r.workload("libhostile.so")


# --- running ---------------------------------------------------------------------------------

class Procs:
    """Hostile processes started for one case; ended with the case."""

    def __init__(self):
        self.procs = []

    def start(self, argv, wait_ready=True, env=None):
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env)
        self.procs.append(p)
        if wait_ready:
            line = p.stdout.readline()
            if line.strip() != "ready":
                raise AssertionError(f"{argv[0]} did not start: {line!r} {p.stderr.read()!r}")
        return p

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGSTOP)

    def end(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.end()


def hostile_cmd(mode, *args, seconds=DURATION + 8, binary=None):
    return [binary or r.workload("hostile"), str(seconds), mode] + list(args)


def vm_hwm_mb(pid):
    """The most resident memory process PID has had, MiB (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0


def children(pid):
    """The pids of PID's children (the symbolizer workers of a profile)."""
    kids = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                kids += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return kids


def profile(args, procs, duration=DURATION, during=None):
    """profile -d DURATION ARGS, which must end within DURATION + GRACE s and exit 0; DURING,
    when given, is (SECONDS, FN): FN() runs SECONDS in. PROCS (the targets) are stopped once
    sampling is over, so that they leave the CPUs to profile's work at the end. Returns
    (stacks, stderr, seconds, its largest resident memory in MiB, read every 20 ms: profile's
    own and its symbolizer workers', each worker's most)."""
    cmd = [os.path.abspath(r.profile_bin()), "-d", str(duration)] + args
    t = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = [], []
    readers = [threading.Thread(target=lambda f, b: b.append(f.read()), args=(f, b))
               for f, b in ((p.stdout, out), (p.stderr, err))]
    for th in readers:
        th.start()
    stopper = threading.Timer(duration + 1, procs.stop)
    stopper.start()
    if during:
        time.sleep(during[0])
        during[1]()
    limit, rss, workers = duration + GRACE, 0, {}
    try:
        while True:
            for kid in children(p.pid):
                workers[kid] = max(workers.get(kid, 0), vm_hwm_mb(kid))
            rss = max(rss, vm_hwm_mb(p.pid) + max(workers.values(), default=0))
            pid, status, _ = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - t > limit:
                p.kill()
                os.wait4(p.pid, 0)
                p.returncode = -9
                raise AssertionError(f"profile {' '.join(args)} did not end within {limit} s")
            time.sleep(0.02)
    finally:
        stopper.cancel()
        for th in readers:
            th.join()
    p.returncode = os.waitstatus_to_exitcode(status)
    secs = time.monotonic() - t
    err = err[0].decode(errors="replace")
    if p.returncode != 0:
        raise AssertionError(f"profile {' '.join(args)} exited {p.returncode}: {err[-2000:]}")
    return r.parse_folded(out[0].decode(errors="replace")), err, secs, rss


def expect_named(stacks, comm, names, min_share=0.2):
    """COMM's samples: at least MIN_SHARE of them hold each of NAMES."""
    n = r.total(stacks, comm)
    r.expect(n > 0, f"no samples of {comm}: {sorted({s[0] for s, _ in stacks})}")
    for name in names:
        s = r.share(stacks, lambda f: name in f, comm)
        r.expect(s >= min_share, f"{name} in {s:.1%} of {comm}'s samples, expected >= "
                 f"{min_share:.0%}")


def expect_reported(err, sentence):
    """The summary says a bound was met: SENTENCE follows "bound met: N"."""
    r.expect(any("bound met: " in line and sentence in line for line in err.splitlines()),
             f"the summary does not say {sentence!r}: {err[-1500:]}")


def expect_bounded(secs, rss, duration=DURATION):
    r.expect(secs <= duration + GRACE, f"took {secs:.1f} s")
    r.expect(rss <= MAX_RSS_MB, f"resident memory {rss:.0f} MiB, expected <= {MAX_RSS_MB}")
    return f"{secs:.1f} s, {rss:.0f} MiB"


def reference(procs):
    """The hostile program left alone: its frames are named in every case."""
    return procs.start(hostile_cmd("spin"))


REF_NAMES = ["main", "hostile_spin", "hostile_work"]


# --- the cases ---------------------------------------------------------------------------------

def hostile_debug_links():
    with tempfile.TemporaryDirectory(dir=os.path.join(r.BUILD, "tests")) as tmp, Procs() as ps:
        tmp = os.path.realpath(tmp)
        prog = r.workload("hostile")
        fifo = stripped_with_debuglink(prog, tmp, "hx_fifo", os.mkfifo)
        zero = stripped_with_debuglink(prog, tmp, "hx_zero", lambda p: os.symlink("/dev/zero", p))
        dev = stripped_with_debuglink(prog, tmp, "hx_urandom",
                                      lambda p: os.symlink("/dev/urandom", p))
        pids = [reference(ps).pid]
        for b in (fifo, zero, dev):
            pids.append(ps.start(hostile_cmd("spin", binary=b)).pid)
        stacks, _, secs, rss = profile(["-p", ",".join(map(str, pids))], ps)
    expect_named(stacks, "hostile", REF_NAMES)
    for comm in ("hx_fifo", "hx_zero", "hx_urandom"):
        expect_named(stacks, comm, ["__libc_start_call_main"])
    return expect_bounded(secs, rss)


def hostile_debug_altlink_fifo():
    with tempfile.TemporaryDirectory(dir=os.path.join(r.BUILD, "tests")) as tmp, Procs() as ps:
        tmp = os.path.realpath(tmp)
        alt = altlink_to_fifo(lib(), tmp)
        if not alt:
            raise r.KnownGap("dwz is not installed: no file with a .gnu_debugaltlink")
        pid = ps.start(hostile_cmd("dlopen", alt)).pid
        stacks, err, secs, rss = profile(["-p", f"{pid},{reference(ps).pid}"], ps)
    expect_named(stacks, "hostile", REF_NAMES)
    expect_named(stacks, "hostile", ["hostile_lib_spin"], 0.1)
    expect_reported(err, ".gnu_debugaltlink leads out")
    return expect_bounded(secs, rss)


def profile_auto_and_dwarf(ps, pid):
    """Profile PID and a reference process (started now) twice, --unwind auto then dwarf
    (the targets resumed in between); both profiles name the reference's frames. Returns
    (the auto stacks, the dwarf stacks, what expect_bounded says of the longer one)."""
    pids = f"{pid},{reference(ps).pid}"
    stacks, _, secs, rss = profile(["-p", pids], ps)
    for q in ps.procs:
        q.send_signal(signal.SIGCONT)
    stacks2, _, secs2, rss2 = profile(["--unwind", "dwarf", "-p", pids], ps)
    expect_named(stacks, "hostile", REF_NAMES)
    expect_named(stacks2, "hostile", REF_NAMES)
    return stacks, stacks2, expect_bounded(max(secs, secs2), max(rss, rss2))


def hostile_elf_headers_past_eof():
    with tempfile.TemporaryDirectory(dir=os.path.join(r.BUILD, "tests")) as tmp, Procs() as ps:
        tmp = os.path.realpath(tmp)
        specs = past_eof_variants(lib(), tmp)
        pid = ps.start(hostile_cmd("mmap", *specs)).pid
        _, _, bounded = profile_auto_and_dwarf(ps, pid)
    return bounded


def hostile_eh_frame_records():
    with tempfile.TemporaryDirectory(dir=os.path.join(r.BUILD, "tests")) as tmp, Procs() as ps:
        tmp = os.path.realpath(tmp)
        libs = [hostile_eh_frame(lib(), tmp, False), hostile_eh_frame(lib(), tmp, True)]
        pid = ps.start(hostile_cmd("dlopen", *libs)).pid
        _, stacks2, bounded = profile_auto_and_dwarf(ps, pid)
    expect_named(stacks2, "hostile", ["hostile_lib_loop"], 0.1)
    return bounded


def hostile_debug_info_claims_4g():
    with tempfile.TemporaryDirectory(dir=os.path.join(r.BUILD, "tests")) as tmp, Procs() as ps:
        tmp = os.path.realpath(tmp)
        path = debug_info_claims_4g(lib(), tmp)
        pid = ps.start(hostile_cmd("dlopen", path)).pid
        stacks, err, secs, rss = profile(["-p", f"{pid},{reference(ps).pid}"], ps)
    expect_named(stacks, "hostile", REF_NAMES)
    expect_named(stacks, "hostile", ["hostile_lib_loop"], 0.1)
    expect_reported(err, "their DWARF did not fit the memory budget")
    return expect_bounded(secs, rss)


def hostile_library_truncated():
    with tempfile.TemporaryDirectory(dir=os.path.join(r.BUILD, "tests")) as tmp, Procs() as ps:
        tmp = os.path.realpath(tmp)
        path = os.path.join(tmp, "libtruncated.so")
        subprocess.run(["objcopy", "--strip-all", lib(), path], check=True)
        pid = ps.start(hostile_cmd("dlopen", path)).pid
        # Truncated halfway, well after sampling began (loading BPF may take a second).
        stacks, err, secs, rss = profile(["-F", "499", "-p", f"{pid},{reference(ps).pid}"],
                                         ps, duration=4, during=(2, lambda: os.truncate(path, 0)))
    expect_named(stacks, "hostile", REF_NAMES)
    # Whoever reads the library after the truncation (the worker names its addresses; at
    # idle priority beside two spinning targets it may first open it then, and find it
    # empty) costs only that file: either a SIGBUS in a guarded mapping, which the summary
    # counts, or a file that reads as empty, whose frames are [libtruncated.so]; or, seen
    # changed since it was mapped (its mtime), [libtruncated.so (replaced)]. (The unit
    # tests of mapguard and of dso make the SIGBUS itself happen every time.)
    faulted = any("bound met: " in line and "files changed while read (truncated: SIGBUS)"
                  in line for line in err.splitlines())
    in_lib = [f for f, _ in stacks for x in f
              if x.startswith(("libtruncated.so", "[libtruncated.so]",
                               "[libtruncated.so (replaced)]"))]
    r.expect(in_lib, f"no frame in the truncated library: {stacks}")
    return expect_bounded(secs, rss, 4) + f"; {len(in_lib)} stacks in it, " + \
        ("read while truncated: SIGBUS counted" if faulted else
         "marked replaced" if any("(replaced)" in x for f in in_lib for x in f) else
         "opened empty")


def wait_perf_map(path):
    """The contents of the perf map at PATH once jitmap has written it (4 s at most)."""
    for _ in range(200):
        if os.path.exists(path) and os.path.getsize(path):
            break
        time.sleep(0.02)
    with open(path) as f:
        return f.read()


def hostile_perf_maps():
    with tempfile.TemporaryDirectory(dir=os.path.join(r.BUILD, "tests")) as tmp, Procs() as ps:
        jits = []
        for _ in range(3):
            p = ps.start([r.workload("jitmap"), str(DURATION + 8)], wait_ready=False)
            path = f"/tmp/perf-{p.pid}.map"
            jits.append((p, path, wait_perf_map(path)))
        try:
            # Ten million lines (the real one first), a line of 1 MiB, a link to /dev/zero.
            junk = b"".join(b"%x 10 junk_%d\n" % (0x1000 + 16 * i, i) for i in range(1000))
            with open(jits[0][1], "wb") as f:
                f.write(jits[0][2].encode())
                for _ in range(10000):
                    f.write(junk)
            with open(jits[1][1], "wb") as f:
                f.write(b"1000 10 " + b"x" * (1 << 20) + b"\n" + jits[1][2].encode())
            os.unlink(jits[2][1])
            os.symlink("/dev/zero", jits[2][1])
            pids = [p.pid for p, _, _ in jits] + [reference(ps).pid]
            stacks, err, secs, rss = profile(["--threads", "-p", ",".join(map(str, pids))],
                                             ps)
        finally:
            for _, path, _ in jits:
                if os.path.lexists(path):
                    os.unlink(path)
    expect_named(stacks, "hostile", REF_NAMES)
    expect_named(stacks, "jitmap", ["main"], 0.9)
    # Each process on its own (a frame jitmap/TID: how the three share the CPUs is the
    # scheduler's): the loop named in the two whose map holds its line, in none of the
    # third's samples (its map reads as NULs).
    shares = []
    for (p, _, _), named in zip(jits, (True, True, False)):
        own = [(f, c) for f, c in stacks if len(f) > 1 and f[1] == f"jitmap/{p.pid}"]
        r.expect(r.total(own) > 0, f"no samples of jitmap {p.pid}")
        jit = r.share(own, lambda f: "jit_hot_loop_[j]" in f)
        shares.append(f"{jit:.0%}")
        r.expect(jit >= 0.9 if named else jit == 0,
                 f"jit_hot_loop_[j] in {jit:.1%} of jitmap {p.pid}'s samples, expected "
                 + (">= 90%" if named else "none"))
    expect_reported(err, "perf maps cut at 4194304 entries")
    expect_reported(err, "perf-map lines skipped")
    return expect_bounded(secs, rss) + "; named " + ", ".join(shares)


def hostile_100k_mappings():
    n = 100000
    with open("/proc/sys/vm/max_map_count") as f:
        old = f.read().strip()
    try:
        if int(old) < n + 1000:
            with open("/proc/sys/vm/max_map_count", "w") as f:
                f.write(str(n + 65536))
        with Procs() as ps:
            pid = ps.start(hostile_cmd("maps", str(n))).pid
            with open(f"/proc/{pid}/maps") as f:
                nr = sum(1 for _ in f)
            r.expect(nr >= n, f"only {nr} mappings")
            stacks, err, secs, rss = profile(["-p", f"{pid},{reference(ps).pid}"], ps)
    finally:
        with open("/proc/sys/vm/max_map_count", "w") as f:
            f.write(old)
    expect_named(stacks, "hostile", REF_NAMES, 0.4)
    expect_reported(err, "mappings left out")
    return expect_bounded(secs, rss) + f"; {nr} mappings"


def hostile_perf_map_link_out_of_container():
    secret = "/tmp/hostile-host-secret.map"
    u = None
    try:
        u, pid = r.in_container([os.path.abspath(r.workload("jitmap")), str(DURATION + 8)],
                                private_tmp=True)
        inner = f"/proc/{pid}/root/tmp/perf-1.map"
        real = wait_perf_map(inner)
        with open(secret, "w") as f:
            f.write(real.replace("jit_hot_loop", "HOST_SECRET"))
        os.unlink(inner)
        os.symlink(secret, inner)
        stop = types.SimpleNamespace(stop=lambda: os.kill(pid, signal.SIGSTOP))
        stacks, _, secs, rss = profile(["-p", str(pid)], stop)
    finally:
        if u:
            r.end_container(u, pid)
        if os.path.exists(secret):
            os.unlink(secret)
    frames = {x for f, _ in stacks for x in f}
    r.expect(not any("HOST_SECRET" in x for x in frames), "a name from the host's file")
    expect_named(stacks, "jitmap", ["main"], 0.9)
    return expect_bounded(secs, rss)


CASES = [
    hostile_debug_links,
    hostile_debug_altlink_fifo,
    hostile_elf_headers_past_eof,
    hostile_eh_frame_records,
    hostile_debug_info_claims_4g,
    hostile_library_truncated,
    hostile_perf_maps,
    hostile_100k_mappings,
    hostile_perf_map_link_out_of_container,
]


def register(runner):
    """The cases, for run.py's list of tests; RUNNER is run.py's module."""
    global r
    r = runner
    return CASES

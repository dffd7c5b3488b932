# SPDX-License-Identifier: GPL-3.0-or-later
"""Hostile files: what the profiled users control (the files their processes map, those
files' debug links, /tmp/perf-PID.map) crafted to crash, hang or exhaust profile.

Each case profiles processes that map a crafted file, or whose debug link or perf map is
crafted, beside a process of the same program left alone. profile must end within its
duration plus GRACE seconds, exit 0, stay under MAX_RSS_MB, and name the frames of the code
that is not crafted. run.py registers these tests (register) in a section of their own.

The files are made here: crafted copies of build/tests/workloads/libhostile.so (headers and
sections past the end of the file, .eh_frame records that loop and lie, a compressed
.debug_info that claims 4 GiB, a .gnu_debugaltlink to a FIFO), stripped copies of the
hostile program with debug links to a FIFO and to devices, perf maps of ten million lines or
a line of 1 MiB or linked to /dev/zero, a process with 100,000 mappings.
"""
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import threading
import time
import types
import zlib

GRACE = 5           # seconds past the duration a profile may take
MAX_RSS_MB = 768    # profile's resident memory at most (its --max-memory is 1 GiB here)
DURATION = 2

r = None            # run.py, as a module: its helpers and BUILD


# --- ELF, as much as the generators need ------------------------------------------------------

PHDR = struct.Struct("<IIQQQQQQ")       # type flags offset vaddr paddr filesz memsz align
SHDR = struct.Struct("<IIQQQQIIQQ")     # name type flags addr offset size link info align entsize


class Elf:
    """An ELF64 little-endian file in memory, its headers editable in place."""

    def __init__(self, path):
        self.data = bytearray(open(path, "rb").read())
        (self.phoff, self.shoff) = struct.unpack_from("<QQ", self.data, 0x20)
        (self.phentsize, self.phnum, self.shentsize, self.shnum,
         self.shstrndx) = struct.unpack_from("<HHHHH", self.data, 0x36)

    def phdr(self, i):
        return list(PHDR.unpack_from(self.data, self.phoff + i * self.phentsize))

    def set_phdr(self, i, v):
        PHDR.pack_into(self.data, self.phoff + i * self.phentsize, *v)

    def shdr(self, i):
        return list(SHDR.unpack_from(self.data, self.shoff + i * self.shentsize))

    def set_shdr(self, i, v):
        SHDR.pack_into(self.data, self.shoff + i * self.shentsize, *v)

    def section(self, name):
        """(index, header) of the section NAME."""
        strtab = self.shdr(self.shstrndx)
        for i in range(self.shnum):
            s = self.shdr(i)
            end = self.data.index(b"\0", strtab[4] + s[0])
            if self.data[strtab[4] + s[0]:end] == name.encode():
                return i, s
        raise KeyError(name)

    def vaddr_to_off(self, vaddr):
        for i in range(self.phnum):
            p = self.phdr(i)
            if p[0] == 1 and p[3] <= vaddr < p[3] + p[5]:
                return vaddr - p[3] + p[2]
        raise KeyError(hex(vaddr))

    def write(self, path, size=None):
        with open(path, "wb") as f:
            f.write(self.data)
            if size:
                f.truncate(size)


def symbol(path, name):
    out = subprocess.run(["nm", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[2] == name:
            return int(f[0], 16)
    raise KeyError(name)


def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


# --- the generators -------------------------------------------------------------------------

def lib():
    return r.workload("libhostile.so")


def past_eof_variants(tmp):
    """Copies of libhostile.so whose headers point past the end of the file: program headers
    (every PT_LOAD, PT_NOTE, PT_GNU_EH_FRAME), section headers, the header tables themselves.
    Returns their "PATH@OFFSET" specs, OFFSET hostile_lib_spin's in the file."""
    src = Elf(lib())
    off = src.vaddr_to_off(symbol(lib(), "hostile_lib_spin"))
    size = len(src.data)
    specs = []

    e = Elf(lib())
    for i in range(e.phnum):
        p = e.phdr(i)
        p[2] = size + (1 << 40)         # p_offset
        p[5] = 1 << 62                  # p_filesz
        e.set_phdr(i, p)
    specs.append((e, "phdrs"))

    e = Elf(lib())
    for i in range(1, e.shnum):
        s = e.shdr(i)
        if i != e.shstrndx:
            s[4] = size + (1 << 32)     # sh_offset
        s[5] = (1 << 63) + i            # sh_size
        e.set_shdr(i, s)
    specs.append((e, "sections"))

    e = Elf(lib())
    struct.pack_into("<QQ", e.data, 0x20, size + 64, (1 << 63) + 3)    # e_phoff, e_shoff
    struct.pack_into("<H", e.data, 0x38, 0xffff)                        # e_phnum
    struct.pack_into("<HH", e.data, 0x3c, 0xffff, 0xfffe)              # e_shnum, e_shstrndx
    specs.append((e, "tables"))

    out = []
    for e, name in specs:
        path = os.path.join(tmp, f"libpasteof_{name}.so")
        e.write(path)
        out.append(f"{path}@{off:#x}")
    return out


def hostile_eh_frame(tmp, huge_count):
    """A copy of libhostile.so whose .eh_frame holds records that loop and lie, which its
    .eh_frame_hdr table points at (with a count of 2^31 - 1 when HUGE_COUNT)."""
    e = Elf(lib())
    _, eh = e.section(".eh_frame")
    _, hdr = e.section(".eh_frame_hdr")
    base, size = eh[3], eh[5]
    recs = bytearray()

    def record(body):
        at = len(recs)
        recs.extend(struct.pack("<I", len(body)) + body)
        return at

    # A CIE "zR" whose augmentation data claims 2^63 bytes.
    cie_huge = record(b"\0\0\0\0\x01zR\0\x01\x78\x10" + uleb(1 << 63) + b"\x1b\0\0")
    # A CIE whose augmentation string does not end within it.
    cie_open = record(b"\0\0\0\0\x01zPLRzzzzzz")
    # An FDE whose CIE pointer points at itself: a loop to whoever follows it.
    at = len(recs)
    fde_self = record(struct.pack("<I", 4) + struct.pack("<ii", 0, 0x40) + b"\0")
    # An FDE whose CIE is the previous FDE, and one whose CIE is past the section's start.
    at = len(recs)
    fde_chain = record(struct.pack("<I", at + 4 - fde_self) + struct.pack("<ii", 0, 0x40) + b"\0")
    fde_before = record(struct.pack("<I", 0x7ffffff0) + b"\0" * 12)
    # FDEs of the huge CIE and the open one, with CFA programs that never end well:
    # remember_state without end, advance_loc4 by 2^32 - 1, an expression of 2^62 bytes.
    prog = b"\x0a" * 4 + b"\x04\xff\xff\xff\xff" + b"\x0f" + uleb(1 << 62)
    fde_huge = record(struct.pack("<I", len(recs) + 4 - cie_huge) +
                      struct.pack("<ii", 0, 0x7fffffff) + b"\0" + prog)
    fde_open = record(struct.pack("<I", len(recs) + 4 - cie_open) +
                      struct.pack("<ii", 0, 0x40) + b"\0" + prog)
    # A 64-bit record claiming 2^62 bytes.
    recs.extend(struct.pack("<IQ", 0xffffffff, 1 << 62))
    assert len(recs) + 4 <= size, "the crafted records do not fit"
    e.data[eh[4]:eh[4] + size] = recs + bytes(size - len(recs))
    # The table: each function's entry points at one of them.
    hoff = hdr[4]
    count, = struct.unpack_from("<I", e.data, hoff + 8)
    fdes = [fde_self, fde_chain, fde_before, fde_huge, fde_open]
    table = hoff + 12
    for i in range(count):
        start, _ = struct.unpack_from("<ii", e.data, table + 8 * i)
        fde = base + fdes[i % len(fdes)] - hdr[3]
        struct.pack_into("<ii", e.data, table + 8 * i, start, fde)
    if huge_count:
        struct.pack_into("<I", e.data, hoff + 8, 0x7fffffff)
    path = os.path.join(tmp, f"libeh_{'count' if huge_count else 'recs'}.so")
    e.write(path)
    return path


def zeros_stream(prefix, total):
    """A zlib stream of PREFIX then zeros up to TOTAL bytes, made fast: deflate blocks after a
    full flush do not depend on what came before, so one block of zeros is repeated."""
    c = zlib.compressobj(9)
    head = c.compress(prefix) + c.flush(zlib.Z_FULL_FLUSH)
    chunk = 16 << 20
    block = c.compress(bytes(chunk)) + c.flush(zlib.Z_FULL_FLUSH)
    n, rest = divmod(total - len(prefix), chunk)
    tail = c.compress(bytes(rest)) + c.flush(zlib.Z_FINISH)
    # The tail ends with the checksum of a stream of PREFIX + one block + REST: recompute.
    adler = zlib.adler32(prefix)
    zero = bytes(chunk)
    for _ in range(n):
        adler = zlib.adler32(zero, adler)
    adler = zlib.adler32(bytes(rest), adler)
    body = head + block * n + tail[:-4] + struct.pack(">I", adler)
    assert zlib.decompressobj().decompress(body[:1 << 16]) is not None
    return body


def debug_info_claims_4g(tmp):
    """A copy of libhostile.so whose compressed .debug_info holds a real zlib stream of
    4 GiB - 1 MiB (its own DWARF, then zeros), in a sparse file just larger (BFD inflates
    a section smaller than its file)."""
    zpath = os.path.join(tmp, "libz.so")
    subprocess.run(["objcopy", "--compress-debug-sections=zlib", lib(), zpath], check=True)
    e = Elf(zpath)
    i, s = e.section(".debug_info")
    real = zlib.decompress(bytes(e.data[s[4] + 24:s[4] + s[5]]))
    claim = (4 << 30) - (1 << 20)
    sec = struct.pack("<IIQQ", 1, 0, claim, 1) + zeros_stream(real, claim)
    e.data.extend(bytes(-len(e.data) % 8))
    s[4], s[5] = len(e.data), len(sec)
    e.set_shdr(i, s)
    e.data.extend(sec)
    path = os.path.join(tmp, "libdebuginfo4g.so")
    e.write(path, size=(4 << 30) - 4096)
    return path


def stripped_with_debuglink(tmp, name, make_target):
    """A stripped copy of the hostile program named NAME whose .gnu_debuglink names NAME.debug
    next to it, which MAKE_TARGET(path) then turns into something hostile."""
    path = os.path.join(tmp, name)
    dbg = path + ".debug"
    with open(dbg, "wb") as f:
        f.write(b"not yet")
    subprocess.run(["objcopy", "--strip-all", f"--add-gnu-debuglink={dbg}",
                    r.workload("hostile"), path], check=True)
    os.unlink(dbg)
    make_target(dbg)
    return path


def altlink_to_fifo(tmp):
    """Two copies of libhostile.so whose common DWARF dwz moved to a file their
    .gnu_debugaltlink names, which is then replaced by a FIFO: BFD opens it to read the
    strings the copies' DWARF refers to. The link climbs out of the directory BFD looks in
    first (profile hands BFD /proc/self/fd/N: "../../..TMP/common.debug" is TMP's file).
    Returns one copy, or None without dwz."""
    if not shutil.which("dwz"):
        return None
    a, b = os.path.join(tmp, "libalt_a.so"), os.path.join(tmp, "libalt_b.so")
    common = os.path.join(tmp, "common.debug")
    shutil.copy(lib(), a)
    shutil.copy(lib(), b)
    subprocess.run(["dwz", "-m", common, "-M", "../../.." + common, a, b], check=True)
    os.unlink(common)
    os.mkfifo(common)
    return a


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


def profile(args, procs, duration=DURATION, during=None):
    """profile -d DURATION ARGS, which must end within DURATION + GRACE s and exit 0; DURING,
    when given, is (SECONDS, FN): FN() runs SECONDS in. PROCS (the targets) are stopped once sampling is over, so that
    they leave the CPUs to profile's work at the end. Returns (stacks, stderr, seconds, its
    largest resident memory in MiB, read every 20 ms)."""
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
    limit, rss = duration + GRACE, 0
    try:
        while True:
            rss = max(rss, vm_hwm_mb(p.pid))
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
        fifo = stripped_with_debuglink(tmp, "hx_fifo", os.mkfifo)
        zero = stripped_with_debuglink(tmp, "hx_zero", lambda p: os.symlink("/dev/zero", p))
        dev = stripped_with_debuglink(tmp, "hx_urandom",
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
        alt = altlink_to_fifo(tmp)
        if not alt:
            raise r.KnownGap("dwz is not installed: no file with a .gnu_debugaltlink")
        pid = ps.start(hostile_cmd("dlopen", alt)).pid
        stacks, err, secs, rss = profile(["-p", f"{pid},{reference(ps).pid}"], ps)
    expect_named(stacks, "hostile", REF_NAMES)
    expect_named(stacks, "hostile", ["hostile_lib_spin"], 0.1)
    expect_reported(err, ".gnu_debugaltlink leads out")
    return expect_bounded(secs, rss)


def hostile_elf_headers_past_eof():
    with tempfile.TemporaryDirectory(dir=os.path.join(r.BUILD, "tests")) as tmp, Procs() as ps:
        tmp = os.path.realpath(tmp)
        specs = past_eof_variants(tmp)
        pid = ps.start(hostile_cmd("mmap", *specs)).pid
        pids = f"{pid},{reference(ps).pid}"
        stacks, _, secs, rss = profile(["-p", pids], ps)
        for q in ps.procs:
            q.send_signal(signal.SIGCONT)
        stacks2, _, secs2, rss2 = profile(["--unwind", "dwarf", "-p", pids], ps)
    expect_named(stacks, "hostile", REF_NAMES)
    expect_named(stacks2, "hostile", REF_NAMES)
    return expect_bounded(max(secs, secs2), max(rss, rss2))


def hostile_eh_frame_records():
    with tempfile.TemporaryDirectory(dir=os.path.join(r.BUILD, "tests")) as tmp, Procs() as ps:
        tmp = os.path.realpath(tmp)
        libs = [hostile_eh_frame(tmp, False), hostile_eh_frame(tmp, True)]
        pid = ps.start(hostile_cmd("dlopen", *libs)).pid
        pids = f"{pid},{reference(ps).pid}"
        stacks, _, secs, rss = profile(["-p", pids], ps)
        for q in ps.procs:
            q.send_signal(signal.SIGCONT)
        stacks2, _, secs2, rss2 = profile(["--unwind", "dwarf", "-p", pids], ps)
    expect_named(stacks, "hostile", REF_NAMES)
    expect_named(stacks2, "hostile", REF_NAMES)
    expect_named(stacks2, "hostile", ["hostile_lib_loop"], 0.1)
    return expect_bounded(max(secs, secs2), max(rss, rss2))


def hostile_debug_info_claims_4g():
    with tempfile.TemporaryDirectory(dir=os.path.join(r.BUILD, "tests")) as tmp, Procs() as ps:
        tmp = os.path.realpath(tmp)
        path = debug_info_claims_4g(tmp)
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
    expect_reported(err, "files changed while read (truncated: SIGBUS)")
    in_lib = [f for f, _ in stacks for x in f if x.startswith("libtruncated.so")]
    r.expect(in_lib, f"no frame in the truncated library: {stacks}")
    return expect_bounded(secs, rss, 4) + f"; {len(in_lib)} stacks in it"


def hostile_perf_maps():
    with tempfile.TemporaryDirectory(dir=os.path.join(r.BUILD, "tests")) as tmp, Procs() as ps:
        jits = []
        for _ in range(3):
            p = ps.start([r.workload("jitmap"), str(DURATION + 8)], wait_ready=False)
            path = f"/tmp/perf-{p.pid}.map"
            for _ in range(200):
                if os.path.exists(path) and os.path.getsize(path):
                    break
                time.sleep(0.02)
            with open(path) as f:
                real = f.read()
            jits.append((p, path, real))
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
            stacks, err, secs, rss = profile(["-p", ",".join(map(str, pids))], ps)
        finally:
            for _, path, _ in jits:
                if os.path.lexists(path):
                    os.unlink(path)
    expect_named(stacks, "hostile", REF_NAMES)
    expect_named(stacks, "jitmap", ["main"], 0.9)
    jit = r.share(stacks, lambda f: "jit_hot_loop_[j]" in f, "jitmap")
    r.expect(jit >= 0.5, f"jit_hot_loop_[j] in {jit:.1%} of jitmap's samples (2 of 3 named)")
    expect_reported(err, "perf maps cut at 4194304 entries")
    expect_reported(err, "perf-map lines skipped")
    return expect_bounded(secs, rss)


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
        for _ in range(200):
            if os.path.exists(inner) and os.path.getsize(inner):
                break
            time.sleep(0.02)
        with open(inner) as f:
            real = f.read()
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

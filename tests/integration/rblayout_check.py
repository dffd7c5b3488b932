#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""lib/ruby/rblayout.c's 3.1 table against Debian's ruby3.1 itself.

  headers  tests/integration/rblayout_offsets.c, compiled with ruby3.1-dev's arch config.h
           and the package's CFLAGS (RbConfig), prints offsetof/sizeof and the constants;
           each must equal the table ($BUILD/tests/librblayout_check.so, built here from
           lib/ruby and rblayout_dump.c). The public structs (RBasic, RString, RArray) need
           ruby3.1-dev only; the VM's (vm_core.h, ractor_core.h, iseq.h) a source tree:
           --src DIR (`apt-get source ruby3.1`), else they are said not checked.
  live     a ruby3.1 runs a chain (main thread: a method, a block under Array#each, two
           methods, blocked in IO#read; a second thread: three methods and a block under a
           builtin, blocked in Queue#pop), each thread printing caller_locations(0) on the
           line it blocks at. With the table and lib/ruby's functions (through ctypes),
           process_vm_readv walks ruby_current_vm_ptr -> main ractor -> its thread list,
           each thread's ruby_current_ec through its TLS (DTV, module id from the GOT), and
           each ec's control frames from cfp to the stack's end: labels, paths and lines
           (the word BPF would record, its position, the succinct line table) must equal
           caller_locations; a C method's frame must stand where Ruby puts one (its name
           is not read); the TLS offset must be one for all threads; the GVL holder's ec
           one of theirs.
  native   with gdb: each thread's rb_vm_exec frames are as many as its frames with
           VM_FRAME_FLAG_FINISH, and each returns to just after the call of the static
           vm_exec_core.
Any difference fails (exit 1); the last lines say what was checked and what could not be.

  python3 tests/integration/rblayout_check.py --build build-rb [--src DIR]
"""
import argparse
import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUBY = "ruby3.1"

SCRIPT = r'''
$stdout.sync = true
OUT = Mutex.new
def report(name, locs)
  OUT.synchronize do
    puts "THREAD #{name} #{Thread.current.native_thread_id}"
    locs.each { |l| puts [l.label, l.path, l.lineno].join("\t") }
    puts "END"
  end
end

class Chain
  def first(n)
    [n].each do |i|
      second(i + 1)
    end
  end

  def second(n)
    third(n * 2)
  end

  def third(n)
    report("main", caller_locations(0)); STDIN.read
  end
end

require File.join(__dir__, "rbworker.rb")	# absolute: its pathobj is a String

q = Queue.new
ready = Queue.new
t = Thread.new { Worker.new.outer(q, ready) }
ready.pop
Chain.new.first(1)
'''

# Required by an absolute path (the script itself runs by a relative one: [path, realpath]).
WORKER = r'''
class Worker
  def outer(q, ready) = middle(q, ready)

  def middle(q, ready)
    3.then { |x| inner(q, ready, x) }
  end

  def inner(q, ready, x)
    report("worker", caller_locations(0)); ready << x; q.pop
  end
end
'''

WORD_ADDR = 0x0000FFFFFFFFFFF8
WORD_ENTRY = 1
WORD_CFUNC = 2


class Mem:
    class iovec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

    def __init__(self, pid):
        self.pid = pid
        self.libc = ctypes.CDLL(None, use_errno=True)

    def read(self, addr, n):
        if n == 0:
            return b""
        buf = ctypes.create_string_buffer(n)
        loc = self.iovec(ctypes.cast(buf, ctypes.c_void_p), n)
        rem = self.iovec(addr, n)
        got = self.libc.process_vm_readv(self.pid, ctypes.byref(loc), 1, ctypes.byref(rem), 1, 0)
        if got != n:
            raise OSError(f"cannot read {n} bytes at {addr:#x} of {self.pid}")
        return buf.raw

    def u64(self, addr):
        return int.from_bytes(self.read(addr, 8), "little")

    def u32(self, addr):
        return int.from_bytes(self.read(addr, 4), "little")


def u64(b, off):
    return int.from_bytes(b[off:off + 8], "little")


def u32(b, off):
    return int.from_bytes(b[off:off + 4], "little")


def build_lib(build):
    out = os.path.join(build, "tests", "librblayout_check.so")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    srcs = [os.path.join(TOP, "lib", "ruby", f) for f in sorted(os.listdir(os.path.join(TOP, "lib", "ruby")))
            if f.endswith(".c")] + [os.path.join(TOP, "tests", "integration", "rblayout_dump.c")]
    cmd = [os.environ.get("CC", "cc"), "-std=gnu11", "-D_GNU_SOURCE", "-O2", "-Wall", "-Wextra",
           "-shared", "-fPIC", "-I" + os.path.join(TOP, "lib"), "-I" + os.path.join(TOP, "bpf"),
           "-o", out] + srcs
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"rblayout_check: cannot build {out}: {r.stderr}")
    lib = ctypes.CDLL(out)
    u64_t, u32_t = ctypes.c_uint64, ctypes.c_uint32
    lib.rblayout_dump_json.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
    lib.rb_word__make.restype = u64_t
    lib.rb_word__make.argtypes = [u64_t, u64_t, u64_t, u64_t]
    lib.rb_word__pos.argtypes = [u64_t, u64_t, u32_t, ctypes.POINTER(u32_t)]
    lib.rb_layout__for.restype = ctypes.c_void_p
    lib.rb_line__succ_len.restype = ctypes.c_size_t
    lib.rb_line__succ_len.argtypes = [u32_t]
    lib.rb_line__for.argtypes = [ctypes.c_void_p, u32_t, u32_t, ctypes.c_char_p, ctypes.c_size_t,
                                 ctypes.c_char_p, ctypes.c_size_t, u32_t]
    lib.rb_str__locate.argtypes = [ctypes.c_void_p, u64_t, ctypes.c_char_p, ctypes.c_size_t,
                                   ctypes.POINTER(u64_t), ctypes.POINTER(ctypes.c_size_t)]
    lib.rb_path__locate.argtypes = [ctypes.c_void_p, u64_t, ctypes.c_char_p, ctypes.c_size_t,
                                    ctypes.POINTER(u64_t), ctypes.POINTER(u64_t)]
    lib.rb_str__utf8.restype = ctypes.c_size_t
    lib.rb_str__utf8.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
    buf = ctypes.create_string_buffer(8192)
    if lib.rblayout_dump_json(3, 1, buf, len(buf)) < 0:
        sys.exit("rblayout_check: the table has no 3.1")
    return lib, json.loads(buf.value.decode())


def rbconfig(key):
    r = subprocess.run([RUBY, "-rrbconfig", "-e", f"print RbConfig::CONFIG[{key!r}]"],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


def check_headers(table, src, diffs, notes, checked):
    hdr, arch = rbconfig("rubyhdrdir"), rbconfig("rubyarchhdrdir")
    if not hdr or not os.path.exists(os.path.join(hdr, "ruby.h")) or \
            not os.path.exists(os.path.join(arch, "ruby", "config.h")):
        notes.append("headers: not checked (ruby3.1-dev is not installed)")
        return
    flags = [f for f in rbconfig("CFLAGS").split() if not f.startswith("-W")]
    with tempfile.TemporaryDirectory() as tmp:
        for internal in ([False, True] if src else [False]):
            exe = os.path.join(tmp, "off%d" % internal)
            inc = []
            if internal:
                inc = ["-DRB_INTERNAL", "-I" + src, "-I" + os.path.join(src, "include")]
            cmd = [os.environ.get("CC", "cc")] + flags + inc + ["-I" + arch, "-I" + hdr, "-o", exe,
                                                              os.path.join(TOP, "tests", "integration",
                                                                           "rblayout_offsets.c")]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                diffs.append(f"headers: cannot compile rblayout_offsets.c{' with ' + src if internal else ''}: "
                             f"{r.stderr[-600:]}")
                continue
            out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
            n = 0
            for line in out.splitlines():
                name, val = line.split()
                if name not in table:
                    diffs.append(f"headers: {name} is not in the table's dump")
                    continue
                if int(val) != table[name]:
                    diffs.append(f"headers: {name} is {val}, the table says {table[name]}")
                n += 1
            checked.append(f"headers: {n} offsets, sizes and constants "
                           f"({'the VM structs from ' + src if internal else 'RBasic, RString, RArray from ruby3.1-dev'})")
    if not src:
        notes.append("headers: the VM structs (vm_core.h, ractor_core.h, iseq.h) not compiled: "
                      "no --src (a ruby3.1 source tree from `apt-get source ruby3.1`); the live walk "
                      "checks the offsets it uses")


def parse_reports(text):
    threads = {}
    cur = None
    for line in text.splitlines():
        if line.startswith("THREAD "):
            _, name, tid = line.split()
            cur = threads[name] = {"tid": int(tid), "locs": []}
        elif line == "END":
            cur = None
        elif cur is not None:
            label, path, lineno = line.split("\t")
            cur["locs"].append((label, path, int(lineno)))
    return threads


def symbols(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3:
            syms[f[2]] = int(f[0], 16)
    return syms


def dtpmod_slot(path, name):
    out = subprocess.run(["readelf", "-rW", path], capture_output=True, text=True, check=True).stdout
    m = re.search(r"^([0-9a-f]+)\s+\S+\s+R_X86_64_DTPMOD64\s+[0-9a-f]+\s+" + re.escape(name) + r"\b",
                  out, re.M)
    return int(m.group(1), 16) if m else None


class Walker:
    def __init__(self, lib, t, mem):
        self.lib, self.t, self.mem = lib, t, mem
        self.layout = lib.rb_layout__for(3, 1)
        self.pathobjs = {"String": 0, "Array": 0}

    def string(self, addr):
        obj = self.mem.read(addr, self.t["str_size"])
        at, n = ctypes.c_uint64(), ctypes.c_size_t()
        if self.lib.rb_str__locate(self.layout, addr, obj, len(obj), ctypes.byref(at), ctypes.byref(n)):
            raise ValueError(f"not a String at {addr:#x}")
        data = self.mem.read(at.value, n.value)
        out = ctypes.create_string_buffer(4 * len(data) + 4)
        self.lib.rb_str__utf8(data, len(data), out, len(out))
        return out.value.decode()

    def path(self, pathobj):
        obj = self.mem.read(pathobj, max(self.t["str_size"], self.t["ary_heap_ptr"] + 8))
        p, slot = ctypes.c_uint64(), ctypes.c_uint64()
        if self.lib.rb_path__locate(self.layout, pathobj, obj, len(obj), ctypes.byref(p), ctypes.byref(slot)):
            raise ValueError(f"pathobj at {pathobj:#x} is neither String nor Array")
        self.pathobjs["String" if p.value else "Array"] += 1
        return self.string(p.value or self.mem.u64(slot.value))

    def ruby_frame(self, word):
        t = self.t
        iseq = word & WORD_ADDR
        body = self.mem.u64(iseq + t["iseq_body"])
        b = self.mem.read(body, t["body_read"])
        size, enc = u32(b, t["body_iseq_size"]), u64(b, t["body_iseq_encoded"])
        info_size, info, succ = u32(b, t["body_insns_size"]), u64(b, t["body_insns_info"]), \
            u64(b, t["body_succ_table"])
        pos = ctypes.c_uint32()
        if self.lib.rb_word__pos(word, enc, size, ctypes.byref(pos)):
            raise ValueError(f"iseq {iseq:#x}: the word's pc is not in its {size} VALUEs")
        if info_size > 1 << 20:
            raise ValueError(f"iseq {iseq:#x}: {info_size} line entries")
        ib = self.mem.read(info, info_size * t["insn_info_size"])
        sl = self.lib.rb_line__succ_len(size) if info_size > 1 else 0
        sb = self.mem.read(succ, sl) if sl else b""
        line = self.lib.rb_line__for(self.layout, size, info_size, ib, len(ib), sb, len(sb), pos.value)
        return {"kind": "ruby", "label": self.string(u64(b, t["body_label"])),
                "path": self.path(u64(b, t["body_pathobj"])), "line": line,
                "entry": bool(word & WORD_ENTRY), "first": u64(b, t["body_first_lineno"]) >> 1,
                "positions": u64(b, t["body_insns_positions"])}

    def frames(self, ec):
        t = self.t
        e = self.mem.read(ec, max(t["ec_cfp"], t["ec_vm_stack"], t["ec_vm_stack_size"]) + 8)
        stack, size, cfp = u64(e, t["ec_vm_stack"]), u64(e, t["ec_vm_stack_size"]), u64(e, t["ec_cfp"])
        end = stack + size * 8
        if not stack or cfp >= end or (end - cfp) % t["cfp_size"] or (end - cfp) // t["cfp_size"] > 100000:
            raise ValueError(f"ec {ec:#x}: cfp {cfp:#x} is not a frame below {end:#x}")
        out = []
        f = cfp
        while f + t["cfp_size"] < end:	# the last frame is the thread's dummy one
            c = self.mem.read(f, t["cfp_read"])
            pc, iseq, ep = u64(c, t["cfp_pc"]), u64(c, t["cfp_iseq"]), u64(c, t["cfp_ep"])
            env = self.mem.read(ep - 16, 24)
            word = self.lib.rb_word__make(pc, iseq, u64(env, 16), u64(env, 0))
            if word & WORD_CFUNC:
                out.append({"kind": "cfunc", "me": word & WORD_ADDR})
            elif word:
                out.append(self.ruby_frame(word))
            f += t["cfp_size"]
        return out


def compare(name, frames, locs, diffs):
    """Ruby's locations are the frames' suffix (the leaf may have called one C method more:
    the blocking call); a C method's location is its caller's path and line."""
    if len(frames) < len(locs):
        diffs.append(f"live {name}: {len(frames)} frames walked, caller_locations has {len(locs)}")
        return 0
    extra = frames[:len(frames) - len(locs)]
    for fr in extra:
        if fr["kind"] != "cfunc":
            diffs.append(f"live {name}: a Ruby frame {fr['label']} leafward of caller_locations' first")
    tail = frames[len(frames) - len(locs):]
    for i, (fr, (label, path, line)) in enumerate(zip(tail, locs)):
        if fr["kind"] == "ruby":
            got = (fr["label"], fr["path"], fr["line"])
            if got != (label, path, line):
                diffs.append(f"live {name}: frame {i}: walked {got}, caller_locations {(label, path, line)}")
        else:
            caller = next((f for f in tail[i + 1:] if f["kind"] == "ruby"), None)
            if caller is None or (caller["path"], caller["line"]) != (path, line):
                diffs.append(f"live {name}: frame {i}: a C method where Ruby has {(label, path, line)}")
    return len(locs)


def gdb_native(pid, libbase, vm_exec, tids):
    """rb_vm_exec frames per thread (LWP), with the return addresses in them."""
    gdb = shutil.which("gdb")
    if not gdb:
        return None
    r = subprocess.run([gdb, "-nx", "-batch", "-p", str(pid), "-ex", "thread apply all bt"],
                       capture_output=True, text=True, timeout=120)
    per, cur = {}, None
    for line in r.stdout.splitlines():
        m = re.match(r"Thread \d+ \(.*LWP (\d+)\)", line)
        if m:
            cur = per.setdefault(int(m.group(1)), [])
            continue
        m = re.match(r"#\d+\s+(0x[0-9a-f]+) in (\S+)", line)
        if m and cur is not None and m.group(2) == "rb_vm_exec":
            cur.append(int(m.group(1), 16) - libbase)
    return per


def fdes(path):
    """Each function's [start, end) by its FDE in .eh_frame (the file is stripped)."""
    out = subprocess.run(["readelf", "--debug-dump=frames", path], capture_output=True,
                         text=True).stdout
    return {int(m.group(1), 16): int(m.group(2), 16)
            for m in re.finditer(r"FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", out)}


def disasm(path, start, end):
    return subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={start:#x}",
                           f"--stop-address={end:#x}", path], capture_output=True, text=True).stdout


def vm_exec_core_call(path, vm_exec):
    """The static vm_exec_core: of the functions rb_vm_exec calls, the one with the most
    indirect jumps in its own FDE's range (the VM's threaded dispatch); and the return
    address after rb_vm_exec's call of it. None when the FDEs do not say."""
    ranges = fdes(path)
    if vm_exec not in ranges:
        return None
    lines = disasm(path, vm_exec, ranges[vm_exec]).splitlines()
    rets = {}
    for i, l in enumerate(lines[:-1]):
        m = re.match(r"^\s*([0-9a-f]+):\s+call\s+([0-9a-f]+)\s", l)
        n = re.match(r"^\s*([0-9a-f]+):", lines[i + 1])
        if m and n:
            rets.setdefault(int(m.group(2), 16), []).append(int(n.group(1), 16))
    best, most = None, 0
    for target in rets:
        if target not in ranges:
            continue
        n = len(re.findall(r"\sjmp\s+\*", disasm(path, target, ranges[target])))
        if n > most:
            best, most = target, n
    if best is None or len(rets[best]) != 1:
        return None
    return best, rets[best][0], most


def check_live(lib, t, diffs, notes, checked):
    ruby = shutil.which(RUBY)
    if not ruby:
        notes.append(f"live: not checked ({RUBY} is not installed)")
        return
    if os.geteuid() != 0:
        notes.append("live: not checked (process_vm_readv of another process wants root here)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "rbchain.rb")
        with open(script, "w") as f:
            f.write(SCRIPT)
        with open(os.path.join(tmp, "rbworker.rb"), "w") as f:
            f.write(WORKER)
        out_path = os.path.join(tmp, "out")
        rfd, wfd = os.pipe()
        with open(out_path, "w") as out:
            # a relative path: the iseqs' pathobj is then [path, realpath]
            p = subprocess.Popen([ruby, os.path.basename(script)], stdin=rfd, stdout=out, cwd=tmp)
        os.close(rfd)
        try:
            deadline = time.time() + 20
            text = ""
            while time.time() < deadline:
                text = open(out_path).read()
                if text.count("END") >= 2:
                    break
                time.sleep(0.05)
            time.sleep(0.3)		# into IO#read and Queue#pop
            reports = parse_reports(text)
            if set(reports) != {"main", "worker"}:
                diffs.append(f"live: the script did not report both threads: {text!r}")
                return
            walk_process(lib, t, p.pid, reports, diffs, notes, checked)
        finally:
            os.close(wfd)
            p.kill()
            p.wait()


def walk_process(lib, t, pid, reports, diffs, notes, checked):
    mem = Mem(pid)
    lib_path = base = None
    for line in open(f"/proc/{pid}/maps"):
        f = line.split()
        if len(f) >= 6 and re.search(r"/libruby-3\.1\.so", f[5]) and int(f[2], 16) == 0:
            base, lib_path = int(f[0].split("-")[0], 16), f[5]
            break
    if base is None:
        diffs.append("live: the process maps no libruby-3.1.so")
        return
    syms = symbols(lib_path)
    for s in ("ruby_current_vm_ptr", "ruby_current_ec", "rb_vm_exec"):
        if s not in syms:
            diffs.append(f"live: {lib_path} exports no {s}")
            return
    vm = mem.u64(base + syms["ruby_current_vm_ptr"])
    ractor = mem.u64(vm + t["vm_main_ractor"])
    main_thread = mem.u64(vm + t["vm_main_thread"])
    running = mem.u64(ractor + t["ractor_running_ec"])
    # the ractor's threads: a circular list of lt_node from threads.set
    head = ractor + t["ractor_threads"]
    ths, node = [], mem.u64(head)
    while node and node != head and len(ths) < 64:
        ths.append(node - t["thread_node"])
        node = mem.u64(node)
    slot = dtpmod_slot(lib_path, "ruby_current_ec")
    modid = mem.u64(base + slot) if slot is not None else None
    by_tid, tls_offsets = {}, set()
    for th in ths:
        tid = mem.u32(th + t["thread_tid"])
        ec = mem.u64(th + t["thread_ec"])
        fs = mem.u64(th + t["thread_pthread"])
        if mem.u64(ec + t["ec_thread"]) != th:
            diffs.append(f"live: thread {tid}: its ec's thread_ptr is not the thread")
        if mem.u64(th + t["thread_ractor"]) != ractor:
            diffs.append(f"live: thread {tid}: its ractor is not the main one")
        if modid is not None:
            dtv = mem.u64(fs + 8)
            block = mem.u64(dtv + 16 * modid)
            tls_ec = mem.u64(block + syms["ruby_current_ec"])
            if tls_ec != ec:
                diffs.append(f"live: thread {tid}: ruby_current_ec {tls_ec:#x} is not th->ec {ec:#x}")
            tls_offsets.add(block + syms["ruby_current_ec"] - fs)
        by_tid[tid] = (th, ec, fs)
    w = Walker(lib, t, mem)
    n_locs = 0
    entries = {}
    for name, rep in sorted(reports.items()):
        if rep["tid"] not in by_tid:
            diffs.append(f"live {name}: tid {rep['tid']} is not among the ractor's threads "
                         f"{sorted(by_tid)}")
            continue
        th, ec, fs = by_tid[rep["tid"]]
        try:
            frames = w.frames(ec)
        except (OSError, ValueError) as e:
            diffs.append(f"live {name}: {e}")
            continue
        n_locs += compare(name, frames, rep["locs"], diffs)
        entries[rep["tid"]] = sum(1 for f in frames if f["kind"] == "ruby" and f["entry"])
        for f in frames:
            if f["kind"] == "ruby" and f["positions"]:
                diffs.append(f"live {name}: {f['label']}: insns_info.positions kept "
                             f"(VM_CHECK_MODE > 0?)")
        print(f"  {name} (tid {rep['tid']}): " + " <- ".join(
            (f"{f['label']}@{os.path.basename(f['path'])}:{f['line']}{'*' if f['entry'] else ''}"
             if f["kind"] == "ruby" else "[C]") for f in frames))
    if main_thread not in ths or mem.u32(main_thread + t["thread_tid"]) != pid:
        diffs.append("live: vm.ractor.main_thread is not the thread whose tid is the pid")
    if running not in {v[1] for v in by_tid.values()}:
        diffs.append(f"live: threads.running_ec {running:#x} is no thread's ec")
    if len(ths) != 2:
        diffs.append(f"live: {len(ths)} threads in the main ractor's list, not 2")
    checked.append(f"live: {n_locs} caller_locations of 2 threads walked from ruby_current_vm_ptr "
                   f"(thread list, ec, control frames, iseq bodies, Strings, line tables; "
                   f"pathobjs: {w.pathobjs['Array']} Arrays, {w.pathobjs['String']} Strings)")
    for kind, n in w.pathobjs.items():
        if not n:
            notes.append(f"live: no pathobj was a {kind}")
    if modid is None:
        diffs.append(f"live: no R_X86_64_DTPMOD64 for ruby_current_ec in {lib_path}")
    elif len(tls_offsets) != 1:
        diffs.append(f"live: ruby_current_ec's offset from fs differs by thread: {tls_offsets}")
    else:
        off = tls_offsets.pop()
        off = off - (1 << 64) if off >= 1 << 63 else off
        checked.append(f"live: ruby_current_ec of each thread (module {modid}) is th->ec, at fs base "
                       f"{off:+d} in every thread (static TLS)")
    core = vm_exec_core_call(lib_path, syms["rb_vm_exec"])
    native = gdb_native(pid, base, syms["rb_vm_exec"], list(by_tid))
    if native is None:
        notes.append("native: not checked (no gdb)")
    elif core is None:
        diffs.append("native: rb_vm_exec calls no function with indirect jumps (vm_exec_core?)")
    else:
        target, ret, njmp = core
        bad = 0
        for tid, n in entries.items():
            got = native.get(tid, [])
            if len(got) != n:
                diffs.append(f"native: thread {tid}: {len(got)} rb_vm_exec frames, {n} frames "
                             f"with VM_FRAME_FLAG_FINISH")
                bad += 1
            for a in got:
                if a != ret:
                    diffs.append(f"native: thread {tid}: rb_vm_exec returns to {a:#x}, not "
                                 f"{ret:#x} (after the call of {target:#x})")
                    bad += 1
        if not bad:
            checked.append(f"native: each thread's rb_vm_exec frames ({sum(entries.values())}) are its "
                           f"FINISH frames, each in the call of vm_exec_core (libruby+{target:#x}, "
                           f"{njmp} indirect jumps; returns to +{ret:#x})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--src", help="a ruby3.1 source tree (apt-get source ruby3.1)")
    a = ap.parse_args()
    lib, table = build_lib(a.build)
    diffs, notes, checked = [], [], []
    check_headers(table, a.src, diffs, notes, checked)
    check_live(lib, table, diffs, notes, checked)
    for d in diffs:
        print(f"  FAIL {d}")
    for c in checked:
        print(f"  checked: {c}")
    for n in notes:
        print(f"  not checked: {n}")
    print(f"rblayout: {len(checked)} checks, {len(diffs)} differences, {len(notes)} not checked")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())

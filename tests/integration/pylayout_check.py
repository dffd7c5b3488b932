#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""lib/python/pylayout.c's table against the interpreters themselves.

For each CPython 3.8-3.13 under ~/.pyenv/versions (or --pyenv), two checks:
  dwarf  gdb reads every offset, size, bit position and FRAME_OWNED_BY_CSTACK from the
         version's debug info (offsetof through gdb expressions, the str state bits from
         `ptype/o PyASCIIObject`), and each must equal what the C table says
         ($BUILD/tests/pylayout_dump prints py_layout__for(...) as JSON); for 3.13 also the
         layout parsed from the _Py_DebugOffsets bytes at the start of the file's _PyRuntime.
  live   the interpreter itself, given the C table, walks from _PyRuntime to its own thread
         state and current frame and code object with ctypes, and reads a str and a bytes
         object by the table: the same path BPF and userspace take. Also run for the system's
         python3.X (stripped: no DWARF) when its version is in the table.
Any difference, or a version of the table that no interpreter could check, fails (exit 1);
the last lines say what was checked and what could not be.

  python3 tests/integration/pylayout_check.py --build build-py
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

VERSIONS = [(3, 8), (3, 9), (3, 10), (3, 11), (3, 12), (3, 13)]
NO = 0xFFFF
NO_BIT = 0xFF
MODEL = {(3, 8): 1, (3, 9): 1, (3, 10): 2, (3, 11): 3, (3, 12): 4, (3, 13): 5}


def fields(v):
    """Field -> gdb expression of its offset (None: the version has no such field)."""
    m = v[1]
    off = lambda t, f: f"(long)&(({t} *)0)->{f}"
    f = {
        "bpf.runtime_interp_head": off("_PyRuntimeState", "interpreters.head"),
        "bpf.interp_tstate_head": off("struct _is", "tstate_head" if m <= 10 else "threads.head"),
        "bpf.tstate_next": off("struct _ts", "next"),
        "bpf.tstate_thread_id": off("struct _ts", "thread_id"),
        "bpf.tstate_frame": off("struct _ts", "frame" if m <= 10 else
                                "cframe" if m <= 12 else "current_frame"),
        "bpf.cframe_current_frame": off("_PyCFrame", "current_frame") if m in (11, 12) else None,
        "bpf.frame_previous": off("struct _frame", "f_back") if m <= 10 else
                              off("struct _PyInterpreterFrame", "previous"),
        "bpf.frame_code": off("struct _frame", "f_code") if m <= 10 else
                          off("struct _PyInterpreterFrame", "f_code" if m <= 12 else "f_executable"),
        "bpf.frame_instr": off("struct _frame", "f_lasti") if m <= 10 else
                           off("struct _PyInterpreterFrame", "prev_instr" if m <= 12 else "instr_ptr"),
        "bpf.frame_entry": None if m <= 10 else
                           off("struct _PyInterpreterFrame", "is_entry" if m == 11 else "owner"),
        "bpf.code_adaptive": off("PyCodeObject", "co_code_adaptive") if m >= 11 else None,
        "bpf.code_firstlineno": off("PyCodeObject", "co_firstlineno"),
        "code_name": off("PyCodeObject", "co_name"),
        "code_qualname": off("PyCodeObject", "co_qualname") if m >= 11 else None,
        "code_filename": off("PyCodeObject", "co_filename"),
        "code_linetable": off("PyCodeObject", "co_lnotab" if m <= 9 else "co_linetable"),
        "code_firstlineno": off("PyCodeObject", "co_firstlineno"),
        "str_length": off("PyASCIIObject", "length"),
        "str_state": off("PyASCIIObject", "state"),
        "str_ascii_data": "(long)sizeof(PyASCIIObject)",
        "str_compact_data": "(long)sizeof(PyCompactUnicodeObject)",
        "bytes_size": off("PyVarObject", "ob_size"),
        "bytes_data": off("PyBytesObject", "ob_sval"),
        # sizes that the table relies on
        "size.code_name": "(long)sizeof(((PyCodeObject *)0)->co_name)",
        "size.firstlineno": "(long)sizeof(((PyCodeObject *)0)->co_firstlineno)",
        "size.thread_id": "(long)sizeof(((struct _ts *)0)->thread_id)",
        "size.bytes_ob_base": off("PyBytesObject", "ob_base"),
        "size.str_length": "(long)sizeof(((PyASCIIObject *)0)->length)",
    }
    if m <= 10:
        f["size.f_lasti"] = "(long)sizeof(((struct _frame *)0)->f_lasti)"
    if m >= 11:
        f["size.frame_entry"] = "(long)sizeof(((struct _PyInterpreterFrame *)0)->%s)" % (
            "is_entry" if m == 11 else "owner")
    if m >= 12:
        f["bpf.owner_cstack"] = "(long)FRAME_OWNED_BY_CSTACK"
    return f


def find_pyenv(root, v):
    """The newest pyenv build of V and the file holding its DWARF, or (None, None)."""
    dirs = sorted(glob.glob(os.path.join(root, "%d.%d.*" % v)),
                  key=lambda d: [int(x) if x.isdigit() else -1 for x in
                                 os.path.basename(d).split(".")])
    for d in reversed(dirs):
        for cand in ("lib/libpython%d.%d.so.1.0" % v, "bin/python%d.%d" % v):
            p = os.path.join(d, cand)
            if os.path.exists(p):
                return d, p
    return None, None


def gdb_values(path, exprs):
    """Each expression's value from gdb on PATH (an int, or None when gdb could not)."""
    args = ["gdb", "-nx", "-batch", "-ex", "set max-value-size unlimited"]
    names = list(exprs)
    for n in names:
        args += ["-ex", f"echo @@{n}=", "-ex", f"output {exprs[n]}", "-ex", "echo \\n"]
    args += ["-ex", "echo @@ptype\\n", "-ex", "ptype/o PyASCIIObject", path]
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    vals = {}
    for n in names:
        mm = re.search(r"@@" + re.escape(n) + r"=(-?\d+)\s*$", out, re.M)
        vals[n] = int(mm.group(1)) if mm else None
    bits = {}
    ptype = out.split("@@ptype", 1)[1] if "@@ptype" in out else ""
    for mm in re.finditer(r"/\*\s*(\d+):\s*(\d+)\s*\|\s*\d+\s*\*/\s*unsigned int (\w+)\s*:\s*(\d+);",
                          ptype):
        bits[mm.group(3)] = (int(mm.group(1)), int(mm.group(2)), int(mm.group(4)))
    return vals, bits


def runtime_bytes(path, n):
    """The first N bytes of _PyRuntime's initial value in PATH (its .data), by gdb."""
    r = subprocess.run(["gdb", "-nx", "-batch", "-ex", f"x/{n}xb &_PyRuntime", path],
                       capture_output=True, text=True, timeout=300)
    data = bytearray()
    for line in r.stdout.splitlines():
        if ":" in line:
            data += bytes(int(x, 16) for x in line.split(":", 1)[1].split())
    return bytes(data) if len(data) == n else None


def get(layout, name):
    cur = layout
    for part in name.split("."):
        cur = cur[part]
    return cur


def check_dwarf(v, path, layout, diffs):
    exprs = fields(v)
    vals, bits = gdb_values(path, {k: e for k, e in exprs.items() if e is not None})
    n = 0

    def expect(name, want, why="DWARF"):
        nonlocal n
        n += 1
        have = get(layout, name)
        if have != want:
            diffs.append(f"{v[0]}.{v[1]} {name}: table {have}, {why} {want}")

    for name, e in exprs.items():
        if name.startswith("size."):
            continue
        if e is None:
            expect(name, NO, "version has no field:")
        elif vals.get(name) is None:
            diffs.append(f"{v[0]}.{v[1]} {name}: gdb could not evaluate {e}")
        else:
            expect(name, vals[name])
    if v[1] < 12:
        expect("bpf.owner_cstack", 0, "no FRAME_OWNED_BY_CSTACK:")
    expect("bpf.model", MODEL[v], "model for the version:")
    # sizes the readers assume: 8-byte pointers and ssize_t, 4-byte ints, 1-byte flag
    want_sizes = {"size.code_name": 8, "size.firstlineno": 4, "size.thread_id": 8,
                  "size.bytes_ob_base": 0, "size.str_length": 8, "size.f_lasti": 4,
                  "size.frame_entry": 1}
    for s, w in want_sizes.items():
        if s in exprs:
            n += 1
            if vals.get(s) != w:
                diffs.append(f"{v[0]}.{v[1]} {s}: DWARF {vals.get(s)}, the readers assume {w}")
    # code_read covers every code field read
    ends = [vals[k] + 8 for k in ("code_name", "code_qualname", "code_filename", "code_linetable")
            if vals.get(k) is not None]
    if vals.get("code_firstlineno") is not None:
        ends.append(vals["code_firstlineno"] + 4)
    expect("code_read", max(ends), "end of the code fields:")
    # the str state bits
    for name, field, width in (("str_kind_shift", "kind", 3), ("str_compact_bit", "compact", 1),
                               ("str_ascii_bit", "ascii", 1), ("str_ready_bit", "ready", 1)):
        b = bits.get(field)
        if b is None:
            expect(name, NO_BIT, "no such bit:")
            continue
        if b[0] != vals.get("str_state") or b[2] != width:
            diffs.append(f"{v[0]}.{v[1]} state.{field}: at byte {b[0]}, {b[2]} bits wide")
        expect(name, b[1])
    if "interned" not in bits or "kind" not in bits:
        diffs.append(f"{v[0]}.{v[1]} ptype/o PyASCIIObject: no state bits found")
    return n


def check_debug_offsets(dump, path, table, diffs):
    data = runtime_bytes(path, 584)
    if data is None:
        diffs.append("3.13 _PyRuntime: gdb could not read its first 584 bytes")
        return 0
    r = subprocess.run([dump, "--debug-offsets", "-"], input=data, capture_output=True,
                       timeout=60)
    if r.returncode != 0:
        diffs.append(f"3.13 _Py_DebugOffsets: pylayout_dump refused them: {r.stderr!r}")
        return 0
    parsed = json.loads(r.stdout)
    n = 0
    for k in table:
        n += 1
        if parsed[k] != table[k]:
            diffs.append(f"3.13 _Py_DebugOffsets: {k} {parsed[k]}, table {table[k]}")
    return n


LIVE = r'''
import ctypes, json, sys, threading
L = json.loads(sys.argv[1])
b = L["bpf"]
NO = 0xffff
rd = lambda a: ctypes.c_uint64.from_address(a).value
rd32 = lambda a: ctypes.c_int32.from_address(a).value
rd8 = lambda a: ctypes.c_uint8.from_address(a).value
bad = []
def eq(what, have, want):
    if have != want:
        bad.append("%s: %#x, want %#x" % (what, have, want))
runtime = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime"))
get_ts = ctypes.pythonapi.PyThreadState_Get
get_ts.restype = ctypes.c_void_p
me = get_ts()
interp = rd(runtime + b["runtime_interp_head"])
ts = rd(interp + b["interp_tstate_head"])
for i in range(64):
    if not ts or rd(ts + b["tstate_thread_id"]) == threading.get_ident():
        break
    ts = rd(ts + b["tstate_next"])
eq("tstate found by thread id", ts, me)
C = ctypes.c_uint64
def unit_of(fr, instr, code):
    if b["model"] <= 2:
        lasti = ctypes.c_int32(instr & 0xffffffff).value
        return int(lasti / 2) if b["model"] == 1 else lasti
    return (instr - (id(code) + b["code_adaptive"])) // 2
def probe(arg):
    # no Python call between reading the frame and its instruction: ctypes is C
    fr = C.from_address(ts + b["tstate_frame"]).value
    if b["cframe_current_frame"] != NO:
        fr = C.from_address(fr + b["cframe_current_frame"]).value
    instr = C.from_address(fr + b["frame_instr"]).value; line = sys._getframe().f_lineno
    f = sys._getframe()
    code = f.f_code
    if b["model"] >= 4:
        eq("leaf frame owner", rd8(fr + b["frame_entry"]), 0)
    eq("leaf frame code", rd(fr + b["frame_code"]), id(code))
    unit = unit_of(fr, instr, code)
    eq("unit within co_code", int(0 <= unit < len(code.co_code) // 2), 1)
    eq("firstlineno", rd32(id(code) + b["code_firstlineno"]), code.co_firstlineno)
    eq("co_name", rd(id(code) + L["code_name"]), id(code.co_name))
    eq("co_filename", rd(id(code) + L["code_filename"]), id(code.co_filename))
    if L["code_qualname"] != NO:
        eq("co_qualname", rd(id(code) + L["code_qualname"]), id(code.co_qualname))
    lt = code.co_lnotab if L["minor"] <= 9 else code.co_linetable
    eq("line table", rd(id(code) + L["code_linetable"]), id(lt))
    eq("bytes size", rd(id(lt) + L["bytes_size"]), len(lt))
    eq("bytes data", ctypes.string_at(id(lt) + L["bytes_data"], len(lt)) == lt, True)
    lines.append((code.co_firstlineno, unit, lt.hex(), line, "leaf"))
    # the caller, in the middle of its call of probe: its line is the call's
    prev = rd(fr + b["frame_previous"])
    pcode = f.f_back.f_code
    eq("caller frame code", rd(prev + b["frame_code"]), id(pcode))
    plt = pcode.co_lnotab if L["minor"] <= 9 else pcode.co_linetable
    lines.append((pcode.co_firstlineno, unit_of(prev, rd(prev + b["frame_instr"]), pcode),
                  plt.hex(), f.f_back.f_lineno, "caller"))
lines = []
def outer():
    x = 1
    probe(
        x,
    )
    return [probe(i)
            for i in range(1)]
outer()
for s, kind, ascii_ in (("hello_ascii", 1, 1), ("caf\xe9", 1, 0), ("\u20ac uro", 2, 0),
                        ("\U0001f600!", 4, 0)):
    s = "".join(list(s))
    st = ctypes.c_uint32.from_address(id(s) + L["str_state"]).value
    eq("str length", rd(id(s) + L["str_length"]), len(s))
    eq("str kind of %r" % s, (st >> L["str_kind_shift"]) & 7, kind)
    eq("str compact", (st >> L["str_compact_bit"]) & 1, 1)
    eq("str ascii", (st >> L["str_ascii_bit"]) & 1, ascii_)
    if L["str_ready_bit"] != 0xff:
        eq("str ready", (st >> L["str_ready_bit"]) & 1, 1)
    data = id(s) + (L["str_ascii_data"] if ascii_ else L["str_compact_data"])
    enc = {1: "latin-1", 2: "utf-16-le", 4: "utf-32-le"}[kind]
    eq("str data of %r" % s, ctypes.string_at(data, len(s) * kind) == s.encode(enc), True)
print(json.dumps([bad, lines]))
'''


def check_live(python, v, dump, diffs):
    r = subprocess.run([dump, "%d.%d" % v], capture_output=True, text=True, timeout=60)
    layout = r.stdout.strip()
    p = subprocess.run([python, "-c", LIVE, layout], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        diffs.append(f"{python}: the live walk failed: {p.stderr.strip()[-500:]}")
        return 0
    bad, lines = json.loads(p.stdout.strip().splitlines()[-1])
    for b in bad:
        diffs.append(f"{python} ({v[0]}.{v[1]}) live: {b}")
    # the line of each frame read, by py_line__for, against the interpreter's own f_lineno
    for first, unit, table, want, what in lines:
        r = subprocess.run([dump, "--line", "%d.%d" % v, str(first), str(unit & 0xffffffff),
                            table], capture_output=True, text=True, timeout=60)
        got = r.stdout.strip()
        if got != str(want):
            diffs.append(f"{python} ({v[0]}.{v[1]}) live: {what} frame at unit {unit}: "
                         f"py_line__for {got or r.stderr.strip()}, f_lineno {want}")
    return len(lines)


def version_of(python):
    try:
        r = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:3])"],
                           capture_output=True, text=True, timeout=30)
        return tuple(int(x) for x in r.stdout.split())
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--pyenv", default=os.path.expanduser("~/.pyenv/versions"))
    a = ap.parse_args()
    dump = os.path.join(a.build, "tests", "pylayout_dump")
    if not os.access(dump, os.X_OK):
        print(f"pylayout: no {dump} (make OUT={a.build} {dump})")
        return 1
    diffs, checked, unchecked = [], [], []
    # the table says nothing of versions it does not hold
    for v in ((3, 7), (3, 14), (2, 7), (4, 0)):
        r = subprocess.run([dump, "%d.%d" % v], capture_output=True, text=True)
        if r.returncode == 0:
            diffs.append(f"{v[0]}.{v[1]}: the table has a layout for it")
    have_gdb = shutil.which("gdb") is not None
    for v in VERSIONS:
        r = subprocess.run([dump, "%d.%d" % v], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            diffs.append(f"{v[0]}.{v[1]}: not in the table")
            continue
        table = json.loads(r.stdout)
        d, path = find_pyenv(a.pyenv, v)
        if d is None:
            unchecked.append(f"{v[0]}.{v[1]} (no pyenv build under {a.pyenv})")
        elif not have_gdb:
            unchecked.append(f"{v[0]}.{v[1]} DWARF (no gdb)")
        else:
            n0 = len(diffs)
            n = check_dwarf(v, path, table, diffs)
            if v == (3, 13):
                n += check_debug_offsets(dump, path, table, diffs)
            nl = check_live(os.path.join(d, "bin", "python%d.%d" % v), v, dump, diffs)
            checked.append(f"{os.path.basename(d)} ({n} values from {os.path.relpath(path, d)}"
                           f" + live walk, {nl} frames' lines){'' if len(diffs) == n0 else ': DIFFERS'}")
    # the system's interpreters: stripped, so the live walk only
    for py in sorted(set(glob.glob("/usr/bin/python3.[0-9]*"))):
        if not re.fullmatch(r".*/python3\.\d+", py):
            continue
        ver = version_of(py)
        if ver is None or tuple(ver[:2]) not in VERSIONS:
            unchecked.append(f"{py} (version {ver} not in the table)")
            continue
        n0 = len(diffs)
        nl = check_live(py, tuple(ver[:2]), dump, diffs)
        checked.append(f"{py} {'.'.join(map(str, ver))} (live walk only: no DWARF; "
                       f"{nl} frames' lines)"
                       f"{'' if len(diffs) == n0 else ': DIFFERS'}")
    for c in checked:
        print(f"  checked {c}")
    for u in unchecked:
        print(f"  NOT CHECKED {u}")
    for x in diffs:
        print(f"  FAIL {x}")
    covered = {c.split(" ")[0].rsplit(".", 1)[0] for c in checked}
    missing = [f"{v[0]}.{v[1]}" for v in VERSIONS if f"{v[0]}.{v[1]}" not in covered]
    if missing:
        print(f"  FAIL no DWARF check of {', '.join(missing)}")
    print(f"pylayout: {len(checked)} interpreters checked, {len(unchecked)} not, "
          f"{len(diffs)} differences")
    return 1 if diffs or missing or not checked else 0


if __name__ == "__main__":
    sys.exit(main())

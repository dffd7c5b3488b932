#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Symbolization speed of profile, side by side with llvm-symbolizer and addr2line.

Run after building build/bench/symbench (and build/profile for --long); `make bench-symbolize`
does both. For each address set (node, python3, libc.so.6 with its libc6-dbg debug file):

    ours             build/bench/symbench FILE                        < addresses (hex)
    ours -n          build/bench/symbench -n FILE   (no inline chains, as profile --no-inline)
    llvm-symbolizer  llvm-symbolizer --inlining --obj=FILE            < addresses (0x...)
    addr2line        addr2line -f -i -C -e FILE                       < addresses (hex)

symbench runs the profiler's symbolizer as the profiler does at the end of a profile (lib/sandbox:
every address noted, then named in batches by the sandboxed worker process, which it starts;
symbol, demangling, DWARF inline chain, FILE+0xSTART for unnamed code). Every tool gets the same FILE, the real ELF file
(/usr/bin/node -> its target, /usr/bin/python3 -> python3.11, libc.so.6): all three find
libc's debug file under /usr/lib/debug/.build-id/ by themselves. Each tool runs --rounds times
(default 5) per set, the order of the tools rotated every round; wall seconds (fork to exit,
start-up included, stdout to a file) and peak RSS (GNU time's %M) are reported as medians,
with the ratios ours/llvm-symbolizer and ours/addr2line.

Address sets: N distinct link-time addresses per file (default 10,000), chosen with a fixed
seed: a function symbol of .text picked uniformly at random (from .symtab of the file or of its
debug file, else from .dynsym), then a byte offset uniformly inside it; repeated until N
distinct addresses. Our folded output holds names, not addresses, so a real profile cannot
give the sets. A real profile's addresses are more clustered; picking functions uniformly
touches more functions and compilation units, the harder case for every tool.

Agreement with llvm-symbolizer, per set, the fraction of addresses where: the innermost frame
(ours: the last; llvm: the first) agrees, strictly (up to white space) and
after normalizing the spellings in which GNU's and LLVM's demanglers differ (clone suffixes
[clone .cold] / (.cold) / foo.cold, lambdas, a leading "auto"); the outermost frame (the
function of the symbol table) agrees; the whole chain agrees (same depth, every frame).
Two names also agree when both are names of the symbol covering the address (aliases:
malloc and __libc_malloc). The first mismatches per set are listed (--mismatches).

--long adds: profile -v -F 999 of a Python workload for 30 s, stopped with SIGINT; the time
from SIGINT to profile's exit (drain the maps, unwind what is left, symbolize, write) is the
end-of-profile cost.

Nothing here asserts anything about timings: it prints figures.
"""
import argparse
import bisect
import os
import platform
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

SEED = 20261122
TEXT_TYPES = set("tTwWi")


def sh(argv, **kw):
    return subprocess.run(argv, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True, **kw).stdout


def find_llvm_symbolizer():
    for name in ("llvm-symbolizer",) + tuple(f"llvm-symbolizer-{v}" for v in range(20, 10, -1)):
        path = shutil.which(name)
        if path:
            return path
    return None


def build_id(path):
    m = re.search(r"Build ID: ([0-9a-f]+)", sh(["readelf", "-n", path]))
    return m.group(1) if m else None


def debug_file(path):
    """The build-id debug file of PATH, as elfsym finds it, or None."""
    bid = build_id(path)
    if bid:
        dbg = f"/usr/lib/debug/.build-id/{bid[:2]}/{bid[2:]}.debug"
        if os.path.exists(dbg):
            return dbg
    return None


def text_range(path):
    for line in sh(["readelf", "-S", "-W", path]).splitlines():
        f = line.replace("[ ", "[").split()
        if len(f) > 5 and f[1] == ".text":
            start, size = int(f[3], 16), int(f[5], 16)
            return start, start + size
    raise SystemExit(f"{path}: no .text section")


def function_symbols(path):
    """(symbols, source): sorted [(start, size, name)] of .text functions with a size, from
    .symtab of PATH or its debug file, else .dynsym; names demangled by nm -C."""
    lo, hi = text_range(path)
    dbg = debug_file(path)
    tries = ([(dbg, [], "debug file .symtab")] if dbg else []) + \
        [(path, [], ".symtab"), (path, ["-D"], ".dynsym")]
    for src, extra, what in tries:
        try:
            out = sh(["nm", "-S", "-C", "--defined-only"] + extra + [src])
        except subprocess.CalledProcessError:
            continue
        syms = {}
        for line in out.splitlines():
            f = line.split(None, 3)
            if len(f) < 4 or f[2] not in TEXT_TYPES:
                continue
            start, size = int(f[0], 16), int(f[1], 16)
            if size and lo <= start < hi:
                syms.setdefault((start, size), []).append(f[3])
        if syms:
            return sorted((s, z, n) for (s, z), n in syms.items()), what
    raise SystemExit(f"{path}: no function symbols")


def address_set(syms, n, seed):
    rng = random.Random(seed)
    addrs = set()
    total = sum(min(z, 1 << 20) for _, z, _ in syms)
    if total < n:
        raise SystemExit("too few bytes of functions for the address set")
    while len(addrs) < n:
        start, size, _ = syms[rng.randrange(len(syms))]
        addrs.add(start + rng.randrange(size))
    return sorted(addrs)


# --- running the tools ------------------------------------------------------------------

class Result:
    def __init__(self, wall, rss_kib, rc, out, err):
        self.wall, self.rss_kib, self.rc, self.out, self.err = wall, rss_kib, rc, out, err


TIME = "/usr/bin/time"


def timed(argv, stdin_path, timeout):
    """Run ARGV with stdin from STDIN_PATH: wall seconds (fork to exit) and peak RSS in KiB.
    The peak comes from GNU time (%M): the ru_maxrss that wait4 gives for a child forked
    from this script starts at this script's own peak (Linux carries the parent's high-water
    mark over fork and exec), which would hide the tools' own figures."""
    use_time = os.access(TIME, os.X_OK)
    with open(stdin_path, "rb") as fin, tempfile.TemporaryFile() as out, \
            tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as tf:
        cmd = ([TIME, "-f", "%M", "-o", tf.name] if use_time else []) + argv
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdin=fin, stdout=out, stderr=err)
        # A blocking wait: Popen.wait(timeout) polls with sleeps of up to 50 ms.
        killer = threading.Timer(timeout, p.kill)
        killer.start()
        p.wait()
        wall = time.monotonic() - t0
        killer.cancel()
        rss = None
        if use_time:
            try:
                rss = int(tf.read().strip().splitlines()[-1])
            except (ValueError, IndexError):
                pass
        out.seek(0)
        err.seek(0)
        return Result(wall, rss, p.returncode, out.read().decode(errors="replace"),
                      err.read().decode(errors="replace"))


def parse_ours(text):
    """addr -> frames, root first (symbench prints names; their kinds are not spelled)."""
    res = {}
    for line in text.splitlines():
        addr, _, frames = line.partition("\t")
        res[int(addr, 16)] = frames.split(";")
    return res


def parse_llvm(text, addrs):
    """addr -> functions, innermost first (llvm-symbolizer prints a blank line after each).
    Names LLVM 14's demangler leaves mangled (some clones: _ZSt...E.isra.0) go through
    c++filt, GNU's demangler, as ours do."""
    blocks = text.split("\n\n")
    res = {}
    for addr, block in zip(addrs, blocks):
        lines = block.strip("\n").splitlines()
        res[addr] = lines[0::2]
    mangled = sorted({n for v in res.values() for n in v if n.startswith("_Z")})
    if mangled and shutil.which("c++filt"):
        out = subprocess.run(["c++filt"], input="\n".join(mangled) + "\n", text=True,
                             stdout=subprocess.PIPE).stdout.splitlines()
        if len(out) == len(mangled):
            d = dict(zip(mangled, out))
            res = {a: [d.get(n, n) for n in v] for a, v in res.items()}
    return res


CLONE_GNU = re.compile(r"\s*\[clone \.[^\]]*\]")                 # foo() [clone .cold]
CLONE_LLVM = re.compile(r"\s*\(\.[A-Za-z_][\w.]*\)")               # foo() (.cold)
CLONE_C = re.compile(r"(\.(cold|isra|part|constprop|lto_priv|localalias)(\.\d+)?)+$")
LAMBDA_GNU = re.compile(r"\{lambda\((.*?)\)#\d+\}")               # {lambda(int)#1}
LAMBDA_LLVM = re.compile(r"'lambda\d*'\(")                          # 'lambda'(int)
UNNAMED = re.compile(r"\{unnamed type#\d+\}|'unnamed\d*'")
AUTO = re.compile(r"^auto ")                                         # llvm: auto f<...>()


def norm(name, strict=False):
    """NAME without white space; unless STRICT, also without the conventions in which GNU's
    demangler and LLVM's differ (clone suffixes: [clone .cold] / (.cold), and the C
    symbol's own foo.cold where DWARF says foo; {lambda(int)#1} / 'lambda'(int))."""
    if not strict:
        name = CLONE_GNU.sub("", name)
        name = CLONE_LLVM.sub("", name)
        name = CLONE_C.sub("", name)
        name = LAMBDA_GNU.sub(r"lambda(\1)", name)
        name = LAMBDA_LLVM.sub("lambda(", name)
        name = UNNAMED.sub("unnamed", name)
        name = AUTO.sub("", name)
    return re.sub(r"\s+", "", name)


def agreement(ours, llvm, syms, addrs):
    """Rates of agreement with llvm-symbolizer, and the mismatching addresses:
    strict: innermost names equal up to white space (or aliases);
    innermost, function (the outermost frame: the symbol), chain (every frame, same depth):
    equal after norm() (or aliases)."""
    starts = [s for s, _, _ in syms]
    aliases = {}
    for s, _, names in syms:
        for name in names:
            # The debug .symtab of libc spells versions: pthread_key_create@@GLIBC_2.34.
            aliases.setdefault(norm(name.split("@")[0]), set()).add(s)

    def same(a, b, addr, strict=False):
        a, b = norm(a, strict), norm(b, strict)
        if a == b:
            return True
        i = bisect.bisect_right(starts, addr) - 1
        if i < 0:
            return False
        s = starts[i]
        # nm -C prints no parameters for C names; the symbol table's name is compared.
        return s in aliases.get(a, ()) and s in aliases.get(b, ())

    n = {"strict": 0, "innermost": 0, "function": 0, "chain": 0}
    bad = []
    for addr in addrs:
        o, l = ours.get(addr, ["?"]), list(reversed(llvm.get(addr, ["?"])))
        n["strict"] += same(o[-1], l[-1], addr, True)
        ok_in = same(o[-1], l[-1], addr)
        ok_out = same(o[0], l[0], addr)
        ok_chain = ok_in and ok_out and len(o) == len(l) and \
            all(norm(x) == norm(y) for x, y in zip(o[1:-1], l[1:-1]))
        n["innermost"] += ok_in
        n["function"] += ok_out
        n["chain"] += ok_chain
        if not ok_chain:
            bad.append((addr, o, l))
    return {k: v / len(addrs) for k, v in n.items()}, bad


# --- the 30-second profile ----------------------------------------------------------------

BUSY_PY = r"""
import json, re, random, hashlib, zlib, sys, time, decimal, fractions, collections
open(sys.argv[1], "w").write("started\n")
rng = random.Random(1)
end = time.monotonic() + float(sys.argv[2])
words = ["".join(rng.choice("abcdefghij") for _ in range(8)) for _ in range(2000)]
while time.monotonic() < end:
    d = {w: [rng.random() for _ in range(5)] for w in words[:300]}
    s = json.dumps(d, sort_keys=True); json.loads(s)
    re.findall(r"[a-e]+f?g", " ".join(words))
    hashlib.sha256(s.encode()).hexdigest(); zlib.decompress(zlib.compress(s.encode()))
    sorted(words, key=str.upper); collections.Counter("".join(words)).most_common(5)
    sum(decimal.Decimal(i) / 7 for i in range(300)); sum(fractions.Fraction(1, i) for i in range(1, 80))
    "-".join(w.upper().replace("a", "bb").split("c")[0] for w in words)
"""


def long_run(profile, seconds, tmp, freq):
    script = os.path.join(tmp, "busy.py")
    marker = os.path.join(tmp, "started")
    out = os.path.join(tmp, "long.folded")
    with open(script, "w") as f:
        f.write(BUSY_PY)
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen([profile, "-v", "-F", str(freq), "-o", out, "--", "/usr/bin/python3", script,
                              marker, str(seconds + 60)], stdin=subprocess.DEVNULL, stderr=err)
        t0 = time.monotonic()
        while not os.path.exists(marker):
            if p.poll() is not None or time.monotonic() - t0 > 30:
                break
            time.sleep(0.01)
        time.sleep(seconds)
        t_int = time.monotonic()
        p.send_signal(signal.SIGINT)
        _, status, ru = os.wait4(p.pid, 0)
        end_cost = time.monotonic() - t_int
        err.seek(0)
        log = err.read().decode(errors="replace")
    stacks = sum(1 for _ in open(out)) if os.path.exists(out) else 0
    frames = set()
    if os.path.exists(out):
        for line in open(out):
            frames.update(line.rpartition(" ")[0].split(";"))
    return end_cost, os.waitstatus_to_exitcode(status), ru, stacks, len(frames), log


# --- main -----------------------------------------------------------------------------------

def median(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="build directory (default: build)")
    ap.add_argument("--rounds", type=int, default=5, help="runs per tool and set (default 5)")
    ap.add_argument("-n", "--addresses", type=int, default=10000,
                    help="distinct addresses per set (default 10000)")
    ap.add_argument("--sets", default="node,python3,libc", help="sets to run (default: all)")
    ap.add_argument("--no-addr2line", action="store_true", help="skip addr2line (slow on node)")
    ap.add_argument("--long", action="store_true",
                    help="also the end-of-profile cost of a 30-second profile (python3)")
    ap.add_argument("--long-seconds", type=float, default=30)
    ap.add_argument("--mismatches", type=int, default=5, help="mismatches shown per set")
    ap.add_argument("--keep", metavar="DIR", help="keep address sets and outputs in DIR")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per run before giving up")
    args = ap.parse_args()

    symbench = os.path.join(args.build, "bench", "symbench")
    if not os.access(symbench, os.X_OK):
        sys.exit(f"{symbench} missing: run `make {symbench}` first")
    llvm = find_llvm_symbolizer()
    a2l = shutil.which("addr2line")
    print(f"symbolize: {platform.node()} {platform.release()}, {os.cpu_count()} CPUs; "
          f"{args.addresses} distinct addresses per set, {args.rounds} rounds, seed {SEED}")
    print("tools: ours = " + symbench + "; " +
          (sh([llvm, "--version"]).splitlines()[1].strip() + " at " + llvm if llvm
           else "llvm-symbolizer missing (apt-get install llvm)") + "; " +
          (sh([a2l, "--version"]).splitlines()[0].strip() if a2l else "addr2line missing"))

    sets = {
        "node": os.path.realpath("/usr/bin/node"),
        "python3": os.path.realpath("/usr/bin/python3"),
        "libc": os.path.realpath("/lib/x86_64-linux-gnu/libc.so.6"),
    }
    tmp = args.keep or tempfile.mkdtemp(prefix="symbench.")
    os.makedirs(tmp, exist_ok=True)
    rows, agree_rows, notes = [], [], []
    t_start = time.monotonic()
    for name in args.sets.split(","):
        path = sets[name]
        if not os.path.exists(path):
            print(f"{name}: {path} missing, skipped")
            continue
        syms, src = function_symbols(path)
        addrs = address_set(syms, args.addresses, SEED)
        dbg = debug_file(path)
        plain = os.path.join(tmp, f"{name}.addr")
        hexed = os.path.join(tmp, f"{name}.0x.addr")
        with open(plain, "w") as f:
            f.writelines(f"{a:x}\n" for a in addrs)
        with open(hexed, "w") as f:
            f.writelines(f"0x{a:x}\n" for a in addrs)
        print(f"{name}: {path} ({os.path.getsize(path) / 1e6:.0f} MB), "
              f"{len(syms)} functions from {src}" +
              (f" ({dbg})" if dbg else "") + f", debug info: " +
              ("build-id debug file" if dbg else
               "in the file" if ".debug_info" in sh(["readelf", "-S", "-W", path])
               else "none"))
        # Warm the page cache for everyone.
        for p in (path, dbg):
            if p:
                with open(p, "rb") as f:
                    while f.read(1 << 20):
                        pass
        tools = [("ours", [symbench, path], plain),
                 ("ours -n", [symbench, "-n", path], plain)]
        if llvm:
            tools.append(("llvm-symbolizer", [llvm, "--inlining", f"--obj={path}"], hexed))
        if a2l and not args.no_addr2line:
            tools.append(("addr2line", [a2l, "-f", "-i", "-C", "-e", path], plain))
        res = {t: [] for t, _, _ in tools}
        outs = {}
        for r in range(args.rounds):
            order = tools[r % len(tools):] + tools[:r % len(tools)]
            for tname, argv, stdin in order:
                x = timed(argv, stdin, args.timeout)
                if x.rc != 0:
                    notes.append(f"{name} {tname} round {r + 1}: exit status {x.rc}: "
                                 f"{x.err.strip()[-200:]}")
                    continue
                res[tname].append(x)
                outs[tname] = x.out
        if args.keep:
            for tname, text in outs.items():
                with open(os.path.join(tmp, f"{name}.{tname}.out"), "w") as f:
                    f.write(text)
        med = {t: (median([x.wall for x in v]),
                   median([x.rss_kib for x in v if x.rss_kib is not None]) / 1024)
               for t, v in res.items() if v}
        rows.append((name, len(addrs), med))
        if "ours" in outs and "llvm-symbolizer" in outs:
            ours = parse_ours(outs["ours"])
            ll = parse_llvm(outs["llvm-symbolizer"], addrs)
            n_inl = sum(1 for a in addrs if len(ours.get(a, [])) > 1)
            l_inl = sum(1 for a in addrs if len(ll.get(a, [])) > 1)
            rates, bad = agreement(ours, ll, syms, addrs)
            agree_rows.append((name, rates, n_inl, l_inl, bad))

    if not os.access(TIME, os.X_OK):
        print(f"\n{TIME} missing (apt-get install time): no peak memory figures")

    def fmt(med, t):
        return (f"{med[t][0]:8.3f} {med[t][1]:7.1f}" if t in med else f"{'-':>8} {'-':>7}")

    def ratio(med, a, b, i):
        return f"{med[a][i] / med[b][i]:6.2f}" if a in med and b in med and med[b][i] else \
            f"{'-':>6}"

    print()
    print(f"{'set':<8} {'addrs':>6} | {'ours s':>8} {'MB':>7} | {'llvm s':>8} {'MB':>7} | "
          f"{'a2l s':>8} {'MB':>7} | {'t/llvm':>6} {'t/a2l':>6} {'m/llvm':>6} {'m/a2l':>6}")
    print("-" * 104)
    for name, n, med in rows:
        print(f"{name:<8} {n:>6} | {fmt(med, 'ours')} | {fmt(med, 'llvm-symbolizer')} | "
              f"{fmt(med, 'addr2line')} | {ratio(med, 'ours', 'llvm-symbolizer', 0)} "
              f"{ratio(med, 'ours', 'addr2line', 0)} {ratio(med, 'ours', 'llvm-symbolizer', 1)} "
              f"{ratio(med, 'ours', 'addr2line', 1)}")
    print("(medians; s = wall seconds for the whole run, start-up included; MB = peak RSS; "
          "t/x and m/x = ours / x for time and memory: below 1 is better for ours)")
    print("ours without inline chains (symbench -n, as profile --no-inline): " +
          ", ".join(f"{name} {med['ours -n'][0]:.3f} s {med['ours -n'][1]:.1f} MB"
                    for name, n, med in rows if "ours -n" in med))
    if agree_rows:
        print()
        print("agreement with llvm-symbolizer, % of addresses (a name agrees when equal, or an "
              "alias of the same symbol;\n  strict: up to white space; the others after "
              "normalizing clone suffixes and lambda spellings):")
        print(f"  {'set':<8} {'strict':>9} {'innermost':>9} {'function':>9} {'chain':>9}"
              f"   addresses with inline frames (ours / llvm)")
        for name, r, n_inl, l_inl, bad in agree_rows:
            print(f"  {name:<8} {r['strict'] * 100:8.2f}% {r['innermost'] * 100:8.2f}% "
                  f"{r['function'] * 100:8.2f}% {r['chain'] * 100:8.2f}%   {n_inl} / {l_inl}")
        for name, r, n_inl, l_inl, bad in agree_rows:
            for addr, o, l in bad[:args.mismatches]:
                w = len(f"{name} 0x{addr:x}")
                print(f"  {name} 0x{addr:x}: ours {';'.join(o)[:160]}")
                print(f"  {'':{w}}  llvm {';'.join(l)[:160]}")
    for note in notes:
        print("note: " + note)
    print(f"\nsets run in {time.monotonic() - t_start:.1f} s")

    if args.long:
        profile = os.path.join(args.build, "profile")
        print(f"\nlong: {profile} -v -F 999 -- python3 busy.py for {args.long_seconds:.0f} s, "
              "then SIGINT")
        cost, rc, ru, stacks, frames, log = long_run(profile, args.long_seconds, tmp, 999)
        for line in log.splitlines():
            if line.startswith("profile:"):
                print("  " + line)
        print(f"  exit status {rc}; {stacks} folded stacks, {frames} distinct frame names; "
              f"profile peak RSS {ru.ru_maxrss / 1024:.0f} MB")
        print(f"  end-of-profile cost (SIGINT to exit: drain, unwind, symbolize, write): "
              f"{cost:.3f} s")
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

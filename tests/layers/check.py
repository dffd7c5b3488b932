#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The layering of lib/: each folder includes only the folders it may use (docs/DESIGN.md),
and only lib/collect reaches the kernel side (bpf/ and libbpf). One line per folder; the last
line is "layers: N passed, N failed"."""
import os
import re
import sys

# What each folder may use besides itself. Order is the data flow.
ALLOWED = {
    "base": set(),
    "proc": {"base"},
    "dso": {"base", "proc"},
    "unwind": {"base", "proc", "dso"},
    "symbolize": {"base", "proc", "dso"},
    # The symbolizer worker (symbolize/ and dso/ on descriptors it is handed) and the
    # privileged side's client of it; collect/ names addresses only through it.
    "sandbox": {"base", "proc", "dso", "unwind", "symbolize", "python", "ruby"},
    "profile": {"base"},
    "output": {"base", "profile"},
    "collect": {"base", "proc", "dso", "unwind", "sandbox", "profile", "output", "python", "ruby"},
    "flamegraph": {"base", "output"},
    # CPython's layouts and the decoding of what BPF reads of them: pure, and it fills
    # bpf/profile.h's struct py_offsets (that header only: no skeleton, no libbpf).
    "python": {"base"},
    # CRuby's layouts and the decoding of what BPF and userspace read of them: pure, like
    # python/ (bpf/profile.h only, once its struct rb_offsets moves there).
    "ruby": {"base"},
}
# Folders that include bpf/profile.h (the structs shared with BPF) and nothing else of the
# kernel side.
BPF_HEADER_ONLY = {"python", "ruby"}
# The stack stage (stacks, parking, ucounts): no BPF in it, nor the session that holds BPF's objects (it asks the
# collector through struct stack_env), so that unit tests drive it without root.
NO_KERNEL_SIDE = {("collect", f) for f in ("stacks.c", "stacks.h", "parking.c", "parking.h",
                                         "ucounts.c", "ucounts.h")}
SESSION = re.compile(r'#include\s+"collect/session_int\.h"')
KERNEL_SIDE = re.compile(r'#include\s+(<bpf/|"profile\.h"|"profile\.skel\.h"|<linux/bpf\.h>)')
INCLUDE = re.compile(r'#include\s+"([a-z_]+)/[^"]+"')


def check(top):
    failed = passed = 0
    for folder, allowed in ALLOWED.items():
        d = os.path.join(top, "flamegraph" if folder == "flamegraph" else os.path.join("lib", folder))
        if not os.path.isdir(d):
            continue
        bad = []
        for name in sorted(os.listdir(d)):
            if not name.endswith((".c", ".h")):
                continue
            with open(os.path.join(d, name)) as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if m and m.group(1) != folder and m.group(1) not in allowed:
                        bad.append(f"{name}:{n}: uses {m.group(1)}/")
                    if (KERNEL_SIDE.match(line) and (folder != "collect" or
                                                     (folder, name) in NO_KERNEL_SIDE) and
                            not (folder in BPF_HEADER_ONLY and
                                 line.strip() == '#include "profile.h"')):
                        bad.append(f"{name}:{n}: reaches the kernel side: {line.strip()}")
                    if SESSION.match(line) and (folder, name) in NO_KERNEL_SIDE:
                        bad.append(f"{name}:{n}: takes the whole session: {line.strip()}")
        if bad:
            failed += 1
            print(f"  FAIL {folder}: " + "; ".join(bad))
        else:
            passed += 1
            print(f"  PASS {folder}: uses {', '.join(sorted(allowed)) or 'nothing else'}")
    print(f"layers: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(check(sys.argv[1] if len(sys.argv) > 1 else "."))

# SPDX-License-Identifier: GPL-3.0-or-later
"""The crafted files of tests/integration/hostile.py, made from the hostile workload and its
library: ELF headers and sections past the end of the file, .eh_frame records that loop and
lie, a compressed .debug_info claiming 4 GiB, stripped programs whose debug link is a FIFO
or a device, a .gnu_debugaltlink to a FIFO."""
import os
import shutil
import struct
import subprocess
import zlib


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

def past_eof_variants(lib, tmp):
    """Copies of LIB (libhostile.so) whose headers point past the end of the file: program headers
    (every PT_LOAD, PT_NOTE, PT_GNU_EH_FRAME), section headers, the header tables themselves.
    Returns their "PATH@OFFSET" specs, OFFSET hostile_lib_spin's in the file."""
    src = Elf(lib)
    off = src.vaddr_to_off(symbol(lib, "hostile_lib_spin"))
    size = len(src.data)
    specs = []

    e = Elf(lib)
    for i in range(e.phnum):
        p = e.phdr(i)
        p[2] = size + (1 << 40)         # p_offset
        p[5] = 1 << 62                  # p_filesz
        e.set_phdr(i, p)
    specs.append((e, "phdrs"))

    e = Elf(lib)
    for i in range(1, e.shnum):
        s = e.shdr(i)
        if i != e.shstrndx:
            s[4] = size + (1 << 32)     # sh_offset
        s[5] = (1 << 63) + i            # sh_size
        e.set_shdr(i, s)
    specs.append((e, "sections"))

    e = Elf(lib)
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


def hostile_eh_frame(lib, tmp, huge_count):
    """A copy of LIB (libhostile.so) whose .eh_frame holds records that loop and lie, which its
    .eh_frame_hdr table points at (with a count of 2^31 - 1 when HUGE_COUNT)."""
    e = Elf(lib)
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


def debug_info_claims_4g(lib, tmp):
    """A copy of LIB (libhostile.so) whose compressed .debug_info holds a real zlib stream of
    4 GiB - 1 MiB (its own DWARF, then zeros), in a sparse file just larger (BFD inflates
    a section smaller than its file)."""
    zpath = os.path.join(tmp, "libz.so")
    subprocess.run(["objcopy", "--compress-debug-sections=zlib", lib, zpath], check=True)
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


def stripped_with_debuglink(program, tmp, name, make_target):
    """A stripped copy of PROGRAM named NAME whose .gnu_debuglink names NAME.debug next to it,
    which MAKE_TARGET(path) then turns into something hostile."""
    path = os.path.join(tmp, name)
    dbg = path + ".debug"
    with open(dbg, "wb") as f:
        f.write(b"not yet")
    subprocess.run(["objcopy", "--strip-all", f"--add-gnu-debuglink={dbg}",
                    program, path], check=True)
    os.unlink(dbg)
    make_target(dbg)
    return path


def altlink_to_fifo(lib, tmp):
    """Two copies of LIB (libhostile.so) whose common DWARF dwz moved to a file their
    .gnu_debugaltlink names, which is then replaced by a FIFO: BFD opens it to read the
    strings the copies' DWARF refers to. The link climbs out of the directory BFD looks in
    first (profile hands BFD /proc/self/fd/N: "../../..TMP/common.debug" is TMP's file).
    Returns one copy, or None without dwz."""
    if not shutil.which("dwz"):
        return None
    a, b = os.path.join(tmp, "libalt_a.so"), os.path.join(tmp, "libalt_b.so")
    common = os.path.join(tmp, "common.debug")
    shutil.copy(lib, a)
    shutil.copy(lib, b)
    subprocess.run(["dwz", "-m", common, "-M", "../../.." + common, a, b], check=True)
    os.unlink(common)
    os.mkfifo(common)
    return a

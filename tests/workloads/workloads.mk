# SPDX-License-Identifier: GPL-3.0-or-later
# Workloads the integration tests profile. Included by the top Makefile.

WL		:= $(OUT)/tests/workloads
# GCC 12 ignores -mno-omit-leaf-frame-pointer at -O2 (leaf functions get no frame); clang
# honours it, so the frame-pointer workloads are built with clang.
WL_CC		:= clang
WL_FP		:= -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
WL_NOFP		:= -O2 -g -fomit-frame-pointer
WORKLOADS	:= $(WL)/chain_fp $(WL)/libchain_fp.so $(WL)/readloop $(WL)/hidden \
		   $(WL)/hidden.debug $(WL)/chain_nofp $(WL)/libchain_nofp.so $(WL)/recurse \
		   $(WL)/threads $(WL)/leaf $(WL)/inline $(WL)/templates $(WL)/short_lived \
		   $(WL)/plt_loop $(WL)/sighandler $(WL)/sighandler_fp $(WL)/cxx_callbacks $(WL)/chain_lld $(WL)/libchain_lld.so \
		   $(WL)/mixed $(WL)/jitmap $(WL)/chain_static $(WL)/chain_static_fp $(WL)/chain_spie \
		   $(WL)/chain_spie_fp $(WL)/hostile $(WL)/libhostile.so \
		   $(WL)/inline_dwz $(WL)/dbgframe $(WL)/dbgframe.debug $(WL)/offcpu $(WL)/offcpu_fp \
		   $(WL)/wallhalf $(WL)/events $(WL)/fetched $(WL)/libfetched.so $(WL)/gapleaf_fp $(WL)/gapleaf \
		   $(WL)/zerora $(WL)/coro $(WL)/deepserve $(WL)/scanleaf $(WL)/memo \
		   $(WL)/swap $(WL)/libswap_a.so $(WL)/libswap_b.so $(WL)/swapexe_one $(WL)/swapexe_two $(WL)/nasmleaf \
		   $(WL)/napper $(WL)/execdeep $(WL)/python3.11-hostile \
		   $(WL)/rbhostile $(WL)/libruby-3.1-hostile.so

# Rust from the machine's toolchain (rustup's, linked by lld since 1.90), when there is one;
# the integration test says when it is missing.
# Go from golang-go (a package of make test's): frame pointers, but not in assembly.
GO		?= $(firstword $(shell command -v go 2>/dev/null) $(wildcard /usr/lib/go/bin/go))
ifneq ($(GO),)
WORKLOADS	+= $(WL)/gosha $(WL)/gofib
endif

# Two Rust toolchains, the same chain.rs: chain_rs from the toolchain first in PATH or
# rustup's (~/.cargo/bin/rustc, a proxy that must keep its name), never Debian's, which
# builds chain_rs_debian (1.63, a package of make test's: its std built by Debian, linked
# by cc and ld.bfd), called by its absolute path.
RUSTC_DEBIAN	?= $(wildcard /usr/bin/rustc)
RUSTC		?= $(firstword $(foreach r,$(shell command -v rustc 2>/dev/null),$(if \
		   $(filter $(realpath $(r)),$(realpath /usr/bin/rustc)),,$(r))) \
		   $(wildcard $(HOME)/.cargo/bin/rustc))
# musl (Debian's musl-tools, a package of make test's): the chain against musl's libc.so and
# linked statically. musl is built without unwind tables, its start-up included.
MUSL_GCC	?= $(shell command -v musl-gcc 2>/dev/null)
ifneq ($(MUSL_GCC),)
WORKLOADS	+= $(WL)/chain_musl $(WL)/libchain_musl.so $(WL)/chain_musl_static
endif

ifneq ($(RUSTC),)
WORKLOADS	+= $(WL)/chain_rs
endif
ifneq ($(RUSTC_DEBIAN),)
WORKLOADS	+= $(WL)/chain_rs_debian
endif

$(WL)/libchain_fp.so: tests/workloads/chain_lib.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WL_CC) $(WL_FP) -fPIC -shared $< -o $@

$(WL)/chain_fp: tests/workloads/chain_main.c $(WL)/libchain_fp.so
	$(call msg,CC,$@)
	$(Q)$(WL_CC) $(WL_FP) $< -L$(WL) -lchain_fp -Wl,-rpath,'$$ORIGIN' -o $@

$(WL)/readloop: tests/workloads/readloop.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WL_CC) $(WL_FP) $< -o $@

# Code in an anonymous mapping named in its own /tmp/perf-PID.map (containers' JIT names).
$(WL)/jitmap: tests/workloads/jitmap.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WL_CC) $(WL_FP) $< -o $@

# Built with symbols, split: the debug file keeps them, the binary is stripped of .symtab and
# points at the debug file through .gnu_debuglink.
$(WL)/hidden $(WL)/hidden.debug &: tests/workloads/hidden.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WL_CC) $(WL_FP) $< -o $(WL)/hidden.full
	$(Q)objcopy --only-keep-debug $(WL)/hidden.full $(WL)/hidden.debug
	$(Q)objcopy --strip-all --add-gnu-debuglink=$(WL)/hidden.debug $(WL)/hidden.full $(WL)/hidden
	$(Q)rm -f $(WL)/hidden.full

# Without frame pointers, as Debian builds its packages: the DWARF path.
$(WL)/libchain_nofp.so: tests/workloads/chain_lib.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) -fPIC -shared $< -o $@

$(WL)/chain_nofp: tests/workloads/chain_main.c $(WL)/libchain_nofp.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_NOFP) $< -L$(WL) -lchain_nofp -Wl,-rpath,'$$ORIGIN' -o $@

# Linked by lld, as clang users and rustc (since 1.90) link: segments share file pages, so a
# mapping's file offset is not its segment's (p_offset != p_vaddr past the first).
$(WL)/libchain_lld.so: tests/workloads/chain_lib.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WL_CC) $(WL_NOFP) -fuse-ld=lld -fPIC -shared $< -o $@

$(WL)/chain_lld: tests/workloads/chain_main.c $(WL)/libchain_lld.so
	$(call msg,CC,$@)
	$(Q)$(WL_CC) $(WL_NOFP) -fuse-ld=lld $< -L$(WL) -lchain_lld -Wl,-rpath,'$$ORIGIN' -o $@

# Statically linked, the chain in one file: gcc -static links .eh_frame without
# .eh_frame_hdr; -static-pie links one. With and without frame pointers (glibc's start-up has
# none either way).
WL_STATIC_SRCS	:= tests/workloads/chain_main.c tests/workloads/chain_lib.c
# The chain without frame pointers, its call frame information only in .debug_frame (no
# unwind tables), which strip -g then moves to the separate debug file with the DWARF.
$(WL)/dbgframe $(WL)/dbgframe.debug &: $(WL_STATIC_SRCS) tests/workloads/spin.h
	$(call msg,CC,$(WL)/dbgframe)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) -fno-asynchronous-unwind-tables -fno-unwind-tables $(WL_STATIC_SRCS) \
		-o $(WL)/dbgframe.full
	$(Q)objcopy --only-keep-debug $(WL)/dbgframe.full $(WL)/dbgframe.debug
	$(Q)objcopy --strip-debug --add-gnu-debuglink=$(WL)/dbgframe.debug $(WL)/dbgframe.full \
		$(WL)/dbgframe
	$(Q)rm -f $(WL)/dbgframe.full

$(WL)/chain_static: $(WL_STATIC_SRCS) tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) -static $(WL_STATIC_SRCS) -o $@

$(WL)/chain_static_fp: $(WL_STATIC_SRCS) tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fno-omit-frame-pointer -static $(WL_STATIC_SRCS) -o $@

$(WL)/chain_spie: $(WL_STATIC_SRCS) tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) -static-pie $(WL_STATIC_SRCS) -o $@

$(WL)/chain_spie_fp: $(WL_STATIC_SRCS) tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fno-omit-frame-pointer -static-pie $(WL_STATIC_SRCS) -o $@

$(WL)/libchain_musl.so: tests/workloads/chain_lib.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(MUSL_GCC) $(WL_NOFP) -fPIC -shared $< -o $@

$(WL)/chain_musl: tests/workloads/chain_main.c $(WL)/libchain_musl.so
	$(call msg,CC,$@)
	$(Q)$(MUSL_GCC) $(WL_NOFP) $< -L$(WL) -lchain_musl -Wl,-rpath,'$$ORIGIN' -o $@

$(WL)/chain_musl_static: $(WL_STATIC_SRCS) tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(MUSL_GCC) $(WL_NOFP) -static $(WL_STATIC_SRCS) -o $@

$(WL)/execdeep: tests/workloads/execdeep.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) $< -o $@

$(WL)/recurse: tests/workloads/recurse.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) $< -o $@

# Frames at one place by two callers, for the walk from the thread's last one (gcc, no frame
# pointers, as Debian builds).
$(WL)/memo: tests/workloads/memo.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) $< -o $@

# Waits of known lengths (sleep, pipe, mutex), for off-CPU time: as Debian builds, and with
# frame pointers (clang).
$(WL)/offcpu: tests/workloads/offcpu.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) -pthread $< -o $@

$(WL)/offcpu_fp: tests/workloads/offcpu.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WL_CC) $(WL_FP) -pthread $< -o $@

# Known numbers of page faults and write(2) calls from known functions: -e.
$(WL)/events: tests/workloads/events.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) $< -o $@

# Half on the CPU, half off it: --wall.
$(WL)/wallhalf: tests/workloads/wallhalf.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) $< -o $@

$(WL)/threads: tests/workloads/threads.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) -pthread $< -o $@

$(WL)/napper: tests/workloads/napper.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) -pthread $< -o $@

# Frame pointers, but none in leaf functions.
$(WL)/leaf: tests/workloads/leaf.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WL_CC) -O2 -g -fno-omit-frame-pointer -momit-leaf-frame-pointer $< -o $@

$(WL)/inline: tests/workloads/inline.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) $< -o $@

# inline, stripped, its debug file compressed by dwz together with a twin's: DWARF that refers
# to a common file (.gnu_debugaltlink), as in Debian's -dbgsym packages.
$(WL)/inline_dwz $(WL)/inline_dwz.debug $(WL)/inline_dwz.common.debug &: tests/workloads/inline.c tests/workloads/spin.h
	$(call msg,CC,$(WL)/inline_dwz)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) $< -o $(WL)/inline_dwz.full
	$(Q)cp $(WL)/inline_dwz.full $(WL)/inline_dwz.twin
	$(Q)objcopy --only-keep-debug $(WL)/inline_dwz.full $(WL)/inline_dwz.debug
	$(Q)objcopy --only-keep-debug $(WL)/inline_dwz.twin $(WL)/inline_dwz.twin.debug
	$(Q)dwz -m $(WL)/inline_dwz.common.debug -M $(abspath $(WL))/inline_dwz.common.debug \
		$(WL)/inline_dwz.debug $(WL)/inline_dwz.twin.debug
	$(Q)objcopy --strip-all --add-gnu-debuglink=$(WL)/inline_dwz.debug $(WL)/inline_dwz.full $(WL)/inline_dwz
	$(Q)rm -f $(WL)/inline_dwz.full $(WL)/inline_dwz.twin $(WL)/inline_dwz.twin.debug

$(WL)/templates: tests/workloads/templates.cc
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) $(WL_NOFP) $< -o $@

$(WL)/short_lived: tests/workloads/short_lived.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) $< -o $@

# Frame-pointer code calling through a function without frame pointers (and through libc's
# qsort): the program with frame pointers, mixed_mid.o without.
$(WL)/mixed_mid.o: tests/workloads/mixed_mid.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) -c $< -o $@

$(WL)/mixed: tests/workloads/mixed_main.c tests/workloads/spin.h $(WL)/mixed_mid.o
	$(call msg,CC,$@)
	$(Q)$(WL_CC) $(WL_FP) $< $(WL)/mixed_mid.o -o $@

# C++ with frame pointers through Debian's libstdc++ (without them) and back: a stream
# writing into a streambuf of its own, std::sort with std::function, exceptions.
$(WL)/cxx_callbacks: tests/workloads/cxx_callbacks.cc
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)clang++ $(WL_FP) $< -o $@

# Lazy-binding PLT calls from code without frame pointers (as Debian builds): stub names.
$(WL)/plt_loop: tests/workloads/plt_loop.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) -fno-builtin -Wl,-z,lazy $< -o $@

# Time spent in a signal handler, without frame pointers: the trampoline's name.
$(WL)/sighandler: tests/workloads/sighandler.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) $< -o $@

# The same with frame pointers: a walk from the handler meets the trampoline (libc, without
# them), whose caller is the interrupted code's rbp, not a frame record.
$(WL)/sighandler_fp: tests/workloads/sighandler.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WL_CC) $(WL_FP) $< -o $@

$(WL)/chain_rs: tests/workloads/chain.rs
	$(call msg,RUSTC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(RUSTC) -O -g $< -o $@

$(WL)/chain_rs_debian: tests/workloads/chain.rs
	$(call msg,RUSTC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(RUSTC_DEBIAN) -O -g $< -o $@

$(WL)/gosha: tests/workloads/gosha/main.go
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)cd tests/workloads/gosha && GO111MODULE=off GOCACHE=$(abspath $(OUT))/go-cache \
		$(GO) build -o $(abspath $@) main.go

$(WL)/gofib: tests/workloads/gofib/main.go
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)cd tests/workloads/gofib && GO111MODULE=off GOCACHE=$(abspath $(OUT))/go-cache \
		$(GO) build -o $(abspath $@) main.go

# Hostile files (tests/integration/hostile.py): a process that maps the crafted copies of
# libhostile.so, without frame pointers (its CFI is read) and without a soname (copies load
# side by side).
$(WL)/libhostile.so: tests/workloads/hostile_lib.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) -fPIC -shared $< -o $@

$(WL)/hostile: tests/workloads/hostile.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) $< -ldl -o $@

# A program and a library as a distribution ships them: no symbols, no DWARF, no debuglink;
# their debug files (by build id), made by dwz with a common file as Debian's -dbgsym are,
# only in fetched-debug/, which the tests serve with debuginfod.
$(WL)/fetched $(WL)/libfetched.so &: tests/workloads/fetched_main.c tests/workloads/fetched_lib.c \
		tests/workloads/fetched.h tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(WL)/fetched-debug
	$(Q)$(CC) $(WL_NOFP) -Wl,--build-id,-soname,libfetched.so -fPIC -shared tests/workloads/fetched_lib.c \
	    -o $(WL)/libfetched.full
	$(Q)$(CC) $(WL_NOFP) -Wl,--build-id tests/workloads/fetched_main.c -L$(WL) \
	    -l:libfetched.full -Wl,-rpath,'$$ORIGIN' -o $(WL)/fetched.full
	$(Q)objcopy --only-keep-debug $(WL)/libfetched.full $(WL)/fetched-debug/libfetched.debug
	$(Q)objcopy --only-keep-debug $(WL)/fetched.full $(WL)/fetched-debug/fetched.debug
	$(Q)rm -f $(WL)/fetched-debug/common.debug
	$(Q)cd $(WL)/fetched-debug && dwz -m common.debug \
	    -M /usr/lib/debug/.dwz/profile-test/fetched.debug fetched.debug libfetched.debug
	$(Q)objcopy --strip-all $(WL)/libfetched.full $(WL)/libfetched.so
	$(Q)objcopy --strip-all $(WL)/fetched.full $(WL)/fetched
	$(Q)rm -f $(WL)/fetched.full $(WL)/libfetched.full

# A leaf no CFI describes, in a small stretch between FDEs: with frame pointers and without.
$(WL)/gapleaf_fp: tests/workloads/gapleaf.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WL_CC) $(WL_FP) $< -o $@

$(WL)/gapleaf: tests/workloads/gapleaf.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) $< -o $@

# Leaves whose unwind reads a return address of 0: assembly without CFI over zeroed words,
# and CFI that does not follow its code (frame pointers kept elsewhere).
$(WL)/zerora: tests/workloads/zerora.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WL_CC) $(WL_FP) $< -o $@

# A makecontext coroutine on a heap stack.
$(WL)/coro: tests/workloads/coro.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) $< -o $@

# Callers past the stack copy that another caller replaces a few ms later: a server's two
# routes over a 32 KiB frame, and a handler on an alternate signal stack.
$(WL)/deepserve: tests/workloads/deepserve.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) $< -o $@

# An assembly leaf without CFI, called through a pointer, stale return addresses under it.
$(WL)/scanleaf: tests/workloads/scanleaf.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) $< -o $@

# What a process maps and is called changes while it runs: two plugins in turn at one
# address, a thread renamed in turn.
$(WL)/swap: tests/workloads/swap.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) $< -o $@ -ldl -lpthread

$(WL)/libswap_a.so: tests/workloads/swap_lib.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) -fPIC -shared -DSWAP_NAME=swap_work_alpha $< -o $@

$(WL)/libswap_b.so: tests/workloads/swap_lib.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) -fPIC -shared -DSWAP_NAME=swap_work_beta -DSWAP_DEEP $< -o $@

# Two versions of one program, for a file rewritten in place (the same inode) between runs.
$(WL)/swapexe_one: tests/workloads/swapexe.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) -DSWAP_V=1 $< -o $@

$(WL)/swapexe_two: tests/workloads/swapexe.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WL_NOFP) -DSWAP_V=2 $< -o $@

# Functions of NASM: untyped, unsized global symbols, no CFI (as x264's).
$(WL)/nasmleaf: tests/workloads/nasmleaf.c tests/workloads/nasmleaf.asm tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)nasm -f elf64 tests/workloads/nasmleaf.asm -o $@.o
	$(Q)$(CC) $(WL_NOFP) $< $@.o -o $@
	$(Q)rm -f $@.o

# A program profile takes for CPython 3.11 (its name, an exported _PyRuntime laid out as 3.11's)
# whose thread states, frames and code objects other threads scribble on (issue 29): frame
# pointers (its _PyEval_EvalFrameDefault is walked to), _PyRuntime in .dynsym and .symtab.
$(WL)/python3.11-hostile: tests/workloads/pyhostile.c tests/workloads/spin.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WL_CC) $(WL_FP) -rdynamic -pthread $< -o $@

# A program profile takes for CRuby 3.1 (issue 29): it needs libruby-3.1-hostile.so, which
# exports the data object ruby_current_vm_ptr (STT_OBJECT, .dynsym; and one function, for
# CFI), and lays out the VM, its threads' control frames and iseqs as 3.1's, scribbled on by
# another thread. Frame pointers: its rb_vm_exec is walked to. -fPIC: the pointer stays the
# library's (no copy relocation into the program's .bss).
$(WL)/libruby-3.1-hostile.so: tests/workloads/rbhostile.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WL_CC) $(WL_FP) -DRBHOSTILE_LIB -fPIC -shared $< -o $@

$(WL)/rbhostile: tests/workloads/rbhostile.c tests/workloads/spin.h $(WL)/libruby-3.1-hostile.so
	$(call msg,CC,$@)
	$(Q)$(WL_CC) $(WL_FP) -fPIC -rdynamic -pthread $< -L$(WL) -l:libruby-3.1-hostile.so \
	    -Wl,-rpath,'$$ORIGIN' -o $@

# lib/python's layout table as JSON, for tests/integration/pylayout_check.py (not a
# workload: a helper of the integration tests, built with them).
WORKLOADS	+= $(OUT)/tests/pylayout_dump
$(OUT)/tests/pylayout_dump: $(OUT)/tests/integration/pylayout_dump.o $(OUT)/lib/python/pylayout.o \
			     $(OUT)/lib/python/pyline.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@

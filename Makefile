# SPDX-License-Identifier: GPL-3.0-or-later
# profile: a sampling CPU profiler. `make` builds build/profile; see README.md for the rest.

.DELETE_ON_ERROR:
.SUFFIXES:
.SECONDARY:

OUT		:= build
PREFIX		?= /usr/local
DESTDIR		?=
CC		?= cc
CLANG		?= clang
BPFTOOL		?= bpftool
PKG_CONFIG	?= pkg-config
VMLINUX_BTF	?= /sys/kernel/btf/vmlinux
VERSION		:= 0.1.0

ARCH		:= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-9s %s\n' "$(1)" "$(2)";
endif

CFLAGS		?= -O2 -g
WARNINGS	:= -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
ALL_CFLAGS	:= $(CFLAGS) $(WARNINGS) -std=gnu11 -D_GNU_SOURCE -MMD -MP \
		   -I$(OUT) -Ibpf -Ilib -Iflamegraph -DPROFILE_VERSION='"$(VERSION)"'
PKG_LIBS	:= libbpf libelf zlib libunwind-generic libdebuginfod
LDLIBS		:= $(shell $(PKG_CONFIG) --libs $(PKG_LIBS) 2>/dev/null || echo -lbpf -lelf -lz -lunwind-generic -lunwind -ldebuginfod) -lbfd -lm

BPF_CFLAGS	:= -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(OUT) -Ibpf -Wall

LIB_SRCS	:= $(wildcard lib/*/*.c) $(wildcard flamegraph/*.c)
LIB_OBJS	:= $(patsubst %.c,$(OUT)/%.o,$(LIB_SRCS))
CMD_OBJS	:= $(patsubst %.c,$(OUT)/%.o,$(wildcard cmd/*.c))
UNIT_SRCS	:= $(wildcard tests/unit/*.c)
UNIT_OBJS	:= $(patsubst %.c,$(OUT)/%.o,$(UNIT_SRCS))
SKEL		:= $(OUT)/profile.skel.h

.PHONY: all test unit layers integration browser demo bench install clean deps fuzz fuzz-test \
	check-asan
all: $(OUT)/profile

# --- BPF -----------------------------------------------------------------------------------
$(OUT)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

$(OUT)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(OUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# --- userspace -----------------------------------------------------------------------------
$(OUT)/%.o: %.c | $(SKEL)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# The flame graph's script and style, embedded in every SVG as C strings.
$(OUT)/fg_assets.h: flamegraph/embed.sh flamegraph/flamegraph.js flamegraph/flamegraph.css
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)sh flamegraph/embed.sh flamegraph/flamegraph.js flamegraph/flamegraph.css > $@

$(OUT)/flamegraph/svg.o: $(OUT)/fg_assets.h

$(OUT)/profile: $(CMD_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# --- tests ---------------------------------------------------------------------------------
-include tests/unit/fixtures.mk
include tests/workloads/workloads.mk
include tests/fuzz/fuzz.mk
include bench/bench.mk

$(OUT)/tests/unit-tests: $(UNIT_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -lcunit -o $@

# `make test` and `make demo` first install missing Debian packages, then re-enter make so
# that pkg-config sees them.
deps:
	$(Q)sh scripts/deps.sh

test: deps
	$(Q)$(MAKE) --no-print-directory layers unit integration fuzz-test browser
	$(Q)$(MAKE) --no-print-directory check-asan

# The profiler and the unit tests built with AddressSanitizer and UndefinedBehaviorSanitizer
# (in build-asan/; the workloads as usual), and the unit and integration tests run with them.
# Any report fails: UB stops the program with status 1 (GCC 12's UBSan prints on stderr
# whatever log_path says), and AddressSanitizer's reports of every process (the integration
# tests do not all look at exit codes) go to build-asan/tests/sanitizer/, which any uid may
# write (profile runs as 65534 after attach), checked at the end. SIGBUS is left to
# base/mapguard (handle_sigbus=0): a file truncated under profile costs that file only, and
# the tests of what is not guarded expect the signal's default action. Sample counts and times
# are notes there, not failures (PROFILE_TEST_SANITIZED): the slower profiler takes CPU
# from the workloads.
ASAN_OUT	:= build-asan
ASAN_CFLAGS	:= -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
		   -fno-sanitize-recover=all
ASAN_LOGS	:= $(ASAN_OUT)/tests/sanitizer
check-asan: deps
	$(Q)rm -rf $(ASAN_LOGS) && mkdir -p $(ASAN_LOGS) && chmod 1777 $(ASAN_LOGS)
	$(Q)ASAN_OPTIONS=log_path=$(abspath $(ASAN_LOGS))/asan:detect_leaks=1:handle_sigbus=0 \
	    LSAN_OPTIONS=suppressions=$(abspath tests/sanitizer/lsan.supp):print_suppressions=0 \
	    UBSAN_OPTIONS=print_stacktrace=1 PROFILE_TEST_SANITIZED=1 \
	    $(MAKE) --no-print-directory OUT=$(ASAN_OUT) CFLAGS="$(ASAN_CFLAGS)" unit integration; \
	    st=$$?; if [ -n "$$(ls -A $(ASAN_LOGS))" ]; then \
		echo "check-asan: sanitizer reports in $(ASAN_LOGS):" >&2; \
		head -n 40 $(ASAN_LOGS)/* >&2; exit 1; fi; exit $$st

unit: $(OUT)/tests/unit-tests $(FIXTURES)
	$(call msg,TEST,unit)
	$(Q)$(OUT)/tests/unit-tests $(OUT)/tests/fixtures

# Each folder of lib/ includes only the folders it may use; only lib/collect reaches bpf/.
layers:
	$(call msg,TEST,layers)
	$(Q)python3 tests/layers/check.py .

integration: $(OUT)/profile $(WORKLOADS)
	$(call msg,TEST,integration)
	$(Q)python3 tests/integration/run.py --build $(OUT)

fuzz: $(FUZZ_BINS)
	$(call fuzz_run,$(FUZZ_SECONDS))

fuzz-test: $(FUZZ_BINS)
	$(call fuzz_run,$(FUZZ_TEST_SECONDS))

# Flame graphs in headless Chromium: zoom, Reset Zoom, search; hostile names stay text.
browser: $(OUT)/profile
	$(call msg,TEST,browser)
	$(Q)python3 tests/browser/run.py --build $(OUT)

demo: deps
	$(Q)$(MAKE) --no-print-directory $(OUT)/profile $(OUT)/tests/workloads/chain_fp
	$(Q)sh scripts/demo.sh $(OUT)

bench: deps
	$(Q)$(MAKE) --no-print-directory $(OUT)/profile $(OUT)/bench/fixedwork
	$(Q)python3 bench/overhead.py --build $(OUT) $(BENCH_ARGS)
	$(Q)python3 bench/intrusion.py --build $(OUT) $(BENCH_ARGS)
	$(Q)python3 bench/selfcost.py --build $(OUT) $(BENCH_ARGS)
	$(Q)python3 bench/bpfcost.py --build $(OUT) $(BENCH_ARGS)
	$(Q)python3 bench/endtoend.py --build $(OUT) $(BENCH_ARGS)
	$(Q)python3 bench/pprofwrite.py --build $(OUT) $(BENCH_ARGS)
	$(Q)python3 bench/offcpu.py --build $(OUT) $(BENCH_ARGS)
	$(Q)python3 bench/pyoverhead.py --build $(OUT) $(BENCH_ARGS)
	$(Q)python3 bench/render.py --build $(OUT)
	$(Q)$(MAKE) --no-print-directory bench-symbolize

install: $(OUT)/profile
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -D -m 0755 $(OUT)/profile $(DESTDIR)$(PREFIX)/bin/profile
	$(Q)install -D -m 0644 man/profile.1 $(DESTDIR)$(PREFIX)/share/man/man1/profile.1

clean:
	$(call msg,CLEAN,$(OUT))
	$(Q)rm -rf $(OUT)

-include $(shell find $(OUT) -name '*.d' 2>/dev/null)

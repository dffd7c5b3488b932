# SPDX-License-Identifier: GPL-3.0-or-later
.SECONDEXPANSION:
# libFuzzer targets for the parsers of untrusted input. `make fuzz` runs each for
# FUZZ_SECONDS (default 60); `make test` runs each for FUZZ_TEST_SECONDS.
# Included by the top Makefile.

FUZZ_DIR	:= $(OUT)/fuzz
FUZZ_CFLAGS	:= -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		   -D_GNU_SOURCE -Ilib -Ibpf -Iflamegraph -I$(OUT) -DPROFILE_VERSION='"$(VERSION)"'
FUZZ_SECONDS	?= 60
FUZZ_TEST_SECONDS ?= 10

FUZZ_TARGETS	:= procmaps kallsyms perfmap dso flamegraph cfi pprof debugfile compressed sandbox \
		   utab interp
fuzz_srcs_procmaps	:= lib/proc/procmaps.c lib/base/limits.c
fuzz_srcs_kallsyms	:= lib/symbolize/kallsyms.c
fuzz_srcs_perfmap	:= lib/symbolize/perfmap.c lib/base/fileio.c lib/base/limits.c lib/proc/ns.c
# What the worker decodes of CPython's and CRuby's objects read from a process.
fuzz_srcs_interp	:= lib/python/pylayout.c lib/python/pyline.c lib/python/pystr.c \
			   lib/ruby/rblayout.c lib/ruby/rbline.c lib/ruby/rbstr.c
# The worker's messages, both ways (lib/sandbox/proto.c).
fuzz_srcs_sandbox	:= lib/sandbox/proto.c
fuzz_srcs_cfi		:= lib/unwind/cfi.c lib/unwind/frames.c lib/unwind/frames_go.c lib/unwind/frames_follow.c lib/dso/x86.c \
			   lib/dso/cfirec.c lib/dso/fdes.c lib/dso/segs.c
fuzz_srcs_dso	:= lib/dso/dso.c lib/dso/dso_cfi.c lib/dso/cfirec.c lib/dso/fdes.c lib/dso/symtab.c \
		   lib/dso/plt.c lib/dso/debugfile.c lib/dso/dwarf.c lib/dso/segs.c lib/base/fileio.c \
		   lib/base/limits.c lib/base/mapguard.c lib/base/log.c lib/dso/x86.c
fuzz_libs_dso	:= -lelf -lz
# The debug-file search (candidates by build id and debuglink, CRC, the file taken), and
# compressed sections as their headers claim them (symbols, .debug_frame, DWARF's sizes).
fuzz_srcs_debugfile	:= $(fuzz_srcs_dso)
fuzz_libs_debugfile	:= -lelf -lz
fuzz_srcs_compressed	:= $(fuzz_srcs_dso)
fuzz_libs_compressed	:= -lelf -lz
# A file's unwind table from the worker (lib/unwind/utab_codec.c's decoder).
fuzz_srcs_utab	:= lib/unwind/utab.c lib/unwind/utab_build.c lib/unwind/utab_codec.c lib/unwind/cfi.c lib/unwind/frames.c lib/unwind/frames_go.c lib/unwind/frames_follow.c \
		   lib/base/htab.c $(fuzz_srcs_dso)
fuzz_libs_utab	:= -lelf -lz
fuzz_srcs_flamegraph	:= lib/output/folded_read.c lib/output/folded.c lib/profile/profile.c lib/base/htab.c \
			   lib/base/log.c lib/output/top.c flamegraph/options.c \
			   flamegraph/tree.c flamegraph/out.c flamegraph/colors.c flamegraph/svg.c
fuzz_libs_flamegraph	:= -lm
fuzz_srcs_pprof	:= lib/output/pprof_read.c lib/output/folded.c lib/profile/profile.c lib/base/htab.c \
			   lib/base/log.c lib/output/top.c
fuzz_libs_pprof	:= -lz
FUZZ_BINS	:= $(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZ_TARGETS))

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $$(fuzz_srcs_%) | $(OUT)/fg_assets.h
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $^ $(fuzz_libs_$*) -o $@

# Each target runs from an empty corpus directory of its own, for SECONDS.
define fuzz_run
	$(Q)for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_DIR)/corpus-$$t; \
		printf '  %-9s %s\n' FUZZ "$$t ($(1) s)"; \
		$(FUZZ_DIR)/fuzz_$$t -max_total_time=$(1) -max_len=65536 -rss_limit_mb=2048 -artifact_prefix=$(FUZZ_DIR)/ \
			$(FUZZ_DIR)/corpus-$$t tests/fuzz/seeds-$$t > $(FUZZ_DIR)/fuzz_$$t.log 2>&1 || \
			{ tail -40 $(FUZZ_DIR)/fuzz_$$t.log; exit 1; }; \
		grep -h '^Done\|^#.*DONE' $(FUZZ_DIR)/fuzz_$$t.log | tail -1; \
	done
endef

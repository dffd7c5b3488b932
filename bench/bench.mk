# SPDX-License-Identifier: GPL-3.0-or-later
# Targets of the benchmarks in bench/. Included by the top Makefile.

BENCH		:= $(OUT)/bench
# `make bench BENCH_ARGS=--quick`: shorter runs of overhead, selfcost, bpfcost and endtoend.
BENCH_ARGS	?=
# The same fixed work twice: without frame pointers (GCC, as Debian builds its packages: the
# DWARF path), and with them (clang, which unlike GCC 12 honours -mno-omit-leaf-frame-pointer).
BENCH_FP_CC	:= clang
BENCH_FP	:= -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
BENCH_NOFP	:= -O2 -g -fomit-frame-pointer
BENCH_TARGETS	:= $(BENCH)/fixedwork_nofp $(BENCH)/libfixedwork_nofp.so \
		   $(BENCH)/fixedwork_fp $(BENCH)/libfixedwork_fp.so $(BENCH)/sortwork_fp

$(BENCH)/fixedwork: $(BENCH_TARGETS) $(BENCH)/spin $(BENCH)/gaps_fp $(BENCH)/gaps_nofp \
		   $(BENCH)/switchwork_fp $(BENCH)/switchwork_nofp

# Context switches by the hundred thousand, for off-CPU time (bench/offcpu.py).
$(BENCH)/switchwork_fp: bench/switchwork.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BENCH_FP_CC) $(BENCH_FP) -pthread $< -o $@

$(BENCH)/switchwork_nofp: bench/switchwork.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BENCH_NOFP) -pthread $< -o $@

# What a profiler takes from its target, seen from inside it (bench/intrusion.py).
$(BENCH)/gaps_fp: bench/gaps.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BENCH_FP_CC) $(BENCH_FP) -pthread $< -o $@

$(BENCH)/gaps_nofp: bench/gaps.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BENCH_NOFP) -pthread $< -o $@

# A shallow busy loop for the system-wide background load of bench/selfcost.py.
$(BENCH)/spin: bench/spin.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BENCH_NOFP) $< -o $@

$(BENCH)/libfixedwork_nofp.so: bench/fixedwork_lib.c bench/fixedwork.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BENCH_NOFP) -fPIC -shared $< -o $@

$(BENCH)/fixedwork_nofp: bench/fixedwork.c bench/fixedwork.h $(BENCH)/libfixedwork_nofp.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(BENCH_NOFP) -pthread $< -L$(BENCH) -lfixedwork_nofp -Wl,-rpath,'$$ORIGIN' -o $@

$(BENCH)/libfixedwork_fp.so: bench/fixedwork_lib.c bench/fixedwork.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BENCH_FP_CC) $(BENCH_FP) -fPIC -shared $< -o $@

$(BENCH)/fixedwork_fp: bench/fixedwork.c bench/fixedwork.h $(BENCH)/libfixedwork_fp.so
	$(call msg,CC,$@)
	$(Q)$(BENCH_FP_CC) $(BENCH_FP) -pthread $< -L$(BENCH) -lfixedwork_fp -Wl,-rpath,'$$ORIGIN' -o $@
# Frame pointers, the work in a comparator that the C library's qsort calls back.
$(BENCH)/sortwork_fp: bench/fixedwork.c bench/fixedwork.h $(BENCH)/libfixedwork_fp.so
	$(call msg,CC,$@)
	$(Q)$(BENCH_FP_CC) $(BENCH_FP) -DFW_QSORT -pthread $< -L$(BENCH) -lfixedwork_fp -Wl,-rpath,'$$ORIGIN' -o $@
.PHONY: $(BENCH)/fixedwork

# Symbolization: bench/symbench.c drives lib/symbolize/symbolize.c over one ELF file (bench/symbolize.py).
$(BENCH)/symbench: $(OUT)/bench/symbench.o $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

.PHONY: bench-symbolize
# SYMBENCH_ARGS=--long adds the 30-second profile.
bench-symbolize: $(BENCH)/symbench $(OUT)/profile
	$(Q)python3 bench/symbolize.py --build $(OUT) $(SYMBENCH_ARGS)

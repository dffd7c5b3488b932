# SPDX-License-Identifier: GPL-3.0-or-later
# Fixtures of the unit tests, built from tests/fixtures/. Included by the top Makefile.
#
# symbols.c, built several ways (tests/unit/test_dso.c says what each checks):
#   prog             PIE with .symtab
#   prog.stripped    .symtab stripped, no debuglink; its debug file is in debugroot/.build-id/
#   other.stripped   another build id whose .build-id slot holds prog's debug file (mismatch)
#   linked           no build id, stripped, .gnu_debuglink -> linked.debug next to it
#   dotdebug         no build id, stripped, .gnu_debuglink -> .debug/dotdebug.debug
#   global           no build id, stripped, .gnu_debuglink -> debugroot/fake/dir/global.debug
#                    (found when the file is opened as /fake/dir/global)
#   badcrc           no build id, stripped, .gnu_debuglink -> badcrc.debug changed afterwards
#   lld, lld.off     linked by lld (p_offset != p_vaddr); lld.off holds fx_alpha's file offset
#   static           gcc -static: .eh_frame without .eh_frame_hdr
#   debugframe       its own functions described only in .debug_frame, zlib-compressed (the C
#                    start-up files keep .eh_frame and its header)
#   notelf, empty    not ELF
#   altlink.up, altlink.fd, altlink.abs
#                    prog with a .gnu_debugaltlink that climbs out of /proc/self/fd, names one
#                    of our descriptors, or is an absolute path (only the last may go to BFD)
#
# gomarks.c, with Go's marks (dso__is_go): gonote (Go's build id note), gobuildinfo (a
# .go.buildinfo section)

FX		:= $(OUT)/tests/fixtures
FX_SRC		:= tests/fixtures/symbols.c
FX_CFLAGS	:= -O1 -g -fPIE -pie -rdynamic -falign-functions=64
FX_NOID		:= -Wl,--build-id=none
FX_DBGROOT	:= $(FX)/debugroot
LLD		?= $(shell command -v ld.lld 2>/dev/null)

FIXTURES	:= $(FX)/prog $(FX)/prog.stripped $(FX)/other.stripped $(FX)/buildid.stamp \
		   $(FX)/linked $(FX)/linked.debug $(FX)/dotdebug $(FX)/.debug/dotdebug.debug \
		   $(FX)/global $(FX_DBGROOT)/fake/dir/global.debug \
		   $(FX)/badcrc $(FX)/badcrc.debug $(FX)/notelf $(FX)/empty $(FX)/static \
		   $(FX)/debugframe $(FX)/gonote $(FX)/gobuildinfo $(FX)/altlink.up $(FX)/altlink.fd \
		   $(FX)/altlink.abs
ifneq ($(LLD),)
FIXTURES	+= $(FX)/lld $(FX)/lld.off
endif

# $(call fx_debuglink,FULL,DEBUG,OUT): split FULL into DEBUG and a stripped OUT linking to it.
define fx_debuglink
	$(Q)mkdir -p $(dir $(2))
	$(Q)objcopy --only-keep-debug $(1) $(2)
	$(Q)objcopy --strip-all --add-gnu-debuglink=$(2) $(1) $(3)
	$(Q)rm -f $(1)
endef

# build-id -> "xx/rest" of the build id of file $(1), as a shell expression
fx_idpath = $$(readelf -n $(1) | sed -n 's/.*Build ID: \(..\)\(.*\)/\1\/\2/p')

$(FX)/prog: $(FX_SRC)
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FX_CFLAGS) $< -o $@

$(FX)/other: $(FX_SRC)
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FX_CFLAGS) -DFX_OTHER $< -o $@

$(FX)/%.stripped: $(FX)/%
	$(call msg,FIXTURE,$@)
	$(Q)objcopy --strip-all $< $@

# prog's debug file under its own build id, and (wrongly) under other's.
$(FX)/buildid.stamp: $(FX)/prog $(FX)/other
	$(call msg,FIXTURE,$(FX_DBGROOT)/.build-id)
	$(Q)rm -rf $(FX_DBGROOT)/.build-id
	$(Q)set -e; for f in $^; do \
		p=$(FX_DBGROOT)/.build-id/$(call fx_idpath,$$f).debug; \
		test "$$p" != "$(FX_DBGROOT)/.build-id/.debug"; \
		mkdir -p $$(dirname $$p); \
		objcopy --only-keep-debug $(FX)/prog $$p; \
	done
	$(Q)touch $@

$(FX)/linked $(FX)/linked.debug &: $(FX_SRC)
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(FX)
	$(Q)$(CC) $(FX_CFLAGS) $(FX_NOID) $< -o $(FX)/linked.full
	$(call fx_debuglink,$(FX)/linked.full,$(FX)/linked.debug,$(FX)/linked)

$(FX)/dotdebug $(FX)/.debug/dotdebug.debug &: $(FX_SRC)
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(FX)
	$(Q)$(CC) $(FX_CFLAGS) $(FX_NOID) $< -o $(FX)/dotdebug.full
	$(call fx_debuglink,$(FX)/dotdebug.full,$(FX)/.debug/dotdebug.debug,$(FX)/dotdebug)

$(FX)/global $(FX_DBGROOT)/fake/dir/global.debug &: $(FX_SRC)
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(FX)
	$(Q)$(CC) $(FX_CFLAGS) $(FX_NOID) $< -o $(FX)/global.full
	$(call fx_debuglink,$(FX)/global.full,$(FX_DBGROOT)/fake/dir/global.debug,$(FX)/global)

# The debug file changes after the link is made: still ELF, but the CRC no longer matches.
$(FX)/badcrc $(FX)/badcrc.debug &: $(FX_SRC)
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(FX)
	$(Q)$(CC) $(FX_CFLAGS) $(FX_NOID) $< -o $(FX)/badcrc.full
	$(call fx_debuglink,$(FX)/badcrc.full,$(FX)/badcrc.debug,$(FX)/badcrc)
	$(Q)printf 'x' >> $(FX)/badcrc.debug

$(FX)/lld: $(FX_SRC)
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FX_CFLAGS) -fuse-ld=lld $< -o $@

# fx_alpha's file offset: its address minus .text's address plus .text's offset, in hex.
$(FX)/lld.off: $(FX)/lld
	$(call msg,FIXTURE,$@)
	$(Q)set -e; \
	v=$$(nm $< | awk '$$3 == "fx_alpha" { print $$1 }'); \
	set -- $$(readelf -SW $< | sed 's/^ *\[ *[0-9]*\]//' | awk '$$1 == ".text" { print $$3, $$4 }'); \
	test -n "$$v" -a -n "$$1" -a -n "$$2"; \
	printf '%x\n' $$((0x$$v - 0x$$1 + 0x$$2)) > $@

$(FX)/static: $(FX_SRC)
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O1 -g -static -falign-functions=64 $< -o $@

$(FX)/debugframe: $(FX_SRC)
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FX_CFLAGS) -fno-asynchronous-unwind-tables -fno-unwind-tables $< -o $@.full
	$(Q)objcopy --compress-debug-sections=zlib-gabi $@.full $@
	$(Q)rm -f $@.full

$(FX)/gonote: tests/fixtures/gomarks.c
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O1 -DFX_GO_NOTE $< -o $@

$(FX)/gobuildinfo: tests/fixtures/gomarks.c
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O1 -DFX_GO_BUILDINFO $< -o $@

# $(call fx_altlink,NAME,IN,OUT): IN with a .gnu_debugaltlink naming NAME (and a build id).
define fx_altlink
	$(call msg,FIXTURE,$(3))
	$(Q)printf '%s\000%s' '$(1)' '0123456789abcdefghij' > $(3).sec
	$(Q)objcopy --add-section .gnu_debugaltlink=$(3).sec $(2) $(3)
	$(Q)rm -f $(3).sec
endef

$(FX)/altlink.up: $(FX)/prog
	$(call fx_altlink,../../../tmp/fifo,$<,$@)

$(FX)/altlink.fd: $(FX)/prog
	$(call fx_altlink,/3/tmp/fifo,$<,$@)

$(FX)/altlink.abs: $(FX)/prog
	$(call fx_altlink,/usr/lib/debug/.dwz/x86_64-linux-gnu/none.debug,$<,$@)

$(FX)/notelf:
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)printf 'this is not an ELF file\n' > $@

$(FX)/empty:
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q): > $@

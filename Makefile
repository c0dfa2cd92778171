# loom: build, test and demo entry points.  See README.md.
#
#   make demo    build what is needed, boot the VM, run the examples
#   make test    host unit tests + the VM runs + the VM harness's self-tests
#   make test-debug   the VM runs on a 6.1 kernel built with KASAN, lockdep,
#                kmemleak, KFENCE (long first build; not part of make test)
#   make bench   every benchmark in one run: a table of ratios, JSON, PNG
#   make run PROG=prog.loom [RUN_ARGS=...] [TRACE=out.json]
#                compile a program and run it on the device in the VM
#   make deps    install/prepare dependencies (every target does it itself)
#   make shell   an interactive shell in the test VM
#   make deb     Debian packages of the userspace (libloom0, libloom-sim0, -dev, loom-tools)
#   make lib, make install, make uninstall [DESTDIR= PREFIX= LIBDIR= BINDIR=
#                MANDIR= CFLAGS= LDFLAGS=]  libloom, its headers, loom.pc, the
#                tools, the udev rule, man pages (Documentation/getting-started.rst)
#   make checkpatch   the kernel's checkpatch --strict over kernel/ and uapi/
#   make fuzz    random ioctls and uring_cmds in the VM [FUZZ_SECONDS= FUZZ_SEED=]
#   make faults  injected device faults under load in the VM [FAULTS=1000]
#   make fuzz-compiler  random threads compiled for 2x2..16x16 fabrics, run on
#                the host engine against the IR's interpreter [FUZZ_SECONDS= FUZZ_SEED=]
#   make qemu10  QEMU 10.0 with the device, and the device's kselftests on it;
#                QEMU=10 make test (or demo, bench, run, shell) runs the VM
#                stages on QEMU 10.0 instead of Debian's 7.2
#
# Kernel lanes: loom.ko is built for, and `make test` runs the VM suite on,
# Debian's 6.1 and 6.12 kernels.  KERNEL=6.12 points the single-VM targets
# (demo, run, shell, bench, vm-env) at the 6.12 lane; 6.1 is the default.
#
# Build products live outside the source tree: $(LOOM_CACHE) holds what is
# shared between checkouts (QEMU, the kernel, Debian sources), $(BUILD) what
# belongs to this checkout.

LOOM_CACHE ?= $(HOME)/.cache/loom
export LOOM_CACHE
BUILD ?= $(LOOM_CACHE)/build/$(notdir $(CURDIR))-$(shell printf %s '$(CURDIR)' | sha256sum | cut -c1-8)

LANES := 6.1 6.12
KERNEL ?= 6.1
# Evaluated lazily: only recipes use them, after `deps` has run.
lane_kv = $(shell tools/loom-deps --print-kv $(1))
lane_root = $(shell tools/loom-deps --print-kernel-dir $(1))
lane_kbuild = $(shell tools/loom-deps --print-kbuild-dir $(1))
KV = $(call lane_kv,$(KERNEL))
KERNEL_ROOT = $(call lane_root,$(KERNEL))
KSRC = $(shell tools/loom-deps --print-ksrc-dir)

CC ?= cc
# The project's own builds (tests, VM programs, benchmarks): -Werror.  What
# make install installs is built with the user's CFLAGS instead (INST_CFLAGS).
CFLAGS_COMMON := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Iuapi -I/usr/include/libdrm -I$(BUILD)/gen
# Programs that run inside the VM are static: the initramfs has no libc.
VM_CFLAGS = $(CFLAGS_COMMON) -static
VM_LIBS := -ldrm -luring
HOST_SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# The project's one version (VERSION): loom.pc, the tools' --version, loomc,
# loom.ko's MODULE_VERSION and DRM driver version, the DKMS package.
LOOM_VERSION := $(shell cat VERSION)
# The C programs take it from $(VERSION_H) (LOOM_PROJECT_VERSION).
VERSION_H = $(BUILD)/gen/loom_version.h
KMOD_SRCS := Kbuild VERSION $(shell find kernel uapi -name '*.[ch]' ! -path '*/tests/*')
SELFTESTS := $(patsubst selftests/%.c,$(BUILD)/selftests/%,$(wildcard selftests/*_test.c))
VM_TOOLS := $(BUILD)/tools/loom-info $(BUILD)/tools/loom-run $(BUILD)/tools/loom-doctor $(BUILD)/tools/loom-top
# Programs compiled by loomc for the VM (8x8 fabric), run by libloom.
vpath %.loom compiler/tests/corpus/valid lib/tests/vm
LCBS := $(patsubst %.loom,$(BUILD)/lcb/%.lcb,$(notdir $(wildcard compiler/tests/corpus/valid/*.loom lib/tests/vm/*.loom)))
# The examples: compiled for the device's default 4x4 fabric (their larger
# threads on temporal PEs), run by loom-run in the VM.
EXAMPLES := $(wildcard examples/*.loom)
EXAMPLE_LCBS := $(patsubst examples/%.loom,$(BUILD)/examples/%.lcb,$(EXAMPLES))
EXAMPLE_FILES = $(foreach f,$(EXAMPLE_LCBS) $(EXAMPLES:.loom=.expected),--file $(f))
# PolyBench's kernels for the device's default 4x4 fabric, run by
# lib/tests/vm/polybench_vm_test; those that do not map there (none since
# links have channels) are bench/polybench/polybench.h's ON_4X4 kernels
# (the test checks the two agree).
POLYBENCH_UNMAPPED_4X4 :=
POLYBENCH_LCBS := $(patsubst bench/polybench/%.loom,$(BUILD)/polybench/%.lcb, \
	$(filter-out $(patsubst %,bench/polybench/%.loom,$(POLYBENCH_UNMAPPED_4X4)),$(wildcard bench/polybench/*.loom)))
# format/: the program image format, its host-program interpreter and the
# PE arithmetic (MIT), linked by libloom and loomc; the engine uses alu.c.
FORMAT_SRCS := $(wildcard format/*.c)
FORMAT_HDRS := $(wildcard format/*.h)
ENGINE_SRCS := $(wildcard qemu-device/engine/*.c) format/alu.c
ENGINE_HDRS := $(wildcard qemu-device/engine/*.h) format/loom_alu.h format/loom_ops.h $(shell find uapi -name '*.h')
ENGINE_CFLAGS := -Iqemu-device/engine -Iformat
ENGINE_TESTS := $(patsubst qemu-device/engine/tests/%.c,$(BUILD)/host/engine/%,$(wildcard qemu-device/engine/tests/*_test.c))
# libloom's host programs compute with the device's own ALU (format/alu.c).
LIB_SRCS := $(wildcard lib/*.c) $(FORMAT_SRCS)
LIB_HDRS := $(wildcard lib/*.h lib/include/loom/*.h) $(FORMAT_HDRS) $(shell find uapi -name '*.h')
LIB_TESTS := $(patsubst lib/tests/%.c,$(BUILD)/host/lib/%,$(wildcard lib/tests/*_test.c))
LIB_TSAN_TESTS := $(patsubst lib/tests/%.c,$(BUILD)/host/lib-tsan/%,$(wildcard lib/tests/*_test.c))
SIM_TESTS := $(patsubst sim/tests/%.c,$(BUILD)/host/sim/%,$(wildcard sim/tests/*_test.c))
LIB_VM_TESTS := $(patsubst lib/tests/vm/%.c,$(BUILD)/vm-lib/%,$(wildcard lib/tests/vm/*_test.c))
# loomc measures the II of what it compiles on the device's own fabric engine.
COMPILER_SRCS := $(filter-out compiler/loomc.c,$(wildcard compiler/*.c)) $(FORMAT_SRCS) \
	qemu-device/engine/fabric.c
COMPILER_HDRS := $(wildcard compiler/*.h) $(FORMAT_HDRS) qemu-device/engine/engine.h lib/include/loom/loom.h $(shell find uapi -name '*.h')
COMPILER_TESTS := $(patsubst compiler/tests/%.c,$(BUILD)/host/compiler/%,$(wildcard compiler/tests/*_test.c))
HOST_TESTS := $(BUILD)/host/uapi_abi_test $(BUILD)/host/examples/reference $(ENGINE_TESTS) $(LIB_TESTS) $(LIB_TSAN_TESTS) \
	$(SIM_TESTS) $(BUILD)/host/sim/loom-sim \
	$(BUILD)/host/qemu/loom_qtest \
	$(COMPILER_TESTS) $(if $(wildcard compiler/loomc.c),$(BUILD)/host/loomc)
# vgem: the benchmarks' reference fence (P2).  The module list is part of
# the archive's name, so changing it makes a new one.  Defined before
# lane_initramfs, whose rule names are expanded as they are read.
VM_EXTRA_MODULES := vgem
# Per kernel lane: loom.ko, the VM's base initramfs, the harness's module.
lane_initramfs = $(BUILD)/linux-$(1)/vm/base$(foreach m,$(VM_EXTRA_MODULES),-$(m)).cpio.gz
INITRAMFS = $(call lane_initramfs,$(KERNEL))
ALL_INITRAMFS = $(foreach l,$(LANES),$(call lane_initramfs,$(l)))
HARNESS_KMOD := $(BUILD)/linux-$(KERNEL)/harness-kmod/loom_selftest_warn.ko

# Defined before `all` names them: a rule's prerequisites are expanded as it is read.
BENCH_BINS := $(addprefix $(BUILD)/bench/,fabric_bench compile_bench tree_bench items_bench \
	sim_speed vm/submit_bench vm/work_bench vm/launch_bench vm/spread_bench vm/dense_speed \
	vm/work_bench.lcb) \
	$(BUILD)/polybench/gemm.lcb

.PHONY: all deps module qemu selftests initramfs vm-env test host-test vm-test \
	harness-test demo run shell checkpatch bench clean

# The benchmarks are built too (make test then compiles them), run by make bench.
all: module selftests $(LIB_VM_TESTS) $(VM_TOOLS) $(HOST_TESTS) lib install-tools man $(LCBS) $(EXAMPLE_LCBS) $(POLYBENCH_LCBS) \
	$(BENCH_BINS)

deps:
	@tools/loom-deps

# The Debian packages alone: what the host-only targets (the library, the
# host tests, loomc, the fuzzers and host benchmarks) need, without the
# kernels and QEMU's source.
.PHONY: host-deps
host-deps:
	@tools/loom-deps --packages

# --- loom.ko ---------------------------------------------------------------
# Kbuild writes objects beside the sources, so build from a copy kept in
# $(BUILD); cp -p keeps timestamps so only edited files recompile.
module: $(foreach l,$(LANES),$(BUILD)/linux-$(l)/kmod/loom.ko)

$(BUILD)/linux-%/kmod/loom.ko: $(KMOD_SRCS) | deps
	@mkdir -p $(dir $@)
	@cp -rp --parents $(KMOD_SRCS) $(dir $@)
	@echo "  KBUILD  loom.ko (W=1, $(call lane_kv,$*))" >&2
	@$(MAKE) -s -C $(call lane_kbuild,$*) M=$(dir $@) W=1 modules \
		> $(dir $@)build.log 2>&1 || { cat $(dir $@)build.log; exit 1; }
	@if grep -q 'warning:' $(dir $@)build.log; then \
		cat $(dir $@)build.log; echo "loom.ko: W=1 warnings are errors"; \
		rm -f $@; exit 1; fi
	@# Kbuild leaves loom.ko alone when no file it uses changed
	@touch $@

$(BUILD)/linux-%/harness-kmod/loom_selftest_warn.ko: tools/vm/selftest/loom_selftest_warn.c | deps
	@mkdir -p $(dir $@)
	@cp -p tools/vm/selftest/loom_selftest_warn.c $(dir $@)
	@echo 'obj-m := loom_selftest_warn.o' > $(dir $@)/Kbuild
	@$(MAKE) -s -C $(call lane_kbuild,$*) M=$(dir $@) modules \
		> $(dir $@)/build.log 2>&1 || { cat $(dir $@)/build.log; exit 1; }

# --- DKMS --------------------------------------------------------------------
# The staged dkms.conf's PACKAGE_VERSION is the project's VERSION, as is
# loom.ko's MODULE_VERSION; check-dkms keeps them equal.  sudo make
# dkms-install [KERNELRELEASE=...] builds and installs loom.ko for that
# kernel (default: the running one) through DKMS.
DKMS_SRC := $(BUILD)/dkms/loom-$(LOOM_VERSION)
DEB_DKMS := $(BUILD)/loom-dkms_$(LOOM_VERSION)_all.deb
KERNELRELEASE ?= $(shell uname -r)
.PHONY: dkms-src dkms-install dkms-uninstall deb-dkms
dkms-src: $(DKMS_SRC)/dkms.conf
$(DKMS_SRC)/dkms.conf: dkms.conf $(KMOD_SRCS)
	@rm -rf $(DKMS_SRC) && mkdir -p $(DKMS_SRC)
	@cp -p --parents $(KMOD_SRCS) $(DKMS_SRC)/
	@sed 's/@VERSION@/$(LOOM_VERSION)/' dkms.conf > $@

dkms-install: $(DKMS_SRC)/dkms.conf
	@command -v dkms >/dev/null || { echo "dkms-install: needs dkms (sudo apt install dkms)" >&2; exit 1; }
	rm -rf /usr/src/loom-$(LOOM_VERSION) && cp -r $(DKMS_SRC) /usr/src/
	dkms status -m loom -v $(LOOM_VERSION) | grep -q . || dkms add -m loom -v $(LOOM_VERSION)
	dkms install -m loom -v $(LOOM_VERSION) -k $(KERNELRELEASE) --force

dkms-uninstall:
	dkms remove -m loom -v $(LOOM_VERSION) --all
	rm -rf /usr/src/loom-$(LOOM_VERSION)

deb-dkms: $(DEB_DKMS)
	@echo $(DEB_DKMS)
$(DEB_DKMS): $(DKMS_SRC)/dkms.conf tools/deb-dkms LICENSE
	@echo "  DEB     $@" >&2
	@tools/deb-dkms $(DKMS_SRC) $(LOOM_VERSION) $@ >/dev/null

# --- Debian packages of the userspace -----------------------------------------
# make deb: libloom0, libloom-sim0, libloom-dev and loom-tools (tools/deb-userspace) from
# a make install into $(BUILD)/deb/root with PREFIX=/usr, the multiarch
# LIBDIR and dpkg-buildflags' CPPFLAGS, CFLAGS and LDFLAGS; their paths are printed.
DEB_OUT := $(BUILD)/deb
.PHONY: deb
deb: | host-deps
	@rm -rf $(DEB_OUT) && mkdir -p $(DEB_OUT)
	@$(MAKE) -s --no-print-directory install DESTDIR=$(DEB_OUT)/root PREFIX=/usr \
		LIBDIR=/usr/lib/$$(dpkg-architecture -qDEB_HOST_MULTIARCH) \
		CFLAGS="$$(dpkg-buildflags --get CPPFLAGS) $$(dpkg-buildflags --get CFLAGS)" \
		LDFLAGS="$$(dpkg-buildflags --get LDFLAGS)" > /dev/null
	@tools/deb-userspace $(DEB_OUT)/root $(LOOM_VERSION) $(DEB_OUT)

# --- QEMU with loom-cgra -----------------------------------------------------
# tools/build-qemu keeps its own content-keyed cache; asking it is cheap.
# QEMU=10: QEMU 10.0 from Debian's source (bookworm-backports', else trixie's) instead of 7.2, with its
# own cache and its own qemu10.path (Documentation/device.rst).
# Any other value (say, a QEMU path someone keeps in the environment) is 7.2.
QEMU_VERSION := $(if $(filter 10,$(QEMU)),10,7)
QEMU_PATH = $(BUILD)/qemu$(filter-out 7,$(QEMU_VERSION)).path
qemu: | deps
	@mkdir -p $(BUILD)
	@$(if $(filter-out 7,$(QEMU_VERSION)),tools/loom-deps --qemu10 &&) \
		tools/build-qemu --qemu $(QEMU_VERSION) > $(QEMU_PATH).tmp && mv $(QEMU_PATH).tmp $(QEMU_PATH)

# make qemu10: build QEMU 10.0 with the device, then run the device's
# kselftests on it in one VM (2 devices); loom-vm's last line is their total.
QEMU10_TESTS := loom_basic_test loom_device_test loom_submit_test loom_robust_test loom_platform_test
.PHONY: qemu10
qemu10: | deps
	@$(MAKE) -s --no-print-directory QEMU=10 qemu $(INITRAMFS) $(addprefix $(BUILD)/selftests/,$(QEMU10_TESTS))
	@echo "qemu10: $$($$(cat $(BUILD)/qemu10.path) --version | head -1): $$(cat $(BUILD)/qemu10.path)" >&2
	@LOOM_QEMU=$$(cat $(BUILD)/qemu10.path) LOOM_VMLINUX=$(KERNEL_ROOT)/vmlinux \
		LOOM_INITRAMFS=$(INITRAMFS) tools/loom-vm --devices 2 --log $(BUILD)/linux-$(KERNEL)/vm/qemu10.log \
		$(addprefix $(BUILD)/selftests/,$(QEMU10_TESTS))

# --- programs that run in the VM --------------------------------------------
selftests: $(SELFTESTS)

# The device test borrows the engine's hand-built configurations.
$(BUILD)/selftests/%: selftests/%.c $(wildcard selftests/*.h) $(ENGINE_HDRS) $(wildcard qemu-device/engine/tests/*.h) | deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(VM_CFLAGS) -isystem $(KSRC)/tools/testing/selftests \
		$(ENGINE_CFLAGS) -Iqemu-device/engine/tests -o $@ $< $(VM_LIBS)

$(BUILD)/tools/%: tools/%.c $(shell find uapi -name '*.h') $(VERSION_H) | deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(VM_CFLAGS) -o $@ $< $(VM_LIBS)

# --- the VM's base initramfs ------------------------------------------------
initramfs: $(INITRAMFS)

$(BUILD)/linux-%/vm/base$(foreach m,$(VM_EXTRA_MODULES),-$(m)).cpio.gz: $(BUILD)/linux-%/kmod/loom.ko \
		tools/vm/init tools/vm/mkinitramfs | deps
	@mkdir -p $(dir $@)
	@echo "  INITRD  $@" >&2
	@tools/vm/mkinitramfs $@ $(call lane_root,$*)/root $(call lane_kv,$*) tools/vm/init \
		$(BUILD)/linux-$*/kmod/loom.ko $(VM_EXTRA_MODULES)

# The optimised loomc, built and its path printed.
.PHONY: print-loomc
print-loomc: $(BUILD)/bin/loomc
	@echo $(BUILD)/bin/loomc

# What tools/loom-vm needs for the KERNEL lane, built and printed as shell
# assignments.
vm-env: qemu $(INITRAMFS)
	@echo "LOOM_QEMU=$$(cat $(QEMU_PATH))"
	@echo "LOOM_VMLINUX=$(KERNEL_ROOT)/vmlinux"
	@echo "LOOM_INITRAMFS=$(INITRAMFS)"
	@echo "LOOM_KERNEL_LANE=$(KERNEL)"

# --- host unit tests ----------------------------------------------------------
# Built with ASan and UBSan; tools/testing/check.h is their assertion kit.
HOST_CFLAGS = $(CFLAGS_COMMON) $(HOST_SAN) -Itools/testing

$(BUILD)/host/%: uapi/tests/%.c $(shell find uapi -name '*.h') | host-deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(HOST_CFLAGS) -o $@ $<

# The engine as a sanitized static library: each test links what it uses.
$(BUILD)/host/engine/libengine.a: $(ENGINE_SRCS) $(ENGINE_HDRS) | host-deps
	@mkdir -p $(dir $@)/obj
	@echo "  AR      $@" >&2
	@rm -f $(dir $@)/obj/*.o
	@for f in $(ENGINE_SRCS); do \
		$(CC) $(HOST_CFLAGS) $(ENGINE_CFLAGS) -c -o $(dir $@)/obj/$$(basename $$f .c).o $$f || exit 1; \
	done
	@rm -f $@ && ar rcs $@ $(dir $@)/obj/*.o

$(BUILD)/host/engine/%: qemu-device/engine/tests/%.c $(wildcard qemu-device/engine/tests/*.h) $(BUILD)/host/engine/libengine.a | host-deps
	@echo "  CC      $@" >&2
	@$(CC) $(HOST_CFLAGS) $(ENGINE_CFLAGS) -o $@ $< $(BUILD)/host/engine/libengine.a -lm

# The device in a real QEMU, driven by the qtest protocol (no guest kernel):
# run by tools/run-tests with the QEMU binary make qemu built.
$(BUILD)/host/qemu/loom_qtest: qemu-device/tests/loom_qtest.c $(ENGINE_HDRS) | host-deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(HOST_CFLAGS) -o $@ $<

# libloom's pure parts, under ASan+UBSan and, separately, TSan.
LIB_CFLAGS = -Ilib -Ilib/include -Iformat
$(BUILD)/host/lib/libloom.a: $(LIB_SRCS) $(LIB_HDRS) | host-deps
	@mkdir -p $(dir $@)/obj
	@echo "  AR      $@" >&2
	@rm -f $(dir $@)/obj/*.o
	@for f in $(LIB_SRCS); do \
		$(CC) $(HOST_CFLAGS) $(LIB_CFLAGS) -c -o $(dir $@)/obj/$$(basename $$f .c).o $$f || exit 1; \
	done
	@rm -f $@ && ar rcs $@ $(dir $@)/obj/*.o

$(BUILD)/host/lib/%: lib/tests/%.c $(wildcard lib/tests/*.h) $(BUILD)/host/lib/libloom.a | host-deps
	@echo "  CC      $@" >&2
	@$(CC) $(HOST_CFLAGS) $(LIB_CFLAGS) -o $@ $< $(BUILD)/host/lib/libloom.a -ldrm -luring -lpthread

TSAN_CFLAGS = $(CFLAGS_COMMON) -fsanitize=thread -fno-omit-frame-pointer -Itools/testing $(LIB_CFLAGS)
$(BUILD)/host/lib-tsan/libloom.a: $(LIB_SRCS) $(LIB_HDRS) | host-deps
	@mkdir -p $(dir $@)/obj
	@echo "  AR      $@ (TSan)" >&2
	@rm -f $(dir $@)/obj/*.o
	@for f in $(LIB_SRCS); do \
		$(CC) $(TSAN_CFLAGS) -c -o $(dir $@)/obj/$$(basename $$f .c).o $$f || exit 1; \
	done
	@rm -f $@ && ar rcs $@ $(dir $@)/obj/*.o

$(BUILD)/host/lib-tsan/%: lib/tests/%.c $(wildcard lib/tests/*.h) $(BUILD)/host/lib-tsan/libloom.a | host-deps
	@echo "  CC      $@ (TSan)" >&2
	@$(CC) $(TSAN_CFLAGS) -o $@ $< $(BUILD)/host/lib-tsan/libloom.a -ldrm -luring -lpthread

# adapter_match_test feeds the work-stack matcher what the device's engine
# writes: it runs the engine (plain C, the engine tests' fixture) too.  The
# engine's alu.c is libloom's format/alu.c, taken from the archive.
MATCH_TEST_SRCS := $(filter-out format/alu.c,$(ENGINE_SRCS))
MATCH_TEST_DEPS := $(ENGINE_SRCS) $(ENGINE_HDRS) $(wildcard qemu-device/engine/tests/*.h)
$(BUILD)/host/lib/adapter_match_test: lib/tests/adapter_match_test.c $(MATCH_TEST_DEPS) \
		$(BUILD)/host/lib/libloom.a | host-deps
	@echo "  CC      $@" >&2
	@$(CC) $(HOST_CFLAGS) $(LIB_CFLAGS) $(ENGINE_CFLAGS) -Iqemu-device/engine/tests -o $@ $< \
		$(MATCH_TEST_SRCS) $(BUILD)/host/lib/libloom.a -ldrm -luring -lpthread -lm
$(BUILD)/host/lib-tsan/adapter_match_test: lib/tests/adapter_match_test.c $(MATCH_TEST_DEPS) \
		$(BUILD)/host/lib-tsan/libloom.a | host-deps
	@echo "  CC      $@ (TSan)" >&2
	@$(CC) $(TSAN_CFLAGS) $(ENGINE_CFLAGS) -Iqemu-device/engine/tests -o $@ $< \
		$(MATCH_TEST_SRCS) $(BUILD)/host/lib-tsan/libloom.a -ldrm -luring -lpthread -lm

# libloom-sim: libloom with a device simulated on the engine (sim/), for
# hosts without a device; its tests link the sanitized libloom and engine.
SIM_SRCS := sim/sim.c $(MATCH_TEST_SRCS)
SIM_HDRS := $(wildcard sim/include/loom/*.h) $(ENGINE_HDRS) $(LIB_HDRS)
SIM_CFLAGS = -Isim/include $(ENGINE_CFLAGS)
$(BUILD)/host/sim/libsim.a: $(SIM_SRCS) $(SIM_HDRS) | host-deps
	@mkdir -p $(dir $@)/obj
	@echo "  AR      $@" >&2
	@rm -f $(dir $@)/obj/*.o
	@for f in $(SIM_SRCS); do \
		$(CC) $(HOST_CFLAGS) $(LIB_CFLAGS) $(SIM_CFLAGS) -c -o $(dir $@)/obj/$$(basename $$f .c).o $$f || exit 1; \
	done
	@rm -f $@ && ar rcs $@ $(dir $@)/obj/*.o
# loom-sim is loom-run built with LOOM_SIM, on libloom-sim.
$(BUILD)/host/sim/loom-sim: tools/loom-run.c $(BUILD)/host/sim/libsim.a $(BUILD)/host/lib/libloom.a \
		$(VERSION_H) | host-deps
	@echo "  CC      $@" >&2
	@$(CC) $(HOST_CFLAGS) -DLOOM_SIM $(LIB_CFLAGS) $(SIM_CFLAGS) -o $@ $< $(BUILD)/host/sim/libsim.a \
		$(BUILD)/host/lib/libloom.a -ldrm -luring -lpthread -lm
$(BUILD)/host/sim/%: sim/tests/%.c $(wildcard qemu-device/engine/tests/*.h) $(BUILD)/host/sim/libsim.a $(BUILD)/host/lib/libloom.a | host-deps
	@echo "  CC      $@" >&2
	@$(CC) $(HOST_CFLAGS) $(LIB_CFLAGS) $(SIM_CFLAGS) -Iqemu-device/engine/tests -o $@ $< \
		$(BUILD)/host/sim/libsim.a $(BUILD)/host/lib/libloom.a -ldrm -luring -lpthread -lm

# libloom's tests that need the device run in the VM, statically linked.
$(BUILD)/vm-lib/%: lib/tests/vm/%.c $(wildcard lib/tests/vm/*.h) $(LIB_SRCS) $(LIB_HDRS) \
		$(wildcard qemu-device/engine/tests/*.h) bench/polybench/polybench.h | deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(VM_CFLAGS) -isystem $(KSRC)/tools/testing/selftests $(LIB_CFLAGS) \
		$(ENGINE_CFLAGS) -Iqemu-device/engine/tests -Iselftests -Ibench/polybench \
		-o $@ $< $(LIB_SRCS) $(VM_LIBS) -lpthread

# loom-run: a program's host function on a device, through libloom.
# loom-doctor: whether this machine and user can use a device, and the fixes.
$(BUILD)/tools/loom-run $(BUILD)/tools/loom-doctor: $(BUILD)/tools/%: tools/%.c $(LIB_SRCS) $(LIB_HDRS) $(VERSION_H) | deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(VM_CFLAGS) $(LIB_CFLAGS) -o $@ $< $(LIB_SRCS) $(VM_LIBS) -lpthread

# make doctor: loom-doctor for this machine (not the VM), run here: the
# one make install installs.
.PHONY: doctor
doctor: $(BUILD)/inst/bin/loom-doctor
	@$<

$(BUILD)/lcb/%.lcb: %.loom $(BUILD)/bin/loomc
	@mkdir -p $(dir $@)
	@echo "  LOOMC   $@" >&2
	@$(BUILD)/bin/loomc --fabric 8x8 -o $@ $<

$(BUILD)/polybench/%.lcb: bench/polybench/%.loom $(BUILD)/bin/loomc
	@mkdir -p $(dir $@)
	@echo "  LOOMC   $@" >&2
	@$(BUILD)/bin/loomc -o $@ $<

$(BUILD)/examples/%.lcb: examples/%.loom $(BUILD)/bin/loomc
	@mkdir -p $(dir $@)
	@echo "  LOOMC   $@" >&2
	@$(BUILD)/bin/loomc -o $@ $<

# What each example must print, computed independently in C.
$(BUILD)/host/examples/reference: examples/reference.c | host-deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(HOST_CFLAGS) -ffp-contract=off -o $@ $<

# --- the installed build: make lib, make install, make uninstall -------------
# What is installed is built with the user's CFLAGS and LDFLAGS (default
# -O2 -g), the project's required flags appended, and without -Werror: that
# is for the project's own test builds (CFLAGS_COMMON).  A change of flags
# rebuilds it ($(INST)/flags).  Installed programs find nothing in $(BUILD).
CFLAGS ?= -O2 -g
LDFLAGS ?=
INST := $(BUILD)/inst
INST_CFLAGS = $(CFLAGS) -std=gnu11 -Wall -Wextra -Iuapi -I/usr/include/libdrm -I$(BUILD)/gen
LIB_OUT := $(BUILD)/lib
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# udev reads /usr/lib/udev/rules.d and /etc/udev/rules.d, never /usr/local.
UDEVRULESDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/udev/rules.d,/etc/udev/rules.d)
INSTALL ?= install

# The version the C programs print (--version): VERSION, as a header.
$(VERSION_H): VERSION
	@mkdir -p $(dir $@)
	@printf '/* generated from VERSION by the Makefile */\n#define LOOM_PROJECT_VERSION "%s"\n' \
		'$(LOOM_VERSION)' > $@

.PHONY: FORCE
$(INST)/flags: FORCE
	@mkdir -p $(dir $@)
	@printf '%s\n' '$(CC) $(INST_CFLAGS) $(LDFLAGS)' | cmp -s - $@ || \
		printf '%s\n' '$(CC) $(INST_CFLAGS) $(LDFLAGS)' > $@

# The library itself: libloom.a, libloom.so and loom.pc.
.PHONY: lib install uninstall install-tools
lib: $(LIB_OUT)/libloom.a $(LIB_OUT)/libloom.so $(LIB_OUT)/loom.pc \
	$(LIB_OUT)/libloom-sim.a $(LIB_OUT)/libloom-sim.so $(LIB_OUT)/loom-sim.pc

$(LIB_OUT)/libloom.a: $(LIB_SRCS) $(LIB_HDRS) $(INST)/flags | host-deps
	@mkdir -p $(LIB_OUT)/obj
	@echo "  AR      $@" >&2
	@rm -f $(LIB_OUT)/obj/*.o
	@for f in $(LIB_SRCS); do \
		$(CC) $(INST_CFLAGS) -fPIC $(LIB_CFLAGS) -c -o $(LIB_OUT)/obj/$$(basename $$f .c).o $$f || exit 1; \
	done
	@rm -f $@ && ar rcs $@ $(LIB_OUT)/obj/*.o

# lib/libloom.map exports the public headers' functions and nothing else
# (tools/testing/check-symbols keeps the three in step).
$(LIB_OUT)/libloom.so: $(LIB_OUT)/libloom.a lib/libloom.map
	@echo "  LD      $@" >&2
	@$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,libloom.so.0 -Wl,--version-script=lib/libloom.map -o $@ \
		$(LIB_OUT)/obj/*.o -ldrm -luring -lpthread

# libloom-sim: libloom's objects and the engine's (GPL-2.0-or-later), its
# map libloom's and loom/sim.h's functions.
$(LIB_OUT)/libloom-sim.a: $(LIB_OUT)/libloom.a $(SIM_SRCS) $(SIM_HDRS) $(INST)/flags | host-deps
	@mkdir -p $(LIB_OUT)/sim-obj
	@echo "  AR      $@" >&2
	@rm -f $(LIB_OUT)/sim-obj/*.o
	@for f in $(SIM_SRCS); do \
		$(CC) $(INST_CFLAGS) -fPIC $(LIB_CFLAGS) $(SIM_CFLAGS) -c -o $(LIB_OUT)/sim-obj/$$(basename $$f .c).o $$f || exit 1; \
	done
	@rm -f $@ && ar rcs $@ $(LIB_OUT)/obj/*.o $(LIB_OUT)/sim-obj/*.o
$(LIB_OUT)/libloom-sim.map: lib/libloom.map $(wildcard sim/include/loom/*.h)
	@tools/testing/check-symbols --print-map lib/include/loom/*.h sim/include/loom/*.h | \
		sed 's/LIBLOOM_0/LIBLOOM_SIM_0/' > $@
$(LIB_OUT)/libloom-sim.so: $(LIB_OUT)/libloom-sim.a $(LIB_OUT)/libloom-sim.map
	@echo "  LD      $@" >&2
	@$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,libloom-sim.so.0 \
		-Wl,--version-script=$(LIB_OUT)/libloom-sim.map -o $@ \
		$(LIB_OUT)/obj/*.o $(LIB_OUT)/sim-obj/*.o -ldrm -luring -lpthread -lm

# loom.pc's prefix is PREFIX; libdir and includedir follow LIBDIR and
# INCLUDEDIR, relative to ${prefix} when they lie under it.
pc_dir = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
$(LIB_OUT)/loom.pc $(LIB_OUT)/loom-sim.pc: $(LIB_OUT)/%.pc: lib/%.pc.in VERSION FORCE
	@mkdir -p $(dir $@)
	@sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pc_dir,$(LIBDIR))|' \
		-e 's|@INCLUDEDIR@|$(call pc_dir,$(INCLUDEDIR))|' \
		-e 's|@VERSION@|$(LOOM_VERSION)|' $< > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

# The tools, dynamically linked against libc, libdrm and liburing; loom-run
# and loom-doctor take libloom from its archive.
INST_TOOLS := loomc loom-run loom-sim loom-info loom-doctor loom-top
$(INST)/bin/loomc: compiler/loomc.c $(COMPILER_SRCS) $(COMPILER_HDRS) $(VERSION_H) $(INST)/flags | host-deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(INST_CFLAGS) $(COMPILER_CFLAGS) $(LDFLAGS) -o $@ compiler/loomc.c $(COMPILER_SRCS)
$(INST)/bin/loom-run $(INST)/bin/loom-doctor: $(INST)/bin/%: tools/%.c $(LIB_OUT)/libloom.a $(VERSION_H) | host-deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(INST_CFLAGS) $(LIB_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_OUT)/libloom.a -ldrm -luring -lpthread
$(INST)/bin/loom-sim: tools/loom-run.c $(LIB_OUT)/libloom-sim.a $(VERSION_H) | host-deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(INST_CFLAGS) -DLOOM_SIM $(LIB_CFLAGS) $(SIM_CFLAGS) $(LDFLAGS) -o $@ $< \
		$(LIB_OUT)/libloom-sim.a -ldrm -luring -lpthread -lm
# loom-sim (libloom on a simulated device), built and its path printed.
.PHONY: print-loom-sim
print-loom-sim: $(INST)/bin/loom-sim
	@echo $(INST)/bin/loom-sim

$(INST)/bin/loom-info $(INST)/bin/loom-top: $(INST)/bin/%: tools/%.c $(shell find uapi -name '*.h') $(VERSION_H) \
		$(INST)/flags | host-deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(INST_CFLAGS) $(LDFLAGS) -o $@ $< -ldrm

# Man pages: sections 1 and 7 written in man/, section 3 generated from the
# public headers' comments by tools/mkman3 (one page per family, a link
# page per function).
MAN_SRC := $(wildcard man/*.1 man/*.7)
MAN_OUT := $(BUILD)/man
.PHONY: man
man: $(MAN_OUT)/.stamp
$(MAN_OUT)/.stamp: $(MAN_SRC) tools/mkman3 $(wildcard lib/include/loom/*.h sim/include/loom/*.h) VERSION
	@rm -rf $(MAN_OUT) && mkdir -p $(MAN_OUT)/man1 $(MAN_OUT)/man3 $(MAN_OUT)/man7
	@echo "  MAN     $(MAN_OUT)" >&2
	@for f in $(MAN_SRC); do \
		sed 's/@VERSION@/$(LOOM_VERSION)/g' $$f > $(MAN_OUT)/man$${f##*.}/$$(basename $$f) || exit 1; \
	done
	@tools/mkman3 --version $(LOOM_VERSION) --out $(MAN_OUT)/man3 lib/include/loom/*.h sim/include/loom/*.h
	@touch $@

install-tools: $(addprefix $(INST)/bin/,$(INST_TOOLS))

# What make install puts where, one "mode source destination" per line
# (destination relative to DESTDIR); make uninstall removes the same list.
INSTALL_HDRS := lib/include/loom/loom.h lib/include/loom/work.h lib/include/loom/error.h \
	sim/include/loom/sim.h \
	uapi/loom_image.h uapi/loom_device.h
install: lib install-tools man
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(INCLUDEDIR)/loom/drm $(DESTDIR)$(UDEVRULESDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man7
	$(INSTALL) -m 755 $(addprefix $(INST)/bin/,$(INST_TOOLS)) $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 644 $(LIB_OUT)/libloom.a $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 755 $(LIB_OUT)/libloom.so $(DESTDIR)$(LIBDIR)/libloom.so.$(LOOM_VERSION)
	ln -sf libloom.so.$(LOOM_VERSION) $(DESTDIR)$(LIBDIR)/libloom.so.0
	ln -sf libloom.so.0 $(DESTDIR)$(LIBDIR)/libloom.so
	$(INSTALL) -m 644 $(LIB_OUT)/libloom-sim.a $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 755 $(LIB_OUT)/libloom-sim.so $(DESTDIR)$(LIBDIR)/libloom-sim.so.$(LOOM_VERSION)
	ln -sf libloom-sim.so.$(LOOM_VERSION) $(DESTDIR)$(LIBDIR)/libloom-sim.so.0
	ln -sf libloom-sim.so.0 $(DESTDIR)$(LIBDIR)/libloom-sim.so
	$(INSTALL) -m 644 $(LIB_OUT)/loom.pc $(LIB_OUT)/loom-sim.pc $(DESTDIR)$(PKGCONFIGDIR)/
	$(INSTALL) -m 644 $(INSTALL_HDRS) $(DESTDIR)$(INCLUDEDIR)/loom/
	$(INSTALL) -m 644 uapi/drm/loom_drm.h $(DESTDIR)$(INCLUDEDIR)/loom/drm/
	$(INSTALL) -m 644 tools/udev/70-loom.rules $(DESTDIR)$(UDEVRULESDIR)/
	$(INSTALL) -m 644 $(MAN_OUT)/man1/* $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 644 $(MAN_OUT)/man3/* $(DESTDIR)$(MANDIR)/man3/
	$(INSTALL) -m 644 $(MAN_OUT)/man7/* $(DESTDIR)$(MANDIR)/man7/

# Removes what install put there (the man pages of this tree's list) and
# the directories it made, when they are left empty.
uninstall: man
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(INST_TOOLS))
	rm -f $(addprefix $(DESTDIR)$(LIBDIR)/,libloom.a libloom.so libloom.so.0 libloom.so.$(LOOM_VERSION))
	rm -f $(addprefix $(DESTDIR)$(LIBDIR)/,libloom-sim.a libloom-sim.so libloom-sim.so.0 libloom-sim.so.$(LOOM_VERSION))
	rm -f $(DESTDIR)$(PKGCONFIGDIR)/loom.pc $(DESTDIR)$(PKGCONFIGDIR)/loom-sim.pc
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/loom/,$(notdir $(INSTALL_HDRS)) drm/loom_drm.h)
	rm -f $(DESTDIR)$(UDEVRULESDIR)/70-loom.rules
	for f in $(MAN_OUT)/man*/*; do rm -f "$(DESTDIR)$(MANDIR)/$${f#$(MAN_OUT)/}"; done
	rmdir $(DESTDIR)$(INCLUDEDIR)/loom/drm $(DESTDIR)$(INCLUDEDIR)/loom 2>/dev/null || true

# loomc: a sanitized build for the tests, an optimised one to use.  loomc
# links the engine's fabric (measure.c); its tests run what it compiles on
# the whole engine.
COMPILER_CFLAGS = -Icompiler -Iformat -Ilib/include -Iqemu-device/engine -pthread
$(BUILD)/host/compiler/libloomc.a: $(COMPILER_SRCS) $(COMPILER_HDRS) | host-deps
	@mkdir -p $(dir $@)/obj
	@echo "  AR      $@" >&2
	@rm -f $(dir $@)/obj/*.o
	@for f in $(COMPILER_SRCS); do \
		$(CC) $(HOST_CFLAGS) $(COMPILER_CFLAGS) -c -o $(dir $@)/obj/$$(basename $$f .c).o $$f || exit 1; \
	done
	@rm -f $@ && ar rcs $@ $(dir $@)/obj/*.o

$(BUILD)/host/compiler/%: compiler/tests/%.c $(wildcard compiler/tests/*.h qemu-device/engine/tests/*.h) bench/polybench/polybench.h \
		$(BUILD)/host/compiler/libloomc.a $(BUILD)/host/engine/libengine.a | host-deps
	@echo "  CC      $@" >&2
	@$(CC) $(HOST_CFLAGS) $(COMPILER_CFLAGS) $(ENGINE_CFLAGS) -Ibench/polybench -o $@ $< $(BUILD)/host/compiler/libloomc.a \
		$(BUILD)/host/engine/libengine.a -lm

$(BUILD)/host/loomc: compiler/loomc.c $(BUILD)/host/compiler/libloomc.a $(VERSION_H) | host-deps
	@echo "  CC      $@" >&2
	@$(CC) $(HOST_CFLAGS) $(COMPILER_CFLAGS) -o $@ $< $(BUILD)/host/compiler/libloomc.a

$(BUILD)/bin/loomc: compiler/loomc.c $(COMPILER_SRCS) $(COMPILER_HDRS) $(VERSION_H) | host-deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(CFLAGS_COMMON) $(COMPILER_CFLAGS) -o $@ compiler/loomc.c $(COMPILER_SRCS)

host-test: $(HOST_TESTS)
	@fail=0; for t in $(filter %_test,$(HOST_TESTS)); do echo "--- $$(basename $$t)"; $$t || fail=1; done; exit $$fail

# --- host fuzzing (libFuzzer, clang) -----------------------------------------
# make fuzz-host [FUZZ_SECONDS=60]: the image loader under libFuzzer with ASan
# and UBSan, seeded with the images loomc writes; a crash's input goes to
# fuzz/crashes/image_load/ (commit it: make test replays that directory).
FUZZ_SECONDS ?= 60
FUZZ_BIN := $(BUILD)/fuzz/image_load_fuzz $(BUILD)/fuzz/cmd_decode_fuzz
FUZZ_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -Iuapi -I/usr/include/libdrm \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
# image_load: libloom's loader; cmd_decode: the engine's command processor.
$(BUILD)/fuzz/image_load_fuzz: fuzz/image_load_fuzz.c $(LIB_SRCS) $(LIB_HDRS) | host-deps
	@mkdir -p $(dir $@)
	@echo "  CLANG   $@ (libFuzzer, ASan, UBSan)" >&2
	@clang $(FUZZ_CFLAGS) $(LIB_CFLAGS) -o $@ $< $(LIB_SRCS) -ldrm -luring -lpthread
$(BUILD)/fuzz/cmd_decode_fuzz: fuzz/cmd_decode_fuzz.c $(ENGINE_SRCS) $(ENGINE_HDRS) $(wildcard qemu-device/engine/tests/*.h) | host-deps
	@mkdir -p $(dir $@)
	@echo "  CLANG   $@ (libFuzzer, ASan, UBSan)" >&2
	@clang $(FUZZ_CFLAGS) $(ENGINE_CFLAGS) -Iqemu-device/engine/tests -o $@ $< $(ENGINE_SRCS) -lpthread

# FUZZ_TARGET=image_load (seeded with loomc's images) or cmd_decode (seeded
# with the command buffers of those images' templates: their .loom.templates).
FUZZ_TARGET ?= image_load
.PHONY: fuzz-host
fuzz-host: $(FUZZ_BIN) $(LCBS) $(EXAMPLE_LCBS)
	@mkdir -p $(BUILD)/fuzz/corpus-$(FUZZ_TARGET) fuzz/crashes/$(FUZZ_TARGET)
	@# (corpus and example programs share names: number them)
	@n=0; for f in $(LCBS) $(EXAMPLE_LCBS); do n=$$((n + 1)); \
		if [ $(FUZZ_TARGET) = cmd_decode ]; then \
			objcopy -O binary --only-section=.loom.templates $$f \
				$(BUILD)/fuzz/corpus-$(FUZZ_TARGET)/seed-$$n 2>/dev/null || true; \
		else cp $$f $(BUILD)/fuzz/corpus-$(FUZZ_TARGET)/seed-$$n.lcb; fi; done
	@echo "fuzz-host: $(FUZZ_SECONDS) s of $(FUZZ_TARGET), crashes to fuzz/crashes/$(FUZZ_TARGET)/" >&2
	@$(BUILD)/fuzz/$(FUZZ_TARGET)_fuzz -max_total_time=$(FUZZ_SECONDS) -seed=1 -print_final_stats=1 \
		-artifact_prefix=fuzz/crashes/$(FUZZ_TARGET)/ $(BUILD)/fuzz/corpus-$(FUZZ_TARGET) 2>&1 | \
		grep -E 'stat::|DONE|ERROR|SUMMARY|crash-|timeout-' || true

# --- differential fuzzing of loomc ---------------------------------------------
# make fuzz-compiler [FUZZ_SECONDS=60] [FUZZ_SEED=1]: random threads compiled
# for fabrics from 2x2 to 16x16, run on the host engine and compared with
# the IR's reference interpreter (compiler/tests/diff_fuzz_test.c, optimised,
# no sanitizers); make test runs its fixed-seed slice under ASan.  Failing
# threads go to $(BUILD)/fuzz/compiler/ (replay: --replay FILE).
$(BUILD)/fuzz/diff_fuzz: compiler/tests/diff_fuzz_test.c $(wildcard compiler/tests/*.h) $(COMPILER_SRCS) \
		$(COMPILER_HDRS) $(ENGINE_SRCS) $(ENGINE_HDRS) | host-deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(CFLAGS_COMMON) -O2 $(COMPILER_CFLAGS) $(ENGINE_CFLAGS) -Itools/testing -o $@ $< \
		$(COMPILER_SRCS) $(filter-out $(COMPILER_SRCS),$(ENGINE_SRCS)) -lm

.PHONY: fuzz-compiler
fuzz-compiler: $(BUILD)/fuzz/diff_fuzz
	@mkdir -p $(BUILD)/fuzz/compiler
	@$(BUILD)/fuzz/diff_fuzz --seconds $(FUZZ_SECONDS) --seed $(or $(FUZZ_SEED),1) --fabrics all \
		--out $(BUILD)/fuzz/compiler

# --- fuzzing and faults in the VM -------------------------------------------
# loom_fuzz: random structured ioctls and uring_cmds from several processes
# (fuzz/vm/loom_fuzz.c); make test runs a fixed-seed slice on each lane.
# make fuzz [FUZZ_SEED=1] [FUZZ_SECONDS=60] [FUZZ_PROCS=3] [FUZZ_THREADS=2]
VM_FUZZ := $(BUILD)/fuzz/vm/loom_fuzz $(BUILD)/fuzz/vm/loom_faults
FUZZ_SEED ?= 1
FUZZ_PROCS ?= 3
FUZZ_THREADS ?= 2
$(BUILD)/fuzz/vm/%: fuzz/vm/%.c fuzz/vm/vm_client.h $(wildcard selftests/*.h) $(ENGINE_HDRS) $(wildcard qemu-device/engine/tests/*.h) | deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(VM_CFLAGS) $(ENGINE_CFLAGS) -Iqemu-device/engine/tests -Iselftests \
		-o $@ $< $(VM_LIBS) -lpthread

# loom_faults links libloom: its load includes dynamic work.
$(BUILD)/fuzz/vm/loom_faults: fuzz/vm/loom_faults.c fuzz/vm/vm_client.h lib/tests/vm/image_util.h \
		$(LIB_SRCS) $(LIB_HDRS) $(wildcard selftests/*.h) $(wildcard qemu-device/engine/tests/*.h) | deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(VM_CFLAGS) $(LIB_CFLAGS) $(ENGINE_CFLAGS) -Iqemu-device/engine/tests -Iselftests -Ilib/tests/vm \
		-o $@ $< $(LIB_SRCS) $(VM_LIBS) -lpthread -lm

VM_ENV = LOOM_QEMU=$$(cat $(QEMU_PATH)) LOOM_VMLINUX=$(KERNEL_ROOT)/vmlinux LOOM_INITRAMFS=$(INITRAMFS)
.PHONY: fuzz
fuzz: qemu $(INITRAMFS) $(BUILD)/fuzz/vm/loom_fuzz
	@printf '#!/bin/sh\nexec /data/loom_fuzz --seed %s --seconds %s --procs %s --threads %s\n' \
		'$(FUZZ_SEED)' '$(FUZZ_SECONDS)' '$(FUZZ_PROCS)' '$(FUZZ_THREADS)' > $(BUILD)/fuzz/vm/fuzz.sh
	@echo "fuzz: $(FUZZ_SECONDS) s, seed $(FUZZ_SEED), linux $(KERNEL), 2 devices" >&2
	@$(VM_ENV) tools/loom-vm --devices 2 --timeout $$(($(FUZZ_SECONDS) + 600)) \
		--test-timeout $$(($(FUZZ_SECONDS) + 300)) --file $(BUILD)/fuzz/vm/loom_fuzz \
		--log $(BUILD)/linux-$(KERNEL)/vm/fuzz.log $(BUILD)/fuzz/vm/fuzz.sh

# make faults [FAULTS=1000] [FUZZ_SEED=1]: the fault campaign (fuzz/vm/loom_faults.c).
FAULTS ?= 1000
.PHONY: faults
faults: qemu $(INITRAMFS) $(BUILD)/fuzz/vm/loom_faults
	@printf '#!/bin/sh\nexec /data/loom_faults --faults %s --seed %s\n' '$(FAULTS)' '$(FUZZ_SEED)' \
		> $(BUILD)/fuzz/vm/faults.sh
	@echo "faults: $(FAULTS) injected faults under load, linux $(KERNEL), 2 devices" >&2
	@$(VM_ENV) tools/loom-vm --devices 2 --timeout 3600 --test-timeout 3000 \
		--file $(BUILD)/fuzz/vm/loom_faults --log $(BUILD)/linux-$(KERNEL)/vm/faults.log \
		$(BUILD)/fuzz/vm/faults.sh

# --- benchmarks (optimised, no sanitizers) ----------------------------------
$(BUILD)/bench/fabric_bench: bench/fabric_bench.c $(ENGINE_SRCS) $(ENGINE_HDRS) $(wildcard qemu-device/engine/tests/*.h) | host-deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(CFLAGS_COMMON) -O3 -DNDEBUG $(ENGINE_CFLAGS) -Iqemu-device/engine/tests -o $@ $< $(ENGINE_SRCS)

$(BUILD)/bench/compile_bench: bench/compile_bench.c $(COMPILER_SRCS) $(COMPILER_HDRS) $(ENGINE_SRCS) $(ENGINE_HDRS) | host-deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(CFLAGS_COMMON) -O2 $(COMPILER_CFLAGS) $(ENGINE_CFLAGS) -Iqemu-device/engine/tests -o $@ $< \
		$(COMPILER_SRCS) $(filter-out $(COMPILER_SRCS),$(ENGINE_SRCS))

# P3's simulator cost on the host (loomc and the engine, unsanitized: it
# runs under callgrind).
$(BUILD)/bench/items_bench: bench/items_bench.c compiler/tests/engine_run.h $(COMPILER_SRCS) \
		$(COMPILER_HDRS) $(ENGINE_SRCS) $(ENGINE_HDRS) | host-deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(CFLAGS_COMMON) $(COMPILER_CFLAGS) $(ENGINE_CFLAGS) -Icompiler/tests -o $@ $< \
		$(COMPILER_SRCS) $(filter-out $(COMPILER_SRCS),$(ENGINE_SRCS)) -lm

# P4: libloom's kernel and scheduler against OpenMP tasks, on the host.
$(BUILD)/bench/tree_bench: bench/tree_bench.c $(LIB_SRCS) $(LIB_HDRS) | host-deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(CFLAGS_COMMON) -fopenmp $(LIB_CFLAGS) -o $@ $< $(LIB_SRCS) -ldrm -luring -lpthread

# P1-P3 run in the VM.
$(BUILD)/bench/vm/submit_bench: bench/vm/submit_bench.c $(shell find uapi -name '*.h') | deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(VM_CFLAGS) -o $@ $< $(VM_LIBS)

$(BUILD)/bench/vm/work_bench: bench/vm/work_bench.c $(LIB_SRCS) $(LIB_HDRS) | deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(VM_CFLAGS) $(LIB_CFLAGS) -o $@ $< $(LIB_SRCS) $(VM_LIBS) -lpthread

# P5s, P5d: P5's kernel through libloom on loom-sim (host) and on the device (VM).
$(BUILD)/bench/sim_speed: bench/dense_speed.c $(LIB_OUT)/libloom-sim.a $(wildcard qemu-device/engine/tests/*.h) | host-deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(INST_CFLAGS) -DLOOM_SIM $(LIB_CFLAGS) $(SIM_CFLAGS) -Iqemu-device/engine/tests -o $@ $< \
		$(LIB_OUT)/libloom-sim.a -ldrm -luring -lpthread -lm
$(BUILD)/bench/vm/dense_speed: bench/dense_speed.c $(LIB_SRCS) $(LIB_HDRS) $(wildcard qemu-device/engine/tests/*.h) | deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(VM_CFLAGS) $(LIB_CFLAGS) $(ENGINE_CFLAGS) -Iqemu-device/engine/tests -o $@ $< $(LIB_SRCS) \
		$(VM_LIBS) -lpthread

# P7, P8: libloom's launch against raw SUBMITs of its own command buffer.
$(BUILD)/bench/vm/launch_bench: bench/vm/launch_bench.c $(LIB_SRCS) $(LIB_HDRS) | deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(VM_CFLAGS) $(LIB_CFLAGS) -o $@ $< $(LIB_SRCS) $(VM_LIBS) -lpthread

# P9: one dense launch of gemm over 1, 2 and 4 cores (2 devices x 2).
$(BUILD)/bench/vm/spread_bench: bench/vm/spread_bench.c $(LIB_SRCS) $(LIB_HDRS) | deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@" >&2
	@$(CC) $(VM_CFLAGS) $(LIB_CFLAGS) -o $@ $< $(LIB_SRCS) $(VM_LIBS) -lpthread

$(BUILD)/bench/vm/work_bench.lcb: bench/vm/work_bench.loom $(BUILD)/bin/loomc
	@mkdir -p $(dir $@)
	@echo "  LOOMC   $@" >&2
	@$(BUILD)/bin/loomc --fabric 8x8 -o $@ $<

bench: qemu $(INITRAMFS) $(BENCH_BINS) | deps
	@BUILD=$(BUILD) bench/run

# --- test and demo --------------------------------------------------------------
test: all qemu $(ALL_INITRAMFS) $(HARNESS_KMOD) $(DEB_DKMS) $(FUZZ_BIN) $(VM_FUZZ)
	@BUILD=$(BUILD) LANES="$(LANES)" DKMS_SRC=$(DKMS_SRC) DEB_DKMS=$(DEB_DKMS) LIB_OUT=$(LIB_OUT) \
		LOOM_VERSION=$(LOOM_VERSION) tools/run-tests

# --- the debug kernel lane ------------------------------------------------------
# make test-debug: the VM suite and the harness's self-tests on the 6.1-debug
# lane, Debian's 6.1 source built with KASAN, lockdep, kmemleak, KFENCE...
# by tools/build-debug-kernel (cached under $(LOOM_CACHE)/debug-kernel, keyed
# by its inputs; the first build is long).  Not part of make test.
# Documentation/testing.rst, "The debug kernel lane".
DEBUG_LANE := 6.1-debug
# The guest is that much slower there: loom-vm's default time limits scale.
DEBUG_TIMEOUT_FACTOR ?= 4
# 4-level paging: with -cpu max's LA57, an interrupt that lands while the
# boot CPU's features are re-read (identify_boot_cpu) sees 5-level
# addresses as wild and KASAN reports it (2 boots in 9); the guest's page
# table depth has no bearing on loom.
DEBUG_CMDLINE ?= no5lvl
.PHONY: debug-kernel test-debug test-debug-run
debug-kernel: | deps
	@tools/build-debug-kernel > /dev/null
# A second make: the lane's recipes ask build-debug-kernel where the kernel
# is, and the modules built for it depend on that build (a new key, a new
# kernel: they are rebuilt).
test-debug: debug-kernel
	@$(MAKE) -s --no-print-directory test-debug-run DEBUG_KERNEL_DIR=$$(tools/build-debug-kernel --print-dir)
ifneq ($(DEBUG_KERNEL_DIR),)
$(BUILD)/linux-$(DEBUG_LANE)/kmod/loom.ko $(BUILD)/linux-$(DEBUG_LANE)/harness-kmod/loom_selftest_warn.ko: \
	$(DEBUG_KERNEL_DIR)/.loom-ready
endif
test-debug-run: qemu selftests $(LIB_VM_TESTS) $(VM_TOOLS) $(LCBS) $(EXAMPLE_LCBS) $(VM_FUZZ) \
		$(call lane_initramfs,$(DEBUG_LANE)) $(BUILD)/linux-$(DEBUG_LANE)/harness-kmod/loom_selftest_warn.ko
	@BUILD=$(BUILD) LANES=$(DEBUG_LANE) LOOM_VM_TIMEOUT_FACTOR=$(DEBUG_TIMEOUT_FACTOR) \
		LOOM_VM_CMDLINE=$(DEBUG_CMDLINE) tools/run-tests --vm-only

demo: qemu $(INITRAMFS) $(VM_TOOLS) $(EXAMPLE_LCBS)
	@echo "The examples (examples/*.loom), compiled by loomc for the default 4x4" \
		"fabric, run by loom-run on the device in the VM:"
	@tools/loom-vm --file $(BUILD)/tools/loom-run \
		--file tools/vm/run-examples $(EXAMPLE_FILES) $(foreach f,$(EXAMPLES),--file $(f)) \
		$(BUILD)/tools/loom-info tools/vm/demo-examples

# make run PROG=prog.loom [RUN_ARGS="--workers 2"] [TRACE=out.json]:
# compile a program for the default 4x4 fabric and run it with loom-run
# --stats on a device in the VM; with TRACE, its Perfetto trace comes back to
# that file.
RUN_LCB = $(BUILD)/run/$(basename $(notdir $(PROG))).lcb
# Said before anything is built or installed.
ifneq ($(filter run,$(MAKECMDGOALS)),)
ifeq ($(PROG),)
$(error usage: make run PROG=prog.loom [RUN_ARGS='--workers 2'] [TRACE=out.json])
else ifeq ($(wildcard $(PROG)),)
$(error make run: PROG=$(PROG): no such file)
endif
endif
run: qemu $(INITRAMFS) $(BUILD)/tools/loom-run $(BUILD)/bin/loomc
	@test -f "$(PROG)" || { echo "usage: make run PROG=prog.loom [RUN_ARGS='--workers 2'] [TRACE=out.json]" >&2; exit 2; }
	@mkdir -p $(BUILD)/run
	@$(BUILD)/bin/loomc -o $(RUN_LCB) $(PROG)
	@printf '#!/bin/sh\nexec /data/loom-run --stats %s %s /data/%s\n' '$(RUN_ARGS)' \
		'$(if $(TRACE),--trace /tmp/$(notdir $(TRACE)))' '$(notdir $(RUN_LCB))' \
		> $(BUILD)/run/loom-run.sh
	@tools/loom-vm --file $(BUILD)/tools/loom-run --file $(RUN_LCB) \
		$(if $(TRACE),--fetch /tmp/$(notdir $(TRACE)) --fetch-dir $(dir $(TRACE))) \
		$(BUILD)/run/loom-run.sh

# make fresh-root [FRESH_ROOT=dir]: a new Debian 12 root (debootstrap
# minbase + git, make, sudo, ca-certificates), this checkout's HEAD cloned
# into it, and the README's first two commands run there as a new user
# would (tools/testing/fresh-root, Documentation/testing.rst).
FRESH_ROOT ?= $(LOOM_CACHE)/fresh-root
.PHONY: fresh-root
fresh-root:
	@tools/testing/fresh-root --replace $(FRESH_ROOT)

shell: qemu $(INITRAMFS) selftests $(VM_TOOLS)
	@tools/loom-vm --shell --devices 2 $(SELFTESTS) $(VM_TOOLS)

# uapi headers cannot use BIT(): userspace has no such macro.
CHECKPATCH = perl $(KSRC)/scripts/checkpatch.pl --strict --no-tree --terse --show-types \
	--ignore FILE_PATH_CHANGES
checkpatch: | deps
	@$(CHECKPATCH) -f $(shell find kernel -name '*.[ch]')
	@$(CHECKPATCH) --ignore BIT_MACRO -f $(shell find uapi -name '*.h')
	@rm -f .checkpatch-camelcase.*	# checkpatch's cache in a git tree
	@echo "checkpatch --strict: clean"

clean:
	rm -rf $(BUILD)

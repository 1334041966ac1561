# gdrcopy: top-level build. Non-recursive: each part adds its own targets in its own .mk file.
#   make                 the library, the tools, and the kernel module where kernel headers exist
#   make run             build, then gdrcopy_info and a short demonstration (tools/demo.sh): on
#                        the GPU here, or on the simulated GPU where there is none
#   make check           tier 1 (unit), tier 2 (VM), gdrdrv's other builds, the other
#                        architectures, the packages and the static analyzers; installs the
#                        Debian packages they need
#   make test            tier 1 only, installing nothing (what package builds run)
#   make check-gpu       tier 3, on a machine with an NVIDIA GPU
#   make analyze         the static analyzers (gcc -fanalyzer, clang's scan-build) alone, as make
#                        check runs them (tests/analyze)
# Options, each reported in the summary a build starts with ("  CONFIG ..." lines):
#   VULKAN=0             leave the vulkan backend out (gdr_open says so)
#   TOOLS=0              leave the tools out
#   CUDA=<dir>           the CUDA toolkit (default /usr/local/cuda, else /usr where Debian's
#                        nvidia-cuda-dev put cuda.h); CUDA_INCLUDE= (default $(CUDA)/include)
#                        where cuda.h is. Without it the library has the gdrdrv backend alone,
#                        and the tools and tests are left out. NVCC= (default $(CUDA)/bin/nvcc)
#                        builds gdrcopy_pplat and the GPU tier's kernels
#   KDIR=<dir>           the kernel build tree for gdrdrv (default: that of KVER=<release>, as
#                        GDRCopy's, else of the running kernel)
# Other variables: BUILD= (output dir), V=1 (show commands), WERROR=0 (warnings are not
# errors), SANITIZE=1 (ASan + UBSan) or thread (TSan), CC=, CXX=, AR= (each from the environment too),
# CROSS_COMPILE=. GDRCopy's own targets and variables work too (packaging/gdrcopy.mk).

VERSION_MAJOR := $(shell awk '/^\#define GDR_API_MAJOR_VERSION/ {print $$3}' include/gdrapi.h)
VERSION_MINOR := $(shell awk '/^\#define GDR_API_MINOR_VERSION/ {print $$3}' include/gdrapi.h)
VERSION := $(VERSION_MAJOR).$(VERSION_MINOR)

BUILD ?= build
# make splits a path with a space into two (as GDRCopy's makefiles do): say so, rather than fail
# on "multiple target patterns" or write into the pieces. install.mk checks its directories.
no_space = $(if $(word 2,$($(1))),$(error $(1)='$($(1))' has a space, which make cannot keep \
	in one piece: give a path without one))
$(call no_space,BUILD)
OBJ := $(BUILD)/obj
WERROR ?= 1
SANITIZE ?= 0
CROSS_COMPILE ?=
ifeq ($(origin CC),default)
CC := $(CROSS_COMPILE)gcc
endif
ifeq ($(origin CXX),default)
CXX := $(CROSS_COMPILE)g++
endif
ifeq ($(origin AR),default)
AR := $(CROSS_COMPILE)ar
endif

# The options. CUDA's headers are needed by the CUDA backends (dmabuf, vulkan), the tools and
# the tests; the library's gdrdrv backend and the kernel module need none.
VULKAN ?= 1
TOOLS ?= 1
CUDA ?= $(if $(wildcard /usr/local/cuda/include/cuda.h),/usr/local/cuda,$(if \
	$(wildcard /usr/include/cuda.h),/usr,/usr/local/cuda))
CUDA_INCLUDE ?= $(CUDA)/include
NVCC ?= $(CUDA)/bin/nvcc
HAVE_CUDA_H := $(if $(wildcard $(CUDA_INCLUDE)/cuda.h),1,0)
HAVE_NVCC := $(if $(wildcard $(NVCC)),1,0)
CUDA_PARTS := $(HAVE_CUDA_H)
BUILD_TOOLS := $(if $(filter 1,$(TOOLS)),$(CUDA_PARTS),0)

ifeq ($(V),1)
Q :=
else
Q := @
endif

# The architecture the compiler targets picks src/arch/<dir>/.
TARGET_MACHINE := $(shell $(CC) -dumpmachine)
ifneq ($(filter x86_64-%,$(TARGET_MACHINE)),)
ARCH_DIR := x86
else ifneq ($(filter aarch64-%,$(TARGET_MACHINE)),)
ARCH_DIR := arm64
else ifneq ($(filter powerpc64le-%,$(TARGET_MACHINE)),)
ARCH_DIR := ppc64le
else
ARCH_DIR := generic
endif

CFLAGS ?= -O2 -g
WARN_CFLAGS := -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror)
ifeq ($(SANITIZE),1)
SAN_CFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else ifeq ($(SANITIZE),thread)
# ThreadSanitizer. gcc warns that it does not model atomic_thread_fence (-Wtsan); the library's
# fences order atomics only (handle.h's seqlock re-check, inflight.h's announcement), and TSan
# reports races on the plain data around them, which is what this build is for. clang has no
# such warning, and refuses -Wno-tsan.
SAN_CFLAGS := -fsanitize=thread -fno-omit-frame-pointer \
	$(if $(shell $(CC) -Werror -Wno-tsan -fsyntax-only -x c /dev/null 2>/dev/null && echo y),-Wno-tsan)
else ifeq ($(SANITIZE),0)
SAN_CFLAGS :=
else
$(error SANITIZE=$(SANITIZE): give 1 (ASan + UBSan), thread (TSan) or 0)
endif
BASE_CFLAGS := -std=gnu11 -fPIC -pthread -D_GNU_SOURCE -Iinclude -Isrc -Ikernel/include/uapi \
	$(if $(filter 1,$(HAVE_CUDA_H)),-I$(CUDA_INCLUDE)) $(WARN_CFLAGS) $(SAN_CFLAGS) -MMD -MP
ALL_CFLAGS = $(BASE_CFLAGS) $(CFLAGS) $(EXTRA_CFLAGS)
LDFLAGS ?=
# The build's library comes before any -L of LDFLAGS, which may name a directory with another
# libgdrapi.so (NVIDIA GDRCopy's): ld links the first it finds.
ALL_LDFLAGS = -pthread $(SAN_CFLAGS) -L$(LIB_DIR) $(LDFLAGS)

.PHONY: all check check-gpu deps clean run test test-build check-build check-build-sanitize \
	check-build-tsan
all:
comma := ,
empty :=

# The tests and the tools need CUDA's headers: say so before a compiler does, and before an
# install of the tools that installs none. (make all and make install leave the tools out.)
TEST_GOALS := test check test-build check-build check-build-sanitize check-gpu run tools exes \
	install-tools exes_install analyze
ifeq ($(HAVE_CUDA_H),0)
ifneq ($(filter $(TEST_GOALS),$(MAKECMDGOALS)),)
$(error no cuda.h in $(CUDA_INCLUDE), which make $(filter $(TEST_GOALS),$(MAKECMDGOALS)) needs (the tools and tests are built with it): install the CUDA toolkit headers (Debian: nvidia-cuda-dev from non-free, or NVIDIA's cuda-cudart-dev-13-0) and set CUDA= to the toolkit or CUDA_INCLUDE= to the directory of cuda.h)
endif
endif

# What the objects are built with. When it changes (make CC=clang over a gcc build, other
# CFLAGS, another CUDA, VULKAN=0) the file is rewritten, which makes every object out of date.
BUILD_CONFIG := $(BUILD)/config.txt
# Two sets of tests, each part adding its own: TEST_TESTS, tier 1, which make test runs inside
# package builds and so installs, downloads and boots nothing (test-build builds it);
# CHECK_TESTS, what make check runs besides (check-build builds it): the VM tiers, gdrdrv's
# kernel builds, the other architectures, the packages. SANITIZE_TESTS are tier-1 programs,
# named as in the plain build, that make check runs again from the ASan + UBSan build;
# TSAN_TESTS, likewise, from the ThreadSanitizer build (the threaded ones).
test-build:
check-build: test-build
check-build-sanitize:
check-build-tsan:
TEST_TESTS :=
CHECK_TESTS :=
# make check's tests that must come after every other (what runs alone, TEST.serial, there
# keeps no CPU idle while the long tests run beside each other).
CHECK_TESTS_LAST :=
SANITIZE_TESTS :=
TSAN_TESTS :=

# Where each part puts what other parts use. A target or prerequisite is expanded when make
# reads it, so a fragment names another part's products only through these (or by a target's
# name): the fragments work in whatever order they are read.
LIB_SONAME := libgdrapi.so.$(VERSION_MAJOR)
LIB_REAL := libgdrapi.so.$(VERSION)
LIB_DIR := $(BUILD)/lib
LIB_SHARED := $(LIB_DIR)/$(LIB_REAL)
LIB_STATIC := $(LIB_DIR)/libgdrapi.a
TOOLS_BIN := $(BUILD)/bin
SIM_CUDA_DIR := $(BUILD)/sim/cuda
SIM_CUDA_LIB := $(SIM_CUDA_DIR)/libcuda.so.1
SIM_VK_HOSTILE_LIB := $(BUILD)/sim/vulkan-hostile/libvulkan.so.1
HARNESS_OBJS := $(addprefix $(OBJ)/tests/harness/,harness.o process.o simgpu.o)
# The CUDA driver for test programs: the library's loader and the tests' own entry points.
TESTCUDA_OBJS := $(OBJ)/tests/harness/testcuda.o $(OBJ)/src/cuda.o $(OBJ)/src/log.o
FORK_CHECK_OBJ := $(OBJ)/tests/harness/fork_check.o
CUDA_VMM_OBJ := $(OBJ)/tests/harness/cuda_vmm.o
# The failing-calls loop and the libc functions it fails (tests/unit/failing_calls.h).
FAILING_CALLS_OBJS := $(OBJ)/tests/unit/failing_calls.o $(OBJ)/tests/unit/failing_libc.o
KBUILD_DIR := $(BUILD)/kbuild

# Debian packages: BUILD_DEBS to build, CHECK_DEBS to run make check. The .mk files add theirs.
BUILD_DEBS :=
CHECK_DEBS :=

# The library first: every other part builds on it. The rest, in any order (see above):
# GDR_FRAGMENT_ORDER=reverse reads them the other way round, as tests/build checks.
GDR_FRAGMENTS := $(sort $(wildcard src/backends/*.mk tools/*.mk tests/*/*.mk kernel/*.mk \
	packaging/*.mk))
include src/lib.mk
include $(if $(filter reverse,$(GDR_FRAGMENT_ORDER)),$(shell printf '%s\n' $(GDR_FRAGMENTS) | \
	tac),$(GDR_FRAGMENTS))

BUILD_CONFIG_NOW := CC=$(CC) $(shell $(CC) -dumpfullversion -dumpversion 2>/dev/null) \
	CXX=$(CXX) NVCC=$(NVCC) CFLAGS=$(BASE_CFLAGS) $(CFLAGS) $(EXTRA_CFLAGS) \
	LDFLAGS=$(ALL_LDFLAGS) VULKAN=$(VULKAN) CUDA_INCLUDE=$(CUDA_INCLUDE) \
	PPLAT_GENCODE=$(PPLAT_GENCODE)
# Goals that build nothing: they print no summary and write nothing (make version and make
# uninstall work in a read-only tree, and make clean makes nothing that it then removes).
NOBUILD_GOALS := clean deps uninstall config version
ifneq ($(filter-out $(NOBUILD_GOALS),$(or $(MAKECMDGOALS),all)),)
ifneq ($(file <$(BUILD_CONFIG)),$(BUILD_CONFIG_NOW))
$(shell mkdir -p $(BUILD))
$(file >$(BUILD_CONFIG),$(BUILD_CONFIG_NOW))
endif
endif
# "make clean all" removes it with the rest of $(BUILD) after this parse: the build writes it
# again. Under -j, make would start the build beside clean's rm: one goal at a time then.
$(BUILD_CONFIG):
	$(shell mkdir -p $(dir $@))$(file >$@,$(BUILD_CONFIG_NOW))
ifneq ($(and $(filter clean,$(MAKECMDGOALS)),$(filter-out clean,$(MAKECMDGOALS))),)
.NOTPARALLEL:
endif

# The summary: what this build has and leaves out, and why, once per make run that builds.
config_library = library: backends $(LIB_BACKENDS); copy routines for $(ARCH_DIR)
config_cuda = CUDA headers: $(if $(filter 1,$(HAVE_CUDA_H)),$(CUDA_INCLUDE),none in \
	$(CUDA_INCLUDE) (set CUDA= or CUDA_INCLUDE=): no dmabuf or vulkan backend$(comma) no \
	tools$(comma) no tests)
config_tools = tools: $(if $(filter 1,$(BUILD_TOOLS)),yes$(if $(filter 0,$(HAVE_NVCC)),$(comma) \
	without gdrcopy_pplat (no $(NVCC): set NVCC= or CUDA=)),no ($(if $(filter 0,$(TOOLS)),TOOLS=0,no \
	CUDA headers)))
config_gdrdrv = gdrdrv.ko: $(if $(KDIR),against $(KDIR),not built: no kernel build tree for \
	$(KDIR_KVER) (install its headers or give KDIR=))
# Not under -s: a make that answers a question (tests/cross asks for lists) prints only that.
MAKE_SHORT_FLAGS := $(filter-out -% %=%,$(firstword $(MAKEFLAGS)))
ifeq ($(MAKELEVEL)$(findstring s,$(MAKE_SHORT_FLAGS)),0)
ifneq ($(filter-out $(NOBUILD_GOALS),$(or $(MAKECMDGOALS),all)),)
$(foreach line,library cuda tools gdrdrv,$(info $(empty)  CONFIG  $(config_$(line))))
endif
endif

$(OBJ)/%.o: %.c $(BUILD_CONFIG)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(ISA_CFLAGS) -c -o $@ $<

deps:
	$(Q)tests/install-deps.sh $(sort $(BUILD_DEBS) $(CHECK_DEBS))

# Tier 1 three times (plain, ASan + UBSan, and its threaded tests under TSan) and the rest of
# make check, under one runner and one summary line. Its builds and its tests use every CPU
# (CHECK_JOBS; TEST_JOBS=1 runs one test at a time): most of its time is VMs and kernel builds,
# each on one CPU. TSan counts a thread that a fork's child never joins (it does not exist there)
# as leaked: the fork tests fork beside running threads on purpose.
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
check: deps
	$(Q)$(MAKE) --no-print-directory -j$(CHECK_JOBS) all check-build
	$(Q)$(MAKE) --no-print-directory -j$(CHECK_JOBS) BUILD=$(BUILD)/sanitize SANITIZE=1 \
		check-build-sanitize
	$(Q)$(MAKE) --no-print-directory -j$(CHECK_JOBS) BUILD=$(BUILD)/tsan SANITIZE=thread \
		check-build-tsan
	$(Q)TEST_JOBS=$${TEST_JOBS:-$(CHECK_JOBS)} TSAN_OPTIONS="report_thread_leaks=0 $${TSAN_OPTIONS:-}" \
		tests/run-tests.sh $(TEST_TESTS) $(CHECK_TESTS) \
		$(subst $(BUILD)/,$(BUILD)/sanitize/,$(SANITIZE_TESTS)) \
		$(subst $(BUILD)/,$(BUILD)/tsan/,$(TSAN_TESTS)) $(CHECK_TESTS_LAST)

# Tier 1 from the plain build. A test that misses something skips, saying what.
test: all test-build
	$(Q)tests/run-tests.sh $(TEST_TESTS)

# Build, then gdrcopy_info and the demonstration: on the GPU here, or, where there is none, on
# the simulated GPU (which needs the simulated CUDA driver and lavapipe: RUN_SIM_DEBS, installed
# then, when missing).
RUN_SIM_DEBS := mesa-vulkan-drivers libvulkan1 libvulkan-dev
run: all $(TOOLS_DEMO)
	$(Q)tools/demo.sh $(BUILD) "$(MAKE) --no-print-directory sim-cuda" $(RUN_SIM_DEBS)

clean:
	rm -rf $(BUILD)

-include $(shell find $(OBJ) -name '*.d' -type f 2>/dev/null)

# gdrcopy: top-level build. Non-recursive: each part adds its own targets in its own .mk file.
#   make                 the library (and tools, and the kernel module where headers exist)
#   make run             build, then gdrcopy_info and a short demonstration (tools/demo.sh): on
#                        the GPU here, or on the simulated GPU where there is none
#   make check           tiers 1 (unit) and 2 (VM); installs the Debian packages they need
#   make test            tier 1 only, installing nothing (what package builds run)
#   make check-gpu       tier 3, on a machine with an NVIDIA GPU
# Variables: BUILD= (output dir), CUDA= (toolkit, default /usr/local/cuda, else /usr where
# Debian's nvidia-cuda-dev put cuda.h), V=1 (show commands), WERROR=0 (warnings are not
# errors), SANITIZE=1 (ASan + UBSan), VULKAN=0 (leave the vulkan backend out), CC=,
# CROSS_COMPILE=. GDRCopy's own targets and variables work too (packaging/gdrcopy.mk).

VERSION_MAJOR := $(shell awk '/^\#define GDR_API_MAJOR_VERSION/ {print $$3}' include/gdrapi.h)
VERSION_MINOR := $(shell awk '/^\#define GDR_API_MINOR_VERSION/ {print $$3}' include/gdrapi.h)
VERSION := $(VERSION_MAJOR).$(VERSION_MINOR)

BUILD ?= build
OBJ := $(BUILD)/obj
CUDA ?= $(if $(wildcard /usr/local/cuda/include/cuda.h),/usr/local/cuda,$(if \
	$(wildcard /usr/include/cuda.h),/usr,/usr/local/cuda))
WERROR ?= 1
SANITIZE ?= 0
CROSS_COMPILE ?=
ifeq ($(origin CC),default)
CC := $(CROSS_COMPILE)gcc
endif
ifeq ($(origin CXX),default)
CXX := $(CROSS_COMPILE)g++
endif
AR := $(CROSS_COMPILE)ar

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
else
SAN_CFLAGS :=
endif
BASE_CFLAGS := -std=gnu11 -fPIC -pthread -D_GNU_SOURCE -Iinclude -Isrc -Ikernel/include/uapi \
	-I$(CUDA)/include $(WARN_CFLAGS) $(SAN_CFLAGS) -MMD -MP
ALL_CFLAGS = $(BASE_CFLAGS) $(CFLAGS) $(EXTRA_CFLAGS)
LDFLAGS ?=
ALL_LDFLAGS = -pthread $(SAN_CFLAGS) $(LDFLAGS)

.PHONY: all check check-gpu deps clean run test test-build check-build check-build-sanitize
all:

# Everything but these goals compiles against CUDA's headers: say so before the compiler does.
NO_CUDA_GOALS := clean deps uninstall config version help
ifeq ($(wildcard $(CUDA)/include/cuda.h),)
ifneq ($(filter-out $(NO_CUDA_GOALS),$(or $(MAKECMDGOALS),all)),)
$(error no include/cuda.h under $(CUDA): set CUDA= to the toolkit)
endif
endif

# What the objects are built with. When it changes (make CC=clang over a gcc build, other
# CFLAGS, another CUDA, VULKAN=0) the file is rewritten, which makes every object out of date.
BUILD_CONFIG := $(BUILD)/config.txt
# test-build: what tier 1 needs (the .mk files add theirs); check-build: that and tier 2's.
test-build:
check-build: test-build
check-build-sanitize:

# Debian packages: BUILD_DEBS to build, CHECK_DEBS to run tiers 1 and 2. The .mk files add theirs.
BUILD_DEBS :=
CHECK_DEBS :=
# Test programs for the runner, in run order; the .mk files add theirs. SANITIZE_TESTS are
# named as in the plain build and run from the ASan + UBSan build.
CHECK_TESTS :=
SANITIZE_TESTS :=

include src/lib.mk
-include $(sort $(wildcard src/backends/*.mk))
-include $(sort $(wildcard tools/*.mk))
-include $(sort $(wildcard tests/*/*.mk))
-include $(sort $(wildcard kernel/*.mk))
-include $(sort $(wildcard packaging/*.mk))

BUILD_CONFIG_NOW := CC=$(CC) $(shell $(CC) -dumpfullversion -dumpversion 2>/dev/null) \
	CXX=$(CXX) NVCC=$(NVCC) CFLAGS=$(BASE_CFLAGS) $(CFLAGS) $(EXTRA_CFLAGS) \
	LDFLAGS=$(ALL_LDFLAGS) VULKAN=$(VULKAN)
ifneq ($(file <$(BUILD_CONFIG)),$(BUILD_CONFIG_NOW))
$(shell mkdir -p $(BUILD))
$(file >$(BUILD_CONFIG),$(BUILD_CONFIG_NOW))
endif

$(OBJ)/%.o: %.c $(BUILD_CONFIG)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(ISA_CFLAGS) -c -o $@ $<

deps:
	$(Q)tests/install-deps.sh $(sort $(BUILD_DEBS) $(CHECK_DEBS))

# Tier 1 twice (plain, then ASan + UBSan), then tier 2, under one runner and one summary line.
check: deps
	$(Q)$(MAKE) --no-print-directory all check-build
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/sanitize SANITIZE=1 check-build-sanitize
	$(Q)tests/run-tests.sh $(CHECK_TESTS) $(subst $(BUILD)/,$(BUILD)/sanitize/,$(SANITIZE_TESTS))

# Tier 1 from the plain build, installing nothing: no packages, no VM, no cross builds, no
# package builds (debian/rules and the RPM's %check run it inside a package build). A test that
# misses something skips, saying what.
# test_gdrdrv_build.sh builds the module with the kernel's own make under this make's variables,
# which a package build sets (CFLAGS=, KDIR=): make check and DKMS build the module instead.
NOT_TEST_TESTS = $(PKG_TEST) $(INSTALL_TEST) $(CROSS_TESTS) $(VM_TIERS) $(VM_TIERS_612) $(KBUILD_TESTS) \
	tests/unit/test_gdrdrv_build.sh
TEST_TESTS = $(filter-out $(NOT_TEST_TESTS),$(CHECK_TESTS))
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

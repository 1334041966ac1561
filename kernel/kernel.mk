# gdrdrv.ko from the top level. "make modules" builds $(GDRDRV_KO) against KDIR (default: the
# build tree of the kernel KVER names, as in GDRCopy's "make driver KVER=...", else of the
# running kernel, if installed); plain "make" does too where KDIR exists.
# NVIDIA_SRC_DIR, NVIDIA_FLAVOR (or NVIDIA_IS_OPENSOURCE) and NVIDIA_SYMVERS as in kernel/Makefile.
# For other parts: GDRDRV_KO is the module's path; "$(MAKE) modules KDIR=... GDRDRV_OUT=..." builds
# it for another kernel (e.g. the VM tier's) into another directory.

# KVER has a default in packaging/packages.mk (for make rpm): only the user's counts here.
KDIR_KVER := $(if $(filter command line environment,$(origin KVER)),$(KVER),$(shell uname -r))
KDIR ?= $(wildcard /lib/modules/$(KDIR_KVER)/build)
GDRDRV_OUT ?= $(BUILD)/kernel
GDRDRV_KO = $(GDRDRV_OUT)/gdrdrv.ko
NVIDIA_SRC_DIR ?=

# Debian: headers for the kernel flavour of this architecture (the tests build against them; plain
# "make" builds the module only where the running kernel has its headers); modinfo and insmod.
CHECK_DEBS += linux-headers-$(shell dpkg --print-architecture 2>/dev/null || echo amd64) kmod

# The kernel's build decides its own compiler and flags: keep this build's CC=, CFLAGS= and the
# like away from it, and pass on only what kbuild takes from a command line.
GDRDRV_KBUILD_VARS = KDIR=$(abspath $(KDIR)) OUT=$(abspath $(GDRDRV_OUT)) \
	NVIDIA_SRC_DIR=$(NVIDIA_SRC_DIR) \
	$(foreach v,NVIDIA_FLAVOR NVIDIA_IS_OPENSOURCE GDRDRV_FAULT_INJECT,$(if $($(v)),$(v)=$($(v)))) \
	$(if $(NVIDIA_SYMVERS),NVIDIA_SYMVERS=$(abspath $(NVIDIA_SYMVERS))) \
	$(foreach v,W C V LLVM ARCH CROSS_COMPILE,$(if $(filter command line,$(origin $(v))),$(v)=$($(v))))

.PHONY: modules modules-clean
modules modules-clean: MAKEOVERRIDES :=
modules:
	@test -n "$(KDIR)" || { echo "make modules: no kernel build tree for $(KDIR_KVER);" \
		"install its headers or give KDIR=<kernel build dir>" >&2; exit 1; }
	$(Q)$(MAKE) --no-print-directory -C kernel $(GDRDRV_KBUILD_VARS)

modules-clean:
	$(Q)$(MAKE) --no-print-directory -C kernel $(GDRDRV_KBUILD_VARS) clean

# Where there is no KDIR, the build's summary (the top Makefile) says why the module is not built.
ifneq ($(KDIR),)
all: modules
endif

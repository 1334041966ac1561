# Tier 2, the VM tier: nvp2p_sim.ko (tests/sim/nvp2p_sim) and gdrdrv.ko built against a
# distribution kernel's headers, the kernel-tier test programs (tests/vm/test_*.c), and an
# initramfs holding them, and gdrcopy_sanity with the simulated CUDA driver (tests/sim/cuda, in
# its nvp2p mode in the guest); run-vm.sh boots it under QEMU/TCG and reports one result per case.
# Where there are no headers or no kernel image the tier skips.
#
# Three kernels: the installed Debian one (6.1 on bookworm), bookworm-backports' 6.12 and the
# newest Debian builds (trixie-backports'; its modules are built in a trixie chroot), which
# tests/kernel/prepare.sh fetches into its cache (without network their runs skip with the reason).
# Each kernel gets both NVIDIA driver flavors: nvp2p_sim and gdrdrv are built twice, open and
# proprietary (see tests/sim/nvp2p_sim/nvp2p_sim.h), into one initramfs, and the tier boots once
# per flavor: $(VM_DIR)/<kernel>/vm-tier-open and vm-tier-proprietary (guest-init.sh's
# gdr_flavor). This make builds for one kernel, VM_KDIR (default: the installed one); each other
# kernel's build is another make of the same rules (vm-build-6.12, vm-build-newest).
#
# gdrdrv.ko comes from kernel/kernel.mk's "modules" target; it resolves its nvidia_p2p imports
# against kernel.mk's stub at build time and binds to nvp2p_sim's exports (same nv-p2p.h, same
# symbol versions) at load time.
#
# Three more are other architectures' (bookworm's 6.1 for arm64 and for ppc64el,
# vm-build-6.1-arm64 and vm-build-6.1-ppc64el, and bookworm-backports' 6.12 for arm64 with
# 16 KiB pages, vm-build-6.12-arm64-16k): the same rules, run by a make with
# CROSS_COMPILE= and a BUILD of its own (VM_ARCH=arm64 or ppc64le; VM_KARCH, kbuild's ARCH), its
# programs in $(VM_DIR)/bin-VM_ARCH, its libraries from the cross toolchain's VM_SYSROOT, with
# VM_BUSYBOX and VM_BOOT_MODULES (arm64's virtio console) from tests/kernel/cache.sh.

VM_DIR := $(BUILD)/vm
VM_FLAVORS := open proprietary
ifeq ($(VM_KDIR),)
VM_KVER := $(shell tests/vm/kernel-release.sh)
VM_KDIR := $(if $(VM_KVER),/lib/modules/$(VM_KVER)/build)
VM_KERNEL := $(if $(VM_KVER),/boot/vmlinuz-$(VM_KVER))
endif
# The kernel's series (6.1, 6.12) names its directory of outputs; the programs are shared.
VM_TAG := $(or $(shell echo '$(VM_KVER)' | cut -d. -f1,2),none)
VM_KDIR_OUT := $(VM_DIR)/$(VM_TAG)

# Kbuild runs with the kernel's own compiler (Debian's headers name it), not with CC= or any
# other variable of our command line, which MAKEFLAGS would hand down. VM_KROOT: the chroot
# whose kernel tree VM_KDIR names (the newest kernel's, tests/kernel/cache.sh), where kbuild
# then runs (tests/kernel/in-root.sh: this tree is there at its own path).
VM_IN_ROOT = $(if $(VM_KROOT),tests/kernel/in-root.sh $(VM_KROOT))
VM_KBUILD = env -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES -u MAKELEVEL $(VM_IN_ROOT) \
	$(MAKE) --no-print-directory -C $(VM_KDIR) $(if $(Q),,V=1) $(VM_KCROSS)
VM_KCROSS = $(if $(VM_KARCH),ARCH=$(VM_KARCH) CROSS_COMPILE=$(CROSS_COMPILE))

NVP2P_SIM_SRCS := tests/sim/nvp2p_sim/Kbuild $(sort $(wildcard tests/sim/nvp2p_sim/*.[ch]))
VM_SIM_KOS := $(foreach f,$(VM_FLAVORS),$(VM_KDIR_OUT)/nvp2p_sim-$(f)/nvp2p_sim.ko)

# Built from a copy, so the source tree stays clean and each BUILD= has its own objects.
$(VM_KDIR_OUT)/nvp2p_sim-%/nvp2p_sim.ko: $(NVP2P_SIM_SRCS) kernel/nvidia/nv-p2p.h \
		kernel/gdrdrv_process.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  KBUILD  $@")
	$(Q)cp $(NVP2P_SIM_SRCS) $(dir $@)
	$(Q)$(VM_KBUILD) M=$(abspath $(dir $@)) NV_P2P_INC=$(abspath kernel/nvidia) \
		GDRDRV_INC=$(abspath kernel) NVP2P_SIM_FLAVOR=$* W=1 \
		modules >$(dir $@)build.log 2>&1 || { cat $(dir $@)build.log; exit 1; }

# The programs that run inside the VM, and the runner's helper.
VM_BIN := $(VM_DIR)/bin$(if $(VM_ARCH),-$(VM_ARCH))
VM_TESTS := $(patsubst tests/vm/%.c,$(VM_BIN)/%,$(sort $(wildcard tests/vm/test_*.c)))
VMCTL := $(VM_BIN)/vmctl
VM_HELPER_OBJ := $(OBJ)/tests/vm/vmtest.o

$(OBJ)/tests/vm/%.o: ALL_CFLAGS += -Itests/sim/nvp2p_sim

$(VM_BIN)/test_%: $(OBJ)/tests/vm/test_%.o $(OBJ)/tests/vm/vmtest_main.o $(VM_HELPER_OBJ) \
		$(HARNESS_OBJS) $(LIB_SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LIB_DIR)/$(LIB_SONAME)

$(VMCTL): $(OBJ)/tests/vm/vmctl.o $(VM_HELPER_OBJ) $(HARNESS_OBJS) $(LIB_SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LIB_DIR)/$(LIB_SONAME)

VM_INITRAMFS := $(VM_KDIR_OUT)/initramfs.cpio
VM_TIERS := $(foreach f,$(VM_FLAVORS),$(VM_KDIR_OUT)/vm-tier-$(f))

VM_GDRDRV_KOS := $(foreach f,$(VM_FLAVORS),$(VM_KDIR_OUT)/gdrdrv-$(f)/gdrdrv.ko)
# And gdrdrv's fault-injection build (kernel/gdrdrv_fault.c), for tests/vm/test_faults.c: once
# per kernel, in the proprietary flavor, which loads next to either flavor's sim (the pairing
# cases), and whose unwinding is the open flavor's.
VM_FAULT_KO := $(VM_KDIR_OUT)/gdrdrv-fault-proprietary/gdrdrv.ko
# kernel.mk's target is phony: kbuild decides what is out of date. In a chroot, kernel/'s own
# Makefile, which is what kernel.mk runs (the top one wants more than the chroot has).
$(VM_KDIR_OUT)/gdrdrv-%/gdrdrv.ko: FORCE_VM_TIER
	$(Q)$(if $(VM_KROOT),$(VM_IN_ROOT) env -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES -u MAKELEVEL \
		$(MAKE) --no-print-directory -C kernel KDIR=$(VM_KDIR) OUT=$(abspath $(dir $@)), \
		$(MAKE) --no-print-directory modules KDIR=$(VM_KDIR) GDRDRV_OUT=$(abspath $(dir $@))) \
		NVIDIA_FLAVOR=$* $(VM_KCROSS)
$(VM_KDIR_OUT)/gdrdrv-fault-%/gdrdrv.ko: FORCE_VM_TIER
	$(Q)$(if $(VM_KROOT),$(VM_IN_ROOT) env -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES -u MAKELEVEL \
		$(MAKE) --no-print-directory -C kernel KDIR=$(VM_KDIR) OUT=$(abspath $(dir $@)), \
		$(MAKE) --no-print-directory modules KDIR=$(VM_KDIR) GDRDRV_OUT=$(abspath $(dir $@))) \
		NVIDIA_FLAVOR=$* GDRDRV_FAULT_INJECT=y $(VM_KCROSS)

ifneq ($(VM_SKIP_FROM),)
VM_RUN_ARGS = --skip-from $(VM_SKIP_FROM)
VM_BUILD :=
else ifneq ($(VM_KVER),)
VM_RUN_ARGS = --kernel $(VM_KERNEL) --initramfs $(abspath $(VM_INITRAMFS)) \
	--dir $(abspath $(VM_KDIR_OUT))/$* --flavor $* $(if $(VM_ARCH),--arch $(VM_ARCH))
VM_BUILD := $(VM_INITRAMFS)
else
VM_RUN_ARGS = --skip "no kernel headers with a matching /boot/vmlinuz (apt-get install \
linux-headers-amd64 linux-image-amd64)"
VM_BUILD :=
endif

# gdrcopy_sanity finds libgdrapi in /gdr/lib and the simulated libcuda.so.1 in /gdr/simcuda
# through LD_LIBRARY_PATH (its RUNPATH is $$ORIGIN/../lib).
VM_SANITY := $(TOOLS_BIN)/gdrcopy_sanity

$(VM_INITRAMFS): tests/vm/mkinitramfs.sh tests/vm/guest-init.sh $(VM_TESTS) $(VMCTL) \
		$(LIB_SHARED) $(VM_SIM_KOS) $(VM_GDRDRV_KOS) $(VM_SANITY) $(TOOLS_BIN)/gdrcopy_info \
		$(VM_FAULT_KO) $(SIM_CUDA_LIB) insmod.sh $(VM_BOOT_MODULES) $(VM_BUSYBOX)
	@$(if $(Q),echo "  CPIO    $@")
	$(Q)GDR_VM_SYSROOT=$(VM_SYSROOT) GDR_VM_BUSYBOX=$(VM_BUSYBOX) \
	tests/vm/mkinitramfs.sh $@ tests/vm/guest-init.sh $(LIB_DIR) \
		$(VM_BOOT_SPECS) \
		$(LIB_DIR)/$(LIB_SONAME)=/gdr/lib/$(LIB_SONAME) \
		$(VMCTL)=/gdr/bin/vmctl insmod.sh=/gdr/bin/insmod.sh \
		$(VM_SANITY)=/gdr/bin/gdrcopy_sanity \
		$(TOOLS_BIN)/gdrcopy_info=/gdr/bin/gdrcopy_info \
		$(SIM_CUDA_LIB)=/gdr/simcuda/libcuda.so.1 \
		$(foreach t,$(VM_TESTS),$(t)=/gdr/tests/$(notdir $(t))) \
		$(foreach f,$(VM_FLAVORS),$(VM_KDIR_OUT)/nvp2p_sim-$(f)/nvp2p_sim.ko=/gdr/modules/$(f)/nvp2p_sim.ko) \
		$(foreach k,$(VM_GDRDRV_KOS),$(k)=/gdr/modules/$(patsubst gdrdrv-%,%,$(notdir $(patsubst %/,%,$(dir $(k)))))/gdrdrv.ko) \
		$(VM_FAULT_KO)=/gdr/modules/gdrdrv-fault.ko

# The guest's boot modules, numbered in their load order (guest-init.sh loads /gdr/boot/*.ko).
VM_BOOT_SPECS = $(foreach i,$(shell seq $(words $(VM_BOOT_MODULES))),\
	$(word $(i),$(VM_BOOT_MODULES))=/gdr/boot/$(i)-$(notdir $(word $(i),$(VM_BOOT_MODULES))))

# run-tests.sh gives a test 300 s unless TEST.timeout says more: ppc64el's run may take up to
# run-vm.sh's 420 s for it.
VM_TEST_TIMEOUT := $(if $(filter ppc64le,$(VM_ARCH)),450)

# Rewritten on every make, so it always names this configuration's kernel.
$(VM_KDIR_OUT)/vm-tier-%: FORCE_VM_TIER
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\n# Written by tests/vm/vm.mk: the VM tier for this build.\nexec %s %s "$$@"\n' \
		'$(abspath tests/vm/run-vm.sh)' '$(VM_RUN_ARGS)' >$@.tmp
	@chmod +x $@.tmp
	@mv $@.tmp $@
	@$(if $(VM_TEST_TIMEOUT),echo $(VM_TEST_TIMEOUT) >$@.timeout,rm -f $@.timeout)

# The runner itself, against a fake QEMU (tier 1: it boots nothing).
VM_RUNNER_TEST := $(VM_DIR)/test_run_vm
$(VM_RUNNER_TEST): tests/vm/test_run_vm.sh
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@SRC@|$(CURDIR)|' $< >$@.tmp && chmod +x $@.tmp && mv $@.tmp $@
test-build: $(VM_RUNNER_TEST)
TEST_TESTS += $(VM_RUNNER_TEST)

.PHONY: FORCE_VM_TIER vm-build vm-build-6.12 vm-build-newest vm-build-6.1-arm64 \
	vm-build-6.1-ppc64el vm-build-6.12-arm64-16k
FORCE_VM_TIER:
vm-build: $(VM_BUILD) $(VM_TIERS)
check-build: vm-build
CHECK_TESTS += $(VM_TIERS)

# The other kernels, from the first make: for each, a make of the same rules for the kernel
# that tests/kernel/prepare.sh fetched (6.12; the newest, in its chroot), or of tiers that
# report why it could not be had. They share the programs, so those are built first, by this
# make.
define VM_OTHER_KERNEL
vm-build: vm-build-$(1)
vm-build-$(1): kbuild-prepare $(VM_TESTS) $(VMCTL) $(LIB_SHARED) $(VM_SANITY) \
		$(TOOLS_BIN)/gdrcopy_info $(SIM_CUDA_LIB)
	$(Q)env=$(abspath $(KBUILD_DIR))/kernel-$(1).env; \
	if grep -qE '^(SKIP|FAIL): ' $$$$env; then \
		$(MAKE) --no-print-directory VM_SECOND=1 VM_TAG=$(1) VM_SKIP_FROM=$$$$env vm-build; \
	else \
		root=; eval "$$$$(cat $$$$env)" && \
		$(MAKE) --no-print-directory VM_SECOND=1 VM_TAG=$(1) VM_KDIR="$$$$kdir" \
			VM_KERNEL="$$$$vmlinuz" VM_KVER="$$$$release" VM_KROOT="$$$$root" vm-build; \
	fi
CHECK_TESTS += $(foreach f,$(VM_FLAVORS),$(VM_DIR)/$(1)/vm-tier-$(f))
endef

# Another architecture's kernel (6.1-arm64, 6.1-ppc64el, 6.12-arm64-16k; VM_ARCH arm64,
# ppc64le): a make that cross-builds everything again, in a BUILD of its architecture, with the
# cross compiler whatever CC this make was given. Its items are prepare.sh's kernel-TAG-vm.
# Kernels of one architecture share the programs (a binary of Debian's arm64 toolchain runs with
# 4 and 16 KiB pages alike), so the second of them waits for the first: $(3).
# VM_CROSS=0 leaves them out (CI's clang build: with gcc as their compiler whatever CC is, they
# would only be built twice).
define VM_CROSS_KERNEL
vm-build: vm-build-$(1)
vm-build-$(1): kbuild-prepare $(3)
	$(Q)env=$(abspath $(KBUILD_DIR))/kernel-$(1)-vm.env; \
	if grep -qE '^(SKIP|FAIL): ' $$$$env; then \
		$(MAKE) --no-print-directory VM_SECOND=1 VM_TAG=$(1) VM_SKIP_FROM=$$$$env vm-build; \
	else \
		eval "$$$$(cat $$$$env)" && \
		$(MAKE) --no-print-directory VM_SECOND=1 VM_TAG=$(1) BUILD=$(BUILD)/cross/$(2)-vm \
			VM_DIR=$(abspath $(VM_DIR)) CROSS_COMPILE="$$$$cross" CC="$$$${cross}gcc" \
			CXX="$$$${cross}g++" VM_ARCH=$(2) \
			VM_KARCH="$$$$arch" VM_KDIR="$$$$kdir" VM_KERNEL="$$$$vmlinuz" \
			VM_KVER="$$$$release" VM_BOOT_MODULES="$$$$boot_modules" \
			VM_BUSYBOX="$$$$busybox" VM_SYSROOT=/usr/$$$${cross%-} vm-build; \
	fi
CHECK_TESTS += $(foreach f,$(VM_FLAVORS),$(VM_DIR)/$(1)/vm-tier-$(f))
endef

ifeq ($(VM_SECOND),)
$(eval $(call VM_OTHER_KERNEL,6.12))
$(eval $(call VM_OTHER_KERNEL,newest))
ifneq ($(VM_CROSS),0)
$(eval $(call VM_CROSS_KERNEL,6.1-arm64,arm64))
$(eval $(call VM_CROSS_KERNEL,6.1-ppc64el,ppc64le))
$(eval $(call VM_CROSS_KERNEL,6.12-arm64-16k,arm64,vm-build-6.1-arm64))
endif
CHECK_DEBS += qemu-system-arm qemu-system-ppc
endif
CHECK_DEBS += qemu-system-x86 busybox-static linux-image-amd64 linux-headers-amd64 cpio kmod

# Keep the objects of the chained test_% rule, or make deletes them after each link.
.SECONDARY: $(patsubst $(VM_BIN)/%,$(OBJ)/tests/vm/%.o,$(VM_TESTS)) \
	$(OBJ)/tests/vm/vmtest_main.o

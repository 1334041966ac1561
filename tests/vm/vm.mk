# Tier 2, the VM tier: nvp2p_sim.ko (tests/sim/nvp2p_sim) and gdrdrv.ko built against the
# distribution kernel's headers, the kernel-tier test programs (tests/vm/test_*.c), and an
# initramfs holding them, and gdrcopy_sanity with the simulated CUDA driver (tests/sim/cuda, in
# its nvp2p mode in the guest); $(VM_TIER) boots it under QEMU/TCG (tests/vm/run-vm.sh) and reports
# one result per case. Where there are no headers or no kernel image the tier skips.
#
# gdrdrv.ko comes from kernel/kernel.mk's "modules" target, built for this kernel into
# $(VM_DIR)/gdrdrv; it resolves its nvidia_p2p imports against kernel.mk's stub at build time
# and binds to nvp2p_sim's exports (same nv-p2p.h, same symbol versions) at load time. Without
# kernel/kernel.mk the tier runs the sim's cases and skips gdrdrv's.

VM_DIR := $(BUILD)/vm
VM_KVER := $(shell tests/vm/kernel-release.sh)
VM_KDIR := $(if $(VM_KVER),/lib/modules/$(VM_KVER)/build)
VM_KERNEL := $(if $(VM_KVER),/boot/vmlinuz-$(VM_KVER))

# Kbuild runs with the kernel's own compiler (Debian's headers name it), not with CC= or any
# other variable of our command line, which MAKEFLAGS would hand down.
VM_KBUILD = env -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES -u MAKELEVEL \
	$(MAKE) --no-print-directory -C $(VM_KDIR) $(if $(Q),,V=1)

NVP2P_SIM_DIR := $(VM_DIR)/nvp2p_sim
NVP2P_SIM_KO := $(NVP2P_SIM_DIR)/nvp2p_sim.ko
NVP2P_SIM_SRCS := tests/sim/nvp2p_sim/Kbuild $(sort $(wildcard tests/sim/nvp2p_sim/*.[ch]))

# Built from a copy, so the source tree stays clean and each BUILD= has its own objects.
$(NVP2P_SIM_KO): $(NVP2P_SIM_SRCS) kernel/nvidia/nv-p2p.h
	@mkdir -p $(NVP2P_SIM_DIR)
	@$(if $(Q),echo "  KBUILD  $@")
	$(Q)cp $(NVP2P_SIM_SRCS) $(NVP2P_SIM_DIR)/
	$(Q)$(VM_KBUILD) M=$(abspath $(NVP2P_SIM_DIR)) NV_P2P_INC=$(abspath kernel/nvidia) W=1 \
		modules >$(NVP2P_SIM_DIR)/build.log 2>&1 || { cat $(NVP2P_SIM_DIR)/build.log; exit 1; }

# The programs that run inside the VM, and the runner's helper.
VM_TESTS := $(patsubst tests/vm/%.c,$(VM_DIR)/bin/%,$(sort $(wildcard tests/vm/test_*.c)))
VMCTL := $(VM_DIR)/bin/vmctl
VM_HELPER_OBJ := $(OBJ)/tests/vm/vmtest.o

$(OBJ)/tests/vm/%.o: ALL_CFLAGS += -Itests/sim/nvp2p_sim

$(VM_DIR)/bin/test_%: $(OBJ)/tests/vm/test_%.o $(OBJ)/tests/vm/vmtest_main.o $(VM_HELPER_OBJ) \
		$(LIB_SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LIB_DIR)/$(LIB_SONAME)

$(VMCTL): $(OBJ)/tests/vm/vmctl.o $(VM_HELPER_OBJ) $(LIB_SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LIB_DIR)/$(LIB_SONAME)

VM_INITRAMFS := $(VM_DIR)/initramfs.cpio
VM_TIER := $(VM_DIR)/vm-tier

ifneq ($(wildcard kernel/kernel.mk),)
VM_GDRDRV_KO := $(VM_DIR)/gdrdrv/gdrdrv.ko
# kernel.mk's target is phony: kbuild decides what is out of date.
$(VM_GDRDRV_KO): FORCE_VM_TIER
	$(Q)$(MAKE) --no-print-directory modules KDIR=$(VM_KDIR) GDRDRV_OUT=$(abspath $(dir $@))
endif

ifneq ($(VM_KVER),)
VM_RUN_ARGS := --kernel $(VM_KERNEL) --initramfs $(abspath $(VM_INITRAMFS)) \
	--dir $(abspath $(VM_DIR))
VM_BUILD := $(VM_INITRAMFS)
else
VM_RUN_ARGS := --skip "no kernel headers with a matching /boot/vmlinuz (apt-get install \
linux-headers-amd64 linux-image-amd64)"
VM_BUILD :=
endif

# gdrcopy_sanity finds libgdrapi in /gdr/lib and the simulated libcuda.so.1 in /gdr/simcuda
# through LD_LIBRARY_PATH (its RUNPATH is $$ORIGIN/../lib).
VM_SANITY := $(TOOLS_BIN)/gdrcopy_sanity

$(VM_INITRAMFS): tests/vm/mkinitramfs.sh tests/vm/guest-init.sh $(VM_TESTS) $(VMCTL) \
		$(LIB_SHARED) $(NVP2P_SIM_KO) $(VM_GDRDRV_KO) $(VM_SANITY) $(SIM_CUDA_LIB) insmod.sh
	@$(if $(Q),echo "  CPIO    $@")
	$(Q)tests/vm/mkinitramfs.sh $@ tests/vm/guest-init.sh $(LIB_DIR) \
		$(LIB_DIR)/$(LIB_SONAME)=/gdr/lib/$(LIB_SONAME) \
		$(VMCTL)=/gdr/bin/vmctl insmod.sh=/gdr/bin/insmod.sh \
		$(VM_SANITY)=/gdr/bin/gdrcopy_sanity \
		$(SIM_CUDA_LIB)=/gdr/simcuda/libcuda.so.1 \
		$(foreach t,$(VM_TESTS),$(t)=/gdr/tests/$(notdir $(t))) \
		$(NVP2P_SIM_KO)=/gdr/modules/nvp2p_sim.ko \
		$(if $(VM_GDRDRV_KO),$(VM_GDRDRV_KO)=/gdr/modules/gdrdrv.ko)

# Rewritten on every make, so it always names this configuration's kernel.
$(VM_TIER): FORCE_VM_TIER
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\n# Written by tests/vm/vm.mk: the VM tier for this build.\nexec %s %s "$$@"\n' \
		'$(abspath tests/vm/run-vm.sh)' '$(VM_RUN_ARGS)' >$@.tmp
	@chmod +x $@.tmp
	@mv $@.tmp $@

.PHONY: FORCE_VM_TIER vm-build
FORCE_VM_TIER:
vm-build: $(VM_BUILD) $(VM_TIER)
check-build: vm-build

CHECK_TESTS += $(VM_TIER)
CHECK_DEBS += qemu-system-x86 busybox-static linux-image-amd64 linux-headers-amd64 cpio kmod

# Keep the objects of the chained test_% rule, or make deletes them after each link.
.SECONDARY: $(patsubst $(VM_DIR)/bin/%,$(OBJ)/tests/vm/%.o,$(VM_TESTS)) \
	$(OBJ)/tests/vm/vmtest_main.o

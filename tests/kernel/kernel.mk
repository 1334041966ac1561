# gdrdrv's builds (tests/kernel/README.md), part of make check, not of make test (a package
# build sets CFLAGS=, KDIR= and the like, which are not the kernel's to take; DKMS builds the
# module there): test_gdrdrv_build.sh against the installed kernel; Debian's 5.10 and 6.12
# kernels in both NVIDIA driver flavors (test_kernels.sh); NVIDIA's real driver sources from
# Debian, with modpost against the nvidia.ko built from them (test_nvidia.sh). check-build
# fetches and builds what the last two need into a cache outside the tree, once per machine
# (prepare.sh, cache.sh); without network those cases skip with the reason.
KERNEL_TESTS := $(KBUILD_DIR)/test-gdrdrv-build $(KBUILD_DIR)/test-kernels $(KBUILD_DIR)/test-nvidia

.PHONY: kbuild-prepare FORCE_KBUILD
FORCE_KBUILD:
kbuild-prepare:
	$(Q)tests/kernel/prepare.sh $(KBUILD_DIR)

# Rewritten on every make: each runs its script on this build's prepared items. run-tests.sh's
# 300 s are too few for test-kernels' ten builds (3 min 29 s alone) and test-nvidia's seven
# beside other tests on two busy CPUs: both were killed there once; they get 900 s.
KERNEL_TEST_TIMEOUT := 900
$(KBUILD_DIR)/test-%: FORCE_KBUILD
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\n# Written by tests/kernel/kernel.mk.\nexec %s %s\n' \
		'$(abspath tests/kernel/test_$(subst -,_,$*).sh)' '$(abspath $(KBUILD_DIR))' >$@.tmp
	@chmod +x $@.tmp
	@mv $@.tmp $@
	@echo $(KERNEL_TEST_TIMEOUT) >$@.timeout

check-build: kbuild-prepare $(KERNEL_TESTS)
CHECK_TESTS += $(KERNEL_TESTS)
# pahole: 6.12's headers carry vmlinux, so modules get BTF; xz-utils: NVIDIA's sources are a
# .tar.xz; binutils: nm and join for the symbol checks; sparse: the builds' checker;
# debootstrap: the newest kernel's trixie chroot.
CHECK_DEBS += dwarves xz-utils binutils coreutils sparse kmod debian-archive-keyring debootstrap

# gdrdrv's builds beyond the installed kernel (tests/kbuild/README.md): Debian's 5.10 and 6.12
# kernels in both NVIDIA driver flavors (test_kernels.sh), and NVIDIA's real driver sources from
# Debian, with modpost against the nvidia.ko built from them (test_nvidia.sh). check-build
# fetches and builds what they need into a cache outside the tree, once per machine
# (prepare.sh, cache.sh); without network those cases skip with the reason.
KBUILD_DIR := $(BUILD)/kbuild
KBUILD_TESTS := $(KBUILD_DIR)/test-kernels $(KBUILD_DIR)/test-nvidia

.PHONY: kbuild-prepare FORCE_KBUILD
FORCE_KBUILD:
kbuild-prepare:
	$(Q)tests/kbuild/prepare.sh $(KBUILD_DIR)

# Rewritten on every make: each runs its script on this build's prepared items.
$(KBUILD_DIR)/test-%: FORCE_KBUILD
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\n# Written by tests/kbuild/kbuild.mk.\nexec %s %s\n' \
		'$(abspath tests/kbuild/test_$*.sh)' '$(abspath $(KBUILD_DIR))' >$@.tmp
	@chmod +x $@.tmp
	@mv $@.tmp $@

check-build: kbuild-prepare $(KBUILD_TESTS)
CHECK_TESTS += $(KBUILD_TESTS)
# pahole: 6.12's headers carry vmlinux, so modules get BTF; xz-utils: NVIDIA's sources are a
# .tar.xz; binutils: nm and join for the symbol checks.
CHECK_DEBS += dwarves xz-utils binutils coreutils sparse kmod debian-archive-keyring

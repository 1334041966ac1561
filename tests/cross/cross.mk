# Tier 1 on arm64 and ppc64le, the one mechanism for other architectures: each is a test program
# of make check (tests/cross/test_cross.sh) that cross-builds the library, the unit tests and the
# C tools with CROSS_COMPILE= (CC and CXX follow it), runs the unit tests and gdrcopy_info under
# qemu-user, and cross-builds gdrdrv.ko against Debian's headers.
CROSS_ARCHES := arm64 ppc64le
CROSS_TESTS := $(CROSS_ARCHES:%=$(BUILD)/tests/cross/%)

$(CROSS_TESTS): $(BUILD)/tests/cross/%: tests/cross/test_cross.sh
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexec %s %s %s %s %s\n' $(abspath $<) $(CURDIR) $(abspath $(BUILD)) \
		$* $(abspath $(CUDA)) >$@ && chmod +x $@

check-build: $(CROSS_TESTS)
CHECK_TESTS += $(CROSS_TESTS)
CHECK_DEBS += gcc-aarch64-linux-gnu g++-aarch64-linux-gnu gcc-powerpc64le-linux-gnu \
	g++-powerpc64le-linux-gnu qemu-user-static

# For test_cross.sh, run in the cross build: the tier-1 programs (the valgrind wrappers run
# valgrind, which has no place under qemu-user); the C tools (which load libcuda at run time);
# and the simulated libcuda built for that architecture (tests/sim/cuda).
# The tools' tests are not among them: they run the tools against the simulated GPU, which needs
# a Vulkan driver (lavapipe) and its loader for that architecture, and CUDA's stub library, which
# is x86 only (docs/architecture.md, "Build and tests").

.PHONY: cross-unit-tests cross-tools cross-sim-cuda
cross-unit-tests:
	@echo $(filter-out $(BUILD)/tests/unit/valgrind/%,$(filter $(BUILD)/tests/unit/%,$(TEST_TESTS)))
cross-tools:
	@echo $(addprefix $(TOOLS_BIN)/,gdrcopy_info $(TOOLS_C))
cross-sim-cuda:
	@echo $(SIM_CUDA_LIB)

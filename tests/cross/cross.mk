# Tier 1 on arm64 and ppc64le: each is a test program of make check (tests/cross/test_cross.sh)
# that cross-builds the library, the unit tests and the tools' CPU parts with CROSS_COMPILE=, runs
# the unit tests under qemu-user, and cross-builds gdrdrv.ko against Debian's headers for it.
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
# valgrind, which has no place under qemu-user), and the objects of the tools' C sources, which
# are compiled but not linked (they link the x86 CUDA stub library).
.PHONY: cross-unit-tests cross-tool-objects
cross-unit-tests:
	@echo $(filter-out $(BUILD)/tests/unit/valgrind/%,$(filter $(BUILD)/tests/unit/%,$(CHECK_TESTS)))
cross-tool-objects:
	@echo $(patsubst %.c,$(OBJ)/%.o,$(sort $(wildcard tools/*.c)))

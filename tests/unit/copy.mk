# Tier 1 tests of the copy routines and CPU detection. They link the library's copy objects
# directly, so they can call its internal functions (copy_impl.h, cpu.h), and need nothing
# else of the library (which keeps the cross builds below independent of the backends).
COPY_TESTS := test_copy test_copy_select test_cpu
COPY_TEST_BINS := $(COPY_TESTS:%=$(BUILD)/tests/unit/%)
COPY_OBJS := $(OBJ)/src/copy.o $(OBJ)/src/cpu.o $(OBJ)/src/log.o \
	$(filter $(OBJ)/src/arch/%,$(LIB_OBJS))

$(COPY_TEST_BINS): $(BUILD)/tests/unit/%: $(OBJ)/tests/unit/%.o $(COPY_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^

.PHONY: check-build-copy check-cross-copy
check-build-copy: $(COPY_TEST_BINS)
test-build: check-build-copy
check-build-sanitize: check-build-copy
CHECK_TESTS += $(COPY_TEST_BINS)
SANITIZE_TESTS += $(COPY_TEST_BINS)

# make check-cross-copy: the same tests built for arm64 and ppc64le and run under qemu-user
# (not part of make check). Each runs through a wrapper script, since without binfmt_misc the
# runner cannot execute a foreign binary itself.
CROSS_COPY_DEBS := gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc-powerpc64le-linux-gnu \
	libc6-dev-ppc64el-cross qemu-user-static
CROSS_COPY_ARCHES := aarch64 powerpc64le
cross_copy_qemu = qemu-$(if $(filter powerpc64le,$(1)),ppc64le,$(1))-static
cross_copy_dir = $(BUILD)/cross-$(1)/tests/unit

check-cross-copy:
	$(Q)tests/install-deps.sh $(CROSS_COPY_DEBS)
	$(Q)set -e; $(foreach a,$(CROSS_COPY_ARCHES), \
		$(MAKE) --no-print-directory CC=$(a)-linux-gnu-gcc AR=$(a)-linux-gnu-ar \
			BUILD=$(BUILD)/cross-$(a) check-build-copy; \
		for t in $(COPY_TESTS); do \
			printf '#!/bin/sh\nexec %s -L /usr/%s "$$(dirname "$$0")/%s" "$$@"\n' \
				$(call cross_copy_qemu,$(a)) $(a)-linux-gnu $$t \
				>$(call cross_copy_dir,$(a))/$$t.qemu; \
			chmod +x $(call cross_copy_dir,$(a))/$$t.qemu; \
		done;)
	$(Q)tests/run-tests.sh $(foreach a,$(CROSS_COPY_ARCHES), \
		$(COPY_TESTS:%=$(call cross_copy_dir,$(a))/%.qemu))

# Tier 1 tests of the copy routines and CPU detection. They link libgdrapi.a, so they can call
# the library's internal functions (copy_impl.h, cpu.h).
COPY_TESTS := test_copy test_copy_select test_cpu
COPY_TEST_BINS := $(COPY_TESTS:%=$(BUILD)/tests/unit/%)

$(COPY_TEST_BINS): $(BUILD)/tests/unit/%: $(OBJ)/tests/unit/%.o $(LIB_STATIC)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIB_STATIC) -ldl

.PHONY: check-build-copy
check-build-copy: $(COPY_TEST_BINS)
check-build: check-build-copy
check-build-sanitize: check-build-copy
CHECK_TESTS += $(COPY_TEST_BINS)
SANITIZE_TESTS += $(COPY_TEST_BINS)

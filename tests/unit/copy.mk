# Tier 1 tests of the copy routines and CPU detection. They link the library's copy objects
# directly, so they can call its internal functions (copy_impl.h, cpu.h), and need nothing
# else of the library. tests/cross runs them on arm64 and ppc64le too.
COPY_TESTS := test_copy test_copy_select test_cpu test_copy_lines
COPY_TEST_BINS := $(COPY_TESTS:%=$(BUILD)/tests/unit/%)
COPY_OBJS := $(OBJ)/src/copy.o $(OBJ)/src/cpu.o $(OBJ)/src/log.o \
	$(filter $(OBJ)/src/arch/%,$(LIB_OBJS))

$(BUILD)/tests/unit/test_copy_select: $(OBJ)/tests/unit/copy_select_tables.o
$(COPY_TEST_BINS): $(BUILD)/tests/unit/%: $(OBJ)/tests/unit/%.o $(COPY_OBJS) $(HARNESS_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^

.PHONY: check-build-copy
check-build-copy: $(COPY_TEST_BINS)
test-build: check-build-copy
check-build-sanitize: check-build-copy
TEST_TESTS += $(COPY_TEST_BINS)
SANITIZE_TESTS += $(COPY_TEST_BINS)

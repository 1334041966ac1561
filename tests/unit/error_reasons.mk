# gdr_ext_take_errors through the shipped shared library, as bindings use it.
ERROR_REASONS_TEST := $(BUILD)/tests/unit/test_error_reasons

$(ERROR_REASONS_TEST): $(OBJ)/tests/unit/test_error_reasons.o $(LIB_SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< -L$(LIB_DIR) -lgdrapi -Wl,-rpath,$(abspath $(LIB_DIR))

test-build: $(ERROR_REASONS_TEST)
CHECK_TESTS += $(ERROR_REASONS_TEST)

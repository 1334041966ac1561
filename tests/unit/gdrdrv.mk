# Tier 1 tests of the gdrdrv ABI and backend, which need no module (the module's builds are
# tests/kernel's).
GDRDRV_TEST_DIR = $(BUILD)/tests/unit
GDRDRV_UNIT_TESTS = $(GDRDRV_TEST_DIR)/test_gdrdrv_abi $(GDRDRV_TEST_DIR)/test_gdrdrv_open \
	$(GDRDRV_TEST_DIR)/test_gdrdrv_backend $(GDRDRV_TEST_DIR)/test_nvp2p_header

TEST_TESTS += $(GDRDRV_UNIT_TESTS)
SANITIZE_TESTS += $(GDRDRV_TEST_DIR)/test_gdrdrv_open $(GDRDRV_TEST_DIR)/test_gdrdrv_backend
test-build: $(GDRDRV_UNIT_TESTS)
check-build-sanitize: $(GDRDRV_TEST_DIR)/test_gdrdrv_open $(GDRDRV_TEST_DIR)/test_gdrdrv_backend

$(GDRDRV_TEST_DIR)/test_gdrdrv_abi: $(OBJ)/tests/unit/test_gdrdrv_abi.o $(HARNESS_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^

# Our nv-p2p.h against NVIDIA's names (the kernel header, compiled in user space).
$(OBJ)/tests/unit/test_nvp2p_header.o: ALL_CFLAGS += -Ikernel/nvidia

$(GDRDRV_TEST_DIR)/test_nvp2p_header: $(OBJ)/tests/unit/test_nvp2p_header.o $(HARNESS_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^

$(GDRDRV_TEST_DIR)/test_gdrdrv_open: $(OBJ)/tests/unit/test_gdrdrv_open.o $(HARNESS_OBJS) \
		$(LIB_SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LIB_SHARED) -Wl,-rpath,$(abspath $(LIB_DIR))

# It defines libc's functions itself, in front of libc's, to play the driver and fail calls.
$(GDRDRV_TEST_DIR)/test_gdrdrv_backend: $(OBJ)/tests/unit/test_gdrdrv_backend.o \
		$(FAILING_CALLS_OBJS) $(HARNESS_OBJS) $(LIB_SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LIB_SHARED) \
		-Wl,-rpath,$(abspath $(LIB_DIR)) -ldl

# Tier 1: each call the library makes into libc or a driver failing in turn (failing_calls.h),
# on the dmabuf and vulkan backends over the simulated CUDA driver: its calls into CUDA linked
# (the program's own definitions of those functions come before the simulator's in its table
# of entry points), its Vulkan calls failed by the hostile Vulkan loader, which it loads. The
# gdrdrv backend's loop is a case of test_gdrdrv_backend, over its fake driver.

FAILING_CALLS_TEST := $(BUILD)/tests/unit/test_failing_calls

$(OBJ)/tests/unit/test_failing_calls.o: ALL_CFLAGS += -Itests/sim/cuda -Itests/sim/vulkan_hostile

$(FAILING_CALLS_TEST): $(OBJ)/tests/unit/test_failing_calls.o $(FAILING_CALLS_OBJS) \
		$(HARNESS_OBJS) $(CUDA_VMM_OBJ) $(SIM_CUDA_LIB) $(SIM_VK_HOSTILE_LIB) $(LIB_SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -L$(SIM_CUDA_DIR) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) \
		-Wl,-rpath,'$$ORIGIN/../../sim/cuda' \
		-Wl,-rpath,'$$ORIGIN/../../lib' -lgdrapi -lcuda -ldl

test-build: $(FAILING_CALLS_TEST)
check-build-sanitize: $(FAILING_CALLS_TEST)
TEST_TESTS += $(FAILING_CALLS_TEST)
SANITIZE_TESTS += $(FAILING_CALLS_TEST)

# Tier 1: each call the library makes into libc or the CUDA driver failing in turn
# (test_failing_calls.c), on the dmabuf and vulkan backends over the simulated CUDA driver,
# linked: the program's own definitions of those functions come before libc's, and before the
# simulator's in its table of entry points.

FAILING_CALLS_TEST := $(BUILD)/tests/unit/test_failing_calls

$(OBJ)/tests/unit/test_failing_calls.o: ALL_CFLAGS += -Itests/sim/cuda

$(FAILING_CALLS_TEST): $(OBJ)/tests/unit/test_failing_calls.o $(HARNESS_OBJS) $(CUDA_VMM_OBJ) \
		$(SIM_CUDA_LIB) $(LIB_SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -L$(SIM_CUDA_DIR) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) \
		-Wl,-rpath,'$$ORIGIN/../../sim/cuda' \
		-Wl,-rpath,'$$ORIGIN/../../lib' -lgdrapi -lcuda -ldl

test-build: $(FAILING_CALLS_TEST)
check-build-sanitize: $(FAILING_CALLS_TEST)
TEST_TESTS += $(FAILING_CALLS_TEST)
SANITIZE_TESTS += $(FAILING_CALLS_TEST)

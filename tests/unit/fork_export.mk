# Tier 1: fork() during each backend's CUDA export (test_fork_export.c), on the simulated CUDA
# driver, linked, whose export hook stalls the export; lavapipe for the vulkan backend.

FORK_EXPORT_TEST := $(BUILD)/tests/unit/test_fork_export

$(OBJ)/tests/unit/test_fork_export.o: ALL_CFLAGS += -Itests/sim/cuda

$(FORK_EXPORT_TEST): $(OBJ)/tests/unit/test_fork_export.o $(HARNESS_OBJS) $(FORK_CHECK_OBJ) \
		$(CUDA_VMM_OBJ) $(SIM_CUDA_LIB) $(LIB_SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -L$(SIM_CUDA_DIR) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) \
		-Wl,-rpath,'$$ORIGIN/../../sim/cuda' \
		-Wl,-rpath,'$$ORIGIN/../../lib' -lgdrapi -lcuda -ldl

test-build: $(FORK_EXPORT_TEST)
check-build-sanitize: $(FORK_EXPORT_TEST)
TEST_TESTS += $(FORK_EXPORT_TEST)
SANITIZE_TESTS += $(FORK_EXPORT_TEST)

# Tier 1: the dmabuf backend in the shipped library against the simulated CUDA driver
# (tests/sim/cuda.mk), which the tests put on LD_LIBRARY_PATH themselves; they skip when it is
# not built. The tests call CUDA through src/cuda.c, as the library does, and testcuda.c.

DMABUF_TEST_DIR := $(BUILD)/tests/unit
DMABUF_TESTS := $(DMABUF_TEST_DIR)/test_dmabuf_open $(DMABUF_TEST_DIR)/test_dmabuf
DMABUF_TEST_OBJS := $(OBJ)/tests/unit/testcuda.o $(OBJ)/src/cuda.o $(OBJ)/src/log.o

$(OBJ)/tests/unit/test_dmabuf.o $(OBJ)/tests/unit/test_dmabuf_open.o: \
	ALL_CFLAGS += -Itests/sim/cuda -DSIM_CUDA_DIR='"$(abspath $(SIM_CUDA_DIR))"'

# The fork case's checks, shared with the vulkan backend's tests.
$(DMABUF_TEST_DIR)/test_dmabuf: $(OBJ)/tests/unit/fork_check.o
$(DMABUF_TESTS): $(DMABUF_TEST_DIR)/%: $(OBJ)/tests/unit/%.o $(DMABUF_TEST_OBJS) $(LIB_SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) -L$(LIB_DIR) -lgdrapi \
		-Wl,-rpath,$(abspath $(LIB_DIR)) -ldl

test-build: $(DMABUF_TESTS)
check-build-sanitize: $(DMABUF_TESTS)
CHECK_TESTS += $(DMABUF_TESTS)
SANITIZE_TESTS += $(DMABUF_TESTS)

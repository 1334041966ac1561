# Tier 1: the dmabuf backend in the shipped library against the simulated CUDA driver
# (tests/sim/cuda.mk), which the tests put on LD_LIBRARY_PATH themselves; they skip when it is
# not built. The tests call CUDA through src/cuda.c, as the library does, and testcuda.c.
# test_dmabuf's cases are one file per concept (dmabuf_cases_*.c).

DMABUF_TEST_DIR := $(BUILD)/tests/unit
DMABUF_TESTS := $(DMABUF_TEST_DIR)/test_dmabuf_open $(DMABUF_TEST_DIR)/test_dmabuf
DMABUF_CASES_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(sort $(wildcard tests/unit/dmabuf_cases_*.c)))

$(OBJ)/tests/unit/test_dmabuf.o $(OBJ)/tests/unit/test_dmabuf_open.o $(DMABUF_CASES_OBJS): \
	ALL_CFLAGS += -Itests/sim/cuda -DSIM_CUDA_DIR='"$(abspath $(SIM_CUDA_DIR))"'

$(DMABUF_TEST_DIR)/test_dmabuf: $(DMABUF_CASES_OBJS) $(FORK_CHECK_OBJ)
$(DMABUF_TESTS): $(DMABUF_TEST_DIR)/%: $(OBJ)/tests/unit/%.o $(TESTCUDA_OBJS) $(HARNESS_OBJS) \
		$(LIB_SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) -lgdrapi \
		-Wl,-rpath,$(abspath $(LIB_DIR)) -ldl

test-build: $(DMABUF_TESTS)
check-build-sanitize: $(DMABUF_TESTS)
TEST_TESTS += $(DMABUF_TESTS)
SANITIZE_TESTS += $(DMABUF_TESTS)

# Tier 3: the dmabuf backend against NVIDIA's driver, for the GPU machine. Built by make check
# (it skips without a GPU); run by make check-gpu, or alone with make check-gpu-dmabuf.

GPU_DMABUF_TEST := $(BUILD)/tests/gpu/test_gpu_dmabuf

$(OBJ)/tests/gpu/test_gpu_dmabuf.o: ALL_CFLAGS += -Itests/unit

$(GPU_DMABUF_TEST): $(OBJ)/tests/gpu/test_gpu_dmabuf.o $(OBJ)/src/cuda.o $(OBJ)/src/log.o \
		$(OBJ)/src/why.o $(LIB_SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) -L$(LIB_DIR) -lgdrapi \
		-Wl,-rpath,$(abspath $(LIB_DIR)) -ldl

.PHONY: check-gpu-dmabuf
check-gpu-dmabuf: $(GPU_DMABUF_TEST)
	$(Q)TEST_VERBOSE=1 tests/run-tests.sh $(GPU_DMABUF_TEST)

check-build: $(GPU_DMABUF_TEST)
check-gpu: check-gpu-dmabuf

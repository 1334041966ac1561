# Tier 3: the dmabuf backend against NVIDIA's driver (test_gpu_dmabuf.c). make check-gpu runs it
# with the other GPU_TESTS; make check-gpu-dmabuf runs it alone, showing its output. It is
# linked by gpu.mk's rule for GPU_TESTS, which sees this append because the fragments are
# included in sorted order (dmabuf.mk before gpu.mk).

GPU_DMABUF_TEST := $(BUILD)/tests/gpu/test_gpu_dmabuf
GPU_TESTS += $(GPU_DMABUF_TEST)

.PHONY: check-gpu-dmabuf
check-gpu-dmabuf: $(GPU_DMABUF_TEST)
	$(Q)TEST_VERBOSE=1 tests/run-tests.sh $(GPU_DMABUF_TEST)

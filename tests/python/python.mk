# Tier 1 for the Python package (python/): tests/python/test_python.sh installs it into a venv
# with Debian's setuptools (no network) and runs its pytest suite on the simulated CUDA driver
# and lavapipe, one result per case.

PYTHON_TEST := $(BUILD)/tests/python/test_python

$(PYTHON_TEST): tests/python/test_python.sh
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@SRC@|$(CURDIR)|' -e 's|@LIB@|$(abspath $(LIB_DIR))/$(LIB_SONAME)|' \
		-e 's|@SIM@|$(abspath $(SIM_CUDA_DIR))|' $< >$@ && chmod +x $@

test-build: $(PYTHON_TEST) $(LIB_SHARED) $(SIM_CUDA_LIB)
TEST_TESTS += $(PYTHON_TEST)
CHECK_DEBS += python3 python3-venv python3-setuptools python3-wheel python3-numpy \
	python3-pytest mesa-vulkan-drivers libvulkan1

# Tier 3 (make check-gpu): python/tests/gpu/check_torch.py, the package with PyTorch and CuPy
# on the GPU, against this build's library; it skips where torch or a GPU is missing. PYTHON=
# picks the interpreter that has torch (default python3).
PYTHON_GPU_CHECK := $(BUILD)/tests/python/check_torch
$(PYTHON_GPU_CHECK): tests/python/python.mk
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nGDRCOPY_LIBRARY=%s exec "$${PYTHON:-python3}" %s "$$@"\n' \
		$(abspath $(LIB_DIR))/$(LIB_SONAME) $(CURDIR)/python/tests/gpu/check_torch.py >$@
	$(Q)chmod +x $@
gpu-build: $(PYTHON_GPU_CHECK) $(LIB_SHARED)
GPU_TESTS += $(PYTHON_GPU_CHECK)

# Tier 3: the same pytest suite on the GPU (tests/python/test_python_gpu.sh), from the source tree
# against this build's library; the simulator-only checks skip there.
PYTHON_GPU_SUITE := $(BUILD)/tests/python/test_python_gpu
$(PYTHON_GPU_SUITE): tests/python/test_python_gpu.sh
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@SRC@|$(CURDIR)|' -e 's|@LIB@|$(abspath $(LIB_DIR))/$(LIB_SONAME)|' $< >$@ && \
		chmod +x $@
gpu-build: $(PYTHON_GPU_SUITE) $(LIB_SHARED)
GPU_TESTS += $(PYTHON_GPU_SUITE)

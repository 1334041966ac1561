# Tier 1 tests of the vulkan backend and of the simulated CUDA driver they run on: lavapipe
# (Mesa's software Vulkan) stands in for NVIDIA's Vulkan driver. The test programs link the
# simulator as libcuda.so.1 (rpath), so the library's dlopen("libcuda.so.1") finds it.

CHECK_DEBS += mesa-vulkan-drivers libvulkan1
CHECK_DEBS += libvulkan-dev

VK_TESTS := $(BUILD)/tests/unit/test_simcuda $(BUILD)/tests/unit/test_vulkan
VK_SETUP_TEST := $(BUILD)/tests/unit/test_vulkan_setup
VK_CASES_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(sort $(wildcard tests/unit/vulkan_cases_*.c)))

$(OBJ)/tests/unit/test_simcuda.o $(OBJ)/tests/unit/test_vulkan.o $(VK_CASES_OBJS) \
$(OBJ)/tests/unit/test_vulkan_setup.o: ALL_CFLAGS += -Itests/sim/cuda

# Linked with the simulator; the library comes from $(LIB_DIR) through the rpath.
$(BUILD)/tests/unit/test_vulkan: $(VK_CASES_OBJS)
$(VK_TESTS): $(BUILD)/tests/unit/%: $(OBJ)/tests/unit/%.o $(HARNESS_OBJS) $(CUDA_VMM_OBJ) \
		$(FORK_CHECK_OBJ) $(SIM_CUDA_LIB) $(LIB_SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -L$(SIM_CUDA_DIR) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) \
		-Wl,-rpath,'$$ORIGIN/../../sim/cuda' \
		-Wl,-rpath,'$$ORIGIN/../../lib' -lgdrapi -lcuda -ldl

# Not linked with libcuda: it runs itself with the environment each case needs.
$(OBJ)/tests/unit/test_vulkan_setup.o: ALL_CFLAGS += -Itests/sim/vulkan_hostile
$(VK_SETUP_TEST): $(OBJ)/tests/unit/test_vulkan_setup.o $(HARNESS_OBJS) $(LIB_SHARED) \
		$(SIM_CUDA_LIB) $(SIM_VK_HOSTILE_LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) \
		-Wl,-rpath,'$$ORIGIN/../../lib' -lgdrapi -ldl

test-build: $(VK_TESTS) $(VK_SETUP_TEST)
check-build-sanitize: $(VK_TESTS) $(VK_SETUP_TEST)
TEST_TESTS += $(VK_TESTS) $(VK_SETUP_TEST)
# lavapipe runs clean under ASan + UBSan (leak checking included), so these run there too.
SANITIZE_TESTS += $(VK_TESTS) $(VK_SETUP_TEST)

# src/backends/vulkan_api.h (the library's own Vulkan declarations) against Khronos' headers,
# where they are installed: the library itself builds without them.
VK_API_TEST := $(BUILD)/tests/unit/test_vulkan_api
VK_KHRONOS_HEADERS := $(shell printf '\043include <vulkan/vulkan.h>\n' | \
	$(CC) -E -x c - >/dev/null 2>&1 && echo 1)
$(OBJ)/tests/unit/test_vulkan_api.o $(OBJ)/tests/unit/vulkan_api_khronos.o: \
	ALL_CFLAGS += -Isrc/backends
ifeq ($(VK_KHRONOS_HEADERS),1)
$(VK_API_TEST): $(OBJ)/tests/unit/test_vulkan_api.o $(OBJ)/tests/unit/vulkan_api_khronos.o \
		$(HARNESS_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^
else
$(VK_API_TEST):
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\necho "no Khronos Vulkan headers (vulkan/vulkan.h) to compare '\
	'src/backends/vulkan_api.h with: install libvulkan-dev"\nexit 77\n' >$@ && chmod +x $@
endif
test-build: $(VK_API_TEST)
TEST_TESTS += $(VK_API_TEST)

# A Vulkan loader that answers libgdrapi as a broken driver would (tests only, never installed):
# tests/sim/vulkan_hostile/vulkan_hostile.c; and one that fails the library's Vulkan calls when a
# test asks (vulkan_failing.c). Tests put its directory first on LD_LIBRARY_PATH, or load it
# (test_use_vulkan_hostile).

# SIM_VK_HOSTILE_LIB is set in the top Makefile, for rules read before this file.
SIM_VK_HOSTILE_OBJ := $(OBJ)/tests/sim/vulkan_hostile/vulkan_hostile.o \
	$(OBJ)/tests/sim/vulkan_hostile/vulkan_failing.o

CHECK_DEBS += libvulkan-dev

$(SIM_VK_HOSTILE_OBJ): BASE_CFLAGS := $(filter-out -Isrc -Iinclude -Ikernel/include/uapi,$(BASE_CFLAGS))

$(SIM_VK_HOSTILE_LIB): $(SIM_VK_HOSTILE_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libvulkan.so.1 $(ALL_LDFLAGS) -o $@ $^ -ldl

test-build: $(SIM_VK_HOSTILE_LIB)
check-build-sanitize: $(SIM_VK_HOSTILE_LIB)

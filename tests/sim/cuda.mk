# The simulated CUDA driver (tests only, never installed): SIM_CUDA_LIB (the top Makefile) and its
# libcuda.so link. Tests link it directly (-L$(SIM_CUDA_DIR) ahead of LDFLAGS, whose -L may name
# CUDA's stubs with their own libcuda.so; -lcuda with an rpath), or put SIM_CUDA_DIR first on
# LD_LIBRARY_PATH for programs that dlopen libcuda. See tests/sim/cuda/README.md.

SIM_CUDA_SRCS := $(sort $(wildcard tests/sim/cuda/*.c))
SIM_CUDA_OBJS := $(SIM_CUDA_SRCS:%.c=$(OBJ)/%.o)

# It uses Vulkan (dlopen'd) for lavapipe-backed memory when Vulkan is there.
CHECK_DEBS += libvulkan-dev

# The simulator stands in for NVIDIA's library: it sees the toolkit's headers, not the library's,
# but for the lists of entry points it must serve (proc.c), which include nothing themselves.
$(SIM_CUDA_OBJS): BASE_CFLAGS := $(filter-out -Isrc -Iinclude -Ikernel/include/uapi,$(BASE_CFLAGS))
$(OBJ)/tests/sim/cuda/proc.o: ALL_CFLAGS += -iquote src -iquote tests/harness

$(SIM_CUDA_LIB): $(SIM_CUDA_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libcuda.so.1 $(ALL_LDFLAGS) -o $@ $(SIM_CUDA_OBJS) -ldl
	$(Q)ln -sf libcuda.so.1 $(SIM_CUDA_DIR)/libcuda.so

.PHONY: sim-cuda
sim-cuda: $(SIM_CUDA_LIB)
test-build: $(SIM_CUDA_LIB)
check-build-sanitize: $(SIM_CUDA_LIB)

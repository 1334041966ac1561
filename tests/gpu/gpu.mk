# Tier 3: the real GPU. `make check-gpu` builds the programs below and runs GPU_TESTS through the
# same runner as tier 1; where there is no NVIDIA driver or GPU each test skips (77) with the
# reason. Other fragments may append their programs to GPU_TESTS (check-gpu reads it in its
# recipe, after every fragment). bench_vulkan and bench_setup_vulkan are benchmarks, built by
# check-gpu but not run by it. make check-gpu-dmabuf runs test_gpu_dmabuf alone, showing its
# output. See tests/gpu/README.md for the H200's set-up.
#
# Nothing links libcuda: the programs load it through src/cuda.c and the harness's testcuda.c.
# With nvcc (NVCC=, the top Makefile) the kernels of kernels.cu are built into a fatbin for
# sm_90 with compute_90 PTX and embedded; without it the kernel checks report themselves skipped.

GPU_DIR := $(BUILD)/tests/gpu
GPU_TESTS += $(GPU_DIR)/test_gpu_vulkan $(GPU_DIR)/soak_vulkan $(GPU_DIR)/test_gpu_dmabuf
GPU_BENCH := $(GPU_DIR)/bench_vulkan $(GPU_DIR)/bench_setup_vulkan
GPU_PROGRAMS := $(GPU_DIR)/test_gpu_vulkan $(GPU_DIR)/soak_vulkan $(GPU_DIR)/test_gpu_dmabuf \
	$(GPU_BENCH)
GPU_COMMON_OBJS := $(OBJ)/tests/gpu/gpucommon.o $(HARNESS_OBJS) $(TESTCUDA_OBJS)

$(OBJ)/tests/gpu/%.o: ALL_CFLAGS += -Itests/gpu
ifeq ($(HAVE_NVCC),1)
$(OBJ)/tests/gpu/gpucommon.o: ALL_CFLAGS += -DGDR_TEST_HAVE_KERNELS
GPU_COMMON_OBJS += $(GPU_DIR)/kernels_fatbin.o

$(GPU_DIR)/kernels.fatbin: tests/gpu/kernels.cu
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) -fatbin -gencode arch=compute_90,code=sm_90 \
		-gencode arch=compute_90,code=compute_90 -o $@ $<

# The fatbin as a C array, so the programs need no file beside them.
$(GPU_DIR)/kernels_fatbin.c: $(GPU_DIR)/kernels.fatbin
	$(Q){ echo '/* Generated from tests/gpu/kernels.cu. */'; \
	  echo 'extern const unsigned char gdr_test_kernels_fatbin[];'; \
	  echo 'const unsigned char gdr_test_kernels_fatbin[] __attribute__((aligned(16))) = {'; \
	  od -An -v -tx1 $< | sed 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '};'; } >$@

$(GPU_DIR)/kernels_fatbin.o: $(GPU_DIR)/kernels_fatbin.c
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<
endif

# The set-up benchmark calls Vulkan itself, through the library's own declarations.
$(OBJ)/tests/gpu/bench_setup_vulkan.o: ALL_CFLAGS += -Isrc/backends
# The fork cases share their checks with tier 1.
$(GPU_DIR)/soak_vulkan: $(FORK_CHECK_OBJ)
$(GPU_PROGRAMS): $(GPU_DIR)/%: $(OBJ)/tests/gpu/%.o $(GPU_COMMON_OBJS) $(LIB_SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(OBJ)/tests/gpu/$*.o $(filter-out $(OBJ)/tests/gpu/$*.o \
		$(GPU_COMMON_OBJS),$(filter %.o,$^)) $(GPU_COMMON_OBJS) \
		-Wl,-rpath,'$$ORIGIN/../../lib' -lgdrapi -ldl

.PHONY: gpu-build check-gpu-dmabuf
gpu-build: $(GPU_PROGRAMS)

check-gpu: gpu-build
	$(Q)tests/run-tests.sh $(GPU_TESTS)

check-gpu-dmabuf: $(GPU_DIR)/test_gpu_dmabuf
	$(Q)TEST_VERBOSE=1 tests/run-tests.sh $<

# bench_copy_impls links the library statically: it times the routines themselves and installs
# tables of its own, which the shared library does not export. Its baselines (GDRCopy 2.6's
# strategy, raw accesses) are built with the ISA flags they use; they check the CPU at run time.
GPU_IMPLS_BENCH := $(GPU_DIR)/bench_copy_impls
GPU_IMPLS_OBJS := $(addprefix $(OBJ)/tests/gpu/,bench_copy_impls.o bench_bar.o \
	bench_copy_measure.o bench_copy_report.o bench_copy_verdicts.o bench_forced.o bench_paths.o \
	bench_raw.o gdrcopy26_copy.o)
ifeq ($(ARCH_DIR),x86)
$(OBJ)/tests/gpu/bench_raw.o: ISA_CFLAGS := -mavx2 -mavx512f
$(OBJ)/tests/gpu/gdrcopy26_copy.o: ISA_CFLAGS := -msse4.1 -mavx2 -mmovdir64b
endif
$(GPU_IMPLS_BENCH): $(GPU_IMPLS_OBJS)

# What each copy executes, counted by bench/count-instructions.sh under callgrind; built like
# bench_copy_impls (the static library, GDRCopy 2.6's strategy beside it).
GPU_COUNT := $(GPU_DIR)/count_copy_instructions
GPU_COUNT_OBJS := $(addprefix $(OBJ)/tests/gpu/,count_copy_instructions.o bench_bar.o \
	gdrcopy26_copy.o)
$(GPU_COUNT): $(GPU_COUNT_OBJS)

# How many reads of the BAR a core keeps in flight, and a copy call's share of that window;
# built like bench_copy_impls (the dispatcher, GDRCopy 2.6's call and strategy beside the call).
GPU_WINDOW := $(GPU_DIR)/bench_window
GPU_WINDOW_OBJS := $(addprefix $(OBJ)/tests/gpu/,bench_window.o bench_window_calls.o \
	bench_bar.o bench_forced.o gdrcopy26_copy.o)
$(GPU_WINDOW): $(GPU_WINDOW_OBJS)

# How soon a poll of a word of GPU memory sees the GPU change it, by way of reading it; built
# like bench_window (the library's tables: without its read fence, each load routine; GDRCopy
# 2.6's call beside it).
GPU_POLL := $(GPU_DIR)/bench_poll
GPU_POLL_OBJS := $(addprefix $(OBJ)/tests/gpu/,bench_poll.o bench_bar.o bench_forced.o \
	gdrcopy26_copy.o)
$(GPU_POLL): $(GPU_POLL_OBJS)

# The benchmarks above link the library statically, each with its own objects (listed as its
# prerequisites) and the shared ones: one link rule for all.
GPU_STATIC_BENCHES := $(GPU_IMPLS_BENCH) $(GPU_COUNT) $(GPU_WINDOW) $(GPU_POLL)
$(GPU_STATIC_BENCHES): $(GPU_COMMON_OBJS) $(LIB_STATIC)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LIB_STATIC) -ldl -lpthread
gpu-build: $(GPU_STATIC_BENCHES)

# The benchmarks' tier-1 tests, on the simulated CUDA driver (checks of the programs, not of their
# numbers): each script with the tools' test helpers and its program's path. Their sources are
# here, beside the programs. test_bench_copy_sim runs bench_copy_impls -q; test_bench_window,
# bench_window; test_bench_poll, bench_poll (a CPU thread answers the pings there).
GPU_BENCH_SIM_TEST := $(GPU_DIR)/test_bench_copy_sim
GPU_WINDOW_TEST := $(GPU_DIR)/test_bench_window
GPU_POLL_TEST := $(GPU_DIR)/test_bench_poll
$(GPU_BENCH_SIM_TEST): BENCH_PROG := $(GPU_IMPLS_BENCH)
$(GPU_WINDOW_TEST): BENCH_PROG := $(GPU_WINDOW)
$(GPU_POLL_TEST): BENCH_PROG := $(GPU_POLL)
GPU_BENCH_TESTS := $(GPU_BENCH_SIM_TEST) $(GPU_WINDOW_TEST) $(GPU_POLL_TEST)
$(GPU_BENCH_TESTS): $(GPU_DIR)/%: tests/gpu/%.sh $(BUILD)/tests/tools/tools_lib.sh
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@LIB@|$(abspath $(BUILD)/tests/tools/tools_lib.sh)|' \
		-e 's|@BENCH@|$(abspath $(BENCH_PROG))|' $< >$@ && chmod +x $@
test-build: $(GPU_BENCH_TESTS) $(GPU_IMPLS_BENCH) $(GPU_WINDOW) $(GPU_POLL) $(SIM_CUDA_LIB)
TEST_TESTS += $(GPU_BENCH_TESTS)

# bench/count-instructions.sh on the simulated CUDA driver, the same way.
GPU_COUNT_TEST := $(GPU_DIR)/test_count_instructions
$(GPU_COUNT_TEST): tests/gpu/test_count_instructions.sh $(BUILD)/tests/tools/tools_lib.sh
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@LIB@|$(abspath $(BUILD)/tests/tools/tools_lib.sh)|' \
		-e 's|@SCRIPT@|$(abspath bench/count-instructions.sh)|' \
		-e 's|@BUILD@|$(abspath $(BUILD))|' $< >$@ && chmod +x $@
test-build: $(GPU_COUNT_TEST) $(GPU_COUNT) $(SIM_CUDA_LIB)
TEST_TESTS += $(GPU_COUNT_TEST)

# gdrcopy_pplat on the real GPU, run by check-gpu; it skips where pplat was not built.
ifeq ($(BUILD_TOOLS),1)
GPU_TOOLS_TEST := $(GPU_DIR)/test_tools_gpu
$(GPU_TOOLS_TEST): tests/gpu/test_tools_gpu.sh $(BUILD)/tests/tools/tools_lib.sh
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@LIB@|$(abspath $(BUILD)/tests/tools/tools_lib.sh)|' $< >$@ && chmod +x $@
gpu-build: $(GPU_TOOLS_TEST) tools
GPU_TESTS += $(GPU_TOOLS_TEST)
endif

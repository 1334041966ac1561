# Tier 1 for the tools: gdrcopy_sanity's catalogue, short runs of copylat, copybw and apiperf
# (exit status and output format, never times) on the simulated CUDA driver through the vulkan
# backend over lavapipe, the one-line refusals without a GPU, a driver or a backend, -h against
# the man pages, bench/run.sh QUICK (the script and its report, not the numbers), make run's
# demonstration (tools/demo.sh) on the simulated GPU, the statistics the tools print (their
# median, minimum and mean, on made-up values) and the pattern their copies are checked with.

TOOLS_TEST_DIR := $(BUILD)/tests/tools
TOOLS_TESTS := $(addprefix $(TOOLS_TEST_DIR)/,test_tools_sanity test_tools_runs test_tools_nogpu \
	test_tools_help)
BENCH_TEST := $(TOOLS_TEST_DIR)/test_bench_quick
DEMO_TEST := $(TOOLS_TEST_DIR)/test_demo
TOOLS_TEST_LIB := $(TOOLS_TEST_DIR)/tools_lib.sh

# A copy routine gone wrong, preloaded to see the tools notice (tests/tools/broken_copy.c).
BROKEN_COPY_LIB := $(TOOLS_TEST_DIR)/libbroken_copy.so
$(BROKEN_COPY_LIB): $(OBJ)/tests/tools/broken_copy.o
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared $(ALL_LDFLAGS) -o $@ $^ -ldl

$(TOOLS_TEST_LIB): tests/tools/tools_lib.sh
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@BIN@|$(abspath $(TOOLS_BIN))|' -e 's|@SIM@|$(abspath $(SIM_CUDA_DIR))|' \
		-e 's|@BROKEN_COPY@|$(abspath $(BROKEN_COPY_LIB))|' \
		-e 's|@STUB@|$(CUDA)/lib64/stubs|' \
		-e 's|@HARNESS@|$(abspath tests/harness/harness.sh)|' $< >$@

# The tools' own computations, on their own: C programs on stats.c and pattern.c and what they
# call (tool_warn's output.c, with its stdout check, and sweep.c, whose descriptor stats.c
# reads), and the harness's reporting without its simulated GPU.
TOOL_UNIT_TESTS := $(addprefix $(TOOLS_TEST_DIR)/,test_tool_stats test_tool_pattern)
$(TOOL_UNIT_TESTS): $(TOOLS_TEST_DIR)/%: $(OBJ)/tests/tools/%.o \
		$(addprefix $(OBJ)/tests/harness/,harness.o process.o) \
		$(addprefix $(OBJ)/tools/,stats.o pattern.o output.o stdout_check.o sweep.o) \
		$(LIB_SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) -lgdrapi -ldl \
		-Wl,-rpath,$(abspath $(LIB_DIR))
$(OBJ)/tests/tools/test_tool_stats.o $(OBJ)/tests/tools/test_tool_pattern.o: ALL_CFLAGS += -Itools

$(TOOLS_TESTS) $(BENCH_TEST) $(DEMO_TEST): $(TOOLS_TEST_DIR)/%: tests/tools/%.sh $(TOOLS_TEST_LIB)
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@LIB@|$(abspath $(TOOLS_TEST_LIB))|' -e 's|@SRC@|$(CURDIR)|' $< >$@ && chmod +x $@

ifeq ($(BUILD_TOOLS),1)
# The demonstration's program, by its name: tools/tools.mk, which names it, may be read later.
test-build: $(TOOLS_TESTS) $(BENCH_TEST) $(DEMO_TEST) $(TOOL_UNIT_TESTS) tools $(SIM_CUDA_LIB) \
	$(BROKEN_COPY_LIB) $(BUILD)/demo/gdrcopy_demo
check-build-sanitize: $(TOOLS_TESTS) $(TOOL_UNIT_TESTS) tools $(SIM_CUDA_LIB) $(BROKEN_COPY_LIB)
TEST_TESTS += $(TOOLS_TESTS) $(BENCH_TEST) $(DEMO_TEST) $(TOOL_UNIT_TESTS)
# The tools built with ASan + UBSan (leak checking included) run the same scripts.
SANITIZE_TESTS += $(TOOLS_TESTS) $(TOOL_UNIT_TESTS)
endif
CHECK_DEBS += mesa-vulkan-drivers libvulkan1 python3

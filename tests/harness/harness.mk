# The test harness (harness.h, harness.sh), shared by every tier: its objects are named in the
# top Makefile (HARNESS_OBJS, TESTCUDA_OBJS, FORK_CHECK_OBJ, CUDA_VMM_OBJ), so that each tier's
# fragment can link them whatever the order the fragments are read in.

# Every test program includes the harness's headers.
$(OBJ)/tests/%.o: ALL_CFLAGS += -Itests/harness
# cuda_vmm.o calls CUDA itself: only programs linked with libcuda (the simulator) link it.

# The runner's time limits (tests/harness/test_runner.sh).
RUNNER_TEST := $(BUILD)/tests/harness/test_runner
$(RUNNER_TEST): tests/harness/test_runner.sh tests/run-tests.sh
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexec %s %s\n' $(abspath $<) $(abspath tests/run-tests.sh) >$@ && \
		chmod +x $@

test-build: $(RUNNER_TEST)
TEST_TESTS += $(RUNNER_TEST)

# Static analysis (make check; make analyze runs it alone): gcc's -fanalyzer and clang's
# scan-build over the library, the tools and the tests' simulators, each in a build of its own in
# a scratch directory (tests/analyze/test_analyze.sh). Any report fails, naming its file:line; a
# missing analyzer skips, saying which package has it. About 75 s on two CPUs; under make
# check it shares them with the VMs, so it has twice run-tests.sh's default 300 s.
ANALYZE_TEST := $(BUILD)/tests/analyze/test_analyze

$(ANALYZE_TEST): tests/analyze/test_analyze.sh
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexec %s %s\n' $(abspath $<) $(CURDIR) >$@ && chmod +x $@
	@echo 600 >$@.timeout

check-build: $(ANALYZE_TEST)
CHECK_TESTS += $(ANALYZE_TEST)
CHECK_DEBS += gcc clang clang-tools

.PHONY: analyze
analyze: $(ANALYZE_TEST)
	$(Q)tests/run-tests.sh $(ANALYZE_TEST)

# The false positives that no clearer code avoids, one file and one checker each, applied wherever
# EXTRA_CFLAGS has -fanalyzer (so a build by hand gets them too).
# gcc 12's analyzer takes a pointer given to a function it does not know, through a const
# parameter, as kept by nobody: it reports the thread's error record that log.c hands to
# pthread_setspecific (whose key's destructor frees it) as leaked. log.c has no other allocation.
$(OBJ)/src/log.o: ALL_CFLAGS += \
	$(if $(filter -fanalyzer,$(EXTRA_CFLAGS)),-Wno-analyzer-malloc-leak)
# The simulated CUDA driver's exports_prune LIST_REMOVEs and frees the exports that are closed,
# and its caller then walks the list: gcc 12's analyzer does not follow LIST_REMOVE's write of the
# list's head through the element's le_prev, and takes the head to be the freed first element.
$(OBJ)/tests/sim/cuda/dmabuf.o: ALL_CFLAGS += \
	$(if $(filter -fanalyzer,$(EXTRA_CFLAGS)),-Wno-analyzer-use-after-free)

# The build itself: the fragments work in any order (tier 1: test_fragment_order.sh, which only
# reads the makefiles), the options build what they say (make check: test_options.sh, which
# builds the library twice more), and make does what users ask of it beyond "make all" (make
# check: test_invocations.sh).
BUILD_TESTS_DIR := $(BUILD)/tests/build
FRAGMENT_ORDER_TEST := $(BUILD_TESTS_DIR)/test_fragment_order
OPTIONS_TEST := $(BUILD_TESTS_DIR)/test_options
INVOCATIONS_TEST := $(BUILD_TESTS_DIR)/test_invocations

$(FRAGMENT_ORDER_TEST) $(OPTIONS_TEST) $(INVOCATIONS_TEST): $(BUILD_TESTS_DIR)/%: tests/build/%.sh
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexec %s %s\n' $(abspath $<) $(CURDIR) >$@ && chmod +x $@

test-build: $(FRAGMENT_ORDER_TEST)
TEST_TESTS += $(FRAGMENT_ORDER_TEST)
check-build: $(OPTIONS_TEST) $(INVOCATIONS_TEST)
CHECK_TESTS += $(OPTIONS_TEST) $(INVOCATIONS_TEST)

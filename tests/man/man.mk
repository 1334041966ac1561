# The man pages render cleanly and cover every exported function (tests/man/test_man.sh).
MAN_TEST := $(BUILD)/tests/man/test_man

$(MAN_TEST): tests/man/test_man.sh $(LIB_SHARED)
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexec %s %s %s\n' $(abspath $<) $(abspath man) \
		$(abspath $(LIB_SHARED)) >$@ && chmod +x $@

test-build: $(MAN_TEST)
TEST_TESTS += $(MAN_TEST)
CHECK_DEBS += groff-base mandoc binutils

# The docs against the code: environment variables, make targets and variables, gdrdrv's
# parameters, references (tests/man/test_docs.sh).
DOCS_TEST := $(BUILD)/tests/man/test_docs
$(DOCS_TEST): tests/man/test_docs.sh
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexec %s %s\n' $(abspath $<) $(CURDIR) >$@ && chmod +x $@

test-build: $(DOCS_TEST)
TEST_TESTS += $(DOCS_TEST)

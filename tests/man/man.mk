# The man pages render cleanly and cover every exported function (tests/man/test_man.sh).
MAN_TEST := $(BUILD)/tests/man/test_man

$(MAN_TEST): tests/man/test_man.sh $(LIB_SHARED)
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexec %s %s %s\n' $(abspath $<) $(abspath man) \
		$(abspath $(LIB_SHARED)) >$@ && chmod +x $@

check-build: $(MAN_TEST)
CHECK_TESTS += $(MAN_TEST)
CHECK_DEBS += groff-base mandoc binutils

#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/run-tests.sh's time limits: TEST_TIMEOUT bounds each test; a TEST.timeout file beside a
# test raises that test's own limit (the package suite's needs fifteen minutes), never lowers it,
# and is ignored when it is not a number.
#   test_runner.sh RUNNER
runner=$1
. "$(dirname "$0")/harness.sh"
test_scratch runner

# A test that takes two seconds.
printf '#!/bin/sh\nsleep 2\n' >"$tmp/slow" && chmod +x "$tmp/slow"

# The runner's summary line for it under TEST_TIMEOUT, with the given .timeout file.
summary() { # TEST_TIMEOUT timeout-file-content (empty: no file)
	rm -f "$tmp/slow.timeout"
	[ -n "$2" ] && echo "$2" >"$tmp/slow.timeout"
	TEST_TIMEOUT=$1 GDR_TEST_RESULTS= "$runner" "$tmp/slow" 2>&1 | tail -n 1
}

check() { # name TEST_TIMEOUT timeout-file-content want-summary
	got=$(summary "$2" "$3")
	if [ "$got" = "$4" ]; then result pass "$1"; else result fail "$1" "got '$got', want '$4'"; fi
}

pass="1 passed, 0 failed, 0 skipped" fail="0 passed, 1 failed, 0 skipped"
check default_limit_holds 1 "" "$fail"
check own_limit_raises 1 5 "$pass"
check own_limit_never_lowers 5 1 "$pass"
check own_limit_not_a_number 1 abc "$fail"
test_exit

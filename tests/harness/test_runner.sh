#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/run-tests.sh's time limits: TEST_TIMEOUT bounds each test; a TEST.timeout file beside a
# test raises that test's own limit (the package suite's needs fifteen minutes), never lowers it,
# and is ignored when it is not a number. TEST_JOBS runs tests at once, reports them in order,
# and runs a test with a TEST.serial file alone.
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

# TEST_JOBS: "waiter" passes only if "maker", after it in the arguments, runs at the same time;
# the verdicts still come in the arguments' order.
printf '#!/bin/sh\nfor i in 1 2 3 4 5 6 7 8 9 10; do [ -e %s ] && exit 0; sleep 1; done\nexit 1\n' \
	"$tmp/made" >"$tmp/waiter"
printf '#!/bin/sh\nsleep 1; touch %s\n' "$tmp/made" >"$tmp/maker"
chmod +x "$tmp/waiter" "$tmp/maker"
got=$(TEST_JOBS=2 "$runner" "$tmp/waiter" "$tmp/maker" 2>&1 | sed "s|$tmp/||" | tr '\n' '|')
want="PASS  waiter|PASS  maker|2 passed, 0 failed, 0 skipped|"
if [ "$got" = "$want" ]; then result pass jobs_run_together; else
	result fail jobs_run_together "got '$got', want '$want'"; fi

# A test with TEST.serial runs alone: "alone" fails if "busy" has not ended when it looks. Each
# waits for the other (5 s at most), so that without the file they overlap however slowly a
# loaded machine starts them, and the check can be seen failing.
wait_for() { # file: a shell loop that waits up to 5 s for it
	printf 'i=0; while [ ! -e %s ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done\n' "$1"
}
{ echo '#!/bin/sh'; echo "touch $tmp/busy.started"; wait_for "$tmp/alone.checked"
  echo "touch $tmp/busy.ended"; } >"$tmp/busy_test"
{ echo '#!/bin/sh'; wait_for "$tmp/busy.started"; echo "[ -e $tmp/busy.ended ]; r=\$?"
  echo "touch $tmp/alone.checked; exit \$r"; } >"$tmp/alone"
chmod +x "$tmp/busy_test" "$tmp/alone"
for serial in yes no; do
	rm -f "$tmp/alone.serial" "$tmp/busy.started" "$tmp/busy.ended" "$tmp/alone.checked"
	[ $serial = yes ] && touch "$tmp/alone.serial"
	got=$(TEST_JOBS=2 "$runner" "$tmp/busy_test" "$tmp/alone" 2>&1 | tail -n 1)
	want="2 passed, 0 failed, 0 skipped"
	[ $serial = no ] && want="1 passed, 1 failed, 0 skipped"
	if [ "$got" = "$want" ]; then result pass "serial_runs_alone_$serial"; else
		result fail "serial_runs_alone_$serial" "got '$got', want '$want'"; fi
done

# TEST_TIMES gets one line per test, "SECONDS NAME"; the tests see neither it nor TEST_JOBS (a
# runner they start is their own).
printf '#!/bin/sh\n[ -z "$TEST_TIMES$TEST_JOBS" ]\n' >"$tmp/clean_env"
chmod +x "$tmp/clean_env"
got=$(TEST_JOBS=2 TEST_TIMES="$tmp/times" "$runner" "$tmp/maker" "$tmp/clean_env" 2>&1 | tail -n 1)
times=$(sed -E "s|^[0-9]+ $tmp/||" "$tmp/times" 2>/dev/null | tr '\n' ' ')
if [ "$got" = "2 passed, 0 failed, 0 skipped" ] && [ "$times" = "maker clean_env " ]; then
	result pass times_and_clean_env
else
	result fail times_and_clean_env "got '$got', times '$times'"
fi

got=$(TEST_JOBS=two "$runner" "$tmp/maker" 2>&1; echo "exit $?")
case "$got" in
*"TEST_JOBS must be a positive number"*"exit 2") result pass jobs_not_a_number ;;
*) result fail jobs_not_a_number "got '$got'" ;;
esac
test_exit

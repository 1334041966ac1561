#!/bin/bash
# The test runner for every tier. Each argument is a test program: exit 0 pass, 77 skip (its last
# line of output says why), anything else fail. A test that is a suite writes one line per case
# to "$GDR_TEST_RESULTS" ("pass NAME", "fail NAME reason", "skip NAME reason"); those lines are
# counted instead of its exit status, and a crash of the suite itself counts as one failure.
# Ends with "N passed, N failed, N skipped" on a line of its own; exits 1 if anything failed.
#   TEST_TIMEOUT  seconds per test (default 300); a test that needs longer says so in a file
#                 beside it, TEST.timeout (its seconds), which raises its own limit only
#   TEST_JOBS     tests run at once (default 1); a test that changes the machine (installs
#                 packages, say) has a file TEST.serial beside it and runs alone. Verdicts are
#                 printed in the order of the arguments whatever order the tests end in
#   TEST_VERBOSE  1: print every test's output
#   TEST_TIMES    a file: each test's seconds and name are appended to it, for tuning CI
set -u
timeout_s=${TEST_TIMEOUT:-300}
jobs=${TEST_JOBS:-1}
case "$jobs" in '' | *[!0-9]* | 0) echo "run-tests.sh: TEST_JOBS must be a positive number, not '$jobs'" >&2; exit 2 ;; esac
passed=0 failed=0 skipped=0
failures=()
logdir=$(mktemp -d "${TMPDIR:-/tmp}/gdrcopy-tests.XXXXXX")
trap 'rm -rf "$logdir"' EXIT
tests=("$@")

count() { # verdict name detail
	case "$1" in
	pass) passed=$((passed + 1)); printf 'PASS  %s\n' "$2" ;;
	skip) skipped=$((skipped + 1)); printf 'SKIP  %s: %s\n' "$2" "$3" ;;
	*) failed=$((failed + 1)); failures+=("$2"); printf 'FAIL  %s: %s\n' "$2" "$3" ;;
	esac
}

# Run test n (its files in $logdir named n); its exit status lands in n.rc last of all, so
# that a test is finished exactly when that file exists. "unbuilt" when it is not executable.
run() { # n
	local test=${tests[$1 - 1]} limit=$timeout_s own start=$SECONDS rc
	: >"$logdir/$1.results"
	if [ ! -x "$test" ]; then
		echo unbuilt >"$logdir/$1.rc"
		return
	fi
	if [ -r "$test.timeout" ]; then
		own=$(cat "$test.timeout")
		[ "$own" -gt "$limit" ] 2>/dev/null && limit=$own
	fi
	echo "$limit" >"$logdir/$1.limit"
	# A test that runs a runner of its own (the package builds run make test) gets none of these.
	GDR_TEST_RESULTS="$logdir/$1.results" env -u TEST_JOBS -u TEST_TIMES \
		timeout -k 10 "$limit" "$test" >"$logdir/$1.log" 2>&1 </dev/null
	rc=$?
	echo "$((SECONDS - start))" >"$logdir/$1.seconds"
	echo "$rc" >"$logdir/$1.rc.new" && mv "$logdir/$1.rc.new" "$logdir/$1.rc"
}

# Count test n's verdicts from its files.
report() { # n
	local test=${tests[$1 - 1]} name log="$logdir/$1.log" results="$logdir/$1.results" rc last
	name=${test#./}
	rc=$(cat "$logdir/$1.rc")
	if [ "$rc" = unbuilt ]; then
		count fail "$name" "not built (no executable $test)"
		return
	fi
	[ -n "${TEST_TIMES:-}" ] && echo "$(cat "$logdir/$1.seconds") $name" >>"$TEST_TIMES"
	[ "${TEST_VERBOSE:-0}" = 1 ] && sed 's/^/      | /' "$log"
	last=$(grep -v '^[[:space:]]*$' "$log" | tail -n 1)
	if [ -s "$results" ]; then
		while read -r verdict case_name detail; do
			count "$verdict" "$name:$case_name" "${detail:-}"
		done <"$results"
		if [ "$rc" != 0 ] && [ "$rc" != 77 ] && ! grep -q '^fail ' "$results"; then
			count fail "$name" "suite exited $rc: $last"
		fi
		if [ "${TEST_VERBOSE:-0}" != 1 ] && { grep -q '^fail ' "$results" ||
		   { [ "$rc" != 0 ] && [ "$rc" != 77 ]; }; }; then
			tail -n 20 "$log" | sed 's/^/      | /'
		fi
		return
	fi
	case "$rc" in
	0) count pass "$name" ;;
	77) count skip "$name" "${last:-no reason given}" ;;
	124|137) count fail "$name" "timed out after $(cat "$logdir/$1.limit")s"
		tail -n 20 "$log" | sed 's/^/      | /' ;;
	*) count fail "$name" "exit $rc"
		tail -n 20 "$log" | sed 's/^/      | /' ;;
	esac
}

# Report every finished test whose predecessors have all been reported.
reported=0
report_finished() {
	while [ "$reported" -lt "${#tests[@]}" ] && [ -e "$logdir/$((reported + 1)).rc" ]; do
		reported=$((reported + 1))
		report "$reported"
	done
}

for ((n = 1; n <= ${#tests[@]}; n++)); do
	serial=${tests[$n - 1]}.serial
	if [ -e "$serial" ]; then
		wait
		report_finished
		run "$n"
	else
		while [ "$(jobs -pr | wc -l)" -ge "$jobs" ]; do
			wait -n
			report_finished
		done
		if [ "$jobs" = 1 ]; then run "$n"; else run "$n" & fi
	fi
	report_finished
done
wait
report_finished

if [ ${#failures[@]} -gt 0 ]; then
	echo "failed:"
	printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]

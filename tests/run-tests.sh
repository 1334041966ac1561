#!/bin/bash
# The test runner for every tier. Each argument is a test program: exit 0 pass, 77 skip (its last
# line of output says why), anything else fail. A test that is a suite writes one line per case
# to "$GDR_TEST_RESULTS" ("pass NAME", "fail NAME reason", "skip NAME reason"); those lines are
# counted instead of its exit status, and a crash of the suite itself counts as one failure.
# Ends with "N passed, N failed, N skipped" on a line of its own; exits 1 if anything failed.
#   TEST_TIMEOUT  seconds per test (default 300); a test that needs longer says so in a file
#                 beside it, TEST.timeout (its seconds), which raises its own limit only
#   TEST_VERBOSE  1: print every test's output
set -u
timeout_s=${TEST_TIMEOUT:-300}
passed=0 failed=0 skipped=0
failures=()
logdir=$(mktemp -d "${TMPDIR:-/tmp}/gdrcopy-tests.XXXXXX")
trap 'rm -rf "$logdir"' EXIT

count() { # verdict name detail
	case "$1" in
	pass) passed=$((passed + 1)); printf 'PASS  %s\n' "$2" ;;
	skip) skipped=$((skipped + 1)); printf 'SKIP  %s: %s\n' "$2" "$3" ;;
	*) failed=$((failed + 1)); failures+=("$2"); printf 'FAIL  %s: %s\n' "$2" "$3" ;;
	esac
}

n=0
for test in "$@"; do
	n=$((n + 1))
	name=${test#./}
	log="$logdir/$n.log"
	results="$logdir/$n.results"
	: >"$results"
	if [ ! -x "$test" ]; then
		count fail "$name" "not built (no executable $test)"
		continue
	fi
	limit=$timeout_s
	if [ -r "$test.timeout" ]; then
		own=$(cat "$test.timeout")
		[ "$own" -gt "$limit" ] 2>/dev/null && limit=$own
	fi
	GDR_TEST_RESULTS="$results" timeout -k 10 "$limit" "$test" >"$log" 2>&1 </dev/null
	rc=$?
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
		continue
	fi
	case "$rc" in
	0) count pass "$name" ;;
	77) count skip "$name" "${last:-no reason given}" ;;
	124|137) count fail "$name" "timed out after ${limit}s"
		tail -n 20 "$log" | sed 's/^/      | /' ;;
	*) count fail "$name" "exit $rc"
		tail -n 20 "$log" | sed 's/^/      | /' ;;
	esac
done

if [ ${#failures[@]} -gt 0 ]; then
	echo "failed:"
	printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]

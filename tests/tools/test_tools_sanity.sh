#!/bin/bash
# gdrcopy_sanity's catalogue on the simulated CUDA driver through the vulkan backend (lavapipe):
# one result line per case (waived cases are skips, with the reason), plus its summary format.
. @LIB@
need_sim
sim_env
"$BIN/gdrcopy_sanity" -v -e --results "$tmp/cases" >"$tmp/log" 2>&1
rc=$?
[ -f "$tmp/cases" ] && [ -n "${GDR_TEST_RESULTS:-}" ] && cat "$tmp/cases" >>"$GDR_TEST_RESULTS"
n=$(cat "$tmp/cases" 2>/dev/null | wc -l)
if [ "$n" = 37 ]; then
	result pass sanity_one_result_per_case
else
	result fail sanity_one_result_per_case "$n result lines for 37 cases (exit $rc: $(tail -n 1 "$tmp/log"))"
fi
check_lines sanity_summary "$tmp/log" '^Total: 37, Passed: [0-9]+, Failed: [0-9]+, Waived: [0-9]+$'
check_lines sanity_progress_lines "$tmp/log" '^&&&& (PASSED|FAILED|WAIVED) [a-z0-9_]+$' 37
if grep -q '^fail ' "$tmp/cases" 2>/dev/null; then want=1; else want=0; fi
if [ "$rc" = "$want" ]; then
	result pass sanity_exit_status
else
	result fail sanity_exit_status "exit $rc, expected $want from the case results"
fi
# As GDRCopy's: the summary's lists name the tests alone, and no line comes before the first
# test's; -v adds the reasons and the platform line (a waived and a passing case here).
two="-t basic_v2_forcepci_vmmalloc -t basic_vmmalloc"
# shellcheck disable=SC2086
env -u GDR_TEST_RESULTS "$BIN/gdrcopy_sanity" $two >"$tmp/plain" 2>&1
# shellcheck disable=SC2086
env -u GDR_TEST_RESULTS "$BIN/gdrcopy_sanity" -v $two >"$tmp/verbose" 2>&1
if [ "$(sed -n '/^List of waived tests:$/{n;p;}' "$tmp/plain")" = '    basic_v2_forcepci_vmmalloc' ] &&
	[ "$(grep -v '^$' "$tmp/plain" | head -n 1)" = 'Total: 2, Passed: 1, Failed: 0, Waived: 1' ]; then
	result pass sanity_summary_as_gdrcopy
else
	result fail sanity_summary_as_gdrcopy "$(head -c 300 "$tmp/plain" | tr '\n' '|')"
fi
if grep -q '^    basic_v2_forcepci_vmmalloc: .*FORCE_PCIE' "$tmp/verbose" &&
	grep -q '^Backend: vulkan; ' "$tmp/verbose"; then
	result pass sanity_verbose_reasons
else
	result fail sanity_verbose_reasons "$(head -c 300 "$tmp/verbose" | tr '\n' '|')"
fi
# The offset checks must catch a copy that goes wrong at one alignment only: each starts from GPU
# memory set to 0xA5, not from what the previous check left (which already matched nearly all
# of what this one writes).
with_broken_copy to_at_4 "$BIN/gdrcopy_sanity" -t data_validation_vmmalloc \
	--results "$tmp/broken_cases" >"$tmp/broken" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q '^&&&& FAILED data_validation_vmmalloc$' "$tmp/broken"; then
	result pass sanity_offsets_catch_a_broken_copy
else
	result fail sanity_offsets_catch_a_broken_copy "exit $rc, expected 1 and the case failed: $(grep '^&&&&' "$tmp/broken" | tail -n 1)"
fi
test_exit

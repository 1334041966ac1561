#!/bin/bash
# bench/run.sh with QUICK=1 on the simulated CUDA driver: every step but pplat (which needs a
# real GPU, and is reported as skipped with its reason) runs, and results.md holds each table
# with the command behind it. Checks the script, not the numbers.
. @LIB@
need_sim
sim_env
if ! command -v python3 >/dev/null; then
	echo "no python3 to run bench/report.py"
	exit 77
fi
QUICK=1 BIN="$BIN" @SRC@/bench/run.sh "$tmp/out" >"$tmp/log" 2>&1
rc=$?
if [ "$rc" = 0 ] && [ -s "$tmp/out/results.md" ] && [ -s "$tmp/out/bench.log" ]; then
	result pass bench_run
else
	result fail bench_run "exit $rc: $(tail -n 1 "$tmp/log")"
	test_exit
fi
md=$tmp/out/results.md
for step in info copybw_default copylat sweep copybw apiperf; do
	if grep -q "^$step: exit 0\$" "$tmp/log"; then
		result pass "bench_step_$step"
	else
		result fail "bench_step_$step" "$(grep "^$step: " "$tmp/log")"
	fi
done
# bench_poll, which test-build builds beside the tools (x86-64 only): its table.
if [ "$(uname -m)" = x86_64 ]; then
	if grep -q "^poll: exit 0\$" "$tmp/log"; then
		result pass bench_step_poll
	else
		result fail bench_step_poll "$(grep "^poll: " "$tmp/log" || echo 'not run')"
	fi
	check_lines bench_md_poll "$md" '^\| library, 4 B( \| [0-9.]+){3} \| [0-9]+ \| 0 \| 0 \|$'
fi
check_lines bench_md_commands "$md" '^Command: `gdrcopy_[a-z]+( .*)?`$' 6
check_lines bench_md_latency_rows "$md" '^\| [0-9]+ (B|KiB) \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|$' 26
check_lines bench_md_raw_rows "$md" '^\| raw_(store8_sfence|load64_[a-z]+) \|' 2
check_lines bench_md_sweep_tables "$md" '^\| size \| auto \|' 2
check_lines bench_md_bandwidth_rows "$md" '^\| [0-9]+ (B|KiB) \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|$' 17
check_lines bench_md_apiperf_rows "$md" '^\| (64|128|256) KiB( \| [0-9.]+ / [0-9.]+){5} \|$' 3
check_lines bench_md_setup_rows "$md" '^\| (gdr_open|first pin|gdr_close) \| [0-9.]+ \|' 3
if [ -x "$BIN/gdrcopy_pplat" ]; then
	check_lines bench_md_pplat_skipped "$md" \
		'\*\*skipped\*\*: gdrcopy_pplat: the simulated GPU runs no kernels' 6
fi
n=$(ls "$tmp/out" | wc -l)
if [ "$n" -le 8 ]; then
	result pass bench_at_most_8_files
else
	result fail bench_at_most_8_files "$n files in the output directory"
fi
test_exit

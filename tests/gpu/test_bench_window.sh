#!/bin/bash
# Tier 1: bench_window on the simulated CUDA driver through the vulkan backend (over lavapipe).
# Checks the program, not its numbers (host memory stands in for the BAR here): it runs, prints
# the round trip, a row of three filler kinds for every K, the copy calls' table and steps and
# the routines on fresh lines, with every data check passed; refuses bad options, skips without a
# CUDA driver and says which step failed when it cannot map GPU memory.
. @LIB@
need_sim
bench=@BENCH@
num='[0-9]+\.[0-9]+'

x86_only window_other_arch_skips "$bench"
check_refuses window_refuses "$bench" "-r 0" "-r 102" "-n 0" "-x" "extra"
check_no_driver window_no_driver "$bench" -r 1 -n 10

sim_env
check_no_mapping window_no_mapping "$bench" -r 1 -n 10
out=$tmp/window.md
run window_runs "$out" "$bench" -r 3 -n 200
check_lines window_round_trip "$out" "Round trip \(each read waits for the one before\): $num us\.$"
check_lines window_header "$out" '^\| K \| nop: us \| in flight \| L1 load: us \| in flight \| L1 store: us \| in flight \|$'
for k in 0 16 32 48 64 96 128 160 192 256 320 384 448 512 640 768 1024; do
	check_lines "window_row_$k" "$out" "^\| $k( \| $num){6} \|$"
done
# The copy calls: a row per K (0-256 in steps of 4) of 15 columns, and each call's steps.
check_lines window_call_header "$out" '^\| K \| 16 B: library \| 16 B: library, AVX2 at 32 B \| 16 B: dispatcher \| 16 B: GDRCopy 2\.6 call \| 16 B: GDRCopy 2\.6 strategy \| 32 B: library \|'
check_lines window_call_rows "$out" "^\| [0-9]+( \| $num){15} \|$" 65
check_lines window_call_steps "$out" "^\| (16|32|64) B \| (library|library, AVX2 at 32 B|dispatcher|GDRCopy 2\.6 call|GDRCopy 2\.6 strategy) \| $num \| (-|[0-9]+) \| (-|[0-9]+) \| (-|-?[0-9]+) \| (-|-?[0-9]+) \|$" 15
# Each routine on fresh lines: a row per size, the library, GDRCopy's call, each routine ("-"
# below its smallest size) and the fastest; no data check failed (the run's exit says so too).
check_lines window_routine_header "$out" '^\| size \| library \| GDRCopy 2\.6 call( \| library:[a-z0-9_]+)+ \| fastest routine \|$'
check_lines window_routine_rows "$out" "^\| (8|16|32|64|128|256) B( \| (-|$num)){3,} \| [a-z0-9_]+ \|$" 6
if grep -q '^data check failed' "$out"; then
	result fail window_data_checks "$(grep -m 1 '^data check failed' "$out")"
else
	result pass window_data_checks
fi
test_exit

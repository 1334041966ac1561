#!/bin/bash
# Tier 1: bench_copy_impls -q on the simulated CUDA driver through the vulkan backend (over
# lavapipe). Checks the program, not its numbers: it runs, every method's data check passes, the
# report has its tables (the public call's steps too), verdicts and suggested rows, the CSV has a
# row per method and size, a
# spent time budget leaves a report of what was measured, and it refuses bad options, skips
# without a CUDA driver and says which step failed when it cannot map GPU memory.
. @LIB@
need_sim
bench=@BENCH@
num='[0-9]+\.[0-9]+'
sizes='(1 B|8 B|64 B|1 KiB|64 KiB)'

if ! env -u LD_LIBRARY_PATH -u VK_DRIVER_FILES "$bench" -x >"$tmp/usage" 2>&1 &&
	grep -q '^usage: ' "$tmp/usage"; then
	result pass bench_bad_option
else
	result fail bench_bad_option "no usage message: $(tail -n 1 "$tmp/usage")"
fi
check_no_driver bench_no_driver "$bench" -q

sim_env
check_no_mapping bench_no_mapping "$bench" -q
md=$tmp/bench.md
csv=$tmp/bench.csv
"$bench" -q -c "$csv" >"$md" 2>"$tmp/bench.err"
rc=$?
if [ "$rc" = 0 ]; then
	result pass bench_quick
else
	result fail bench_quick "exit $rc: $(cat "$md" "$tmp/bench.err" | grep -v '^[[:space:]]*$' | tail -n 1)"
	test_exit
fi
if grep -q '^Every data check passed\.$' "$md" && ! grep -q 'FAILED' "$md"; then
	result pass bench_data_checks
else
	result fail bench_data_checks "$(sed -n '/^## Data checks that failed/,$p' "$md" | sed -n 3p)"
fi
check_lines bench_comparison_tables "$md" "^\\| size \\| library \\| GDRCopy 2\\.6 call \\| library / GDRCopy call \\(per round\\) \\| GDRCopy 2\\.6 call, kernels' checks \\| library / it \\(per round\\) \\| GDRCopy 2\\.6 strategy \\| library / GDRCopy strategy \\(per round\\) \\|" 2
check_lines bench_comparison_rows "$md" "^\| $sizes \| $num ±[0-9]+%( \| $num ±[0-9]+% \| $num""x \($num""x\)){3} \| " 10
check_lines bench_unaligned_tables "$md" '^\| size \| library \| GDRCopy 2\.6 strategy \| library / GDRCopy \|' 2
check_lines bench_routine_tables "$md" '^\| size \| generic \| memcpy \|.* \| fastest routine \| library uses \|$' 2
check_lines bench_routine_rows "$md" "^\| $sizes( \| (\*\*)?($num|-)(\*\*)?)+ \| [a-z0-9_]+ \| [a-z0-9_]+ \|\$" 10
check_lines bench_where_rows "$md" "^\| $sizes \| [a-z0-9_]+( \| ($num|-))+ \|\$" 10
check_lines bench_latency_rows "$md" "^\| (1 B|8 B|64 B|1 KiB) \| $num ±[0-9]+% \|" 4
check_lines bench_targets "$md" '^- (Reads within 1\.5x|A (64 B|1 KiB) read at most|An 8-byte write within 1\.03x)' 4
check_lines bench_target_gdrcopy_call "$md" "^- Reads at or below GDRCopy 2\.6's public call at every size: (met|\*\*missed\*\* at )"
check_lines bench_target_gdrcopy_call_per_round "$md" "^- Reads at or below GDRCopy 2\.6's public call at every size, round by round \(the median of the per-round ratios\): (met|\*\*missed\*\* at [0-9]+ (B|KiB) \($num""x\))"
check_lines bench_target_gdrcopy_checked "$md" "^- Reads at or below GDRCopy 2\.6's public call with its kernels' checks \(its default build\) at every size: (met|\*\*missed\*\* at )"
check_lines bench_target_gdrcopy_checked_per_round "$md" "^- Reads at or below GDRCopy 2\.6's public call with its kernels' checks \(its default build\) at every size, round by round \(the median of the per-round ratios\): (met|\*\*missed\*\* at [0-9]+ (B|KiB) \($num""x\))"
check_lines bench_target_gdrcopy_strategy "$md" "^- Reads at or below GDRCopy 2\.6's strategy alone \(no public call around it\) at every size: (met|\*\*missed\*\* at )"
check_lines bench_target_gdrcopy_strategy_per_round "$md" "^- Reads at or below GDRCopy 2\.6's strategy alone \(no public call around it\) at every size, round by round \(the median of the per-round ratios\): (met|\*\*missed\*\* at [0-9]+ (B|KiB) \($num""x\))"
check_lines bench_step_tables "$md" '^\| size \| routine \+ sfence \| dispatcher \| public call before \| announce \+ dispatcher \| lookup \+ dispatcher \| 88 nops \+ dispatcher \| flat, not announced \| flat, not looked up \|( flat, fence last \|)? flat call before \|( announced: both stores \| announced: store before \| announced: store after \| announced: loads only \| announced: loads, global record \| announced: thread pointer only \| leaner guards \| leaner guards, fewer branches \| not looked up, \+ slot tag \+ branch \| not looked up, \+ slot tag \| not looked up, \+ global \+ branch \| not looked up, \+ branch on handle \| flat, reshaped \| 12 nops before the routine \| 48 nops before the routine \| 12 nops before the fence \| 48 nops before the fence \| 12 nops after the fence \| 48 nops after the fence \|( 4 branches before the routine \| 12 branches before the routine \| 12 loads before the routine \| 48 loads before the routine \| flat, inline 16 B loads to 64 B \| flat, inline 32 B loads to 64 B \|)?)? library \| library, copies fenced \| library - dispatcher \|$' 2
check_lines bench_step_rows "$md" "^\| (1 B|8 B|64 B|1 KiB)( \| $num){11,37} \| [-+]$num \|\$" 8
check_lines bench_overhead "$md" "^- The public (read|write) call over the dispatcher, [0-9]+ B - [0-9]+ (B|KiB): [-+]$num to [-+]$num us \(the call before it was made flat: [-+]$num to [-+]$num us\)\$" 2
check_lines bench_fence_note "$md" 'Copies (do not fence themselves here|\*\*fence themselves here)'
check_lines bench_rows "$md" '^Rows for `(from|to)_wc_rows` in src/copy\.c: `(\{ [0-9]+, [a-z0-9_]+ \}, )*\{ SIZE_MAX, [a-z0-9_]+ \}`$' 2
check_lines bench_csv_header "$csv" '^table,direction,ends,size,method,median_us,p25_us,p75_us,min_us,rounds,calls_per_round,data_check,per_round_vs_gdrcopy26_call,per_round_vs_gdrcopy26,per_round_vs_gdrcopy26_call_checked$'
bad=$(grep -cvE ",ok,$num,$num,$num\$" "$csv")
if [ "$bad" = 1 ]; then
	result pass bench_csv_checks
else
	result fail bench_csv_checks "$((bad - 1)) CSV rows without a passed data check"
fi
for d in d2h h2d; do
	for n in 1 8 64 1024 65536; do
		paths=
		[ "$n" -le 4096 ] && paths="path_before path_announced path_looked_up path_nops path_unannounced path_unlooked path_flat_before library_fenced"
		[ "$n" -le 4096 ] && [ $d = d2h ] && paths="$paths path_fence_last path_probe_both path_probe_enter path_probe_leave path_probe_none path_probe_global path_probe_tls path_lean path_lean2 path_ul_slot path_ul_slotnb path_ul_global path_ul_arg path_spaced_0 path_spaced_a12 path_spaced_a48 path_spaced_b12 path_spaced_b48 path_spaced_c12 path_spaced_c48"
		[ "$n" -le 4096 ] && [ $d = d2h ] && [ "$(uname -m)" = x86_64 ] && paths="$paths path_branched_a4 path_branched_a12 path_loaded_a12 path_loaded_a48 path_lines16 path_lines32"
		for m in library library:generic cumemcpy gdrcopy26_call_checked $paths; do
			if ! grep -qE "^throughput,$d,aligned,$n,$m,$num,$num,$num,$num,3,[0-9]+,ok,$num,$num,$num\$" "$csv"; then
				result fail bench_csv_rows "no $m row for $d at $n B"
				test_exit
			fi
		done
	done
done
result pass bench_csv_rows
# Round by round, GDRCopy's calls against themselves are 1 exactly and the library's ratios are real.
self=$(grep -cE "^throughput,d2h,aligned,[0-9]+,gdrcopy26_call,([^,]*,){7}1\.0000,$num,$num\$" "$csv")
checked=$(grep -cE "^throughput,d2h,aligned,[0-9]+,gdrcopy26_call_checked,([^,]*,){9}1\.0000\$" "$csv")
lib=$(awk -F, '$1 == "throughput" && $2 == "d2h" && $3 == "aligned" && $5 == "library" && $13 > 0 && $14 > 0 && $15 > 0' "$csv" | grep -c .)
if [ "$self" -ge 5 ] && [ "$checked" -ge 5 ] && [ "$lib" -ge 5 ]; then
	result pass bench_csv_per_round
else
	result fail bench_csv_per_round "$self gdrcopy26_call and $checked gdrcopy26_call_checked rows at 1.0000 against themselves, $lib library rows with non-zero ratios (want 5 each)"
fi

# -H moves the host copies within their page (the setup says where); out of range is refused.
"$bench" -q -s 8 >"$tmp/h0.md" 2>&1
"$bench" -q -s 8 -H 100 >"$tmp/h100.md" 2>&1
h0=$(grep -o 'host copies at page offset 0x[0-9a-f]*' "$tmp/h0.md" | sed 's/.* //')
h100=$(grep -o 'host copies at page offset 0x[0-9a-f]*' "$tmp/h100.md" | sed 's/.* //')
if [ -n "$h0" ] && [ -n "$h100" ] && [ $(((h100 - h0 + 4096) % 4096)) = 100 ] &&
	grep -q '^Every data check passed\.$' "$tmp/h100.md" &&
	! "$bench" -q -H 4096 >"$tmp/h4096" 2>&1 && grep -q '^usage: ' "$tmp/h4096" &&
	! "$bench" -q -H 12x >"$tmp/h12x" 2>&1 && grep -q '^usage: ' "$tmp/h12x"; then
	result pass bench_host_shift
else
	result fail bench_host_shift "page offsets '$h0' and '$h100' (want 100 apart), or -H 4096 or -H 12x accepted: $(tail -n 1 "$tmp/h4096" "$tmp/h12x")"
fi

"$bench" -q -t 0.000001 >"$tmp/budget.md" 2>&1
rc=$?
if [ "$rc" = 0 ] && grep -q '^\*\*The time budget (-t) ran out: nothing was measured from the reads of 8 B on\.\*\*$' "$tmp/budget.md" &&
	grep -q '^| 1 B | ' "$tmp/budget.md" && ! grep -q '^| 8 B | ' "$tmp/budget.md"; then
	result pass bench_time_budget
else
	result fail bench_time_budget "exit $rc; no note, or sizes past the budget: $(tail -n 1 "$tmp/budget.md")"
fi
test_exit

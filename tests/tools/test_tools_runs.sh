#!/bin/bash
# Short runs of copylat, copybw and apiperf on the simulated CUDA driver through the vulkan
# backend: exit status and GDRCopy's output formats (not times: these are benchmarks).
. @LIB@
need_sim
sim_env
num='[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?'
sp='[[:space:]]+'

# Into a pipe, each line once: what stdout has buffered must not be flushed again by a probe's
# child process.
"$BIN/gdrcopy_info" | cat >"$tmp/info"
headers=$(grep -c '^gdrcopy [0-9]' "$tmp/info")
if [ "$headers" = 1 ] && [ "$(grep -c '^backend ' "$tmp/info")" = 1 ] &&
	grep -qE '^vulkan +available' "$tmp/info" && grep -q '^gdr_open uses: vulkan$' "$tmp/info"; then
	result pass info_piped
else
	result fail info_piped "header $headers time(s): $(tr '\n' '|' <"$tmp/info" | head -c 300)"
fi

# Its choice "without any setting" is made without GDRCopy's dma-buf switch too; a last line says
# what the shell's own setting does.
env -u GDRCOPY_BACKEND GDRCOPY_USE_DMABUF_MMAP=1 "$BIN/gdrcopy_info" | cat >"$tmp/info_dmabuf"
check_lines info_default_ignores_dmabuf_switch "$tmp/info_dmabuf" '^gdr_open uses: vulkan$'
check_lines info_says_what_the_setting_does "$tmp/info_dmabuf" \
	'^with GDRCOPY_USE_DMABUF_MMAP=1, as here: gdr_open (uses: dmabuf|fails: backend dmabuf: unavailable: .+)$'

"$BIN/gdrcopy_sanity" -l >"$tmp/list" 2>&1
n=$(sed -n '/^List of tests:/,/^List of extended tests:/p' "$tmp/list" | grep -c '^    [a-z]')
e=$(sed -n '/^List of extended tests:/,$p' "$tmp/list" | grep -c '^    [a-z]')
if [ "$n" = 36 ] && [ "$e" = 1 ]; then
	result pass sanity_list
else
	result fail sanity_list "$n tests and $e extended listed, expected 36 and 1"
fi

if run copylat "$tmp/lat" "$BIN/gdrcopy_copylat" -s 4K -w 100 -r 10 -c; then
	check_lines copylat_device_list "$tmp/lat" \
		'^GPU id:0; name: .+; Bus id: [0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}$'
	check_lines copylat_header "$tmp/lat" "^Test${sp}Size\(B\)${sp}Median Time\(us\)${sp}Min\. Time\(us\)" 4
	for t in cuMemcpy_H2D cuMemcpy_D2H; do
		check_lines "copylat_rows_$t" "$tmp/lat" "^$t$sp[0-9]+$sp$num$sp$num\$" 13
	done
	for t in gdr_copy_to_mapping gdr_copy_from_mapping; do
		check_lines "copylat_rows_$t" "$tmp/lat" "^$t$sp[0-9]+$sp$num$sp$num$sp$num\$" 13
	done
	check_lines copylat_closing "$tmp/lat" '^closing vulkan$'
	# The ratio column is cuMemcpy's median over the library's, size by size, in each direction.
	bad=$(awk '
		$1 == "cuMemcpy_H2D" { ref["to", $2] = $3 }
		$1 == "cuMemcpy_D2H" { ref["from", $2] = $3 }
		# Medians below 0.01 us are too short for the 4 decimals printed to give the ratio
		# to 1%: such a row is not compared.
		$1 ~ /^gdr_copy_(to|from)_mapping$/ && $2 ~ /^[0-9]+$/ && $3 >= 0.01 {
			dir = $1 ~ /_to_/ ? "to" : "from"
			if (ref[dir, $2] == "") { print "no cuMemcpy row for " $1 " " $2; exit }
			if (ref[dir, $2] < 0.01) next
			n++
			want = ref[dir, $2] / $3
			d = $5 - want
			if (d < 0) d = -d
			if (d > 0.011 + 0.01 * want) { print $1 " " $2 ": ratio " $5 ", the medians give " want; exit }
		}
		END { if (!n) print "no row with both medians at 0.01 us or more" }' "$tmp/lat")
	if [ -z "$bad" ]; then
		result pass copylat_ratio_is_cumemcpy_over_gdrcopy
	else
		result fail copylat_ratio_is_cumemcpy_over_gdrcopy "$bad"
	fi
	# The routines it names are the library's, as gdrcopy_info reports them.
	tool=$(sed -n 's/^copy routines for 4 KiB: //p' "$tmp/lat")
	info=$(sed -n 's/^copy routines for 4 KiB on write-combined mappings: //p' "$tmp/info")
	if [ -n "$tool" ] && [ "$tool" = "$info" ]; then
		result pass copylat_routines_as_info
	else
		result fail copylat_routines_as_info "copylat: '$tool', gdrcopy_info: '$info'"
	fi
	# GDRCopy's tables only, as scripts written for its copylat expect: the raw one is asked for.
	if grep -qE '^(raw_|Baseline)' "$tmp/lat"; then
		result fail copylat_no_baseline_by_default "$(grep -m 1 -E '^(raw_|Baseline)' "$tmp/lat")"
	else
		result pass copylat_no_baseline_by_default
	fi
fi
if run copylat_baseline "$tmp/latb" "$BIN/gdrcopy_copylat" -s 64 -w 100 -r 10 --baseline; then
	# cuMemcpy's tables are asked for (-c), as GDRCopy's copylat has them.
	if grep -qE '^cuMemcpy_' "$tmp/latb"; then
		result fail copylat_no_cumemcpy_without_c "$(grep -m 1 -E '^cuMemcpy_' "$tmp/latb")"
	else
		result pass copylat_no_cumemcpy_without_c
	fi
	check_lines copylat_raw_store "$tmp/latb" "^raw_store8_sfence${sp}8$sp$num$sp$num\$"
	check_lines copylat_raw_load "$tmp/latb" "^raw_load64_[a-z]+${sp}64$sp$num$sp$num\$"
	# After GDRCopy's tables, which keep their order.
	last=$(grep -nE '^gdr_copy_from_mapping[[:space:]]' "$tmp/latb" | tail -n 1 | cut -d: -f1)
	raw=$(grep -n '^raw_store8_sfence' "$tmp/latb" | cut -d: -f1)
	if [ -n "$last" ] && [ -n "$raw" ] && [ "$raw" -gt "$last" ]; then
		result pass copylat_baseline_last
	else
		result fail copylat_baseline_last "raw_store8_sfence on line ${raw:-none}, the last gdr_copy_from_mapping row on ${last:-none}"
	fi
fi
if run copylat_baseline_csv "$tmp/latbcsv" "$BIN/gdrcopy_copylat" -s 64 -w 100 -r 10 --baseline --csv; then
	check_lines copylat_baseline_csv_rows "$tmp/latbcsv" "^raw_(store8_sfence,8|load64_[a-z]+,64),$num,$num,\$" 2
fi
if run copylat_csv "$tmp/latcsv" "$BIN/gdrcopy_copylat" -s 1K -w 100 -r 10 -c --csv; then
	check_lines copylat_csv_header "$tmp/latcsv" '^test,size,median_us,min_us,cumemcpy_over_gdrcopy$'
	check_lines copylat_csv_rows "$tmp/latcsv" "^gdr_copy_(to|from)_mapping,[0-9]+,$num,$num,$num\$" 22
fi
# An iteration count rounded up to a multiple of 100 is said on stderr, with --csv too (whose
# rows do not say it), and once in a sweep; stdout keeps the rows alone.
env -u GDR_TEST_RESULTS "$BIN/gdrcopy_copylat" -s 64 -w 150 -r 10 --csv >"$tmp/round.out" \
	2>"$tmp/round.err"
rc=$?
if [ "$rc" = 0 ] && [ "$(grep -c . "$tmp/round.err")" = 1 ] &&
	grep -q '^gdrcopy_copylat: warning: write iterations 150 rounded up to 200' "$tmp/round.err" &&
	! grep -q 'rounded' "$tmp/round.out"; then
	result pass copylat_rounded_iters_warned
else
	result fail copylat_rounded_iters_warned "exit $rc, stderr: $(head -c 300 "$tmp/round.err" | tr '\n' '|')"
fi
"$BIN/gdrcopy_copylat" -s 64 -w 150 -r 10 --impl all >"$tmp/round_sweep.out" 2>&1
if [ "$(grep -c 'rounded up to 200' "$tmp/round_sweep.out")" = 1 ]; then
	result pass copylat_rounded_iters_sweep_one_warning
else
	result fail copylat_rounded_iters_sweep_one_warning "$(grep -c 'rounded up to 200' "$tmp/round_sweep.out") warnings"
fi
if run copylat_impl_all "$tmp/sweep" "$BIN/gdrcopy_copylat" -s 256 -w 100 -r 10 --impl all; then
	check_lines copylat_impl_all_auto "$tmp/sweep" '^routine auto: library used [a-z0-9_]+ to GPU, [a-z0-9_]+ from GPU$'
	check_lines copylat_impl_all_tables "$tmp/sweep" "^Size\(B\)${sp}auto$sp" 2
	check_lines copylat_impl_all_rows "$tmp/sweep" "^[0-9]+($sp($num|-))+$sp[a-z0-9_]+$sp($num|-)\$" 18
fi
# A routine whose run fails (here its copies move nothing, where the library's own choice works)
# fails the sweep: named as failed, not as skipped, and exit 1 after the table of the others.
expect_exit copylat_impl_all_failed_routine 1 '^routine [a-z0-9_]+: failed: gdr_copy_to_mapping of 1 bytes at offset 0 moved the wrong data' \
	with_broken_copy to_forced "$BIN/gdrcopy_copylat" -s 64 -w 100 -r 10 --impl all
# getopt takes an abbreviated option: --imp all must sweep once, its runs never sweeping again
# (they re-executed themselves without end). The timeout bounds a regression.
if run copylat_impl_abbreviated "$tmp/sweep_abbr" timeout -s KILL 300 "$BIN/gdrcopy_copylat" \
	-s 64 -w 100 -r 10 --imp all; then
	check_lines copylat_impl_abbreviated_auto "$tmp/sweep_abbr" '^routine auto: library used '
	check_lines copylat_impl_abbreviated_tables "$tmp/sweep_abbr" "^Size\(B\)${sp}auto$sp" 2
fi
# --impl takes exactly the names the library takes, checked by the library itself: a variant
# that has no GDR_COPY_IMPL_* value of its own, and a routine of another architecture, which
# stops the tool (exit 2, the library's reason) instead of measuring the automatic choice.
case $(uname -m) in
x86_64) variant=sse41_blocks other=neon ;;
aarch64) variant=stp other=sse ;;
ppc64le) variant=power other=avx2 ;;
*) variant=generic other=avx2 ;;
esac
if run "impl_variant_$variant" "$tmp/variant" "$BIN/gdrcopy_copybw" -s 64K -w 10 -r 10 \
	--impl "$variant"; then
	if grep -q 'warning' "$tmp/variant"; then
		result fail impl_variant_no_warning "$(grep -m 1 warning "$tmp/variant")"
	else
		result pass impl_variant_no_warning
	fi
fi
for t in copybw copylat apiperf sanity; do
	expect_exit "impl_other_arch_$t" 2 "^gdrcopy_$t: --impl $other: the library does not take it: .*another architecture; this CPU supports: [^;]+\$" \
		env -u GDR_TEST_RESULTS "$BIN/gdrcopy_$t" --impl "$other"
done
expect_exit impl_unknown 2 '^gdrcopy_copylat: --impl nosuch: the library does not take it: .*no such copy routine' \
	"$BIN/gdrcopy_copylat" --impl nosuch

# Every size's data is checked after it is timed: a copy that moves nothing is an error, caught
# at the first size (copylat's 1 byte, whose pattern byte is 0 as fresh memory is): the side
# written to is filled with another byte before each timing.
for t in copylat:1 copybw:4096; do
	first=${t#*:} t=${t%:*}
	expect_exit "${t}_checks_writes" 1 "^gdrcopy_[a-z]+: gdr_copy_to_mapping of $first bytes at offset 0 moved the wrong data" \
		with_broken_copy to "$BIN/gdrcopy_$t" -s 4K -w 100 -r 10
	expect_exit "${t}_checks_reads" 1 "^gdrcopy_[a-z]+: gdr_copy_from_mapping of $first bytes at offset 0 moved the wrong data" \
		with_broken_copy from "$BIN/gdrcopy_$t" -s 4K -w 100 -r 10
done
# Also where the memory already holds what the copy should write: copylat -c's cuMemcpyHtoD
# table has put the pattern there before gdr_copy_to_mapping's.
expect_exit copylat_checks_writes_after_cumemcpy 1 '^gdrcopy_copylat: gdr_copy_to_mapping of 1 bytes at offset 0 moved the wrong data' \
	with_broken_copy to "$BIN/gdrcopy_copylat" -s 4K -w 100 -r 10 -c
# A mapping type the backend does not offer: the library's reason, and what to do.
expect_exit copybw_map_type_refused 1 '^gdrcopy_copybw: gdr_map_v2 with -M cache failed: Invalid argument: vulkan: .*only write-combined.*\(-M default lets the backend choose' \
	"$BIN/gdrcopy_copybw" -s 64K -w 10 -r 10 -M cache
"$BIN/gdrcopy_copylat" -s 4K -C >"$tmp/cold" 2>&1
rc=$?
if [ "$rc" != 0 ] && grep -q 'needs a caching mapping' "$tmp/cold"; then
	result pass copylat_cold_cache_needs_caching
else
	result fail copylat_cold_cache_needs_caching "exit $rc: $(tail -n 1 "$tmp/cold")"
fi

if run copybw "$tmp/bw" "$BIN/gdrcopy_copybw" -s 64K -w 100 -r 10; then
	for l in 'testing size: 65536' 'rounded size: 65536' 'gpu alloc fn: cuMemCreate' \
		'device ptr: [1-9a-f][0-9a-f]*' 'map_d_ptr: 0x[0-9a-f]+' 'info.va: [0-9a-f]+' \
		'info.mapped_size: 65536' 'info.page_size: [0-9]+' 'info.mapped: 1' \
		'info.wc_mapping: [01]' 'page offset: 0' 'user-space pointer:0x[0-9a-f]+' \
		'writing test, size=65536 offset=0 num_iters=100' \
		'reading test, size=65536 offset=0 num_iters=10' "write BW: ${num}MB/s" \
		"read BW: ${num}MB/s" 'unmapping buffer' 'unpinning buffer' 'closing vulkan'; do
		check_lines "copybw_line_$(echo "${l%%[:=,]*}" | tr -c 'a-zA-Z0-9\n' _)" "$tmp/bw" "^$l\$"
	done
fi
if run copybw_sizes "$tmp/bwl" "$BIN/gdrcopy_copybw" -s 8K -c 4K -o 4 -l -w 100 -r 10; then
	check_lines copybw_sizes_write "$tmp/bwl" "^write BW: ${num}MB/s\$" 13
	check_lines copybw_sizes_read "$tmp/bwl" "^read BW: ${num}MB/s\$" 13
	# Each size writes, then reads: its test's header names it, and its line follows.
	order=$(grep -E '^(writing|reading) test|^(write|read) BW' "$tmp/bwl" | cut -d' ' -f1 | tr '\n' ' ')
	if [ "$order" = "$(for i in $(seq 13); do printf 'writing write reading read '; done)" ]; then
		result pass copybw_sizes_order
	else
		result fail copybw_sizes_order "$(echo "$order" | head -c 200)"
	fi
fi
# --csv's columns: test, size, offset, iterations, MB/s.
if run copybw_csv "$tmp/bwcsv" "$BIN/gdrcopy_copybw" -s 8K -c 4K -o 4 -w 7 -r 5 --csv; then
	check_lines copybw_csv_header "$tmp/bwcsv" '^test,size,offset,iters,mb_per_s$'
	check_lines copybw_csv_write "$tmp/bwcsv" "^write,4096,4,7,$num\$"
	check_lines copybw_csv_read "$tmp/bwcsv" "^read,4096,4,5,$num\$"
fi
if run copybw_impl_all "$tmp/bws" "$BIN/gdrcopy_copybw" -s 1K -l -w 20 -r 5 --impl all --csv; then
	check_lines copybw_impl_all_csv "$tmp/bws" "^auto,(write|read),[0-9]+,$num,0\$" 22
fi

# What a tool prints is its result: when stdout cannot take it (a full disk), the run fails.
for cmd in "info" "copybw -s 64K -w 10 -r 10" "copylat -s 64 -w 100 -r 10" "apiperf -s 64K -n 2 -w 0" \
	"sanity -t attributes_sanity" "copybw -s 64K -w 10 -r 10 --csv"; do
	# shellcheck disable=SC2086
	check_stdout_full "stdout_full_${cmd// /_}" env -u GDR_TEST_RESULTS "$BIN/gdrcopy_"$cmd
done

# pplat's kernel cannot run on the simulated GPU: one line says so, and it is a skip (77).
if [ -x "$BIN/gdrcopy_pplat" ]; then
	"$BIN/gdrcopy_pplat" -t 10 >"$tmp/pplat" 2>&1
	rc=$?
	if [ "$rc" = 77 ] && [ "$(grep -c . "$tmp/pplat")" = 1 ] &&
		grep -q '^gdrcopy_pplat: the simulated GPU runs no kernels .*needs a real GPU$' "$tmp/pplat"; then
		result pass pplat_simulated_gpu
	else
		result fail pplat_simulated_gpu "exit $rc, expected 77: $(head -c 300 "$tmp/pplat" | tr '\n' '|')"
	fi
fi

if run apiperf "$tmp/api" "$BIN/gdrcopy_apiperf" -s 128K -n 5 -w 1; then
	check_lines apiperf_header "$tmp/api" \
		'^Size\(B\)	pin\.Time\(us\)	map\.Time\(us\)	get_info\.Time\(us\)	unmap\.Time\(us\)	unpin\.Time\(us\)$' 2
	check_lines apiperf_rows "$tmp/api" "^(65536|131072)(	$num){5}\$" 2
	check_lines apiperf_histogram "$tmp/api" '^Histogram of gdr_pin_buffer latency for (65536|131072) bytes$' 2
	check_lines apiperf_bins "$tmp/api" "^\[$num	-	$num\]	[0-9]+\$" 20
	# Every timed pin is in one bin: each size's ten counts add up to -n.
	sums=$(awk '/^Histogram of/ { if (h) print s; h = 1; s = 0; next }
		h && /^\[/ { s += $NF } END { if (h) print s }' "$tmp/api" | tr '\n' ' ')
	if [ "$sums" = "5 5 " ]; then
		result pass apiperf_bins_count_every_pin
	else
		result fail apiperf_bins_count_every_pin "the histograms count '$sums' pins, not 5 each"
	fi
	# The last line, as GDRCopy's: scripts read to it. The set-up calls are asked for.
	if [ "$(tail -n 1 "$tmp/api")" = 'closing vulkan' ]; then
		result pass apiperf_ends_closing
	else
		result fail apiperf_ends_closing "last line: $(tail -n 1 "$tmp/api")"
	fi
fi
# -s is rounded up to a GPU page, as GDRCopy's apiperf does: 100K pins 64 KiB and 128 KiB.
if run apiperf_rounds_up "$tmp/api100k" "$BIN/gdrcopy_apiperf" -s 100K -n 2 -w 0; then
	check_lines apiperf_rounds_up_rows "$tmp/api100k" "^(65536|131072)(	$num){5}\$" 2
fi
if run apiperf_csv "$tmp/apicsv" "$BIN/gdrcopy_apiperf" -s 64K -n 3 -w 0 --csv; then
	check_lines apiperf_csv_rows "$tmp/apicsv" "^65536,(pin|map|get_info|unmap|unpin),$num,$num,$num\$" 5
	if grep -qE '^[0-9]+,(open|close|pin)_first,|^0,' "$tmp/apicsv"; then
		result fail apiperf_csv_no_setup "$(grep -m 1 -E '^[0-9]+,(open|close|pin)_first,|^0,' "$tmp/apicsv")"
	else
		result pass apiperf_csv_no_setup
	fi
fi
if run apiperf_setup "$tmp/apisetup" "$BIN/gdrcopy_apiperf" -s 64K -n 3 -w 0 --setup; then
	check_lines apiperf_setup_rows "$tmp/apisetup" "^gdr_(open|close)	$num	$num	$num	$num\$" 2
	check_lines apiperf_setup_first_pin "$tmp/apisetup" "^first pin of 65536 bytes: $num us"
fi
if run apiperf_setup_csv "$tmp/apisetupcsv" "$BIN/gdrcopy_apiperf" -s 64K -n 3 -w 0 --setup --csv; then
	check_lines apiperf_setup_csv_rows "$tmp/apisetupcsv" \
		"^(0,(open_first|open|close_first|close)|65536,pin_first),$num,$num,$num\$" 5
fi
test_exit

#!/bin/bash
# Tier 3: gdrcopy_pplat on the real GPU, the one tool whose GPU kernel no lower tier can run.
# Each mode and object placement runs to the end (the tool dies when a data word arrives wrong
# or the GPU does not answer), and prints GDRCopy's result line with 0 < min <= median. Checks
# the tool, not its times.
. @LIB@
[ -e /dev/nvidiactl ] || skip_test "no NVIDIA driver on this machine (/dev/nvidiactl)"
pplat=$BIN/gdrcopy_pplat
[ -x "$pplat" ] || skip_test "gdrcopy_pplat is not built: it needs nvcc (NVCC=)"
num='[0-9]+\.[0-9]+'
line="Round-trip latency per iteration is \\(min\\) $num, \\(median\\) $num us"

# check_latency NAME LOG PREFIX: LOG's result line after PREFIX has 0 < min <= median.
check_latency() {
	local name=$1 log=$2 prefix=$3 got
	got=$(grep -E "^$prefix$line\$" "$log" | head -n 1)
	if [ -z "$got" ]; then
		result fail "$name" "no '${prefix}Round-trip latency' line: $(tail -n 1 "$log")"
	elif echo "$got" | awk -F'[ ,]+' '{ for (i = 1; i < NF; i++) { if ($i == "(min)") m = $(i + 1);
		if ($i == "(median)") d = $(i + 1) } exit !(m > 0 && m <= d) }'; then
		result pass "$name"
	else
		result fail "$name" "min above median or zero: $got"
	fi
}

# The flag round trip (the benchmark's own command), with the raw store beside the library.
if run pplat_flags "$tmp/flags" "$pplat" -d 0 -t 2000 -G gpumem -C hostmem -r; then
	check_latency pplat_flags_line "$tmp/flags" ""
	check_latency pplat_raw_line "$tmp/flags" "Raw flag store: "
fi
# Fewer iterations than buckets (one each), both flags in GPU memory; then a count that does not
# split evenly into 100 buckets, both flags in host memory, as a CSV row.
if run pplat_flags_gpumem "$tmp/few" "$pplat" -d 0 -t 37 -G gpumem -C gpumem; then
	check_latency pplat_flags_gpumem_line "$tmp/few" ""
fi
if run pplat_flags_uneven "$tmp/uneven" "$pplat" -d 0 -t 250 -G hostmem -C hostmem --csv; then
	check_lines pplat_csv_row "$tmp/uneven" "^gdrcopy,0,hostmem,hostmem,none,0,250,$num,$num\$"
fi
# Data the CPU writes and 8 blocks check, beside the same exchange through cuMemcpy.
if run pplat_data "$tmp/data" "$pplat" -d 0 -t 300 -s 4096 -D gpumem -c; then
	check_latency pplat_data_line "$tmp/data" ""
	check_latency pplat_cumemcpy_line "$tmp/data" "cuMemcpy: "
fi
# The GPU produces, the CPU reads the data through the mapping and checks it.
if run pplat_gpu_produces "$tmp/gpu" "$pplat" -d 0 -t 300 -m 1 -s 65536 -B 4 -T 256 \
	-D gpumem; then
	check_latency pplat_gpu_produces_line "$tmp/gpu" ""
	check_lines pplat_gpu_timer_line "$tmp/gpu" "^GPU-timed \\(%globaltimer\\) average per iteration: $num us\$"
fi
# A grid larger than the GPU runs at once would wait for ever (the blocks wait on each other):
# refused before the launch. 65535 blocks of 1024 threads exceed any GPU's resident blocks.
expect_exit pplat_grid_too_large 1 '^gdrcopy_pplat: -B 65535 -T 1024: this GPU runs at most [0-9]+ such blocks at once' \
	timeout 120 "$pplat" -d 0 -t 10 -s 4096 -B 65535 -T 1024 -u 5
test_exit

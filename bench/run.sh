#!/bin/bash
# The standard gdrcopy benchmark set, for a machine with an NVIDIA GPU. Every comparison is made
# side by side in the same run: bench_copy_impls (the library against GDRCopy 2.6's strategy, raw
# accesses, cuMemcpy and each copy routine, in one process), bench_poll (how soon a poll through
# the mapping sees the GPU's store, by way of reading), copylat against cuMemcpy (-c) and a
# raw store/load (--baseline), each copy routine against the library's own choice (--impl all),
# pplat against cuMemcpyAsync (-c) and against a raw store of its flag (-r).
#
#   bench/run.sh [OUT_DIR]        (default: $OUT, else ./bench-out)
#
# Writes to OUT_DIR: results.md (every table, each naming the command behind it), up to five
# PNG plots (when Python has matplotlib), copy_impls.csv (bench_copy_impls's figures) and
# bench.log (every command, its output and its CSV). About two minutes on an H200 (estimated);
# never more than ~4 minutes: each step has a time limit and steps stop starting once BUDGET
# seconds are spent. A tool that cannot measure anything here (exit 77: pplat on the simulated
# GPU) is reported as skipped, with its reason.
#
# Environment:
#   BIN      the tools (default: build/bin of this tree); bench_copy_impls and bench_poll are
#            looked for in BIN/../tests/gpu (make gpu-build builds them)
#   PYTHON   python3 with numpy and matplotlib (default: python3)
#   QUICK=1  tiny sizes and iteration counts: checks the script, measures nothing useful
#   DEV      GPU id (default 0)
#   Anything the library reads (GDRCOPY_BACKEND, VK_DRIVER_FILES, ...) passes through.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
out=${1:-${OUT:-bench-out}}
BIN=${BIN:-$repo/build/bin}
PYTHON=${PYTHON:-python3}
DEV=${DEV:-0}
STEP_TIMEOUT=${STEP_TIMEOUT:-150}
BUDGET=${BUDGET:-220}	# seconds for all steps; a step that would start later is skipped

mkdir -p "$out" || exit 1
raw=$(mktemp -d "${TMPDIR:-/tmp}/gdrcopy-bench.XXXXXX")
trap 'rm -rf "$raw"' EXIT
log=$out/bench.log
: >"$log"
: >"$raw/steps.tsv"
start=$(date +%s)

# Sizes and counts: chosen so the whole set stays well under four minutes on an H200 (reads
# through BAR1 run at 0.06-2 GB/s, and memcpy/generic reads are the slowest).
if [ "${QUICK:-0}" = 1 ]; then
	IMPLS="-q"
	POLL="-r 2 -n 50 -t 1000"
	LAT="-s 4K -w 100 -r 10"
	SWEEP="-s 1K -w 100 -r 10"
	BW_SWEEP="-s 64K -c 64K -l -w 20 -r 5"
	BW_DEFAULT="-w 100 -r 10"
	API="-s 256K -n 5 -w 1"
	PP_ITERS=50
else
	IMPLS="-r 50 -l 100 -t 100"
	POLL="-r 21 -n 2000 -t 50"
	LAT="-s 4M -w 1000 -r 100"
	SWEEP="-s 256K -w 1000 -r 100"
	BW_SWEEP="-s 64M -c 64M -l -w 200 -r 10"
	BW_DEFAULT=""
	API="-s 64M -n 100 -w 10"
	PP_ITERS=1000
fi

# step NAME TOOL ARGS...: run BIN/TOOL (TOOL itself when it is a path), keep its stdout as
# NAME.out, log everything under TOOL's name.
step() {
	local name=$1 tool=${2##*/} prog=$2 t0 t1 rc last limit
	shift 2
	[[ $prog == */* ]] || prog=$BIN/$prog
	limit=$((BUDGET - ($(date +%s) - start)))
	if [ "$limit" -le 0 ]; then
		printf '%s\tskipped\t%s\tthe %s s budget was spent\n' "$name" "$tool $*" "$BUDGET" \
			>>"$raw/steps.tsv"
		echo "$name: skipped (budget spent)" >&2
		return 0
	fi
	[ "$limit" -gt "$STEP_TIMEOUT" ] && limit=$STEP_TIMEOUT
	t0=$(date +%s%N)
	{
		echo "=== $name"
		echo "\$ $tool $*"
	} >>"$log"
	timeout -k 5 "$limit" "$prog" "$@" >"$raw/$name.out" 2>"$raw/$name.err" </dev/null
	rc=$?
	t1=$(date +%s%N)
	cat "$raw/$name.out" "$raw/$name.err" >>"$log"
	echo "exit $rc after $(((t1 - t0) / 1000000)) ms" >>"$log"
	echo >>"$log"
	last=$(grep -v '^[[:space:]]*$' "$raw/$name.err" | tail -n 1)
	[ -n "$last" ] || last=$(grep -v '^[[:space:]]*$' "$raw/$name.out" | tail -n 1)
	# 77: the tool cannot measure anything here (pplat on the simulated GPU), and says why.
	printf '%s\t%s\t%s\t%s\n' "$name" "$([ "$rc" = 77 ] && echo skipped || echo "$rc")" \
		"$tool $*" "$last" >>"$raw/steps.tsv"
	echo "$name: exit $rc" >&2
}

{
	echo "gdrcopy benchmark run, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "host: $(uname -srm)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //')"
	[ -r /proc/driver/nvidia/version ] && head -n 1 /proc/driver/nvidia/version
	echo "tools: $BIN"
	echo
} >"$raw/host.txt"
cat "$raw/host.txt" >>"$log"

step info gdrcopy_info
impls=$(dirname "$BIN")/tests/gpu/bench_copy_impls
if [ -x "$impls" ]; then
	# shellcheck disable=SC2086
	step copy_impls "$impls" $IMPLS -c "$out/copy_impls.csv"
else
	printf 'copy_impls\tskipped\tbench_copy_impls\tnot built (make gpu-build)\n' >>"$raw/steps.tsv"
fi
poll=$(dirname "$BIN")/tests/gpu/bench_poll
if [ -x "$poll" ]; then
	# shellcheck disable=SC2086
	step poll "$poll" $POLL
else
	printf 'poll\tskipped\tbench_poll\tnot built (make gpu-build)\n' >>"$raw/steps.tsv"
fi
step copybw_default gdrcopy_copybw -d "$DEV" $BW_DEFAULT
step copylat gdrcopy_copylat -d "$DEV" $LAT -c --baseline -a cuMemCreate --csv
step sweep gdrcopy_copylat -d "$DEV" $SWEEP -a cuMemCreate --impl all --csv
step copybw gdrcopy_copybw -d "$DEV" $BW_SWEEP -a cuMemCreate --csv
step apiperf gdrcopy_apiperf -d "$DEV" $API -a cuMemCreate --setup --csv
if [ -x "$BIN/gdrcopy_pplat" ]; then
	step pplat_flag gdrcopy_pplat -d "$DEV" -t "$PP_ITERS" -G gpumem -C hostmem -r -c --csv
	step pplat_flag_gpumem gdrcopy_pplat -d "$DEV" -t "$PP_ITERS" -G gpumem -C gpumem --csv
	step pplat_flag_hostmem gdrcopy_pplat -d "$DEV" -t "$PP_ITERS" -G hostmem -C hostmem --csv
	step pplat_gpu_produces gdrcopy_pplat -d "$DEV" -t "$PP_ITERS" -m 1 -G gpumem -C gpumem --csv
	step pplat_data4k gdrcopy_pplat -d "$DEV" -t "$PP_ITERS" -s 4096 -D gpumem -c --csv
	step pplat_data4k_gpu_produces gdrcopy_pplat -d "$DEV" -t "$PP_ITERS" -m 1 -s 4096 -D gpumem \
		-G gpumem -C gpumem --csv
else
	printf 'pplat\tskipped\tgdrcopy_pplat\tnot built (no nvcc when the tree was built)\n' \
		>>"$raw/steps.tsv"
fi

elapsed=$(($(date +%s) - start))
echo "total: $elapsed s" >>"$log"
"$PYTHON" "$here/report.py" "$raw" "$out" "$elapsed" 2>&1 | tee -a "$log" >&2
echo "results in $out:" >&2
ls "$out" >&2

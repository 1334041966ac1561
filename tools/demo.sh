#!/bin/bash
# make run's demonstration (the top-level Makefile's "run"): gdrcopy_info, then gdrcopy_demo
# (pin, map, write, read back, each checked against cuMemcpy) and copy latencies beside
# cuMemcpy's (gdrcopy_copylat -c), on the backend that works here. Without an NVIDIA GPU the same
# runs on the simulated GPU: the simulated CUDA driver (tests/sim/cuda) over Mesa's lavapipe,
# each line marked as simulated, without timings (its "GPU memory" is host memory, so they would
# say nothing of a GPU), and a last line gives the environment that runs the tools there by
# hand; the packages that needs are installed first when missing.
#   demo.sh BUILD SIM_BUILD_COMMAND SIM_DEBS...
set -u
build=$1 sim_build=$2
shift 2
bin=$build/bin
demo=$build/demo/gdrcopy_demo

# A few sizes of gdrcopy_copylat's rows: median of each copy and how much longer cuMemcpy takes.
latencies() {
	local csv rc
	csv=$("$bin/gdrcopy_copylat" -s 4K -w 1000 -r 100 -c --csv 2>&1)
	rc=$?
	if [ "$rc" != 0 ]; then
		echo "$csv"
		return "$rc"
	fi
	echo "copy latency (gdrcopy_copylat -s 4K -c; medians, us):"
	echo "$csv" | awk -F, '
		$1 ~ /^gdr_copy_(to|from)_mapping$/ && ($2 == 8 || $2 == 64 || $2 == 4096) {
			dir = $1 ~ /_to_/ ? "CPU -> GPU" : "GPU -> CPU"
			printf "  %-10s %5d B   gdrcopy %7.3f us   cuMemcpy/gdrcopy %5.1f\n",
				dir, $2, $3, $5
		}'
}

# On the simulated GPU: what works, and no figures.
show_simulated() {
	"$bin/gdrcopy_info" 2>&1 && "$demo" --no-times 2>&1 &&
		echo "no timings: the simulated GPU's memory is host memory, so copy times there would" \
			"say nothing of a GPU"
}

# NVIDIA's Vulkan driver file where some images put it, outside the Vulkan loader's search path.
nv_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ] && [ -r "$nv_icd" ] &&
	[ -z "$(ls /usr/share/vulkan/icd.d/nvidia_icd*.json /etc/vulkan/icd.d/nvidia_icd*.json 2>/dev/null)" ]; then
	echo "VK_DRIVER_FILES=$nv_icd (NVIDIA's Vulkan driver, outside the loader's search path)"
	export VK_DRIVER_FILES=$nv_icd
fi

info=$("$bin/gdrcopy_info" 2>&1)
if grep -q '^gdr_open uses: ' <<<"$info"; then
	echo "$info"
	echo
	echo "On this machine's GPU:"
	"$demo" 2>&1 && latencies
	exit
fi

if [ -e /dev/nvidiactl ] || [ -n "$(ls /proc/driver/nvidia/gpus 2>/dev/null)" ]; then
	echo "$info"
	echo "make run: this machine has an NVIDIA GPU, but no backend can map its memory: see the reasons above" >&2
	exit 1
fi

echo "$info"
echo
echo "No NVIDIA GPU here: the same on a simulated GPU (the simulated CUDA driver of tests/sim/cuda"
echo "over Mesa's lavapipe; nothing below ran on a GPU)."
tests/install-deps.sh "$@" || exit 1
log=$build/demo/sim-build.log
if ! $sim_build >"$log" 2>&1; then
	tail -n 20 "$log"
	echo "make run: building the simulated CUDA driver failed (log: $log)" >&2
	exit 1
fi
icd=/usr/share/vulkan/icd.d/lvp_icd.$(uname -m).json
[ -r "$icd" ] || icd=$(ls /usr/share/vulkan/icd.d/lvp_icd.*.json 2>/dev/null | head -n 1)
if [ -z "$icd" ]; then
	echo "make run: Mesa's lavapipe (mesa-vulkan-drivers) has no Vulkan driver file here" >&2
	exit 1
fi
sim_lib=$(cd "$build/sim/cuda" && pwd)
export LD_LIBRARY_PATH=$sim_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
unset GDRCOPY_BACKEND GDRCOPY_USE_DMABUF_MMAP GDRCOPY_COPY_IMPL
show_simulated | sed 's/^/[simulated GPU] /'
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || exit "$rc"
echo "That was a simulated GPU. On a machine with an NVIDIA GPU, run make run there: the same on" \
	"the real GPU, with copy latencies beside cuMemcpy's."
# A tool run by hand without this environment finds no libcuda.so.1 and stops: print the one make
# run used, as a line to paste (VK_ICD_FILENAMES is what Vulkan loaders before 1.3.207 read).
echo "To run the tools by hand on the simulated GPU (e.g. $bin/gdrcopy_copybw), first:"
printf 'export LD_LIBRARY_PATH=%q VK_DRIVER_FILES=%q VK_ICD_FILENAMES=%q\n' "$sim_lib" "$icd" "$icd"

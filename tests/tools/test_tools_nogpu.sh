#!/bin/bash
# With no GPU, no CUDA driver or no backend that can map GPU memory, every tool exits non-zero
# with one line that says why.
. @LIB@
tools="sanity copybw copylat apiperf"
[ -x "$BIN/gdrcopy_pplat" ] && tools="$tools pplat"

# expect_one_line NAME PATTERN ENV...: each tool, run under env ENV..., prints one line matching
# PATTERN and exits non-zero.
expect_one_line() {
	local name=$1 pat=$2 t rc lines
	shift 2
	for t in $tools; do
		env "$@" "$BIN/gdrcopy_$t" >"$tmp/out" 2>&1 </dev/null
		rc=$?
		lines=$(grep -c . "$tmp/out")
		if [ "$rc" != 0 ] && [ "$lines" = 1 ] && grep -qE -- "$pat" "$tmp/out"; then
			result pass "${name}_$t"
		else
			result fail "${name}_$t" "exit $rc, $lines line(s): $(head -c 300 "$tmp/out" | tr '\n' '|')"
		fi
	done
}

if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
	for t in $tools; do
		result skip "no_driver_$t" "a CUDA driver (libcuda.so.1) is installed on this machine"
	done
else
	expect_one_line no_driver '^gdrcopy_[a-z]+: no CUDA driver: libcuda\.so\.1: .*install the NVIDIA driver' \
		LD_LIBRARY_PATH="$TOOLS_LIB"
fi

mkdir -p "$tmp/stub"
ln -s "$STUB/libcuda.so" "$tmp/stub/libcuda.so.1"
expect_one_line stub_driver '^gdrcopy_[a-z]+: cuInit failed: CUDA_ERROR_STUB_LIBRARY' \
	LD_LIBRARY_PATH="$tmp/stub:$TOOLS_LIB"

if [ -e "$SIM/libcuda.so.1" ]; then
	# pplat stops before all of these on the simulated driver, which runs no kernels
	# (test_tools_runs checks that).
	tools=${tools% pplat}
	expect_one_line no_device '^gdrcopy_[a-z]+: cuInit failed: CUDA_ERROR_NO_DEVICE$' \
		LD_LIBRARY_PATH="$SIM:$TOOLS_LIB" GDRCOPY_SIM_CUDA_DEVICES=0
	# gdr_open's failure carries the library's reasons (gdr_ext_take_errors), on the one line.
	expect_one_line no_vulkan '^gdrcopy_[a-z]+: gdr_open failed: backend vulkan: unavailable: vkCreateInstance failed .+; run gdrcopy_info$' \
		LD_LIBRARY_PATH="$SIM:$TOOLS_LIB" GDRCOPY_SIM_CUDA_BACKING=memfd GDRCOPY_BACKEND=vulkan \
		VK_DRIVER_FILES=/nonexistent/icd.json VK_ICD_FILENAMES=/nonexistent/icd.json
	expect_one_line no_backend '^gdrcopy_[a-z]+: gdr_open failed: backend gdrdrv: unavailable: .+; backend dmabuf: unavailable: .+; backend vulkan: unavailable: .+; run gdrcopy_info$' \
		LD_LIBRARY_PATH="$SIM:$TOOLS_LIB" GDRCOPY_SIM_CUDA_BACKING=memfd GDRCOPY_BACKEND= \
		VK_DRIVER_FILES=/nonexistent/icd.json VK_ICD_FILENAMES=/nonexistent/icd.json
	# The library's own last line only points at the reasons before it: the tools leave it
	# out of their one line (and the library does write it: the control).
	env LD_LIBRARY_PATH="$SIM:$TOOLS_LIB" GDRCOPY_SIM_CUDA_BACKING=memfd GDRCOPY_BACKEND= \
		VK_DRIVER_FILES=/nonexistent/icd.json VK_ICD_FILENAMES=/nonexistent/icd.json \
		GDRCOPY_ENABLE_LOGGING=1 "$BIN/gdrcopy_copybw" >"$tmp/out" 2>&1 </dev/null
	last='gdr_open: no backend can map GPU memory here'
	if ! grep -q "^ERR: .*$last" "$tmp/out"; then
		result fail no_backend_pointer_left_out "the library's log has no '$last' (the control): $(head -c 300 "$tmp/out" | tr '\n' '|')"
	elif grep -q "^gdrcopy_copybw: .*$last" "$tmp/out"; then
		result fail no_backend_pointer_left_out "$(grep -m 1 '^gdrcopy_copybw: ' "$tmp/out" | head -c 300)"
	else
		result pass no_backend_pointer_left_out
	fi
	expect_one_line no_such_backend '^gdrcopy_[a-z]+: gdr_open failed: GDRCOPY_BACKEND=bogus: no such backend; .*run gdrcopy_info$' \
		LD_LIBRARY_PATH="$SIM:$TOOLS_LIB" GDRCOPY_BACKEND=bogus
else
	result skip no_device "the simulated CUDA driver is not built ($SIM/libcuda.so.1)"
fi
test_exit

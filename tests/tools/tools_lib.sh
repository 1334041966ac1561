# Shared by the tools' tier-1 scripts (sourced; the build fills in the paths): the test harness
# (result, test_exit), and the environment that runs the tools on the simulated CUDA driver and
# lavapipe.
. @HARNESS@
BIN=@BIN@
SIM=@SIM@
STUB=@STUB@
# The library beside the tools: a LD_LIBRARY_PATH that hides libcuda must still hold it, for tools
# built without a RUNPATH (package builds run these tests too).
TOOLS_LIB=$BIN/../lib
LVP_ICD=$(lavapipe_icd "$BIN/gdrcopy_info")
test_scratch tools

# Run the tools on the simulated driver through the vulkan backend.
sim_env() {
	export LD_LIBRARY_PATH="$SIM${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	export VK_DRIVER_FILES="$LVP_ICD" VK_ICD_FILENAMES="$LVP_ICD"
	export GDRCOPY_BACKEND=vulkan
	unset GDRCOPY_COPY_IMPL GDRCOPY_USE_DMABUF_MMAP
}

need_sim() {
	[ -n "$LVP_ICD" ] || skip_test "no lavapipe manifest for the tools' architecture" \
		"(lvp_icd*.json in /usr/share/vulkan/icd.d): install mesa-vulkan-drivers"
	[ -e "$SIM/libcuda.so.1" ] ||
		skip_test "the simulated CUDA driver is not built ($SIM/libcuda.so.1)"
}

# x86_only NAME PROG: a program that times x86-64 instructions must skip (77) elsewhere; there
# this records NAME and ends the test. On x86-64 it returns.
x86_only() {
	local name=$1 prog=$2 rc
	[ "$(uname -m)" = x86_64 ] && return
	"$prog" >"$tmp/other" 2>&1
	rc=$?
	if [ "$rc" = 77 ]; then
		result pass "$name"
	else
		result fail "$name" "exit $rc, expected 77: $(tail -n 1 "$tmp/other")"
	fi
	test_exit
}

# check_refuses PREFIX PROG ARGS...: each ARGS (one string, split at spaces) makes PROG print its
# usage and exit 2, before it looks for a CUDA driver; one result PREFIX_ARGS each.
check_refuses() {
	local prefix=$1 prog=$2 bad rc
	shift 2
	for bad in "$@"; do
		# shellcheck disable=SC2086
		env -u LD_LIBRARY_PATH -u VK_DRIVER_FILES "$prog" $bad >"$tmp/usage" 2>&1
		rc=$?
		if [ "$rc" = 2 ] && grep -q '^usage: ' "$tmp/usage"; then
			result pass "${prefix}_${bad// /_}"
		else
			result fail "${prefix}_${bad// /_}" "exit $rc, expected 2 and usage: $(tail -n 1 "$tmp/usage")"
		fi
	done
}

# check_no_driver NAME COMMAND...: with no CUDA driver to load (LD_LIBRARY_PATH unset), the
# command skips (77) saying "no usable CUDA driver"; a skip of NAME where there is a driver.
check_no_driver() {
	local name=$1 rc
	shift
	if [ -e /dev/nvidiactl ]; then
		result skip "$name" "this machine has an NVIDIA driver"
		return
	fi
	env -u LD_LIBRARY_PATH "$@" >"$tmp/nodrv" 2>&1
	rc=$?
	if [ "$rc" = 77 ] && grep -q '^no usable CUDA driver' "$tmp/nodrv"; then
		result pass "$name"
	else
		result fail "$name" "exit $rc, expected 77: $(tail -n 1 "$tmp/nodrv")"
	fi
}

# check_no_mapping NAME COMMAND...: after sim_env, with the gdrdrv backend forced where there is
# no gdrdrv, the command cannot map its GPU memory: it exits 1 saying which step failed and
# pointing at gdrcopy_info (tests/gpu/bench_bar.c); a skip of NAME where gdrdrv is loaded.
check_no_mapping() {
	local name=$1 rc
	shift
	if [ -e /dev/gdrdrv ]; then
		result skip "$name" "this machine has /dev/gdrdrv"
		return
	fi
	GDRCOPY_BACKEND=gdrdrv "$@" >"$tmp/nomap" 2>&1
	rc=$?
	if [ "$rc" = 1 ] &&
		grep -qE '^gdr_[a-z_0-9]+ failed for [0-9]+ bytes of GPU memory: gdrcopy_info' "$tmp/nomap"; then
		result pass "$name"
	else
		result fail "$name" "exit $rc, expected 1 and the failed step: $(tail -n 1 "$tmp/nomap")"
	fi
}

# check NAME LOG REGEX [COUNT]: LOG has at least COUNT (default 1) lines matching REGEX.
check_lines() {
	local name=$1 log=$2 re=$3 want=${4:-1} got
	got=$(grep -cE -- "$re" "$log")
	if [ "$got" -ge "$want" ]; then
		result pass "$name"
	else
		result fail "$name" "$got lines match /$re/, expected at least $want (log: $(tail -n 1 "$log"))"
	fi
}

# run NAME LOG COMMAND...: the command must exit 0; its stdout and stderr go to LOG.
run() {
	local name=$1 log=$2 rc
	shift 2
	"$@" >"$log" 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		result pass "$name"
		return 0
	fi
	result fail "$name" "exit $rc: $(grep -v '^[[:space:]]*$' "$log" | tail -n 1)"
	return 1
}

# Shared by the tools' tier-1 scripts (sourced; the build fills in the paths): the test harness
# (result, test_exit), and the environment that runs the tools on the simulated CUDA driver and
# lavapipe.
. @HARNESS@
BIN=@BIN@
SIM=@SIM@
STUB=@STUB@
# LD_PRELOAD it, with GDRCOPY_TEST_BROKEN_COPY, for a copy routine gone wrong (broken_copy.c).
BROKEN_COPY=@BROKEN_COPY@
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

# expect_exit NAME RC REGEX COMMAND...: the command exits RC and prints (stdout or stderr) a
# line matching the extended regular expression REGEX; one result NAME.
expect_exit() {
	local name=$1 want=$2 re=$3 out=$tmp/expect_exit.out rc
	shift 3
	"$@" >"$out" 2>&1
	rc=$?
	if [ "$rc" = "$want" ] && grep -qE -- "$re" "$out"; then
		result pass "$name"
	else
		result fail "$name" "exit $rc, expected $want and a line /$re/: $(tail -n 1 "$out")"
	fi
}

# check_refuses PREFIX PROG ARGS...: each ARGS (one string, split at spaces) makes PROG print its
# usage and exit 2, before it looks for a CUDA driver; one result PREFIX_ARGS each.
check_refuses() {
	local prefix=$1 prog=$2 bad
	shift 2
	for bad in "$@"; do
		# shellcheck disable=SC2086
		expect_exit "${prefix}_${bad// /_}" 2 '^usage: ' \
			env -u LD_LIBRARY_PATH -u VK_DRIVER_FILES LD_LIBRARY_PATH="$TOOLS_LIB" \
			"$prog" $bad
	done
}

# check_bad_values PREFIX PROG ARGS...: each ARGS (one string, split at spaces) is a command
# line error: PROG exits 2 with one line, "PROG's name: ..." naming the first word of ARGS,
# before it looks for a CUDA driver; one result PREFIX_ARGS each.
check_bad_values() {
	local prefix=$1 prog=$2 bad out=$tmp/bad_value.out rc
	shift 2
	for bad in "$@"; do
		# shellcheck disable=SC2086
		env -u LD_LIBRARY_PATH -u VK_DRIVER_FILES LD_LIBRARY_PATH="$TOOLS_LIB" "$prog" $bad \
			>"$out" 2>&1 </dev/null
		rc=$?
		if [ "$rc" = 2 ] && [ "$(grep -c . "$out")" = 1 ] &&
			grep -qF -- "${prog##*/}: " "$out" && grep -qF -- "${bad%% *}" "$out"; then
			result pass "${prefix}_${bad// /_}"
		else
			result fail "${prefix}_${bad// /_}" "exit $rc, expected 2 and one line naming '${bad%% *}': $(head -c 300 "$out" | tr '\n' '|')"
		fi
	done
}

# check_stdout_full NAME COMMAND...: with stdout on a full disk (/dev/full) the command exits 1,
# saying so on stderr; a skip of NAME where there is no /dev/full.
check_stdout_full() {
	local name=$1 err=$tmp/stdout_full.err rc
	shift
	if [ ! -w /dev/full ]; then
		result skip "$name" "no /dev/full"
		return
	fi
	"$@" >/dev/full 2>"$err" </dev/null
	rc=$?
	if [ "$rc" = 1 ] && grep -q '^gdrcopy_[a-z]*: writing standard output failed' "$err"; then
		result pass "$name"
	else
		result fail "$name" "exit $rc, expected 1: $(head -c 300 "$err" | tr '\n' '|')"
	fi
}

# check_no_driver NAME COMMAND...: with no CUDA driver to load (LD_LIBRARY_PATH unset), the
# command skips (77) saying "no usable CUDA driver"; a skip of NAME where there is a driver.
check_no_driver() {
	local name=$1
	shift
	if [ -e /dev/nvidiactl ]; then
		result skip "$name" "this machine has an NVIDIA driver"
		return
	fi
	expect_exit "$name" 77 '^no usable CUDA driver' env -u LD_LIBRARY_PATH "$@"
}

# check_no_mapping NAME COMMAND...: after sim_env, with the gdrdrv backend forced where there is
# no gdrdrv, the command cannot map its GPU memory: it exits 1 saying which step failed and
# pointing at gdrcopy_info (tests/gpu/bench_bar.c); a skip of NAME where gdrdrv is loaded.
check_no_mapping() {
	local name=$1
	shift
	if [ -e /dev/gdrdrv ]; then
		result skip "$name" "this machine has /dev/gdrdrv"
		return
	fi
	expect_exit "$name" 1 '^gdr_[a-z_0-9]+ failed for [0-9]+ bytes of GPU memory: gdrcopy_info' \
		env GDRCOPY_BACKEND=gdrdrv "$@"
}

# with_broken_copy HOW COMMAND...: COMMAND with broken_copy.c's copy gone wrong in way HOW. ASan's
# check that its runtime comes first among the libraries is off: the preload comes first here.
with_broken_copy() {
	local how=$1
	shift
	env LD_PRELOAD="$BROKEN_COPY" GDRCOPY_TEST_BROKEN_COPY="$how" \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" "$@"
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

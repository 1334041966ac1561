# Shared by the tools' tier-1 scripts (sourced; the build fills in the paths):
# the environment that runs the tools on the simulated CUDA driver and lavapipe, and one
# result line per check for tests/run-tests.sh.
BIN=@BIN@
SIM=@SIM@
STUB=@STUB@
# The library beside the tools: a LD_LIBRARY_PATH that hides libcuda must still hold it, for tools
# built without a RUNPATH (package builds run these tests too).
TOOLS_LIB=$BIN/../lib
LVP_ICD=${GDR_TEST_LVP_ICD:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
RESULTS=${GDR_TEST_RESULTS:-/dev/stdout}
failures=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gdrcopy-tools.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

result() { # verdict name [reason]
	printf '%s %s%s\n' "$1" "$2" "${3:+ $3}" >>"$RESULTS"
	[ "$1" = fail ] && failures=$((failures + 1))
	return 0
}

# Run the tools on the simulated driver through the vulkan backend.
sim_env() {
	export LD_LIBRARY_PATH="$SIM${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	export VK_DRIVER_FILES="$LVP_ICD" VK_ICD_FILENAMES="$LVP_ICD"
	export GDRCOPY_BACKEND=vulkan
	unset GDRCOPY_COPY_IMPL GDRCOPY_USE_DMABUF_MMAP
}

need_sim() {
	if [ ! -r "$LVP_ICD" ]; then
		echo "no lavapipe ICD ($LVP_ICD): install mesa-vulkan-drivers"
		exit 77
	fi
	if [ ! -e "$SIM/libcuda.so.1" ]; then
		echo "the simulated CUDA driver is not built ($SIM/libcuda.so.1)"
		exit 77
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

finish() {
	[ "$failures" = 0 ]
	exit $?
}

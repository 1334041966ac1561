#!/bin/bash
# Static analysis of the library, the tools and the tests' simulated CUDA driver and Vulkan
# loader, each analyzer on a build of its own into a scratch directory: gcc's -fanalyzer at the
# build's -O2, at -O1 and at -O0 (what it follows changes with the optimization: -O0 and -O1 have
# each found what no other level did), and clang's analyzer through scan-build. Every report fails its case,
# named by file:line; so does a build that fails for another reason. An analyzer that is not
# installed skips its case, naming the package. The analyzers' false positives that the code
# cannot be made to show are suppressed, each with its reason, in analyze.mk.
#   test_analyze.sh SRCDIR
set -u
src=$1
. "$src/tests/harness/harness.sh"
test_own_make
test_scratch analyze
# Build the library, the tools and the simulators into the directory build (no space in it, as
# make wants), with make's arguments after build and log, through the command in the array
# wrapper (none, or scan-build). No gdrcopy_pplat, which is nvcc's C++: NVCC= naming no compiler
# leaves it out.
wrapper=()
analyze_build() { # build log make-argument...
	local build=$1 log=$2
	shift 2
	"${wrapper[@]}" make -C "$src" --no-print-directory -k -j"$(nproc)" WERROR=1 \
		NVCC="$tmp/no-nvcc" BUILD="$build" "$@" lib tools sim-cuda \
		"$build/sim/vulkan-hostile/libvulkan.so.1" >"$log" 2>&1
}

# Case name's verdict from its build's log: pass, or fail with the reports (file:line: message),
# or with the build's first error when it failed without one.
verdict() { # name log status
	local reports
	reports=$(grep -E '^[^ :]+:[0-9]+:[0-9]+: (warning|error): ' "$2" | sort -u |
		sed -E 's/^([^:]+:[0-9]+):[0-9]+: (warning|error): /\1: /')
	if [ -n "$reports" ]; then
		printf '%s\n' "$reports"
		result fail "$1" "$(printf '%s\n' "$reports" | wc -l) report(s):" \
			"$(printf '%s\n' "$reports" | awk 'NR > 1 { printf "; " } { printf "%s", $0 }')"
	elif [ "$3" != 0 ]; then
		result fail "$1" "the build failed: $(grep -m 1 -E 'error|Error' "$2")"
	else
		result pass "$1"
	fi
}

if ! gcc -fanalyzer -Werror -fsyntax-only -x c /dev/null 2>/dev/null; then
	result skip gcc_fanalyzer "gcc has no -fanalyzer (gcc 10 or later: Debian gcc)"
else
	for opt in -O2 -O1 -O0; do
		analyze_build "$tmp/gcc$opt" "$tmp/gcc$opt.log" CC=gcc CFLAGS="$opt -g" \
			EXTRA_CFLAGS=-fanalyzer
		verdict "gcc_fanalyzer$opt" "$tmp/gcc$opt.log" $?
	done
fi

if ! command -v scan-build >/dev/null || ! command -v clang >/dev/null; then
	result skip scan_build "no scan-build or clang (Debian clang-tools and clang)"
else
	wrapper=(scan-build --use-cc=clang --status-bugs -o "$tmp/scan")
	analyze_build "$tmp/clang" "$tmp/scan.log"
	verdict scan_build "$tmp/scan.log" $?
fi
test_exit

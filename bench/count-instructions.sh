#!/bin/bash
# Instructions per call of each copy method, counted exactly by callgrind: the library's public
# calls, the dispatcher under them (gdr_copy_*_mapping_type, no handle lookup), GDRCopy 2.6's
# public call and its strategy alone (tests/gpu/gdrcopy26_copy.c), back to back, as tests/gpu/count_copy_instructions
# makes them. On a BAR what a read executes between its loads and the next read's delays the
# next (docs/performance.md), so this is the figure to watch when changing the copy path.
#
#   bench/count-instructions.sh [SIZE ...]      (default: 1 8 16 32 64 128 256 1024 4096)
#
# The counts depend on this CPU's routines, not on the GPU: where there is no NVIDIA driver the
# program runs on the simulated CUDA driver over lavapipe (make test-build builds it). Needs
# valgrind and `make gpu-build`. Prints a markdown table; every count includes the calling loop's
# own few instructions (five with gcc -O2 on x86-64). Exit 77 when something is missing.
# Valgrind emulates no AVX-512: under it the library picks its AVX2 routine from 256 B, so on an
# AVX-512 CPU the read counts from 256 B are AVX2's, not those of the routine the CPU runs.
# Valgrind before 3.20 cannot read clang's DWARF 5: count a gcc build, or clang's with
# CFLAGS="-O2 -gdwarf-4".
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
BUILD=${BUILD:-$repo/build}
prog=$BUILD/tests/gpu/count_copy_instructions
calls=${CALLS:-1000}
sizes=${*:-1 8 16 32 64 128 256 1024 4096}

skip() { echo "count-instructions: $*" >&2; exit 77; }
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null ||
	skip "valgrind (callgrind) is not installed: apt-get install valgrind"
[ -x "$prog" ] || skip "$prog is not built: make gpu-build"
if [ ! -e /dev/nvidiactl ]; then
	lvp=$(ls /usr/share/vulkan/icd.d/lvp_icd*.json 2>/dev/null | head -n 1)
	[ -e "$BUILD/sim/cuda/libcuda.so.1" ] ||
		skip "no NVIDIA driver and no simulated one: make test-build"
	[ -n "$lvp" ] || skip "no NVIDIA driver and no lavapipe: apt-get install mesa-vulkan-drivers"
	export LD_LIBRARY_PATH="$BUILD/sim/cuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	export VK_DRIVER_FILES=$lvp VK_ICD_FILENAMES=$lvp GDRCOPY_BACKEND=vulkan
	where="the simulated CUDA driver over lavapipe"
else
	where="the NVIDIA driver"
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gdrcopy-count.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

echo "Instructions per call, $calls back-to-back calls per method ($where; $(uname -m);"
echo "\`bench/count-instructions.sh $sizes\`):"
echo
echo "| size | read: library | read: dispatcher | read: GDRCopy 2.6 call | read: GDRCopy 2.6 strategy | write: library | write: dispatcher | write: GDRCopy 2.6 call | write: GDRCopy 2.6 strategy |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for n in $sizes; do
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$prog" "$n" "$calls" \
		>"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" != 0 ]; then
		grep -v '^==' "$tmp/out" | tail -n 3 >&2
		[ "$rc" = 77 ] && exit 77
		echo "count-instructions: count_copy_instructions $n $calls failed (exit $rc)" >&2
		exit 1
	fi
	callgrind_annotate --inclusive=yes --tree=none "$tmp/cg" 2>/dev/null |
		awk -v n="$n" -v calls="$calls" '
		/=> .*:calls_[a-z0-9_]+ \(/ {
			name = $0; sub(/.*:calls_/, "", name); sub(/ \(.*/, "", name)
			v = $1; gsub(",", "", v); count[name] = v / calls
		}
		END {
			split("library_from dispatcher_from gdrcopy26call_from gdrcopy26_from " \
			      "library_to dispatcher_to gdrcopy26call_to gdrcopy26_to", m)
			line = "| " n " B"
			for (i = 1; i <= 8; i++) {
				if (!(m[i] in count)) { print "no count for " m[i] > "/dev/stderr"; exit 1 }
				line = line sprintf(" | %.0f", count[m[i]])
			}
			print line " |"
		}' || exit 1
done

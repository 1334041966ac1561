# SPDX-License-Identifier: MIT
# The test harness for shell tests (sourced), as harness.h is for C ones: a test exits 0 (pass),
# 1 (fail) or 77 (skip, its last line saying why); a test of several cases says "pass NAME",
# "fail NAME reason" or "skip NAME reason" once per case with result(), on stdout and in
# $GDR_TEST_RESULTS, where tests/run-tests.sh counts them, and ends with test_exit.
# shellcheck shell=sh

test_failures=0

result() { # verdict name [reason...]: a reason in several words is joined by spaces
	local verdict=$1 name=$2 reason
	shift 2
	reason="$*"
	printf '%s %s%s\n' "$verdict" "$name" "${reason:+ $reason}"
	if [ -n "${GDR_TEST_RESULTS:-}" ]; then
		printf '%s %s%s\n' "$verdict" "$name" "${reason:+ $reason}" >>"$GDR_TEST_RESULTS"
	fi
	[ "$verdict" = fail ] && test_failures=$((test_failures + 1))
	return 0
}

# Skip the whole test, saying why.
skip_test() { # reason
	echo "$*"
	exit 77
}

# A scratch directory in $tmp, removed when the test exits (and on INT and TERM).
test_scratch() { # name
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/gdrcopy-$1.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT INT TERM
}

# A make of the test's own: nothing of the make that runs the test may leak in (its jobserver,
# whose descriptors the test does not inherit, and its command line: CC=clang, BUILD=...).
test_own_make() {
	unset MAKEFLAGS MFLAGS MAKELEVEL
}

# Exit with the status the results call for.
test_exit() {
	[ "$test_failures" = 0 ]
	exit $?
}

# The last kernel release in /lib/modules whose build tree (headers) is installed, for what
# builds gdrdrv; nothing when there is none.
kernel_with_headers() (
	kver=
	for b in /lib/modules/*/build; do
		[ -e "$b/include" ] && kver=$(basename "$(dirname "$b")")
	done
	echo "$kver"
)

# The ELF machine of a file (its e_machine, as a number; empty if it is not ELF).
elf_machine() { # file
	[ "$(od -An -c -N4 "$1" 2>/dev/null | tr -d ' ')" = '177ELF' ] || return 0
	od -An -tu2 -j18 -N2 "$1" | tr -d ' '
}

# Mesa's lavapipe manifest whose driver runs beside PROGRAM (an ELF file of the architecture the
# test runs): GDR_TEST_LVP_ICD when set, else the loader's directories, as the C harness finds it
# (simgpu.c). Prints nothing when there is none.
lavapipe_icd() { # program
	if [ -n "${GDR_TEST_LVP_ICD:-}" ]; then
		[ -r "$GDR_TEST_LVP_ICD" ] && echo "$GDR_TEST_LVP_ICD"
		return 0
	fi
	want=$(elf_machine "$1")
	for manifest in /usr/local/share/vulkan/icd.d/lvp_icd.*json \
		/usr/share/vulkan/icd.d/lvp_icd.*json /etc/vulkan/icd.d/lvp_icd.*json; do
		[ -r "$manifest" ] || continue
		library=$(sed -n 's/.*"library_path" *: *"\([^"]*\)".*/\1/p' "$manifest")
		case $library in
		*/*) [ -n "$want" ] && [ "$(elf_machine "$library")" = "$want" ] || continue ;;
		esac
		echo "$manifest"
		return 0
	done
}

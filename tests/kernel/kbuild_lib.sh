# SPDX-License-Identifier: MIT
# Sourced by the gdrdrv build tests: building gdrdrv through kernel/Makefile and judging the
# build, one verdict per case through the test harness (tests/harness/harness.sh).
# shellcheck shell=bash

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$src/tests/harness/harness.sh"
# A make that runs the test (make -j check) must not hand the builds here its jobserver: make
# would warn, and a warning fails.
test_own_make
test_scratch kbuild
checker=
command -v sparse >/dev/null 2>&1 && checker=C=1

# Build gdrdrv into OUT with W=1 (and sparse where installed); the log is OUT.log. Fails CASE,
# returning 1, when the build fails or says anything that looks like a warning.
gdrdrv_build() { # case kdir out [make arguments...]
	local name=$1 kdir=$2 out=$3
	shift 3
	make -C "$src/kernel" KDIR="$kdir" OUT="$out" W=1 $checker "$@" >"$out.log" 2>&1
	build_verdict "$name" $? "$out.log"
}

# The same inside ROOT, the Debian chroot cache.sh made for the newest kernel (KDIR is a path
# in it), through in-root.sh, which shows it this tree and OUT (under TMPDIR) at their paths;
# with sparse when CHECKER (a path in the chroot) is given. The host's sparse cannot serve:
# bookworm's 0.6.4 fails the __typeof_unqual__ these headers use (cache.sh fetches sid's).
gdrdrv_build_in_root() { # case root kdir out checker [make arguments...]
	# checker, as the global one, is what build_verdict's message names.
	local name=$1 root=$2 kdir=$3 out=$4 in_checker=$5 checker=${5:+C=1}
	shift 5
	(cd "$src" && tests/kernel/in-root.sh "$root" \
		make -C kernel KDIR="$kdir" OUT="$out" W=1 ${in_checker:+C=1 CHECK="$in_checker"} \
		"$@") >"$out.log" 2>&1
	build_verdict "$name" $? "$out.log"
}

# Fails CASE, returning 1, when the build's exit status RC is not 0 or its LOG says anything
# that looks like a warning.
build_verdict() { # case rc log
	local name=$1 log=$3 hit
	if [ "$2" != 0 ]; then
		hit=$(grep -m 1 -E 'error|ERROR|\*\*\*' "$log")
		result fail "$name" "the build failed: ${hit:-see below}"
		tail -n 30 "$log"
		return 1
	fi
	hit=$(grep -m 1 -iE 'warning|error:' "$log")
	if [ -n "$hit" ]; then
		result fail "$name" "the build warned (W=1${checker:+ $checker}): $hit"
		return 1
	fi
	return 0
}

# The flavor words gdrdrv's description and /proc/driver/gdrdrv/params use (GDRCopy's).
flavor_word() { # open|proprietary
	case $1 in
	open) echo opensource ;;
	*) echo proprietary ;;
	esac
}

# Fails CASE unless KO's modinfo description names FLAVOR. Returns 1 on failure.
check_modinfo_flavor() { # case ko flavor
	local desc want
	want="built for $(flavor_word "$3") NVIDIA driver"
	desc=$(modinfo -F description "$2" 2>&1)
	case $desc in
	*"$want"*) return 0 ;;
	esac
	result fail "$1" "modinfo description '$desc' does not say '$want'"
	return 1
}

# Fails CASE unless KO's modinfo nv_p2p_h names WANT: "gdrdrv" (its own nv-p2p.h) or NVIDIA's
# source directory, which make's abspath may spell otherwise than WANT (a TMPDIR of "/tmp/"
# gives "//"), so directories are compared as what they are. Returns 1 on failure. The DKMS
# tests' stand-in modinfo (tests/pkg/dkms_standin.sh) answers this field as the builds here
# must fill it.
check_modinfo_nv_p2p_h() { # case ko want
	local got
	got=$(modinfo -F nv_p2p_h "$2" 2>&1)
	[ "$got" = "$3" ] && return 0
	case $got in
	/*) [ "$(cd -P "$got" 2>/dev/null && pwd -P)" = "$(cd -P "$3" && pwd -P)" ] && return 0 ;;
	esac
	result fail "$1" "modinfo nv_p2p_h is '$got', not '$3'"
	return 1
}

# An item prepare.sh wrote: its first line when that is a skip or a failure, else nothing.
item_problem() { # env-file
	if [ ! -f "$1" ]; then
		echo "SKIP: $1 missing (make check-build prepares it)"
		return
	fi
	head -n 1 "$1" | grep -E '^(SKIP|FAIL): '
}

# The case's verdict when its item could not be had: skip with the reason, or fail.
result_problem() { # case problem-line
	case $2 in
	SKIP:*) result skip "$1" "${2#SKIP: }" ;;
	*) result fail "$1" "${2#FAIL: }" ;;
	esac
}

item_value() { # env-file variable
	sed -n "s/^$2=//p" "$1" | head -n 1
}

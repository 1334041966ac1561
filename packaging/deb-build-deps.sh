#!/bin/bash
# make deb's check of the Build-Depends, run in the tree dpkg-buildpackage builds: prints the
# flag to add to dpkg-buildpackage's. Nothing when every dependency is met, or when FLAGS already
# have -d; -d when the only unmet ones are CUDA's (a toolkit from NVIDIA's installer is no
# package, so dpkg-checkbuilddeps cannot see it), saying so on stderr. Any other unmet one
# (debhelper, dh-dkms, ...) stops the build here with the apt-get line that installs it: under
# -d, dpkg-buildpackage would start and fail on "dh: No such file or directory".
#   deb-build-deps.sh CUDA [FLAGS...]
set -u
cuda=$1
shift
for flag in "$@"; do
	[ "$flag" = -d ] && exit 0
done

unmet=$(dpkg-checkbuilddeps 2>&1) && exit 0
deps=$(printf '%s\n' "$unmet" | sed -n 's/^.*Unmet build dependencies: //p')
# Its other errors (unmet build conflicts, a control file it cannot read); not its warnings.
other=$(printf '%s\n' "$unmet" | grep 'error: ' | grep -v 'Unmet build dependencies: ')
if [ -n "$other" ] || [ -z "$deps" ]; then
	echo "make deb: ${other:-$unmet}" >&2
	exit 1
fi

# One word per dependency, its alternatives joined by '|', without versions, architectures
# or profiles: "debhelper-compat (= 13) a (>= 1) | b" gives "debhelper-compat a|b".
groups=$(printf '%s\n' "$deps" | sed -e 's/ *([^)]*)//g' -e 's/ *\[[^]]*\]//g' \
	-e 's/ *<[^>]*>//g' -e 's/ *| */|/g')
missing='' install=''
for group in $groups; do
	case "|$group" in
	*'|nvidia-cuda-'* | *'|cuda-'*) ;;
	*)
		missing="$missing $group"
		install="$install ${group%%|*}"
		;;
	esac
done
if [ -n "$missing" ]; then
	echo "make deb: missing build dependencies:$missing: apt-get install$install" >&2
	exit 1
fi
echo "  NOTE    Unmet build dependencies: $deps: building with -d, CUDA from $cuda" >&2
echo -d

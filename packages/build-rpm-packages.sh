#!/bin/bash
# NVIDIA GDRCopy's RPM script, for the instructions written for it:
#   cd packages && CUDA=<toolkit> ./build-rpm-packages.sh [-m]
# builds this project's RPMs, with GDRCopy's package names (make rpm: gdrcopy, gdrcopy-devel and
# gdrcopy-kmod-<version>dkms.noarch, the DKMS sources), in a scratch directory and leaves the
# .rpm files here.
#   -m  also gdrcopy-kmod-<kernel>, gdrdrv prebuilt for a kernel (KVER=, default the newest with
#       headers installed; KDIR= its build tree)
#   -h  this help
set -eu
here=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n '2,/^$/{s/^# \{0,1\}//p}' "$0"; }
kmod=0
while getopts mh opt; do
	case $opt in
	m) kmod=1 ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 0 ] || { usage >&2; exit 2; }
if [ -z "${CUDA:-}" ]; then
	echo "build-rpm-packages.sh: set CUDA= to the CUDA toolkit (e.g. CUDA=/usr/local/cuda)" >&2
	exit 1
fi

# make runs in the repository's root: a relative CUDA= means the caller's directory.
[ -z "${CUDA:-}" ] || CUDA=$(realpath -m -- "$CUDA")

scratch=$(mktemp -d "${TMPDIR:-/tmp}/gdrcopy-rpm.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
make --no-print-directory -C "$here/.." BUILD="$scratch" CUDA="$CUDA" KMOD=$kmod rpm
find "$scratch/rpm/RPMS" -name '*.rpm' -exec cp {} "$here/" \;
echo "in $here:"
find "$scratch/rpm/RPMS" -name '*.rpm' -printf '  %f\n' | sort

#!/bin/bash
# NVIDIA GDRCopy's Debian package script, for the instructions written for it:
#   cd packages && CUDA=<toolkit> ./build-deb-packages.sh [-d] [-t] [-k]
# builds this project's packages (make deb: libgdrapi2, libgdrapi-dev, gdrcopy-tools,
# gdrdrv-dkms, and gdrcopy, which depends on all four) in a scratch directory and leaves the
# .deb files here.
#   -d  do not check the build dependencies (dpkg-buildpackage -d)
#   -t  leave gdrcopy-tools (and gdrcopy) out; CUDA= may then be left out, as with GDRCopy
#       (the library still reads CUDA's headers, from /usr/local/cuda)
#   -k  leave gdrdrv-dkms (and gdrcopy) out
#   -h  this help
set -eu
here=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n '2,/^$/{s/^# \{0,1\}//p}' "$0"; }
flags= profiles=
while getopts dtkh opt; do
	case $opt in
	d) flags="$flags -d" ;;
	t) profiles="$profiles pkg.gdrcopy.notools" ;;
	k) profiles="$profiles pkg.gdrcopy.nodkms" ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 0 ] || { usage >&2; exit 2; }
if [ -z "${CUDA:-}" ] && [[ $profiles != *notools* ]]; then
	echo "build-deb-packages.sh: set CUDA= to the CUDA toolkit (e.g. CUDA=/usr/local/cuda)" >&2
	exit 1
fi

# make runs in the repository's root: a relative CUDA= means the caller's directory.
[ -z "${CUDA:-}" ] || CUDA=$(realpath -m -- "$CUDA")

scratch=$(mktemp -d "${TMPDIR:-/tmp}/gdrcopy-deb.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
profiles=${profiles# }
DEB_BUILD_PROFILES="${DEB_BUILD_PROFILES:+$DEB_BUILD_PROFILES }$profiles" \
	make --no-print-directory -C "$here/.." BUILD="$scratch" ${CUDA:+CUDA="$CUDA"} \
	DEB_FLAGS="${flags# }" deb
cp "$scratch"/deb/*.deb "$here/"
echo "in $here:"
(cd "$scratch/deb" && ls -1 ./*.deb | sed 's|^\./|  |')

#!/bin/sh
# SPDX-License-Identifier: MIT
# Run COMMAND inside ROOT, a Debian chroot that cache.sh made (the newest kernel's), as if it
# ran here: the current directory (the work tree) and TMPDIR are bind-mounted at the same
# paths, so the command's paths into them mean the same inside, and /proc is mounted (objtool
# reads it). All of it in a mount namespace of its own, so nothing stays mounted when the
# command ends. Needs root.
#   in-root.sh ROOT COMMAND [ARGUMENT...]
set -eu
if [ $# -lt 2 ]; then
	echo "usage: $0 ROOT COMMAND [ARGUMENT...]" >&2
	exit 2
fi
if [ -z "${GDR_IN_ROOT_NS:-}" ]; then
	GDR_IN_ROOT_NS=1 exec unshare -m "$0" "$@"
fi
root=$1
shift
here=$(pwd -P)
tmp=$(cd "${TMPDIR:-/tmp}" && pwd -P)
mount -t proc proc "$root/proc"
for dir in "$here" "$tmp"; do
	case $dir in
	/ | /usr | /usr/* | /etc | /etc/* | /bin | /sbin | /lib | /lib/* | /lib64 | /var | /proc)
		echo "in-root.sh: will not mount $dir over the chroot's own" >&2
		exit 2 ;;
	esac
	mkdir -p "$root$dir"
	mount --rbind "$dir" "$root$dir"
done
# shellcheck disable=SC2016 # the inner shell expands them
exec chroot "$root" sh -c 'cd "$1" && shift && exec "$@"' sh "$here" "$@"

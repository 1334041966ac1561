#!/bin/sh
# Copy the source tree (the current directory) to DEST for a package build: in a git checkout
# the files git tracks plus new ones it does not ignore, so that uncommitted work is packaged
# as it is; elsewhere (a release tarball) every file but the build directory BUILD.
#   copy-source.sh DEST BUILD
set -eu
dest=$1
build=${2:-build}
mkdir -p "$dest"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# Files deleted in the worktree but still tracked are left out.
	git ls-files -z --cached --others --exclude-standard |
		xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
		tar --null -T - -cf - | tar -xf - -C "$dest"
else
	tar --exclude="./${build#./}" --exclude=./.git -cf - . | tar -xf - -C "$dest"
fi

#!/bin/bash
# Copy the source tree (the current directory) to DEST for a package build: in a git checkout
# the files git tracks plus new ones it does not ignore, so that uncommitted work is packaged
# as it is; elsewhere (a release tarball) every file. The build directory BUILD and DEST itself
# are left out either way, wherever they are.
#   copy-source.sh DEST BUILD
set -eu
dest=$1
build=${2:-build}
mkdir -p "$dest" "$build"
here=$(pwd -P)
# As paths relative to here (unchanged when outside the tree, so that they match nothing).
rel() { p=$(cd "$1" && pwd -P); echo "${p#"$here"/}"; }
build_rel=$(rel "$build")
dest_rel=$(rel "$dest")

list() {
	if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$here" ]; then
		git ls-files -z --cached --others --exclude-standard
	else
		find . \( -path ./.git -o -path "./$build_rel" -o -path "./$dest_rel" \) -prune \
			-o \( -type f -o -type l \) -print0 | sed -z 's|^\./||'
	fi
}

# Tracked files deleted in the worktree are left out too.
list | while IFS= read -r -d '' f; do
	case $f in "$build_rel"/*|"$dest_rel"/*) continue ;; esac
	[ -e "$f" ] || [ -L "$f" ] || continue
	printf '%s\0' "$f"
done | tar --null --no-recursion -T - -cf - | tar -xf - -C "$dest"

#!/bin/bash
# The docs agree with the code: every GDRCOPY_* variable that the library, the tools, the Python
# package or the simulated CUDA driver read is documented (README.md; the simulator's in tests/sim/cuda/README.md),
# every variable README.md's table names is read somewhere, and the docs point at nothing outside
# the repository (the project's shared folder, its issue tracker).
#   test_docs.sh SRCDIR
set -u
src=$1
. "$src/tests/harness/harness.sh"

cd "$src" || exit 1
# Variable names in C string literals of a set of files.
vars_read() { grep -ohE '"GDRCOPY_[A-Z0-9_]+"' "$@" | tr -d '"' | sort -u; }

undocumented=
read_by_users() { vars_read src/*.c src/*/*.c tools/*.c tools/*.cu python/gdrcopy/*.py; }
for v in $(read_by_users); do
	grep -q "\`$v\`" README.md || undocumented="$undocumented $v"
done
for v in $(vars_read tests/sim/cuda/*.c); do
	grep -q "\`$v\`" tests/sim/cuda/README.md || undocumented="$undocumented $v(tests/sim/cuda)"
done
if [ -z "$undocumented" ]; then result pass env-documented; else
	result fail env-documented "read by the code, missing from the docs:$undocumented"; fi

unread=
for v in $(sed -n 's/^| `\(GDRCOPY_[A-Z0-9_]*\)` |.*/\1/p' README.md); do
	read_by_users | grep -qx "$v" || unread="$unread $v"
done
if [ -z "$unread" ]; then result pass env-read; else
	result fail env-read "README.md documents what no code reads:$unread"; fi

docs="README.md docs/*.md man/* tests/*/README.md tests/sim/cuda/README.md kernel/README.md
	python/README.md"
# The shared folder, its reference notes (also by their bare names), the issue tracker.
outside_re="shared/|reference/[a-z0-9-]+\.md|(gdrcopy-2\.6|nvidia-driver|h200|style-anchors)\.md"
outside_re="$outside_re|DESIGN\.md|[Ii]ssue #?[0-9]+|\(issue [0-9]"
# shellcheck disable=SC2086
outside=$(grep -nE "$outside_re" $docs 2>/dev/null | head -n 3 | tr '\n' ' ')
if [ -z "$outside" ]; then result pass no-outside-references; else
	result fail no-outside-references "$outside"; fi
test_exit

#!/bin/bash
# The docs agree with the code: every GDRCOPY_* variable that the library, the tools, the Python
# package or the simulated CUDA driver read is documented (README.md; the simulator's in tests/sim/cuda/README.md),
# every variable README.md's table names is read somewhere, the docs point at nothing outside
# the repository (the project's shared folder, its issue tracker), and what the guides tell a user
# to type or open exists: make targets and variables, gdrdrv's parameters, files and links.
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

# What a user types from the guides exists: make targets, make variables, gdrdrv's parameters,
# the files and links they name. performance.md's record and the tests' own READMEs are left out.
guides="README.md docs/architecture.md docs/clients.md docs/nccl.md docs/python.md kernel/README.md
	python/README.md"

# Every "make TARGET" is a rule of the top-level make (its database, read without running a rule).
test_own_make
targets=$(make -pq -f Makefile .gdrcopy-docs-no-such-goal 2>/dev/null |
	sed -n 's/^\([a-zA-Z][a-zA-Z0-9_-]*\):.*/\1/p' | sort -u)
missing=
# shellcheck disable=SC2086
for t in $(grep -ohE '`make [a-z][a-z0-9_=-]*' $guides | grep -v = | sed 's/^`make //' | sort -u); do
	printf '%s\n' "$targets" | grep -qx -- "$t" || missing="$missing $t"
done
if [ -z "$targets" ]; then result fail make-targets "make -p listed no targets"
elif [ -z "$missing" ]; then result pass make-targets; else
	result fail make-targets "named in the docs, no such make target:$missing"; fi

# Every upper-case NAME= is read by the build (make fragments, kernel/Makefile, the scripts), or
# is another program's variable (the clients', Vulkan's, glibc's) or the library's own.
build_files="Makefile $(find . -name '*.mk' -not -path './build/*' | sort | tr '\n' ' ')
	kernel/Makefile kernel/Kbuild insmod.sh packages/*.sh tests/run-tests.sh"
foreign='^(GDRCOPY|NCCL|NVSHMEM|UCX|FI|PYTORCH|VK|GLIBC)_'
missing=
# shellcheck disable=SC2086
for v in $(grep -ohE '`[A-Z][A-Z0-9_]*=' $guides | tr -d '`=' | sort -u); do
	printf '%s\n' "$v" | grep -qE "$foreign" && continue
	grep -qw -- "$v" $build_files || missing="$missing $v"
done
if [ -z "$missing" ]; then result pass make-variables; else
	result fail make-variables "named in the docs, read by no make file or script:$missing"; fi

# gdrdrv's parameters: gdrdrv(4) lists each module_param with its default, as MODULE_PARM_DESC
# says it, and kernel/README.md names each. The fault-injection build's (gdrdrv_fault.c, test
# builds only) are in kernel/README.md alone.
module_params() { # file...
	sed -n 's/^module_param\(_named\|_cb\)\{0,1\}(\([a-z_]*\),.*/\2/p' "$@" | sort -u
}
params_code=$(module_params $(ls kernel/*.c | grep -v '/gdrdrv_fault\.c$'))
params_man=$(awk '/^\.SS Module parameters/ { f = 1; next } /^\.S[SH]/ { f = 0 }
	f && prev == ".TP" { print $2 } { prev = $0 }' man/gdrdrv.4 | sort -u)
bad=
[ "$params_code" = "$params_man" ] ||
	bad="gdrdrv(4) lists $(echo $params_man), the module has $(echo $params_code);"
for p in $params_code; do
	code_default=$(cat kernel/*.c | tr -d '\n' | grep -oE "MODULE_PARM_DESC\($p,[^\"]*\"[^\"]*\"" |
		sed -n 's/.*(default \([0-9x]*\).*/\1/p')
	man_default=$(grep -E "^\.BR $p \" \(default [0-9x]+\)\"" man/gdrdrv.4 |
		sed 's/.*(default \([0-9x]*\).*/\1/')
	[ -n "$code_default" ] && [ "$code_default" = "$man_default" ] ||
		bad="$bad $p: default '$code_default' in the module, '$man_default' in gdrdrv(4);"
	grep -q "\`$p" kernel/README.md || bad="$bad $p not in kernel/README.md;"
done
for p in $(module_params kernel/gdrdrv_fault.c); do
	grep -q "\`$p" kernel/README.md || bad="$bad $p (fault-injection build) not in kernel/README.md;"
done
if [ -z "$bad" ]; then result pass module-parameters; else
	result fail module-parameters "$bad"; fi

# Relative links resolve, and every `dir/file` of the tree that a guide names exists (a test or
# a program built from it counts by its source: tests/python/test_python is test_python.sh).
top=$(git ls-files 2>/dev/null | sed -n 's|^\([a-z]*\)/.*|\1|p' | sort -u | tr '\n' '|')
top=${top%|}
[ -n "$top" ] || top="bench|docs|include|kernel|man|packages|packaging|python|src|tests|tools"
missing=
for f in $guides docs/performance.md tests/*/README.md tests/sim/cuda/README.md; do
	dir=$(dirname "$f")
	for l in $(grep -oE '\]\([^)#[:space:]]+' "$f" | sed 's/^](//'); do
		case $l in http*:*|mailto:*) continue ;; esac
		[ -e "$dir/$l" ] || missing="$missing $f:$l"
	done
	case " $(echo $guides) " in *" $f "*) ;; *) continue ;; esac
	for p in $(grep -ohE "\`($top)/[A-Za-z0-9_./-]*\`" "$f" | tr -d '`' | sed 's|/$||' | sort -u); do
		found=
		for c in "$p" "$p.sh" "$p.c" "$p.py" "${p%.*}.c" "$dir/$p"; do
			[ -e "$c" ] && found=1 && break
		done
		[ -n "$found" ] || missing="$missing $f:$p"
	done
done
if [ -z "$missing" ]; then result pass references-exist; else
	result fail references-exist "no such file:$missing"; fi
test_exit

#!/bin/sh
# The man pages: each renders without a warning (groff, and mandoc's linter where installed),
# each second name (a page that is only ".so") points at a page that names it, and every function
# the built library exports has a page.
#   test_man.sh MANDIR LIBRARY
set -u
man_dir=$1 lib=$2
. "$(dirname "$0")/../harness/harness.sh"

command -v groff >/dev/null || { echo "groff is not installed (groff-base)"; exit 77; }
command -v mandoc >/dev/null && have_mandoc=1 || have_mandoc=0
[ "$have_mandoc" = 1 ] || echo "mandoc is not installed: groff's check only"

# The NAME line's names: "gdr_map, gdr_map_v2 \- ..." gives gdr_map and gdr_map_v2.
names_of() {
	sed -n '/^\.SH NAME/{n;p;q}' "$1" | sed 's/ *\\-.*//; s/,/ /g'
}

for page in "$man_dir"/*.[1-9]; do
	base=${page##*/}
	target=$(sed -n 's|^\.so man[1-9]/||p' "$page")
	if [ -n "$target" ]; then
		if [ "$(grep -cv '^\.so ' "$page")" != 0 ]; then
			result fail "$base" "has more than its .so line"
		elif [ ! -f "$man_dir/$target" ]; then
			result fail "$base" ".so to $target, which is not in $man_dir"
		elif ! names_of "$man_dir/$target" | grep -qw -- "${base%.*}"; then
			result fail "$base" "$target does not list ${base%.*} under NAME"
		else
			result pass "$base"
		fi
		continue
	fi
	warnings=$(groff -man -ww -z "$page" 2>&1)
	if [ "$have_mandoc" = 1 ] && [ -z "$warnings" ]; then
		warnings=$(mandoc -T lint -W warning "$page" 2>&1)
	fi
	th=$(sed -n 's/^\.TH \([^ ]*\) \([^ ]*\) .*/\1.\2/p' "$page" | tr '[:upper:]' '[:lower:]')
	if [ -n "$warnings" ]; then
		result fail "$base" "$(printf '%s' "$warnings" | head -n 1)"
	elif [ "$th" != "$base" ]; then
		result fail "$base" ".TH says '$th'"
	elif ! names_of "$page" | grep -qw -- "${base%.*}"; then
		result fail "$base" "NAME does not list ${base%.*}"
	else
		result pass "$base"
	fi
done

if ! command -v nm >/dev/null; then
	result skip exported-functions "nm (binutils) is not installed"
elif [ ! -f "$lib" ]; then
	result fail exported-functions "no $lib"
else
	missing=
	for f in $(nm -D --defined-only "$lib" | awk '$2 == "T" {print $3}'); do
		[ -f "$man_dir/$f.3" ] || missing="$missing $f"
	done
	if [ -n "$missing" ]; then
		result fail exported-functions "no section-3 page for:$missing"
	else
		result pass exported-functions
	fi
fi
test_exit

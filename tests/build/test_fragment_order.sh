#!/bin/bash
# The make fragments work in whatever order they are read: with the fragments read in sorted and
# in reverse order (the top Makefile's GDR_FRAGMENT_ORDER=reverse), make knows the same rules
# (each target with the same prerequisites) and "make -n all test-build" runs the same commands.
# A fragment that names another one's variable in a target or prerequisite, which make expands
# as it reads it, gets an empty name in one of the two orders, and so a rule that differs.
#   test_fragment_order.sh SRCDIR
set -u
src=$1
. "$src/tests/harness/harness.sh"
test_own_make
test_scratch order
mk() { make -C "$src" --no-print-directory BUILD="$tmp/build" "$@"; }

# The rules of make's database ("target: prerequisites", order-only ones after "|"), each
# prerequisite list sorted: the order in which fragments append to one does not matter.
rules() { # order
	mk -p -n GDR_FRAGMENT_ORDER="$1" deps 2>/dev/null |
		awk '/^# Files/ { files = 1 } /^# files hash-table stats/ { files = 0 }
		     files && /^[^#\t ][^=]*:([^=]|$)/' |
		while IFS= read -r line; do
			target=${line%%:*} rest=${line#*:}
			normal=$(echo ${rest%%|*} | tr ' ' '\n' | sort | tr '\n' ' ')
			case $rest in *"|"*) ordered="| $(echo ${rest#*|} | tr ' ' '\n' | sort | tr '\n' ' ')" ;;
			*) ordered= ;; esac
			echo "$target: $normal$ordered"
		done | sort
}
commands() { # order: into $tmp/commands.ORDER; make's status, its errors in $tmp/commands.ORDER.err
	mk -n GDR_FRAGMENT_ORDER="$1" all test-build >"$tmp/commands.$1.raw" 2>"$tmp/commands.$1.err"
	local rc=$?
	sort "$tmp/commands.$1.raw" >"$tmp/commands.$1"
	return $rc
}

rules sorted >"$tmp/rules.sorted"
rules reverse >"$tmp/rules.reverse"
# A rule of each tier shows that the whole tree was read.
for want in "$tmp/build/lib/libgdrapi.so.2.6:" "$tmp/build/tests/unit/test_api:" \
	"$tmp/build/vm/bin/test_pin:" "$tmp/build/tests/tools/test_tools_runs:" "check-build:"; do
	if ! grep -qF -- "$want" "$tmp/rules.sorted"; then
		# The tree's own makefiles did not read: a broken build, not something missing here.
		result fail rules "make -p shows no rule for $want: $(mk -p -n deps 2>&1 >/dev/null |
			head -n 1)"
		test_exit
	fi
done
if cmp -s "$tmp/rules.sorted" "$tmp/rules.reverse"; then
	result pass rules "$(grep -c . "$tmp/rules.sorted") rules, the same in both orders"
else
	result fail rules "rules differ with the fragments reversed: $(diff "$tmp/rules.sorted" \
		"$tmp/rules.reverse" | grep '^[<>]' | head -n 2 | cut -c1-200 | tr '\n' '|')"
fi

# Both must work and list the library's link: two empty lists (make stopped) are not the same
# commands.
bad=
for order in sorted reverse; do
	if ! commands "$order"; then
		bad="$bad make -n ($order) failed: $(head -n 1 "$tmp/commands.$order.err");"
	elif ! grep -q -- '-o [^ ]*/lib/libgdrapi\.so\.2\.6 ' "$tmp/commands.$order"; then
		bad="$bad make -n ($order) does not link libgdrapi.so.2.6;"
	fi
done
if [ -n "$bad" ]; then
	result fail commands "$bad"
elif cmp -s "$tmp/commands.sorted" "$tmp/commands.reverse"; then
	result pass commands "$(grep -c . "$tmp/commands.sorted") commands, the same in both orders"
else
	result fail commands "make -n differs with the fragments reversed: $(diff \
		"$tmp/commands.sorted" "$tmp/commands.reverse" | grep '^[<>]' | head -n 2 | cut -c1-200 |
		tr '\n' '|')"
fi
test_exit

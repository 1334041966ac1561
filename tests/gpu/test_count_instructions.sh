#!/bin/bash
# Tier 1: bench/count-instructions.sh on the simulated CUDA driver. Checks the script and its
# program, not what they count: it runs, prints a row of eight counts per size asked for, each a
# positive number, the public calls counting more than the dispatcher under them (they add the
# handle lookup and the copy's announcement), GDRCopy 2.6's public call more than its strategy
# alone, and refuses a bad size.
. @LIB@
need_sim
script=@SCRIPT@
command -v valgrind >/dev/null || skip_test "valgrind is not installed: apt-get install valgrind"

out=$tmp/counts.md
BUILD=@BUILD@ "$script" 64 4096 >"$out" 2>"$tmp/err"
rc=$?
if [ "$rc" = 0 ]; then
	result pass count_runs
else
	result fail count_runs "exit $rc: $(tail -n 1 "$tmp/err")"
	test_exit
fi
check_lines count_header "$out" '^\| size \| read: library \| read: dispatcher \| read: GDRCopy 2\.6 call \| read: GDRCopy 2\.6 strategy \| write: library \| write: dispatcher \| write: GDRCopy 2\.6 call \| write: GDRCopy 2\.6 strategy \|$'
check_lines count_rows "$out" '^\| (64 B|4096 B)( \| [1-9][0-9]*){8} \|$' 2
bad=$(awk -F' [|] ' '/^\| [0-9]+ B/ { if ($2 + 0 <= $3 + 0 || $6 + 0 <= $7 + 0) print $1 }' "$out")
if [ -z "$bad" ]; then
	result pass count_library_over_dispatcher
else
	result fail count_library_over_dispatcher "the public call counted no more than the dispatcher at ${bad#| }"
fi
bad=$(awk -F' [|] ' '/^\| [0-9]+ B/ { if ($4 + 0 <= $5 + 0 || $8 + 0 <= $9 + 0) print $1 }' "$out")
if [ -z "$bad" ]; then
	result pass count_gdrcopy_call_over_strategy
else
	result fail count_gdrcopy_call_over_strategy "GDRCopy 2.6's call counted no more than its strategy at ${bad#| }"
fi
if BUILD=@BUILD@ "$script" 0 >"$tmp/bad" 2>&1; then
	result fail count_bad_size "size 0 was accepted"
else
	check_lines count_bad_size "$tmp/bad" 'usage: .*count_copy_instructions SIZE CALLS'
fi
test_exit

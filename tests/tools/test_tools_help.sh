#!/bin/bash
# The tools anywhere: -h works on a machine without the NVIDIA driver (nothing links libcuda) and
# lists exactly the options of the tool's man page; an unknown option or --backend, a value with
# anything after its number or suffix, and pplat's -r for a flag in host memory, are refused
# while the options are parsed, before CUDA is loaded; the size suffixes' bounds are exact.
. @LIB@
man_dir=@SRC@/man
tools="info sanity copybw copylat apiperf"
[ -x "$BIN/gdrcopy_pplat" ] && tools="$tools pplat"

# Options named in -h: "  -s SIZE ..." and "  --csv ...", one a line.
help_options() {
	sed -nE 's/^  (-[A-Za-z0-9]|--[a-z][a-z-]*)([ ,].*)?$/\1/p' "$1" | sort -u
}
# Options of the OPTIONS section: the tag line of each .TP (".BI \-s " SIZE"", ".B \-\-csv").
man_options() {
	awk '/^\.SH OPTIONS/ { f = 1; next } /^\.SH/ { f = 0 } f && prev == ".TP" { print } { prev = $0 }' \
		"$1" | grep -oE '\\-(\\-[a-z][a-z-]*|[A-Za-z0-9])' | sed 's/\\//g' | sort -u
}

for t in $tools; do
	env LD_LIBRARY_PATH="$TOOLS_LIB" "$BIN/gdrcopy_$t" -h >"$tmp/help" 2>&1 </dev/null
	rc=$?
	if [ "$rc" != 0 ] || ! grep -q "^usage: gdrcopy_$t " "$tmp/help"; then
		result fail "help_without_driver_$t" "exit $rc: $(head -n 1 "$tmp/help")"
		continue
	fi
	result pass "help_without_driver_$t"
	# -h lists itself; each line is an option's (one line each) or the description's.
	if ! grep -q '^  -h, --help ' "$tmp/help"; then
		result fail "help_lists_help_$t" "no '  -h, --help' line"
	elif grep -qvE '^(usage: |  -|[A-Z])' "$tmp/help"; then
		result fail "help_lists_help_$t" "a line of no option: $(grep -m 1 -vE '^(usage: |  -|[A-Z])' "$tmp/help")"
	else
		result pass "help_lists_help_$t"
	fi
	{ help_options "$tmp/help"; echo -h; echo --help; } | sort -u >"$tmp/from_help"
	{ man_options "$man_dir/gdrcopy_$t.1"; echo -h; echo --help; } | sort -u >"$tmp/from_man"
	if [ ! -s "$tmp/from_man" ]; then
		result fail "help_matches_man_$t" "no options found in $man_dir/gdrcopy_$t.1"
	elif diff -q "$tmp/from_help" "$tmp/from_man" >/dev/null; then
		result pass "help_matches_man_$t"
	else
		result fail "help_matches_man_$t" "only in -h: $(comm -23 "$tmp/from_help" "$tmp/from_man" |
			tr '\n' ' ')only in gdrcopy_$t(1): $(comm -13 "$tmp/from_help" "$tmp/from_man" | tr '\n' ' ')"
	fi
done

# -h whose text cannot be written (stdout on a full disk) is a failure, not exit 0.
for t in $tools; do
	check_stdout_full "help_stdout_full_$t" env LD_LIBRARY_PATH="$TOOLS_LIB" "$BIN/gdrcopy_$t" -h
done

# gdrcopy_info takes -h alone: what else it is given is named first, then the usage follows.
for bad in "-x:invalid option -- 'x'" "--bogus:unrecognized option '--bogus'" \
	"foo:unexpected argument foo"; do
	env LD_LIBRARY_PATH="$TOOLS_LIB" "$BIN/gdrcopy_info" "${bad%%:*}" >"$tmp/out" 2>&1 </dev/null
	rc=$?
	if [ "$rc" = 2 ] && head -n 1 "$tmp/out" | grep -qE "^([^ ]*/)?gdrcopy_info: ${bad#*:}"; then
		result pass "info_refuses_${bad%%:*}"
	else
		result fail "info_refuses_${bad%%:*}" "exit $rc: $(head -c 300 "$tmp/out" | tr '\n' '|')"
	fi
done

for t in $tools; do
	[ "$t" = info ] && continue
	env LD_LIBRARY_PATH="$TOOLS_LIB" "$BIN/gdrcopy_$t" --backend nosuch >"$tmp/out" 2>&1 </dev/null
	rc=$?
	if [ "$rc" != 0 ] && [ "$(grep -c . "$tmp/out")" = 1 ] &&
		grep -q "^gdrcopy_$t: --backend nosuch: unknown backend" "$tmp/out"; then
		result pass "unknown_backend_$t"
	else
		result fail "unknown_backend_$t" "exit $rc: $(head -c 300 "$tmp/out" | tr '\n' '|')"
	fi
done

# A size whose K/M/G suffix would carry it past 64 bits is refused, not wrapped to a small one
# (17179869185G is 2^64 + 1 GiB: it wrapped to 1 GiB).
for t in copybw copylat apiperf pplat; do
	[ -x "$BIN/gdrcopy_$t" ] || continue
	expect_exit "size_too_large_$t" 2 "^gdrcopy_$t: -s 17179869185G: too large" \
		env LD_LIBRARY_PATH="$TOOLS_LIB" "$BIN/gdrcopy_$t" -s 17179869185G
done
# A negative size is not a size, also after blanks, which strtoull skips before it negates: " -5"
# was "too large", and " -18446744073709551615" (-(2^64 - 1)) ran as 1 byte.
for t in copybw copylat apiperf; do
	expect_exit "size_negative_after_blank_$t" 2 "^gdrcopy_$t: -s  -5: not a size\$" \
		env LD_LIBRARY_PATH="$TOOLS_LIB" "$BIN/gdrcopy_$t" -s ' -5'
	expect_exit "size_negative_wraps_to_one_$t" 2 "^gdrcopy_$t: -s  -18446744073709551615: not a size\$" \
		env LD_LIBRARY_PATH="$TOOLS_LIB" "$BIN/gdrcopy_$t" -s ' -18446744073709551615'
done
# The K and M suffixes are 2^10 and 2^20, to the byte: the largest size in each is taken (here with
# -h after it, which ends the run once the options are parsed), one unit more is too large.
expect_exit size_largest_k 0 '^usage: gdrcopy_copylat ' \
	env LD_LIBRARY_PATH="$TOOLS_LIB" "$BIN/gdrcopy_copylat" -s 9007199254740991K -h
expect_exit size_too_large_k 2 '^gdrcopy_copylat: -s 9007199254740992K: too large' \
	env LD_LIBRARY_PATH="$TOOLS_LIB" "$BIN/gdrcopy_copylat" -s 9007199254740992K
expect_exit size_largest_m 0 '^usage: gdrcopy_copylat ' \
	env LD_LIBRARY_PATH="$TOOLS_LIB" "$BIN/gdrcopy_copylat" -s 8796093022207M -h
expect_exit size_too_large_m 2 '^gdrcopy_copylat: -s 8796093022208M: too large' \
	env LD_LIBRARY_PATH="$TOOLS_LIB" "$BIN/gdrcopy_copylat" -s 8796093022208M
# A choice is taken in any case; a wrong one is answered with the list, "A, B or C".
expect_exit choice_any_case 0 '^usage: gdrcopy_copylat ' \
	env LD_LIBRARY_PATH="$TOOLS_LIB" "$BIN/gdrcopy_copylat" -a CUMEMCREATE -M WC -h
expect_exit choice_list_two 2 '^gdrcopy_copylat: -a foo: expected cuMemAlloc or cuMemCreate$' \
	env LD_LIBRARY_PATH="$TOOLS_LIB" "$BIN/gdrcopy_copylat" -a foo
expect_exit choice_list_four 2 '^gdrcopy_copylat: -M foo: expected default, wc, cache or device$' \
	env LD_LIBRARY_PATH="$TOOLS_LIB" "$BIN/gdrcopy_copylat" -M foo
# An option no tool has: the usage on stderr, and exit 2 (not 0, as -h).
for t in sanity copybw copylat apiperf pplat; do
	[ -x "$BIN/gdrcopy_$t" ] || continue
	check_refuses "unknown_option_$t" "$BIN/gdrcopy_$t" --bogus
done
# --sweep-fd (for --impl all's own runs) must name an open descriptor, or every message is lost.
expect_exit sweep_fd_closed 2 '^gdrcopy_copylat: --sweep-fd 99: Bad file descriptor' \
	env LD_LIBRARY_PATH="$TOOLS_LIB" "$BIN/gdrcopy_copylat" --sweep-fd 99

# Every other command-line error exits 2 as well, with one line naming it (as the man pages say).
for t in sanity copybw copylat apiperf pplat; do
	[ -x "$BIN/gdrcopy_$t" ] || continue
	check_bad_values "bad_value_$t" "$BIN/gdrcopy_$t" "-d x" "-d -1" "--backend foo" "stray"
done
check_bad_values bad_value_copybw "$BIN/gdrcopy_copybw" "-s abc" "-M foo" "-a foo" "-w 0" "-o 3" \
	"-o 2 -c 16" "-s 0" "-c 256K" "-s 4KB" "-s 64x" "-w 10x"
check_bad_values bad_value_copylat "$BIN/gdrcopy_copylat" "-s abc" "-M foo" "-a foo" "-r x" "-s 0"
check_bad_values bad_value_apiperf "$BIN/gdrcopy_apiperf" "-n 0" "-M foo" "--impl all" "-s 0"
check_bad_values bad_value_sanity "$BIN/gdrcopy_sanity" "-t nosuch" "--impl all"
if [ -x "$BIN/gdrcopy_pplat" ]; then
	check_bad_values bad_value_pplat "$BIN/gdrcopy_pplat" "-G foo" "-m 2" "-t 1 -m 1" "-s 3" \
		"--impl all"
fi

# pplat's raw baseline writes the GPU's flag through its mapping: refused for a flag in host memory.
if [ -x "$BIN/gdrcopy_pplat" ]; then
	env LD_LIBRARY_PATH="$TOOLS_LIB" "$BIN/gdrcopy_pplat" -r -G hostmem >"$tmp/out" 2>&1 </dev/null
	rc=$?
	if [ "$rc" != 0 ] && [ "$(grep -c . "$tmp/out")" = 1 ] &&
		grep -q '^gdrcopy_pplat: -r writes the GPU.s flag with a raw store through its mapping: it needs -G gpumem$' "$tmp/out"; then
		result pass pplat_raw_needs_gpumem
	else
		result fail pplat_raw_needs_gpumem "exit $rc: $(head -c 300 "$tmp/out" | tr '\n' '|')"
	fi
else
	result skip pplat_raw_needs_gpumem "gdrcopy_pplat is not built (no nvcc)"
fi
test_exit

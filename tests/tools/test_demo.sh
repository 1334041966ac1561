#!/bin/bash
# make run's demonstration (tools/demo.sh) on a machine without a GPU: it runs on the simulated
# GPU, prints no timings there (they would time host memory), and ends with the environment
# that runs the tools there by hand, which must work as printed (a tool given only that line,
# and none of this test's, runs on the simulated GPU).
. @LIB@
need_sim
# LD_LIBRARY_PATH holds the library alone (TOOLS_LIB), for tools built without a RUNPATH.
if env LD_LIBRARY_PATH="$TOOLS_LIB" -u GDRCOPY_BACKEND -u GDRCOPY_USE_DMABUF_MMAP \
	"$BIN/gdrcopy_info" 2>/dev/null | grep -q '^gdr_open uses: '; then
	skip_test "a backend works here without the simulated GPU: make run shows that one"
fi
# No packages to install (need_sim found what the simulated GPU needs), nothing to build.
(cd @SRC@ && env LD_LIBRARY_PATH="$TOOLS_LIB" tools/demo.sh "$BIN/.." true) >"$tmp/demo" 2>&1
rc=$?
if [ "$rc" = 0 ] && grep -q '^\[simulated GPU\] pinned ' "$tmp/demo"; then
	result pass demo_simulated
else
	result fail demo_simulated "exit $rc: $(tail -n 1 "$tmp/demo")"
fi

if grep -q '^\[simulated GPU\] filled it with cuMemcpyHtoD; the CPU reads the same bytes back (gdr_copy_from_mapping)$' "$tmp/demo" &&
	! grep -qE '[0-9] us|cuMemcpy/gdrcopy' "$tmp/demo"; then
	result pass demo_simulated_no_timings
else
	result fail demo_simulated_no_timings "$(grep -m 1 -E '[0-9] us|cuMemcpy/gdrcopy|filled it' "$tmp/demo")"
fi

line=$(tail -n 1 "$tmp/demo")
if [[ $line != "export LD_LIBRARY_PATH="* ]]; then
	result fail demo_prints_environment "last line: $line"
	test_exit
fi
result pass demo_prints_environment
# Only TOOLS_LIB is added to the line's LD_LIBRARY_PATH, for tools built without a RUNPATH (make
# run's have one).
# shellcheck disable=SC2016
expect_exit demo_environment_runs_tools 0 '^closing vulkan$' env -i PATH="$PATH" HOME="$tmp" \
	bash -c "$line"' && LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$1 "$0" -s 64K -w 10 -r 10' \
	"$BIN/gdrcopy_copybw" "$TOOLS_LIB"
test_exit

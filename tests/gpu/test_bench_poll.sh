#!/bin/bash
# Tier 1: bench_poll on the simulated CUDA driver through the vulkan backend (over lavapipe).
# Checks the program, not its numbers: the simulator runs no kernels, so a CPU thread answers
# the pings, in host memory that stands in for the BAR. It runs, says who answered, prints a
# row for every method with a round trip (the single reads, then records of 64-256 B read whole
# by the library's choice and by each routine), and nothing read a wrong value or missed an
# exchange; then reads a word a CPU thread keeps changing with every method, with a row for
# each (its time per read and its repeats) and no value read going backwards. It refuses bad
# options, skips without a CUDA driver and says which step failed when it cannot map GPU memory.
. @LIB@
need_sim
bench=@BENCH@
num='[0-9]+\.[0-9]+'

x86_only poll_other_arch_skips "$bench"
check_refuses poll_refuses "$bench" "-r 0" "-r 102" "-n 1" "-n 100001" "-t 0" "-x" "extra"
check_no_driver poll_no_driver "$bench" -r 1 -n 10

sim_env
check_no_mapping poll_no_mapping "$bench" -r 1 -n 10
out=$tmp/poll.md
run poll_runs "$out" "$bench" -r 2 -n 50 -t 2000
# The polls' tables, and the moving word's after them.
polls=$tmp/polls.md
moving=$tmp/moving.md
sed '/^Reading a word/,$d' "$out" >"$polls"
sed -n '/^Reading a word/,$p' "$out" >"$moving"
check_lines poll_partner "$out" '^No GPU thread: .*\. A CPU thread answers'
# Two tables: the single reads, and the records polled whole.
check_lines poll_headers "$polls" '^\| method \| round trip: median \| 99th percentile \| maximum \| polls per exchange \(median\) \| wrong \| missed \|$' 2
# Every method this CPU runs (the others are rows of "-"): three round trips, polls, and no
# wrong value or missed exchange.
rows=$(grep -c '^| [a-zA-Z0-9]' "$polls")
lacks=$(grep -c '^| [^|]*\( | -\)\{6\} |$' "$polls")
check_lines poll_rows "$polls" "^\| [^|]+( \| $num){3} \| [0-9]+ \| 0 \| 0 \|$" "$((rows - 2 - lacks))"
if [ "$((rows - 2 - lacks))" -ge 7 ]; then
	result pass poll_methods_run
else
	result fail poll_methods_run "$((rows - 2 - lacks)) methods ran, expected at least the 7 any x86-64 with SSE4.1 runs"
fi
# The records: the library's own choice and at least generic's and sse41's, at each size.
for size in 64 128 256; do
	check_lines "poll_record_$size" "$polls" "^\| (library|generic|sse41), $size B( \| $num){3} \| [0-9]+ \| 0 \| 0 \|$" 3
done
# The moving word: its writer's rate, one header, and for each method that ran a time per read,
# its repeats and no value that went backwards (a CPU thread's stores to host memory are seen
# in order).
check_lines poll_moving_intro "$moving" '^Reading a word a CPU thread keeps changing \([0-9]+ changes per us;'
check_lines poll_moving_header "$moving" '^\| method \| us per read, back to back \| repeated the read before, % \| backwards \|$'
check_lines poll_moving_rows "$moving" "^\| [^|]+ \| $num \| [0-9]+\.[0-9] \| 0 \|$" "$((rows - 2 - lacks))"
test_exit

/* SPDX-License-Identifier: MIT */
/*
 * The statistics every tool prints and the benchmarks quote (tools/stats.c): the median of an
 * odd and of an even count, the minimum and the mean of values given in any order; copylat's
 * iteration rule (counts above 100 round up to a multiple of 100, saying so) and its buckets.
 */
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "harness.h"

static void expect_stats(const char *name, double *v, size_t n, double median, double min,
			 double avg)
{
	struct tool_stats st;

	tool_stats(v, n, &st);
	if (st.median != median || st.min != min || st.avg != avg)
		test_report("fail", name, "median %g, min %g, mean %g; expected %g, %g, %g",
			    st.median, st.min, st.avg, median, min, avg);
	else
		test_report("pass", name, NULL);
}

static void test_rounding(void)
{
	static const struct {
		size_t iters, want, buckets;
		int warns;
	} cases[] = {
		{ 1, 1, 1, 0 },
		{ 99, 99, 99, 0 },
		{ 100, 100, 100, 0 },
		{ 101, 200, 100, 1 },
		{ 150, 200, 100, 1 },
		{ 300, 300, 100, 0 },
	};
	const char *err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t got;

		test_capture_begin();
		got = tool_round_iters(cases[i].iters, "copy");
		err = test_capture_end();
		if (got != cases[i].want || tool_buckets(got) != cases[i].buckets) {
			test_report("fail", "round_iters", "%zu iterations: %zu in %zu buckets, "
				    "expected %zu in %zu", cases[i].iters, got, tool_buckets(got),
				    cases[i].want, cases[i].buckets);
			return;
		}
		if (!!strstr(err, "rounded up to") != cases[i].warns) {
			test_report("fail", "round_iters", "%zu iterations: %s", cases[i].iters,
				    cases[i].warns ? "no warning that they were rounded up" :
						     "a warning, though nothing was rounded");
			return;
		}
	}
	test_report("pass", "round_iters", NULL);
}

int main(void)
{
	double odd[] = { 5.0, 1.0, 4.0, 2.0, 3.0 };
	double even[] = { 8.0, 2.0, 6.0, 4.0 };
	double one[] = { 7.5 };
	double same[] = { 3.0, 3.0, 1.0, 3.0 };

	expect_stats("median_odd", odd, 5, 3.0, 1.0, 3.0);
	expect_stats("median_even", even, 4, 5.0, 2.0, 5.0);
	expect_stats("one_value", one, 1, 7.5, 7.5, 7.5);
	expect_stats("ties", same, 4, 3.0, 1.0, 2.5);
	test_rounding();
	return test_status();
}

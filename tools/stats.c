/* SPDX-License-Identifier: MIT */
/* Statistics of timings, and copylat's iteration rule. */
#include <stdlib.h>

#include "common.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void tool_stats(double *v, size_t n, struct tool_stats *out)
{
	double sum = 0;

	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	out->min = v[0];
	out->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	out->avg = sum / (double)n;
}

size_t tool_round_iters(size_t iters, const char *what)
{
	size_t r;

	if (iters <= 100 || iters % 100 == 0)
		return iters;
	r = TOOL_ROUND_UP(iters, 100);
	/*
	 * On stderr, --csv included: no row says how many iterations it is of. A sweep's runs
	 * leave it to the sweep, which said it once.
	 */
	if (tool_sweep_fd < 0)
		tool_warn("%s iterations %zu rounded up to %zu, a multiple of 100 buckets", what,
			  iters, r);
	return r;
}

size_t tool_buckets(size_t iters)
{
	return iters < 100 ? iters : 100;
}

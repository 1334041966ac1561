/* SPDX-License-Identifier: MIT */
/*
 * count_copy_instructions SIZE CALLS: make CALLS back-to-back copies of SIZE bytes with each
 * method, each method's loop in a function of its own, for bench/count-instructions.sh to count
 * under callgrind. On a BAR, what a read executes between its loads and the next read's delays
 * the next (docs/performance.md), so instructions per call are a figure of their own, and one
 * that any machine can measure exactly: callgrind counts them the same on the simulated driver
 * as on a GPU machine, for this CPU's routines. Links the library statically, like
 * bench_copy_impls, for the dispatcher and GDRCopy 2.6's public call and strategy beside the
 * public calls.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_bar.h"
#include "copy.h"
#include "cpu.h"
#include "gdrapi.h"
#include "gdrcopy26_copy.h"
#include "gpucommon.h"

#define DEV_OFF (64u << 10)	/* as bench_copy_impls: aligned, away from the pin's start */

/*
 * Each method's loop is a function of its own, named calls_METHOD, so that callgrind counts it
 * alone (external, so that the compiler keeps each whole under its name); all take the same
 * arguments and use what they need.
 */
#define CALLS(method, copy)                                                                    \
	__attribute__((noinline)) void calls_##method(gdr_mh_t mh, uint8_t *host,              \
						      uint8_t *dev, size_t n, long k)              \
	{                                                                                       \
		(void)mh;                                                                       \
		for (long i = 0; i < k; i++)                                                    \
			copy;                                                                   \
	}

CALLS(library_from, gdr_copy_from_mapping(mh, host, dev, n))
CALLS(dispatcher_from, gdr_copy_from_mapping_type(GDR_MAPPING_TYPE_WC, 0, host, dev, n))
CALLS(gdrcopy26_from, gdrcopy26_copy_from_wc(host, dev, n))
CALLS(gdrcopy26call_from, gdrcopy26_copy_from_mapping(mh, host, dev, n))
CALLS(library_to, gdr_copy_to_mapping(mh, dev, host, n))
CALLS(dispatcher_to, gdr_copy_to_mapping_type(GDR_MAPPING_TYPE_WC, 0, dev, host, n))
CALLS(gdrcopy26_to, gdrcopy26_copy_to_wc(dev, host, n))
CALLS(gdrcopy26call_to, gdrcopy26_copy_to_mapping(mh, dev, host, n))

int main(int argc, char **argv)
{
	size_t n = argc == 3 ? strtoul(argv[1], NULL, 0) : 0;
	long calls = argc == 3 ? strtol(argv[2], NULL, 0) : 0;
	struct bench_bar bb;
	uint8_t *host, *dev;
	int movdir64b;
	gdr_mh_t g26;

	if (n < 1 || n > (1u << 20) || calls < 1) {
		fprintf(stderr, "usage: %s SIZE CALLS (SIZE 1 to 1 MiB)\n", argv[0]);
		return 2;
	}
	if (gpu_init())
		return 77;
	if (bench_bar_open(&bb, DEV_OFF + n))
		return 1;
	if (bb.type != GDR_MAPPING_TYPE_WC) {
		printf("the mapping is not write-combined (type %d): nothing to count\n", bb.type);
		return 77;
	}
	if (gdrcopy26_init(gdr_cpu_features(), &movdir64b)) {
		printf("GDRCopy 2.6's strategy needs SSE4.1 and AVX2, which this CPU lacks\n");
		return 77;
	}
	g26 = gdrcopy26_map(GDR_MAPPING_TYPE_WC);
	host = calloc(1, n);
	if (!host || !g26.h) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	dev = (uint8_t *)bb.va + DEV_OFF;
	calls_library_from(bb.mh, host, dev, n, calls);
	calls_dispatcher_from(bb.mh, host, dev, n, calls);
	calls_gdrcopy26_from(bb.mh, host, dev, n, calls);
	calls_gdrcopy26call_from(g26, host, dev, n, calls);
	calls_library_to(bb.mh, host, dev, n, calls);
	calls_dispatcher_to(bb.mh, host, dev, n, calls);
	calls_gdrcopy26_to(bb.mh, host, dev, n, calls);
	calls_gdrcopy26call_to(g26, host, dev, n, calls);
	gdrcopy26_unmap(g26);
	free(host);
	bench_bar_close(&bb);
	return 0;
}

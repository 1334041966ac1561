/* SPDX-License-Identifier: MIT */
/*
 * Raw back-to-back accesses through a mapping, for bench_copy_impls: the floor under every copy
 * routine (no dispatch, no ends, no call per copy). x86-64 only; elsewhere nothing is raw.
 * A width is 0 (one plain access of n = 1, 2, 4 or 8 bytes) or 16, 32 or 64 (streaming
 * accesses of that width over n, a multiple of it; the device address aligned to it).
 */
#ifndef GDR_TESTS_BENCH_RAW_H
#define GDR_TESTS_BENCH_RAW_H

#include <stddef.h>

/* Whether count raw copies of n bytes at dev with width can run on a CPU with cpu_flags. */
int bench_raw_ok(int to_device, size_t n, const void *dev, unsigned int width,
		 unsigned int cpu_flags);

/* count copies of n bytes, each followed by an sfence when fence is set. */
void bench_raw_loads(void *host, const void *dev, size_t n, long count, unsigned int width,
		     int fence);
void bench_raw_stores(void *dev, const void *host, size_t n, long count, unsigned int width,
		      int fence);

#endif

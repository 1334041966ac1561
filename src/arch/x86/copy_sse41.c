/* SPDX-License-Identifier: MIT */
/*
 * SSE4.1 (built with -msse4.1): streaming loads (MOVNTDQA), which read write-combined memory a
 * whole 64-byte line at a time instead of one uncached access per load. Two routines: sse41
 * (copy_walk.h's ends, 64 bytes per iteration) and sse41_blocks (copy_blocks.h's ends, 256 bytes
 * of loads per iteration).
 */
#include <smmintrin.h>

#include "arch/generic/copy_blocks.h"
#include "arch/generic/copy_walk.h"
#include "copy_impl.h"

/* GCC's prototype takes a non-const pointer; the load writes nothing. */
static inline __m128i stream_load16(const void *s)
{
	return _mm_stream_load_si128((__m128i *)(uintptr_t)s);
}

static inline void load16(void *d, const void *s)
{
	_mm_storeu_si128((__m128i *)d, stream_load16(s));
}

void gdr_copy_load_sse41(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t k = gdr_walk_load_head(d, s, n, 16, load16);

	for (d += k, s += k, n -= k; n >= 64; d += 64, s += 64, n -= 64) {
		__m128i a = stream_load16(s);
		__m128i b = stream_load16(s + 16);
		__m128i c = stream_load16(s + 32);
		__m128i e = stream_load16(s + 48);

		_mm_storeu_si128((__m128i *)d, a);
		_mm_storeu_si128((__m128i *)(d + 16), b);
		_mm_storeu_si128((__m128i *)(d + 32), c);
		_mm_storeu_si128((__m128i *)(d + 48), e);
	}
	gdr_walk_load_tail(d, s, n, load16);
}

/* Four lines: all their loads, then their stores, which wait for the data. */
static inline void load256(void *host, const void *dev)
{
	const uint8_t *s = dev;
	uint8_t *d = host;
	__m128i v[16];

#pragma GCC unroll 16
	for (int i = 0; i < 16; i++)
		v[i] = stream_load16(s + 16 * i);
#pragma GCC unroll 16
	for (int i = 0; i < 16; i++)
		_mm_storeu_si128((__m128i *)(d + 16 * i), v[i]);
}

static __attribute__((noinline)) void load_rest(void *dst, const void *src, size_t n)
{
	gdr_blocks_load_rest(dst, src, n, 16, 16, 256, load16, load256);
}

void gdr_copy_load_sse41_blocks(void *dst, const void *src, size_t n)
{
	if (!gdr_blocks_load_straight(dst, src, n, 16, load16))
		load_rest(dst, src, n);
}

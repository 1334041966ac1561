/* SPDX-License-Identifier: MIT */
/*
 * AVX-512F (built with -mavx512f): 64-byte streaming stores and loads. The loads read whole
 * aligned lines (copy_blocks.h's ends), one 64-byte load each: reading data the GPU has just
 * written, that takes one round trip where 32-byte loads of several lines mostly take two, so
 * copy.c picks these loads from 128 B (below, AVX2's and SSE4.1's read such data as soon in
 * most reads, and one range read again and again faster: 64-byte loads of a line do not
 * overlap from one call to the next).
 */
#include <immintrin.h>

#include "arch/generic/copy_blocks.h"
#include "arch/generic/copy_walk.h"
#include "copy_impl.h"

static inline void store16(void *d, const void *s)
{
	_mm_stream_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
}

static inline __m512i stream_load64(const uint8_t *s)
{
	return _mm512_stream_load_si512((void *)(uintptr_t)s);
}

void gdr_copy_store_avx512(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t k = gdr_walk_store_head(d, s, n, 64, store16);

	for (d += k, s += k, n -= k; n >= 256; d += 256, s += 256, n -= 256) {
		__m512i a = _mm512_loadu_si512(s);
		__m512i b = _mm512_loadu_si512(s + 64);
		__m512i c = _mm512_loadu_si512(s + 128);
		__m512i e = _mm512_loadu_si512(s + 192);

		_mm512_stream_si512((void *)d, a);
		_mm512_stream_si512((void *)(d + 64), b);
		_mm512_stream_si512((void *)(d + 128), c);
		_mm512_stream_si512((void *)(d + 192), e);
	}
	for (; n >= 64; d += 64, s += 64, n -= 64)
		_mm512_stream_si512((void *)d, _mm512_loadu_si512(s));
	gdr_walk_store_tail(d, s, n, store16);
}

static inline void load64(void *d, const void *s)
{
	_mm512_storeu_si512(d, stream_load64(s));
}

/* Four lines: all their loads, then their stores, which wait for the data. */
static inline void load256(void *host, const void *dev)
{
	const uint8_t *s = dev;
	uint8_t *d = host;
	__m512i a = stream_load64(s);
	__m512i b = stream_load64(s + 64);
	__m512i c = stream_load64(s + 128);
	__m512i e = stream_load64(s + 192);

	_mm512_storeu_si512(d, a);
	_mm512_storeu_si512(d + 64, b);
	_mm512_storeu_si512(d + 128, c);
	_mm512_storeu_si512(d + 192, e);
}

static __attribute__((noinline)) void load_rest(void *dst, const void *src, size_t n)
{
	gdr_blocks_load_rest(dst, src, n, 64, 64, 256, load64, load256);
}

void gdr_copy_load_avx512(void *dst, const void *src, size_t n)
{
	if (!gdr_blocks_load_straight(dst, src, n, 64, load64))
		load_rest(dst, src, n);
}

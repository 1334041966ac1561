/* SPDX-License-Identifier: MIT */
/*
 * AVX2 (built with -mavx2): 32-byte streaming stores and streaming loads (VMOVNTDQA), the
 * fastest way to read a GPU BAR back to back from 64 B to 512 B on the H200 (0.7 GB/s at
 * 512 B). The loads read whole aligned 32-byte blocks (copy_blocks.h's ends), 256 bytes of
 * loads per iteration: on the H200 they beat a walk with copy_walk.h's ends at every size, and loading a line's
 * second half only once its first had arrived gained nothing (docs/performance.md).
 */
#include <immintrin.h>

#include "arch/generic/copy_blocks.h"
#include "arch/generic/copy_walk.h"
#include "copy_impl.h"

static inline void store16(void *d, const void *s)
{
	_mm_stream_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
}

static inline void store32(uint8_t *d, const uint8_t *s)
{
	_mm256_stream_si256((__m256i *)d, _mm256_loadu_si256((const __m256i *)s));
}

static inline __m256i stream_load32(const uint8_t *s)
{
	return _mm256_stream_load_si256((__m256i *)(uintptr_t)s);
}

static inline void load32(void *d, const void *s)
{
	_mm256_storeu_si256((__m256i *)d, stream_load32(s));
}

void gdr_copy_store_avx2(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t k = gdr_walk_store_head(d, s, n, 32, store16);

	for (d += k, s += k, n -= k; n >= 128; d += 128, s += 128, n -= 128) {
		__m256i a = _mm256_loadu_si256((const __m256i *)s);
		__m256i b = _mm256_loadu_si256((const __m256i *)(s + 32));
		__m256i c = _mm256_loadu_si256((const __m256i *)(s + 64));
		__m256i e = _mm256_loadu_si256((const __m256i *)(s + 96));

		_mm256_stream_si256((__m256i *)d, a);
		_mm256_stream_si256((__m256i *)(d + 32), b);
		_mm256_stream_si256((__m256i *)(d + 64), c);
		_mm256_stream_si256((__m256i *)(d + 96), e);
	}
	for (; n >= 32; d += 32, s += 32, n -= 32)
		store32(d, s);
	gdr_walk_store_tail(d, s, n, store16);
}

/* Four lines: all their loads, then their stores, which wait for the data. */
static inline void load256(void *host, const void *dev)
{
	const uint8_t *s = dev;
	uint8_t *d = host;
	__m256i v[8];

#pragma GCC unroll 8
	for (int i = 0; i < 8; i++)
		v[i] = stream_load32(s + 32 * i);
#pragma GCC unroll 8
	for (int i = 0; i < 8; i++)
		_mm256_storeu_si256((__m256i *)(d + 32 * i), v[i]);
}

static __attribute__((noinline)) void load_rest(void *dst, const void *src, size_t n)
{
	gdr_blocks_load_rest(dst, src, n, 32, 32, 256, load32, load256);
}

void gdr_copy_load_avx2(void *dst, const void *src, size_t n)
{
	if (!gdr_blocks_load_straight(dst, src, n, 32, load32))
		load_rest(dst, src, n);
}

/* SPDX-License-Identifier: MIT */
/*
 * MOVDIR64B (built with -mmovdir64b): each whole, 64-aligned block of the range goes to the
 * device as one 64-byte direct store; the ends use 16-byte streaming and narrower stores, since
 * MOVDIR64B always writes a full aligned block. There is no 64-byte direct load.
 */
#include <immintrin.h>

#include "arch/generic/copy_walk.h"
#include "copy_impl.h"

static inline void store16(void *d, const void *s)
{
	_mm_stream_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
}

void gdr_copy_store_movdir64b(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t k = gdr_walk_store_head(d, s, n, 64, store16);

	for (d += k, s += k, n -= k; n >= 64; d += 64, s += 64, n -= 64)
		_movdir64b(d, s);
	gdr_walk_store_tail(d, s, n, store16);
}

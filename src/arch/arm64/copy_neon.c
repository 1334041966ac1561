/* SPDX-License-Identifier: MIT */
/*
 * NEON (ASIMD, part of the armv8-a baseline, so built with no extra flag): 64 bytes per
 * LD1/ST1 of four registers, 16-byte LDR/STR of a Q register at the ends.
 */
#include <arm_neon.h>

#include "arch/generic/copy_walk.h"
#include "copy_impl.h"

#ifndef __ARM_NEON
#error "src/arch/arm64/copy_neon.c needs a compiler that targets ASIMD"
#endif

static inline void copy16(void *d, const void *s)
{
	vst1q_u8(d, vld1q_u8(s));
}

void gdr_copy_store_neon(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t k = gdr_walk_store_head(d, s, n, 64, copy16);

	for (d += k, s += k, n -= k; n >= 64; d += 64, s += 64, n -= 64)
		vst1q_u8_x4(d, vld1q_u8_x4(s));
	gdr_walk_store_tail(d, s, n, copy16);
}

void gdr_copy_load_neon(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t k = gdr_walk_load_head(d, s, n, 64, copy16);

	for (d += k, s += k, n -= k; n >= 64; d += 64, s += 64, n -= 64)
		vst1q_u8_x4(d, vld1q_u8_x4(s));
	gdr_walk_load_tail(d, s, n, copy16);
}

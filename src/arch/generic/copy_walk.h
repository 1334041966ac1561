/* SPDX-License-Identifier: MIT */
/*
 * The unaligned ends of a vector copy, shared by the routines that move 16-byte blocks (x86,
 * arm64). Each routine passes its own 16-byte block operation, which the compiler inlines:
 *   store16(dev, host): store 16 bytes at the 16-aligned device address dev.
 *   load16(host, dev):  load the 16 bytes at the 16-aligned device address dev.
 * Stores reach alignment with narrower generic stores, so nothing outside the range is written.
 * Loads read whole aligned 16-byte blocks and keep the bytes of the range: a block never
 * crosses a page, and one streaming load of it is faster than several narrow uncached ones.
 */
#ifndef GDR_ARCH_COPY_WALK_H
#define GDR_ARCH_COPY_WALK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arch/generic/copy_generic.h"

typedef void (*gdr_block16_fn)(void *to, const void *from);

/*
 * Copy from the start of a store until dst is align-aligned (align: a power of two >= 16) or
 * fewer than 16 bytes are left. Returns the bytes done.
 */
static inline __attribute__((always_inline)) size_t
gdr_walk_store_head(uint8_t *d, const uint8_t *s, size_t n, size_t align, gdr_block16_fn store16)
{
	size_t k = -(uintptr_t)d & 15;

	if (k > n)
		k = n;
	gdr_generic_store(d, s, k);
	while (n - k >= 16 && ((uintptr_t)(d + k) & (align - 1))) {
		store16(d + k, s + k);
		k += 16;
	}
	return k;
}

/* Copy the rest of a store whose dst is 16-aligned (or n < 16). */
static inline __attribute__((always_inline)) void
gdr_walk_store_tail(uint8_t *d, const uint8_t *s, size_t n, gdr_block16_fn store16)
{
	for (; n >= 16; d += 16, s += 16, n -= 16)
		store16(d, s);
	gdr_generic_store(d, s, n);
}

/* Copy bytes [off, off + k) of the aligned device block at block. */
static inline __attribute__((always_inline)) void
gdr_walk_load_part(uint8_t *d, uintptr_t block, size_t off, size_t k, gdr_block16_fn load16)
{
	uint8_t tmp[16];

	load16(tmp, (const void *)block);
	memcpy(d, tmp + off, k);
}

/* As gdr_walk_store_head, for loads: until src is align-aligned. */
static inline __attribute__((always_inline)) size_t
gdr_walk_load_head(uint8_t *d, const uint8_t *s, size_t n, size_t align, gdr_block16_fn load16)
{
	size_t off = (uintptr_t)s & 15, k = 0;

	if (off && n) {
		k = 16 - off;
		if (k > n)
			k = n;
		gdr_walk_load_part(d, (uintptr_t)s - off, off, k, load16);
	}
	while (n - k >= 16 && ((uintptr_t)(s + k) & (align - 1))) {
		load16(d + k, s + k);
		k += 16;
	}
	return k;
}

/* Copy the rest of a load whose src is 16-aligned. */
static inline __attribute__((always_inline)) void
gdr_walk_load_tail(uint8_t *d, const uint8_t *s, size_t n, gdr_block16_fn load16)
{
	for (; n >= 16; d += 16, s += 16, n -= 16)
		load16(d, s);
	if (n)
		gdr_walk_load_part(d, (uintptr_t)s, 0, n, load16);
}

#endif

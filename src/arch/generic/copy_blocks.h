/* SPDX-License-Identifier: MIT */
/*
 * Loads that read the device only in whole aligned blocks of w bytes (16, 32 or 64: one
 * streaming load each) and cut the range's ends out of a bounce buffer on the stack:
 * sse41_blocks, avx2 and avx512, each of which passes its block and batch loads. Against
 * copy_walk.h's loads they have no loop and no call at the ends (a host copy of up to 64 bytes
 * is at most two overlapping moves of one width), and whole aligned blocks of up to 128 bytes
 * take a straight path with no stack frame: on a BAR every instruction between two calls'
 * loads delays the next call's loads, so what surrounds the loads should cost as little as it
 * can.
 * The bounce buffers are 32-byte aligned whatever w: the routines' stores into them are
 * unaligned ones, so 64-byte blocks need no more.
 * The compiler inlines the loads each routine passes:
 *   load_block(host, dev): copy the w bytes at the w-aligned device address dev to host.
 */
#ifndef GDR_ARCH_COPY_BLOCKS_H
#define GDR_ARCH_COPY_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef void (*gdr_load_block_fn)(void *host, const void *dev);

/* Copy n <= 64 bytes between host buffers: two moves of one width, which may overlap. */
static inline __attribute__((always_inline)) void gdr_copy_upto64(uint8_t *d, const uint8_t *s,
								   size_t n)
{
	if (n >= 32) {
		memcpy(d, s, 32);
		memcpy(d + n - 32, s + n - 32, 32);
	} else if (n >= 16) {
		memcpy(d, s, 16);
		memcpy(d + n - 16, s + n - 16, 16);
	} else if (n >= 8) {
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else if (n >= 2) {
		memcpy(d, s, 2);
		memcpy(d + n - 2, s + n - 2, 2);
	} else if (n) {
		*d = *s;
	}
}

/* A load of 1 to 64 bytes but not of whole aligned blocks: the blocks that hold it, one host copy. */
static inline __attribute__((always_inline)) void
gdr_blocks_load_small(uint8_t *d, const uint8_t *s, size_t n, size_t w,
		      gdr_load_block_fn load_block)
{
	uint8_t buf[128] __attribute__((aligned(32)));	/* off + n < 2 * w when w is 64 */
	size_t off = (uintptr_t)s & (w - 1);
	const uint8_t *block = s - off;

	for (size_t i = 0; i < off + n; i += w)
		load_block(buf + i, block + i);
	gdr_copy_upto64(d, buf + off, n);
}

/*
 * The start of a load of more than w bytes: the rest of the block that holds src, then whole
 * blocks until src is align-aligned (align: a power of two >= w) or at most w bytes are left.
 * Returns the bytes done.
 */
static inline __attribute__((always_inline)) size_t
gdr_blocks_load_head(uint8_t *d, const uint8_t *s, size_t n, size_t w, size_t align,
		     gdr_load_block_fn load_block)
{
	uint8_t buf[64] __attribute__((aligned(32)));
	size_t off = (uintptr_t)s & (w - 1), k = 0;

	if (off) {
		load_block(buf, s - off);
		gdr_copy_upto64(d, buf + off, w - off);
		k = w - off;
	}
	for (; ((uintptr_t)(s + k) & (align - 1)) && n - k > w; k += w)
		load_block(d + k, s + k);
	return k;
}

/* The end of a load from a w-aligned device address: whole blocks, then part of one. */
static inline __attribute__((always_inline)) void
gdr_blocks_load_tail(uint8_t *d, const uint8_t *s, size_t n, size_t w,
		     gdr_load_block_fn load_block)
{
	uint8_t buf[64] __attribute__((aligned(32)));

	for (; n >= w; d += w, s += w, n -= w)
		load_block(d, s);
	if (n) {
		load_block(buf, s);
		gdr_copy_upto64(d, buf, n);
	}
}

/*
 * The straight path of a load routine: whole aligned blocks of up to 128 bytes (a flag word, a
 * descriptor, a completion record, two lines of them), block by block, straight to the host.
 * False, having loaded nothing, for any other range. A routine calls it first and sends the rest
 * to gdr_blocks_load_rest in a function of its own, so that the straight path sets up no frame
 * (the rest keeps bounce buffers on an aligned stack).
 */
static inline __attribute__((always_inline)) bool
gdr_blocks_load_straight(void *dst, const void *src, size_t n, size_t w,
			 gdr_load_block_fn load_block)
{
	if (n > 128 || (((uintptr_t)src | n) & (w - 1)))
		return false;
	for (size_t i = 0; i < n; i += w)
		load_block((uint8_t *)dst + i, (const uint8_t *)src + i);
	return true;
}

/*
 * Any other load: up to 64 bytes through a bounce buffer; else the head up to an align-aligned
 * device address, batches of batch bytes (load_batch(host, dev): copy batch bytes from the
 * align-aligned device address dev), and the tail.
 */
static inline __attribute__((always_inline)) void
gdr_blocks_load_rest(void *dst, const void *src, size_t n, size_t w, size_t align, size_t batch,
		     gdr_load_block_fn load_block, gdr_load_block_fn load_batch)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t k;

	if (n <= 64) {
		gdr_blocks_load_small(d, s, n, w, load_block);
		return;
	}
	k = gdr_blocks_load_head(d, s, n, w, align, load_block);
	for (d += k, s += k, n -= k; n >= batch; d += batch, s += batch, n -= batch)
		load_batch(d, s);
	gdr_blocks_load_tail(d, s, n, w, load_block);
}

#endif

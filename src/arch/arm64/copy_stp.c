/* SPDX-License-Identifier: MIT */
/*
 * Plain 128-bit accesses (baseline AArch64, no flag): each 16-byte block goes through a pair of
 * general registers, one LDP or STP, for CPUs or mappings where Q-register accesses are slow.
 */
#include "arch/generic/copy_walk.h"
#include "copy_impl.h"

typedef unsigned __int128 __attribute__((may_alias)) u128_alias;

static inline void store16(void *d, const void *s)
{
	unsigned __int128 v;

	memcpy(&v, s, 16);
	*(volatile u128_alias *)d = v;
}

static inline void load16(void *d, const void *s)
{
	unsigned __int128 v = *(const volatile u128_alias *)s;

	memcpy(d, &v, 16);
}

void gdr_copy_store_stp(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t k = gdr_walk_store_head(d, s, n, 16, store16);

	for (d += k, s += k, n -= k; n >= 64; d += 64, s += 64, n -= 64) {
		store16(d, s);
		store16(d + 16, s + 16);
		store16(d + 32, s + 32);
		store16(d + 48, s + 48);
	}
	gdr_walk_store_tail(d, s, n, store16);
}

void gdr_copy_load_stp(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t k = gdr_walk_load_head(d, s, n, 16, load16);

	for (d += k, s += k, n -= k; n >= 64; d += 64, s += 64, n -= 64) {
		unsigned __int128 a = *(const volatile u128_alias *)s;
		unsigned __int128 b = *(const volatile u128_alias *)(s + 16);
		unsigned __int128 c = *(const volatile u128_alias *)(s + 32);
		unsigned __int128 e = *(const volatile u128_alias *)(s + 48);

		memcpy(d, &a, 16);
		memcpy(d + 16, &b, 16);
		memcpy(d + 32, &c, 16);
		memcpy(d + 48, &e, 16);
	}
	gdr_walk_load_tail(d, s, n, load16);
}

/* SPDX-License-Identifier: MIT */
/*
 * Plain scalar loops (ppc64le, no flag: no SIMD, as GDRCopy): unrolled 4-byte stores and 8-byte
 * loads on the aligned middle of the range, the generic routine at the ends. Called "power"
 * before: nothing in it is specific to POWER but where it is chosen.
 */
#include "arch/generic/copy_generic.h"
#include "copy_impl.h"

static inline void store4(uint8_t *d, const uint8_t *s)
{
	uint32_t v;

	memcpy(&v, s, 4);
	*(volatile gdr_u32_alias *)d = v;
}

static inline void load8(uint8_t *d, const uint8_t *s)
{
	uint64_t v = *(const volatile gdr_u64_alias *)s;

	memcpy(d, &v, 8);
}

void gdr_copy_store_scalar(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t k = -(uintptr_t)d & 3;

	if (k > n)
		k = n;
	gdr_generic_store(d, s, k);
	for (d += k, s += k, n -= k; n >= 16; d += 16, s += 16, n -= 16) {
		store4(d, s);
		store4(d + 4, s + 4);
		store4(d + 8, s + 8);
		store4(d + 12, s + 12);
	}
	gdr_generic_store(d, s, n);
}

void gdr_copy_load_scalar(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t k = -(uintptr_t)s & 7;

	if (k > n)
		k = n;
	gdr_generic_load(d, s, k);
	for (d += k, s += k, n -= k; n >= 32; d += 32, s += 32, n -= 32) {
		load8(d, s);
		load8(d + 8, s + 8);
		load8(d + 16, s + 16);
		load8(d + 24, s + 24);
	}
	gdr_generic_load(d, s, n);
}

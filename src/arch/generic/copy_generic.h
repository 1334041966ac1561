/* SPDX-License-Identifier: MIT */
/*
 * The portable routines, inline: copy.c stores tiny copies with them directly, and every other
 * routine finishes its unaligned ends with them. Each device access is the widest of 8, 4, 2 and
 * 1 bytes that the device address's alignment allows and that fits in what is left (GDRCopy's
 * "aligned copy"); device accesses are volatile so the compiler neither merges, splits nor turns
 * them into a memcpy call. The host side may have any alignment.
 */
#ifndef GDR_ARCH_COPY_GENERIC_H
#define GDR_ARCH_COPY_GENERIC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint16_t __attribute__((may_alias)) gdr_u16_alias;
typedef uint32_t __attribute__((may_alias)) gdr_u32_alias;
typedef uint64_t __attribute__((may_alias)) gdr_u64_alias;

static inline __attribute__((always_inline)) void gdr_generic_store(void *dst, const void *src,
								     size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	while (n) {
		uintptr_t a = (uintptr_t)d;
		size_t w;

		if (!(a & 7) && n >= 8) {
			uint64_t v;

			memcpy(&v, s, 8);
			*(volatile gdr_u64_alias *)d = v;
			w = 8;
		} else if (!(a & 3) && n >= 4) {
			uint32_t v;

			memcpy(&v, s, 4);
			*(volatile gdr_u32_alias *)d = v;
			w = 4;
		} else if (!(a & 1) && n >= 2) {
			uint16_t v;

			memcpy(&v, s, 2);
			*(volatile gdr_u16_alias *)d = v;
			w = 2;
		} else {
			*(volatile uint8_t *)d = *s;
			w = 1;
		}
		d += w;
		s += w;
		n -= w;
	}
}

static inline __attribute__((always_inline)) void gdr_generic_load(void *dst, const void *src,
								    size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	while (n) {
		uintptr_t a = (uintptr_t)s;
		size_t w;

		if (!(a & 7) && n >= 8) {
			uint64_t v = *(const volatile gdr_u64_alias *)s;

			memcpy(d, &v, 8);
			w = 8;
		} else if (!(a & 3) && n >= 4) {
			uint32_t v = *(const volatile gdr_u32_alias *)s;

			memcpy(d, &v, 4);
			w = 4;
		} else if (!(a & 1) && n >= 2) {
			uint16_t v = *(const volatile gdr_u16_alias *)s;

			memcpy(d, &v, 2);
			w = 2;
		} else {
			*d = *(const volatile uint8_t *)s;
			w = 1;
		}
		d += w;
		s += w;
		n -= w;
	}
}

#endif

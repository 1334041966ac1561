/* SPDX-License-Identifier: MIT */
/* Placeholder until the per-arch routines land: byte-exact volatile copies and the fences. */
#include <stdint.h>
#include <string.h>

#include "copy.h"

void gdr_copy_init(void)
{
}

static void copy_volatile(void *dst, const void *src, size_t n)
{
	volatile uint8_t *d = dst;
	const volatile uint8_t *s = src;

	while (n--)
		*d++ = *s++;
}

static void copy_fence(gdr_mapping_type_t type, int mixed)
{
	if (mixed || type == GDR_MAPPING_TYPE_WC)
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void gdr_copy_to_mapping_type(gdr_mapping_type_t type, int mixed, void *dst, const void *src,
			      size_t n)
{
	if (type == GDR_MAPPING_TYPE_CACHING)
		memcpy(dst, src, n);
	else
		copy_volatile(dst, src, n);
	copy_fence(type, mixed);
}

void gdr_copy_from_mapping_type(gdr_mapping_type_t type, int mixed, void *dst, const void *src,
				size_t n)
{
	if (type == GDR_MAPPING_TYPE_CACHING)
		memcpy(dst, src, n);
	else
		copy_volatile(dst, src, n);
	copy_fence(type, mixed);
}

int gdr_copy_impl_for(int to_device, size_t n)
{
	(void)to_device;
	(void)n;
	return GDR_COPY_IMPL_GENERIC;
}

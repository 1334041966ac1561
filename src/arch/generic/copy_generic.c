/* SPDX-License-Identifier: MIT */
/* The routines every architecture has: the generic reference, and libc's memcpy. */
#include <string.h>

#include "arch/generic/copy_generic.h"
#include "copy_impl.h"

void gdr_copy_store_generic(void *dst, const void *src, size_t n)
{
	gdr_generic_store(dst, src, n);
}

void gdr_copy_load_generic(void *dst, const void *src, size_t n)
{
	gdr_generic_load(dst, src, n);
}

void gdr_copy_store_memcpy(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
}

void gdr_copy_load_memcpy(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
}

/* SPDX-License-Identifier: MIT */
/*
 * GDRCopy 2.6's copy strategy (gdrcopy26_copy.h), from gdrcopy-2.6.md section 5. Built with
 * -msse4.1 -mavx2 -mmovdir64b on x86-64; gdrcopy26_init refuses CPUs that lack what it uses.
 *
 * The dispatch is the same in both directions and keyed on the device pointer: below 16 bytes
 * an "aligned copy" (each access 8, 4, 2 or 1 bytes, the widest that the device address allows
 * and that what remains holds: copy_generic.h's walk); else an aligned copy up to 16-byte
 * alignment, one 16-byte op if that leaves it 16 but not 32-aligned, one 32-byte op if then 32
 * but not 64-aligned, the 64-byte kernel on size & ~63 where there is one, the 32-byte kernel on
 * what is left & ~31, the 16-byte kernel on what is left & ~15, and an aligned copy of the tail.
 * The kernels unroll 4x. Loads: SSE4.1 MOVNTDQA (16) and AVX2 VMOVNTDQA (32); GDRCopy has no
 * 64-byte load on x86 (its AVX-512 path is disabled). Stores: MOVNTDQ (16), VMOVNTDQ (32), and
 * MOVDIR64B (64) when asked for. An sfence ends every copy, GDRCopy's fence for an unmixed WC
 * mapping. GDRCopy has separate kernel loops for aligned and unaligned host pointers, and its
 * kernels assert their arguments; the lean kernels use unaligned host accesses throughout, which
 * cost the same on CPUs with AVX2, and check nothing (the baseline as lean as GDRCopy's rules
 * allow); the checked kernels do both, as GDRCopy's build runs them. The kernels are
 * this file's own, not the library's routines, so that changing those never moves the baseline.
 */
#include "gdrcopy26_copy.h"

#include <errno.h>

#if defined(__x86_64__)
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/generic/copy_generic.h"
#include "cpu.h"

/* A kernel: device side aligned to its width, n a non-zero multiple of it. */
typedef void (*kernel_fn)(uint8_t *dst, const uint8_t *src, size_t n);

/* Called through pointers chosen at init, as GDRCopy's are: [0] lean, [1] checked. */
static kernel_fn store16_k[2], store32_k[2], store64_k[2], load16_k[2], load32_k[2];

static inline __m128i stream_load16(const uint8_t *s)
{
	return _mm_stream_load_si128((__m128i *)(uintptr_t)s);
}

static inline __m256i stream_load32(const uint8_t *s)
{
	return _mm256_stream_load_si256((__m256i *)(uintptr_t)s);
}

/* The host side's accesses: aligned ones where the host side is aligned to the width. */
static inline __m128i host_load16(const uint8_t *s, int aligned)
{
	return aligned ? _mm_load_si128((const __m128i *)s) : _mm_loadu_si128((const __m128i *)s);
}

static inline __m256i host_load32(const uint8_t *s, int aligned)
{
	return aligned ? _mm256_load_si256((const __m256i *)s) :
			 _mm256_loadu_si256((const __m256i *)s);
}

static inline void host_store16(uint8_t *d, __m128i v, int aligned)
{
	if (aligned)
		_mm_store_si128((__m128i *)d, v);
	else
		_mm_storeu_si128((__m128i *)d, v);
}

static inline void host_store32(uint8_t *d, __m256i v, int aligned)
{
	if (aligned)
		_mm256_store_si256((__m256i *)d, v);
	else
		_mm256_storeu_si256((__m256i *)d, v);
}

/*
 * The kernels' loops. host_aligned: the host side is aligned to the width, and aligned host
 * accesses are used (GDRCopy keeps separate loops for it).
 */
static inline __attribute__((always_inline)) void store16_loop(uint8_t *d, const uint8_t *s,
							       size_t n, int host_aligned)
{
	for (; n >= 64; d += 64, s += 64, n -= 64) {
		__m128i a = host_load16(s, host_aligned);
		__m128i b = host_load16(s + 16, host_aligned);
		__m128i c = host_load16(s + 32, host_aligned);
		__m128i e = host_load16(s + 48, host_aligned);

		_mm_stream_si128((__m128i *)d, a);
		_mm_stream_si128((__m128i *)(d + 16), b);
		_mm_stream_si128((__m128i *)(d + 32), c);
		_mm_stream_si128((__m128i *)(d + 48), e);
	}
	for (; n; d += 16, s += 16, n -= 16)
		_mm_stream_si128((__m128i *)d, host_load16(s, host_aligned));
}

static inline __attribute__((always_inline)) void store32_loop(uint8_t *d, const uint8_t *s,
							       size_t n, int host_aligned)
{
	for (; n >= 128; d += 128, s += 128, n -= 128) {
		__m256i a = host_load32(s, host_aligned);
		__m256i b = host_load32(s + 32, host_aligned);
		__m256i c = host_load32(s + 64, host_aligned);
		__m256i e = host_load32(s + 96, host_aligned);

		_mm256_stream_si256((__m256i *)d, a);
		_mm256_stream_si256((__m256i *)(d + 32), b);
		_mm256_stream_si256((__m256i *)(d + 64), c);
		_mm256_stream_si256((__m256i *)(d + 96), e);
	}
	for (; n; d += 32, s += 32, n -= 32)
		_mm256_stream_si256((__m256i *)d, host_load32(s, host_aligned));
}

static inline __attribute__((always_inline)) void load16_loop(uint8_t *d, const uint8_t *s,
							      size_t n, int host_aligned)
{
	for (; n >= 64; d += 64, s += 64, n -= 64) {
		__m128i a = stream_load16(s);
		__m128i b = stream_load16(s + 16);
		__m128i c = stream_load16(s + 32);
		__m128i e = stream_load16(s + 48);

		host_store16(d, a, host_aligned);
		host_store16(d + 16, b, host_aligned);
		host_store16(d + 32, c, host_aligned);
		host_store16(d + 48, e, host_aligned);
	}
	for (; n; d += 16, s += 16, n -= 16)
		host_store16(d, stream_load16(s), host_aligned);
}

static inline __attribute__((always_inline)) void load32_loop(uint8_t *d, const uint8_t *s,
							      size_t n, int host_aligned)
{
	for (; n >= 128; d += 128, s += 128, n -= 128) {
		__m256i a = stream_load32(s);
		__m256i b = stream_load32(s + 32);
		__m256i c = stream_load32(s + 64);
		__m256i e = stream_load32(s + 96);

		host_store32(d, a, host_aligned);
		host_store32(d + 32, b, host_aligned);
		host_store32(d + 64, c, host_aligned);
		host_store32(d + 96, e, host_aligned);
	}
	for (; n; d += 32, s += 32, n -= 32)
		host_store32(d, stream_load32(s), host_aligned);
}

/* The lean kernels: unaligned host accesses throughout, no checks. */
static void store16_kernel(uint8_t *d, const uint8_t *s, size_t n)
{
	store16_loop(d, s, n, 0);
}

static void store32_kernel(uint8_t *d, const uint8_t *s, size_t n)
{
	store32_loop(d, s, n, 0);
}

static void store64_kernel(uint8_t *d, const uint8_t *s, size_t n)
{
	for (; n >= 256; d += 256, s += 256, n -= 256) {
		_movdir64b(d, s);
		_movdir64b(d + 64, s + 64);
		_movdir64b(d + 128, s + 128);
		_movdir64b(d + 192, s + 192);
	}
	for (; n; d += 64, s += 64, n -= 64)
		_movdir64b(d, s);
}

static void load16_kernel(uint8_t *d, const uint8_t *s, size_t n)
{
	load16_loop(d, s, n, 0);
}

static void load32_kernel(uint8_t *d, const uint8_t *s, size_t n)
{
	load32_loop(d, s, n, 0);
}

/*
 * The kernels as GDRCopy 2.6's are (section 5.2): each asserts that the device side is aligned
 * to its width and that n is a non-zero multiple of it, and GDRCopy's build keeps asserts
 * (NDEBUG is not defined: section 1); each has separate loops for an aligned and an unaligned
 * host side.
 */
static __attribute__((noreturn, noinline, cold)) void kernel_assert_failed(const char *what)
{
	fprintf(stderr, "gdrcopy26 baseline: assertion failed: %s\n", what);
	abort();
}

static inline __attribute__((always_inline)) void kernel_asserts(const uint8_t *dev, size_t n,
								  size_t w)
{
	if ((uintptr_t)dev & (w - 1))
		kernel_assert_failed("device pointer aligned to the width");
	if (!n || (n & (w - 1)))
		kernel_assert_failed("n a non-zero multiple of the width");
}

static void store16_checked(uint8_t *d, const uint8_t *s, size_t n)
{
	kernel_asserts(d, n, 16);
	if ((uintptr_t)s & 15)
		store16_loop(d, s, n, 0);
	else
		store16_loop(d, s, n, 1);
}

static void store32_checked(uint8_t *d, const uint8_t *s, size_t n)
{
	kernel_asserts(d, n, 32);
	if ((uintptr_t)s & 31)
		store32_loop(d, s, n, 0);
	else
		store32_loop(d, s, n, 1);
}

static void store64_checked(uint8_t *d, const uint8_t *s, size_t n)
{
	kernel_asserts(d, n, 64);
	store64_kernel(d, s, n);
}

static void load16_checked(uint8_t *d, const uint8_t *s, size_t n)
{
	kernel_asserts(s, n, 16);
	if ((uintptr_t)d & 15)
		load16_loop(d, s, n, 0);
	else
		load16_loop(d, s, n, 1);
}

static void load32_checked(uint8_t *d, const uint8_t *s, size_t n)
{
	kernel_asserts(s, n, 32);
	if ((uintptr_t)d & 31)
		load32_loop(d, s, n, 0);
	else
		load32_loop(d, s, n, 1);
}

int gdrcopy26_init(unsigned int cpu_flags, int *movdir64b)
{
	*movdir64b = 0;
	if (!(cpu_flags & GDR_CPU_SSE41) || !(cpu_flags & GDR_CPU_AVX2))
		return -1;
	store16_k[0] = store16_kernel;
	store32_k[0] = store32_kernel;
	load16_k[0] = load16_kernel;
	load32_k[0] = load32_kernel;
	store16_k[1] = store16_checked;
	store32_k[1] = store32_checked;
	load16_k[1] = load16_checked;
	load32_k[1] = load32_checked;
	if (cpu_flags & GDR_CPU_MOVDIR64B) {
		store64_k[0] = store64_kernel;
		store64_k[1] = store64_checked;
		*movdir64b = 1;
	}
	return 0;
}

static inline __attribute__((always_inline)) void
aligned_copy(int to_device, uint8_t *d, const uint8_t *s, size_t n)
{
	if (to_device)
		gdr_generic_store(d, s, n);
	else
		gdr_generic_load(d, s, n);
}

static inline __attribute__((always_inline)) void
dispatch(int to_device, uint8_t *d, const uint8_t *s, size_t n, kernel_fn k16, kernel_fn k32,
	 kernel_fn k64)
{
	const uint8_t *dev = to_device ? d : s;
	size_t k;

	if (n < 16) {
		aligned_copy(to_device, d, s, n);
		return;
	}
	if ((uintptr_t)dev & 15) {
		k = 16 - ((uintptr_t)dev & 15);
		aligned_copy(to_device, d, s, k);
		d += k, s += k, dev += k, n -= k;
	}
	if (((uintptr_t)dev & 31) == 16 && n >= 16) {
		k16(d, s, 16);
		d += 16, s += 16, dev += 16, n -= 16;
	}
	if (((uintptr_t)dev & 63) == 32 && n >= 32) {
		k32(d, s, 32);
		d += 32, s += 32, dev += 32, n -= 32;
	}
	if (!((uintptr_t)dev & 63) && k64 && n >= 64) {
		k = n & ~(size_t)63;
		k64(d, s, k);
		d += k, s += k, n -= k;
	}
	if (n >= 32) {
		k = n & ~(size_t)31;
		k32(d, s, k);
		d += k, s += k, n -= k;
	}
	if (n >= 16) {
		k = n & ~(size_t)15;
		k16(d, s, k);
		d += k, s += k, n -= k;
	}
	if (n)
		aligned_copy(to_device, d, s, n);
}

void gdrcopy26_copy_to_wc(void *dev, const void *host, size_t n)
{
	dispatch(1, dev, host, n, store16_k[0], store32_k[0], NULL);
	_mm_sfence();
}

void gdrcopy26_copy_to_wc_movdir64b(void *dev, const void *host, size_t n)
{
	dispatch(1, dev, host, n, store16_k[0], store32_k[0], store64_k[0]);
	_mm_sfence();
}

void gdrcopy26_copy_from_wc(void *host, const void *dev, size_t n)
{
	dispatch(0, host, dev, n, load16_k[0], load32_k[0], NULL);
	_mm_sfence();
}

/*
 * The public calls. GDRCopy's handle is the address of its memh (section 2.2), whose fields
 * before the mapping type are a sys/queue.h list entry (section 2.6); gdr_map counts mappings
 * per type in process-global counters (section 2.3), from which every copy decides on the
 * mixed-mapping fence (section 5.3).
 */
struct gdrcopy26_memh {
	struct gdrcopy26_memh *le_next, **le_prev;
	gdr_mapping_type_t mapping_type;
	uint32_t handle;
};

static int type_count[GDR_MAPPING_TYPE_MAX];

gdr_mh_t gdrcopy26_map(gdr_mapping_type_t type)
{
	struct gdrcopy26_memh *mh = calloc(1, sizeof(*mh));
	gdr_mh_t handle = { 0 };

	if (!mh || type <= GDR_MAPPING_TYPE_NONE || type >= GDR_MAPPING_TYPE_MAX) {
		free(mh);
		return handle;
	}
	mh->mapping_type = type;
	type_count[type]++;
	handle.h = (unsigned long)mh;
	return handle;
}

void gdrcopy26_unmap(gdr_mh_t handle)
{
	struct gdrcopy26_memh *mh = (struct gdrcopy26_memh *)handle.h;

	if (!mh)
		return;
	type_count[mh->mapping_type]--;
	free(mh);
}

static inline __attribute__((always_inline)) int mixed_mappings(void)
{
	return (type_count[GDR_MAPPING_TYPE_WC] > 0) + (type_count[GDR_MAPPING_TYPE_CACHING] > 0) +
	       (type_count[GDR_MAPPING_TYPE_DEVICE] > 0) > 1;
}

/*
 * The fence after a copy: full when types are mixed, else a store fence for WC only. Decided
 * after the copy, from the counters, so that the call keeps nothing alive across its kernels:
 * the baseline is as lean as GDRCopy's documented rules allow.
 */
static inline __attribute__((always_inline)) void fence_after(int wc)
{
	if (mixed_mappings())
		_mm_mfence();
	else if (wc)
		_mm_sfence();
}

/* The DEVICE mapping's copy: libc memcpy when all is 8-aligned, else the widest single accesses. */
static inline __attribute__((always_inline)) void device_copy(int to_device, uint8_t *d,
							     const uint8_t *s, size_t n)
{
	if (!(((uintptr_t)d | (uintptr_t)s | n) & 7))
		memcpy(d, s, n);
	else
		aligned_copy(to_device, d, s, n);
}

/* One call, either direction: d and s are the destination and the source. */
static inline __attribute__((always_inline)) int
public_call(int to_device, int checked, gdr_mh_t handle, uint8_t *d, const uint8_t *s,
	    size_t size)
{
	const struct gdrcopy26_memh *mh = (const struct gdrcopy26_memh *)handle.h;

	if (mh->mapping_type == GDR_MAPPING_TYPE_NONE)
		return EINVAL;
	if (!size)
		return 0;
	switch (mh->mapping_type) {
	case GDR_MAPPING_TYPE_WC:
		if (to_device)
			dispatch(1, d, s, size, store16_k[checked], store32_k[checked], NULL);
		else
			dispatch(0, d, s, size, load16_k[checked], load32_k[checked], NULL);
		fence_after(1);
		return 0;
	case GDR_MAPPING_TYPE_CACHING:
		memcpy(d, s, size);
		break;
	case GDR_MAPPING_TYPE_DEVICE:
		device_copy(to_device, d, s, size);
		break;
	default:
		return EINVAL;
	}
	fence_after(0);
	return 0;
}

int gdrcopy26_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr, size_t size)
{
	return public_call(1, 0, handle, map_d_ptr, h_ptr, size);
}

int gdrcopy26_copy_from_mapping(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
	return public_call(0, 0, handle, h_ptr, map_d_ptr, size);
}

int gdrcopy26_checked_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr,
				      size_t size)
{
	return public_call(1, 1, handle, map_d_ptr, h_ptr, size);
}

int gdrcopy26_checked_copy_from_mapping(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr,
					size_t size)
{
	return public_call(0, 1, handle, h_ptr, map_d_ptr, size);
}

#else

int gdrcopy26_init(unsigned int cpu_flags, int *movdir64b)
{
	(void)cpu_flags;
	*movdir64b = 0;
	return -1;
}

void gdrcopy26_copy_to_wc(void *dev, const void *host, size_t n)
{
	(void)dev;
	(void)host;
	(void)n;
}

void gdrcopy26_copy_to_wc_movdir64b(void *dev, const void *host, size_t n)
{
	(void)dev;
	(void)host;
	(void)n;
}

void gdrcopy26_copy_from_wc(void *host, const void *dev, size_t n)
{
	(void)host;
	(void)dev;
	(void)n;
}

gdr_mh_t gdrcopy26_map(gdr_mapping_type_t type)
{
	gdr_mh_t handle = { 0 };

	(void)type;
	return handle;
}

void gdrcopy26_unmap(gdr_mh_t handle)
{
	(void)handle;
}

int gdrcopy26_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr, size_t size)
{
	(void)handle;
	(void)map_d_ptr;
	(void)h_ptr;
	(void)size;
	return EINVAL;
}

int gdrcopy26_copy_from_mapping(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
	(void)handle;
	(void)h_ptr;
	(void)map_d_ptr;
	(void)size;
	return EINVAL;
}

int gdrcopy26_checked_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr,
				      size_t size)
{
	return gdrcopy26_copy_to_mapping(handle, map_d_ptr, h_ptr, size);
}

int gdrcopy26_checked_copy_from_mapping(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr,
					size_t size)
{
	return gdrcopy26_copy_from_mapping(handle, h_ptr, map_d_ptr, size);
}

#endif

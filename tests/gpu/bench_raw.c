/* SPDX-License-Identifier: MIT */
/*
 * Raw accesses (bench_raw.h). Built with -mavx2 -mavx512f on x86-64; bench_raw_ok keeps each
 * width to the CPUs that have it. The loops keep each copy's accesses together, without the
 * compiler merging or dropping any: the device accesses are volatile or intrinsics.
 */
#include <stdint.h>
#include <string.h>

#include "bench_raw.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "cpu.h"

int bench_raw_ok(int to_device, size_t n, const void *dev, unsigned int width,
		 unsigned int cpu_flags)
{
	unsigned int needs;

	switch (width) {
	case 0:
		return (n == 1 || n == 2 || n == 4 || n == 8) && !((uintptr_t)dev & (n - 1));
	case 16:
		needs = to_device ? GDR_CPU_SSE2 : GDR_CPU_SSE41;
		break;
	case 32:
		needs = GDR_CPU_AVX2;
		break;
	case 64:
		needs = GDR_CPU_AVX512F;
		break;
	default:
		return 0;
	}
	return n && !(n % width) && !((uintptr_t)dev % width) && (cpu_flags & needs) == needs;
}

static inline void fence_if(int fence)
{
	if (fence)
		_mm_sfence();
}

static void plain_loads(uint8_t *h, const uint8_t *d, size_t n, long count, int fence)
{
	for (long i = 0; i < count; i++) {
		uint64_t v;

		switch (n) {
		case 1:
			v = *(const volatile uint8_t *)d;
			break;
		case 2:
			v = *(const volatile uint16_t *)d;
			break;
		case 4:
			v = *(const volatile uint32_t *)d;
			break;
		default:
			v = *(const volatile uint64_t *)d;
		}
		memcpy(h, &v, n);
		fence_if(fence);
	}
}

static void plain_stores(uint8_t *d, const uint8_t *h, size_t n, long count, int fence)
{
	for (long i = 0; i < count; i++) {
		uint64_t v = 0;

		memcpy(&v, h, n);
		switch (n) {
		case 1:
			*(volatile uint8_t *)d = (uint8_t)v;
			break;
		case 2:
			*(volatile uint16_t *)d = (uint16_t)v;
			break;
		case 4:
			*(volatile uint32_t *)d = (uint32_t)v;
			break;
		default:
			*(volatile uint64_t *)d = v;
		}
		fence_if(fence);
	}
}

void bench_raw_loads(void *host, const void *dev, size_t n, long count, unsigned int width,
		     int fence)
{
	uint8_t *h = host;
	const uint8_t *d = dev;

	switch (width) {
	case 0:
		plain_loads(h, d, n, count, fence);
		break;
	case 16:
		for (long i = 0; i < count; i++) {
			for (size_t k = 0; k < n; k += 16)
				_mm_storeu_si128((__m128i *)(h + k),
						 _mm_stream_load_si128((__m128i *)(uintptr_t)(d + k)));
			fence_if(fence);
		}
		break;
	case 32:
		for (long i = 0; i < count; i++) {
			for (size_t k = 0; k < n; k += 32)
				_mm256_storeu_si256((__m256i *)(h + k),
						    _mm256_stream_load_si256((__m256i *)(uintptr_t)(d + k)));
			fence_if(fence);
		}
		break;
	default:
		for (long i = 0; i < count; i++) {
			for (size_t k = 0; k < n; k += 64)
				_mm512_storeu_si512(h + k,
						    _mm512_stream_load_si512((void *)(uintptr_t)(d + k)));
			fence_if(fence);
		}
	}
}

void bench_raw_stores(void *dev, const void *host, size_t n, long count, unsigned int width,
		      int fence)
{
	uint8_t *d = dev;
	const uint8_t *h = host;

	switch (width) {
	case 0:
		plain_stores(d, h, n, count, fence);
		break;
	case 16:
		for (long i = 0; i < count; i++) {
			for (size_t k = 0; k < n; k += 16)
				_mm_stream_si128((__m128i *)(d + k),
						 _mm_loadu_si128((const __m128i *)(h + k)));
			fence_if(fence);
		}
		break;
	case 32:
		for (long i = 0; i < count; i++) {
			for (size_t k = 0; k < n; k += 32)
				_mm256_stream_si256((__m256i *)(d + k),
						    _mm256_loadu_si256((const __m256i *)(h + k)));
			fence_if(fence);
		}
		break;
	default:
		for (long i = 0; i < count; i++) {
			for (size_t k = 0; k < n; k += 64)
				_mm512_stream_si512((void *)(d + k), _mm512_loadu_si512(h + k));
			fence_if(fence);
		}
	}
}

#else

int bench_raw_ok(int to_device, size_t n, const void *dev, unsigned int width,
		 unsigned int cpu_flags)
{
	(void)to_device;
	(void)n;
	(void)dev;
	(void)width;
	(void)cpu_flags;
	return 0;
}

void bench_raw_loads(void *host, const void *dev, size_t n, long count, unsigned int width,
		     int fence)
{
	(void)host;
	(void)dev;
	(void)n;
	(void)count;
	(void)width;
	(void)fence;
}

void bench_raw_stores(void *dev, const void *host, size_t n, long count, unsigned int width,
		      int fence)
{
	(void)dev;
	(void)host;
	(void)n;
	(void)count;
	(void)width;
	(void)fence;
}

#endif

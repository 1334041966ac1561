/* SPDX-License-Identifier: MIT */
/*
 * The vulkan backend's cases about data: copies at many sizes and offsets, plain stores both
 * ways, many buffers at once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_vmm.h"
#include "gdrapi.h"
#include "gdrapi_ext.h"
#include "harness.h"
#include "simcuda.h"
#include "vulkan_cases.h"

/* Copies into and out of the mapping at many sizes and offsets, checked against the memory. */
int vulkan_case_copy_sizes_offsets(void)
{
	static const size_t sizes[] = { 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65,
					127, 128, 129, 255, 256, 1000, 1023, 1024, 4095, 4096,
					4097, 65535, 65536, 65537, 300000 };
	static const size_t offsets[] = { 0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 129, 4093,
					  65535 };
	const size_t region = 512 * 1024;
	struct test_vmm m;
	uint8_t *src, *dst, *map;
	gdr_mh_t mh;
	void *base;
	int ret = 0;

	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	src = malloc(region);
	dst = malloc(region);
	CHECK(src && dst);
	CHECK(pin_map(m.ptr, region, &mh, &base, &map) == 0);
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]) && !ret; si++) {
		for (size_t oi = 0; oi < sizeof(offsets) / sizeof(offsets[0]) && !ret; oi++) {
			size_t n = sizes[si], off = offsets[oi];
			uint8_t *dev = (uint8_t *)(uintptr_t)m.ptr;

			/* To the mapping: exactly [off, off + n) changes in device memory. */
			CHECK_EQ(cuMemsetD8(m.ptr, 0xa5, region), CUDA_SUCCESS);
			/* A memset of device memory may return before it is done (CUDA's rules). */
			CHECK_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
			fill_pattern(src, n, (unsigned)(si * 31 + oi));
			CHECK_EQ(gdr_copy_to_mapping(mh, map + off, src, n), 0);
			CHECK_EQ(cuMemcpyDtoH(dst, m.ptr, region), CUDA_SUCCESS);
			for (size_t i = 0; i < off + n + 64 && i < region; i++) {
				uint8_t want = i >= off && i < off + n ? src[i - off] : 0xa5;

				if (dst[i] != want || dev[i] != want) {
					ret = test_fail("to_mapping n=%zu off=%zu: byte %zu is "
							  "0x%02x/0x%02x, want 0x%02x", n, off, i,
							  dst[i], dev[i], want);
					break;
				}
			}
			/* From the mapping: what cuMemcpyHtoD wrote, nothing around it touched. */
			fill_pattern(src, off + n, (unsigned)(si * 17 + oi + 1));
			CHECK_EQ(cuMemcpyHtoD(m.ptr, src, off + n), CUDA_SUCCESS);
			memset(dst, 0x5a, n + 128);
			CHECK_EQ(gdr_copy_from_mapping(mh, dst + 64, map + off, n), 0);
			for (size_t i = 0; i < n + 128 && !ret; i++) {
				uint8_t want = i >= 64 && i < 64 + n ? src[off + i - 64] : 0x5a;

				if (dst[i] != want)
					ret = test_fail("from_mapping n=%zu off=%zu: byte %zu is "
							  "0x%02x, want 0x%02x", n, off, i, dst[i],
							  want);
			}
		}
	}
	CHECK(unmap_unpin(mh, base) == 0);
	free(src);
	free(dst);
	test_vmm_free(&m);
	return ret;
}

/* Plain stores through the mapping and through the device pointer see each other. */
int vulkan_case_coherent_direct(void)
{
	struct test_vmm m;
	volatile uint64_t *map, *dev;
	gdr_mh_t mh;
	void *base;
	uint8_t *p;

	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	CHECK(pin_map(m.ptr, m.size, &mh, &base, &p) == 0);
	map = (volatile uint64_t *)p;
	dev = (volatile uint64_t *)(uintptr_t)m.ptr;
	for (size_t i = 0; i < m.size / 8; i += 4099) {
		map[i] = 0x1122334455667788ULL ^ i;
		CHECK_EQ(dev[i], 0x1122334455667788ULL ^ i);
		dev[i] = ~(uint64_t)i;
		CHECK_EQ(map[i], ~(uint64_t)i);
	}
	CHECK(unmap_unpin(mh, base) == 0);
	test_vmm_free(&m);
	return 0;
}

/* Several buffers at once, and two pins of one range, all mapped. */
int vulkan_case_many_buffers(void)
{
	enum { N = 8 };
	struct test_vmm m[N];
	gdr_mh_t mh[N], twin;
	void *base[N], *twin_base;
	uint8_t *map[N], *twin_map;
	struct leak_mark lm;

	leak_mark_take(&lm);
	for (int i = 0; i < N; i++) {
		CHECK_EQ(test_vmm_alloc(&m[i], 2 * MiB, 0,
					   CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
		CHECK(pin_map(m[i].ptr + (size_t)i * 4096, 100000, &mh[i], &base[i], &map[i]) == 0);
	}
	for (int i = 0; i < N; i++)
		memset(map[i], 'a' + i, 100000);
	for (int i = 0; i < N; i++) {
		const uint8_t *dev = (const uint8_t *)(uintptr_t)(m[i].ptr + (size_t)i * 4096);

		CHECK_EQ(dev[0], 'a' + i);
		CHECK_EQ(dev[99999], 'a' + i);
	}
	CHECK(pin_map(m[3].ptr, 2 * MiB, &twin, &twin_base, &twin_map) == 0);
	twin_map[3 * 4096 + 5] = 'Z';
	CHECK_EQ(map[3][5], 'Z');
	CHECK(unmap_unpin(twin, twin_base) == 0);
	/* Out of order, half of them still mapped at unpin. */
	for (int i = N - 1; i >= 0; i -= 2)
		CHECK(unmap_unpin(mh[i], base[i]) == 0);
	for (int i = 0; i < N; i += 2)
		CHECK_EQ(gdr_unpin_buffer(vk_gdr, mh[i]), 0);
	for (int i = 0; i < N; i++)
		test_vmm_free(&m[i]);
	return check_no_leak(&lm);
}

/* SPDX-License-Identifier: MIT */
/* The dmabuf backend's cases about data: copies at every size and offset, unaligned pins, two pins of one buffer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dmabuf_cases.h"
#include "harness.h"

/* One pin of [buf + off, + size): data both ways, bytes around it untouched. */
static void copy_one(CUdeviceptr buf, size_t alloc, size_t off, size_t size, uint8_t *src,
		     uint8_t *dst)
{
	uint8_t *dev = (uint8_t *)buf, *map;
	unsigned long addr = buf + off;
	size_t lo = off > 64 ? off - 64 : 0;
	size_t hi = off + size + 64 < alloc ? off + size + 64 : alloc;
	int failures = test_failures();
	gdr_info_t info;
	gdr_mh_t mh;

	EXPECT_ERR(pin_map(addr, size, 0, &mh, &info, &map), 0);
	if (test_failures() != failures)
		return;
	EXPECT(info.va <= addr && addr + size <= info.va + info.mapped_size);
	EXPECT(info.va % GPU_PAGE == 0 && info.page_size == GPU_PAGE);
	memset(dev + lo, 0x5a, hi - lo);
	fill(src, size, (unsigned)(off * 3 + size));
	EXPECT_ERR(gdr_copy_to_mapping(mh, map + (addr - info.va), src, size), 0);
	EXPECT(!memcmp(dev + off, src, size));
	for (size_t i = lo; i < hi; i++)
		if (i < off || i >= off + size)
			EXPECT(dev[i] == 0x5a);
	memset(dst, 0, size);
	EXPECT(t.cu->cuMemcpyDtoH(dst, addr, size) == CUDA_SUCCESS);
	EXPECT(!memcmp(dst, src, size));

	fill(src, size, (unsigned)(off + size * 5 + 1));
	EXPECT(t.cu->cuMemcpyHtoD(addr, src, size) == CUDA_SUCCESS);
	memset(dst, 0, size);
	EXPECT_ERR(gdr_copy_from_mapping(mh, dst, map + (addr - info.va), size), 0);
	EXPECT(!memcmp(dst, src, size));
	unmap_unpin(mh, map, &info);
	if (test_failures() != failures)
		fprintf(stderr, "  (offset %zu, size %zu)\n", off, size);
}

int dmabuf_case_copy_sizes_offsets(void)
{
	static const size_t sizes[] = { 1, 7, 64, 4095, 4096, 4097, 65535, 65536, 65537, 200000,
					1 << 20 };
	static const size_t offsets[] = { 0, 1, 63, 4096, 4097, 65535, 65536 + 8, 3 * 65536 - 1 };
	const size_t alloc = 3 << 20;
	CUdeviceptr buf = dev_alloc(alloc);
	uint8_t *src = malloc(1 << 20), *dst = malloc(1 << 20);

	CHECK(buf && src && dst);
	for (size_t i = 0; buf && src && dst && i < sizeof(offsets) / sizeof(offsets[0]); i++)
		for (size_t j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++)
			copy_one(buf, alloc, offsets[i], sizes[j], src, dst);
	free(src);
	free(dst);
	t.cu->cuMemFree(buf);
	return TEST_PASS;
}

/*
 * NVSHMEM's pattern: map the pin's own size, then reach addr at (addr - info.va). The mapping
 * must hold all of [addr, addr + size): it held only size bytes from info.va.
 */
static void map_pin_size(unsigned long addr, size_t size, size_t seed)
{
	uint8_t *src = malloc(size), *va;
	gdr_info_t info;
	gdr_mh_t mh;
	void *p;

	EXPECT(src != NULL);
	if (!src)
		return;
	for (size_t k = 0; k < size; k++)
		src[k] = (uint8_t)(k * 7 + seed);
	EXPECT_ERR(gdr_pin_buffer_v2(t.g, addr, size, 0, &mh), 0);
	EXPECT_ERR(gdr_get_info(t.g, mh, &info), 0);
	EXPECT_ERR(gdr_map(t.g, mh, &p, size), 0);
	va = p;
	EXPECT_ERR(gdr_copy_to_mapping(mh, va + (addr - info.va), src, size), 0);
	EXPECT(!memcmp((void *)addr, src, size));
	/* And not a byte further than the pin. */
	EXPECT_ERR(gdr_copy_to_mapping(mh, va + info.mapped_size, src, 1), EINVAL);
	EXPECT_ERR(gdr_unmap(t.g, mh, p, size), 0);
	EXPECT_ERR(gdr_unpin_buffer(t.g, mh), 0);
	free(src);
}

/* Pins at unaligned addresses report a GPU-page va inside the allocation and map from it. */
int dmabuf_case_unaligned_pins(void)
{
	static const struct {
		size_t alloc, off, size;
		size_t va_off, mapped;
	} cases[] = {
		{ 1 << 20, 100, 10, 0, GPU_PAGE },
		{ 1 << 20, GPU_PAGE + 4000, 200, GPU_PAGE, GPU_PAGE },
		{ 1 << 20, GPU_PAGE - 10, 20, 0, 2 * GPU_PAGE },
		/* The allocation ends inside the GPU page: the pin ends at its last host page. */
		{ 3 * 4096 + 5, 3 * 4096 + 1, 3, 0, 4 * 4096 },
		{ 100, 1, 50, 0, 4096 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CUdeviceptr buf = dev_alloc(cases[i].alloc);
		unsigned long addr = buf + cases[i].off;
		const uint8_t v[3] = { 0x11, 0x22, (uint8_t)i };
		size_t n = sizeof(v) < cases[i].size ? sizeof(v) : cases[i].size;
		gdr_info_t info;
		uint8_t *map;
		gdr_mh_t mh;
		int failures = test_failures();

		CHECK(buf);
		EXPECT_ERR(pin_map(addr, cases[i].size, 0, &mh, &info, &map), 0);
		if (test_failures() != failures)
			continue;
		EXPECT(info.va == buf + cases[i].va_off && info.mapped_size == cases[i].mapped);
		EXPECT(info.page_size == GPU_PAGE);
		EXPECT_ERR(gdr_copy_to_mapping(mh, map + (addr - info.va), v, n), 0);
		EXPECT(!memcmp((void *)addr, v, n));
		/* Mapped whole (mapped_size from info.va), the mapping ends where the pin does. */
		EXPECT_ERR(gdr_copy_to_mapping(mh, map + info.mapped_size, v, 1), EINVAL);
		unmap_unpin(mh, map, &info);
		if (test_failures() == failures)
			map_pin_size(addr, cases[i].size, i);
		if (test_failures() != failures)
			fprintf(stderr, "  (unaligned case %zu)\n", i);
		t.cu->cuMemFree(buf);
	}
	return TEST_PASS;
}

/* Two pins of one buffer (GDRCopy's mix-mappings pattern) see each other's writes. */
int dmabuf_case_two_pins_one_buffer(void)
{
	CUdeviceptr buf = dev_alloc(GPU_PAGE);
	uint64_t w = 0x0123456789abcdefULL, r = 0;
	gdr_info_t i1, i2;
	uint8_t *m1, *m2;
	gdr_mh_t h1, h2;

	CHECK(buf);
	EXPECT_ERR(pin_map(buf + 8, 64, 0, &h1, &i1, &m1), 0);
	EXPECT_ERR(pin_map(buf + 8, 64, 0, &h2, &i2, &m2), 0);
	if (!test_failures()) {
		EXPECT_ERR(gdr_copy_to_mapping(h1, m1 + 8, &w, sizeof(w)), 0);
		EXPECT_ERR(gdr_copy_from_mapping(h2, &r, m2 + 8, sizeof(r)), 0);
		EXPECT(r == w && !memcmp((void *)(buf + 8), &w, sizeof(w)));
		unmap_unpin(h1, m1, &i1);
		unmap_unpin(h2, m2, &i2);
	}
	t.cu->cuMemFree(buf);
	return TEST_PASS;
}

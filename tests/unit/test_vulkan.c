/* SPDX-License-Identifier: MIT */
/*
 * The vulkan backend through the public API, against the simulated CUDA driver (linked) and
 * Mesa's lavapipe: pin, map, copies both ways checked against the device memory, info and
 * attributes, every refusal and its log line, leaks, threads.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_vmm.h"
#include "fork_check.h"
#include "gdrapi.h"
#include "gdrapi_ext.h"
#include "harness.h"
#include "info_v1.h"
#include "simcuda.h"

#define MiB (1UL << 20)

static gdr_t g;

/* Counters and fds at the start of a case, to compare at its end. */
struct leak_mark {
	struct simcuda_counters c;
	int fds;
};

static void mark(struct leak_mark *m)
{
	simcuda_get_counters(&m->c);
	m->fds = test_fd_count();
}

static int check_no_leak(const struct leak_mark *m)
{
	struct leak_mark now;

	mark(&now);
	CHECK_EQ(now.fds, m->fds);
	CHECK_EQ(now.c.allocations, m->c.allocations);
	CHECK_EQ(now.c.handle_refs, m->c.handle_refs);
	CHECK_EQ(now.c.mappings, m->c.mappings);
	CHECK_EQ(now.c.primary_ctx_refs, m->c.primary_ctx_refs);
	return 0;
}

static void fill_pattern(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

/* Pin and map [addr, addr + size); *map points at addr through the mapping. */
static int pin_map(unsigned long addr, size_t size, gdr_mh_t *mh, void **base, uint8_t **map)
{
	gdr_info_t info;
	int ret = gdr_pin_buffer_v2(g, addr, size, 0, mh);

	if (ret)
		return test_fail("gdr_pin_buffer_v2(0x%lx, %zu) = %d", addr, size, ret);
	ret = gdr_get_info(g, *mh, &info);
	if (ret)
		return test_fail("gdr_get_info = %d", ret);
	ret = gdr_map(g, *mh, base, info.mapped_size);
	if (ret)
		return test_fail("gdr_map(%llu) = %d", (unsigned long long)info.mapped_size, ret);
	*map = (uint8_t *)*base + (addr - info.va);
	return 0;
}

static int unmap_unpin(gdr_mh_t mh, void *base)
{
	gdr_info_t info;

	CHECK_EQ(gdr_get_info(g, mh, &info), 0);
	CHECK_EQ(gdr_unmap(g, mh, base, info.mapped_size), 0);
	CHECK_EQ(gdr_unpin_buffer(g, mh), 0);
	return 0;
}

static int case_open(void)
{
	int v = -1, major = 0, minor = 0;

	g = gdr_open();
	CHECK(g != NULL);
	CHECK_EQ(gdr_get_attribute(g, GDR_ATTR_EXT_BACKEND, &v), 0);
	CHECK_EQ(v, GDR_BACKEND_VULKAN);
	CHECK_EQ(gdr_driver_get_version(g, &major, &minor), 0);
	CHECK_EQ(major, 2);
	CHECK_EQ(minor, 6);
	/*
	 * The first pin creates device 0's VkDevice, which lives as long as the process, with
	 * whatever fds and threads lavapipe gives it: make it here, so that the leak checks of the
	 * cases below compare steady states.
	 */
	{
		struct test_vmm m;
		gdr_mh_t mh;

		CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
		CHECK_EQ(gdr_pin_buffer(g, m.ptr, 65536, 0, 0, &mh), 0);
		CHECK_EQ(gdr_unpin_buffer(g, mh), 0);
		test_vmm_free(&m);
	}
	return 0;
}

static int case_attributes(void)
{
	int v = -1;

	CHECK_EQ(gdr_get_attribute(g, GDR_ATTR_USE_PERSISTENT_MAPPING, &v), 0);
	CHECK_EQ(v, 1);
	CHECK_EQ(gdr_get_attribute(g, GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE, &v), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(gdr_get_attribute(g, GDR_ATTR_USING_DMA_BUF_MMAP, &v), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(gdr_get_attribute(g, GDR_ATTR_MAX, &v), EINVAL);
	CHECK_EQ(gdr_get_attribute(g, 0, &v), EINVAL);
	return 0;
}

static int case_pin_info(void)
{
	/* v1 gdr_get_info, as binaries built against GDRCopy <= 2.3 call it. */
	int (*get_info_v1)(gdr_t, gdr_mh_t, gdr_info_v1_t *);
	struct test_vmm m;
	struct leak_mark lm;
	gdr_info_t info;
	gdr_info_v1_t v1;
	gdr_mh_t mh;
	void *base;
	int flag = -1;

	mark(&lm);
	CHECK_EQ(test_vmm_alloc(&m, 4 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	/* From inside a GPU page to inside another: the pin covers both pages whole. */
	CHECK_EQ(gdr_pin_buffer(g, m.ptr + 65536 + 100, 70000, 0, 0, &mh), 0);
	CHECK_EQ(gdr_get_info_v2(g, mh, &info), 0);
	CHECK_EQ(info.va, m.ptr + 65536);
	CHECK_EQ(info.mapped_size, 2 * 65536);
	CHECK_EQ(info.page_size, 65536);
	CHECK_EQ(info.mapped, 0);
	CHECK_EQ(info.mapping_type, GDR_MAPPING_TYPE_NONE);
	CHECK_EQ(gdr_get_callback_flag(g, mh, &flag), 0);
	CHECK_EQ(flag, 0);
	CHECK_EQ(gdr_map(g, mh, &base, info.mapped_size), 0);
	CHECK_EQ(gdr_get_info_v2(g, mh, &info), 0);
	CHECK_EQ(info.mapped, 1);
	CHECK_EQ(info.wc_mapping, 1);
	CHECK_EQ(info.mapping_type, GDR_MAPPING_TYPE_WC);

	/* gdrapi.h maps gdr_get_info to gdr_get_info_v2; old binaries bind the v1 symbol. */
	get_info_v1 = (int (*)(gdr_t, gdr_mh_t, gdr_info_v1_t *))dlsym(RTLD_DEFAULT, "gdr_get_info");
	CHECK(get_info_v1 != NULL);
	memset(&v1, 0xff, sizeof(v1));
	CHECK_EQ(get_info_v1(g, mh, &v1), 0);
	CHECK_EQ(v1.va, m.ptr + 65536);
	CHECK_EQ(v1.mapped_size, 2 * 65536);
	CHECK_EQ(v1.page_size, 65536);
	CHECK_EQ(v1.mapped, 1);
	CHECK_EQ(v1.wc_mapping, 1);
	CHECK(unmap_unpin(mh, base) == 0);

	/* The last bytes of the allocation: mapped_size stops at its end. */
	CHECK_EQ(gdr_pin_buffer_v2(g, m.ptr + m.size - 10, 10, 0, &mh), 0);
	CHECK_EQ(gdr_get_info_v2(g, mh, &info), 0);
	CHECK_EQ(info.va, m.ptr + m.size - 65536);
	CHECK_EQ(info.mapped_size, 65536);
	CHECK_EQ(gdr_unpin_buffer(g, mh), 0);
	test_vmm_free(&m);
	return check_no_leak(&lm);
}

/* Copies into and out of the mapping at many sizes and offsets, checked against the memory. */
static int case_copy_sizes_offsets(void)
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
static int case_coherent_direct(void)
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
static int case_many_buffers(void)
{
	enum { N = 8 };
	struct test_vmm m[N];
	gdr_mh_t mh[N], twin;
	void *base[N], *twin_base;
	uint8_t *map[N], *twin_map;
	struct leak_mark lm;

	mark(&lm);
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
		CHECK_EQ(gdr_unpin_buffer(g, mh[i]), 0);
	for (int i = 0; i < N; i++)
		test_vmm_free(&m[i]);
	return check_no_leak(&lm);
}

/* The pin outlives the application's free of the allocation (persistent semantics). */
static int case_free_while_pinned(void)
{
	struct simcuda_counters c0, c1, c2;
	struct test_vmm m;
	gdr_mh_t mh;
	void *base;
	uint8_t *map;

	simcuda_get_counters(&c0);
	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	CHECK(pin_map(m.ptr, 65536, &mh, &base, &map) == 0);
	memset(map, 0x42, 65536);
	test_vmm_free(&m);
	simcuda_get_counters(&c1);
	CHECK_EQ(c1.allocations, c0.allocations + 1);
	CHECK_EQ(map[0], 0x42);
	CHECK_EQ(map[65535], 0x42);
	map[7] = 0x43;
	CHECK_EQ(map[7], 0x43);
	CHECK(unmap_unpin(mh, base) == 0);
	simcuda_get_counters(&c2);
	CHECK_EQ(c2.allocations, c0.allocations);
	CHECK_EQ(c2.handle_refs, c0.handle_refs);
	return 0;
}

/*
 * Two allocations mapped back to back in one reservation (as PyTorch's expandable segments do):
 * each pin imports the allocation its address lies in, and a pin across the seam is refused.
 */
static int case_segments(void)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
	};
	CUmemAccessDesc access = { .location = prop.location,
				   .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	CUmemGenericAllocationHandle h[2];
	struct leak_mark lm;
	CUdeviceptr va;
	gdr_info_t info;
	gdr_mh_t mh;
	void *base;
	uint8_t *map;

	mark(&lm);
	CHECK_EQ(cuMemAddressReserve(&va, 6 * MiB, 0, 0, 0), CUDA_SUCCESS);
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(cuMemCreate(&h[i], 2 * MiB, &prop, 0), CUDA_SUCCESS);
		CHECK_EQ(cuMemMap(va + (size_t)i * 2 * MiB, 2 * MiB, 0, h[i], 0), CUDA_SUCCESS);
	}
	CHECK_EQ(cuMemSetAccess(va, 4 * MiB, &access, 1), CUDA_SUCCESS);
	if (pin_map(va + 2 * MiB + 65536 + 5, 1000, &mh, &base, &map))
		return 1;
	CHECK_EQ(gdr_get_info(g, mh, &info), 0);
	CHECK_EQ(info.va, va + 2 * MiB + 65536);
	memcpy(map, "seam", 4);
	CHECK(!memcmp((const void *)(uintptr_t)(va + 2 * MiB + 65536 + 5), "seam", 4));
	CHECK(unmap_unpin(mh, base) == 0);
	CHECK_EQ(gdr_pin_buffer_v2(g, va + 2 * MiB - 4096, 8192, 0, &mh), EINVAL);
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(cuMemUnmap(va + (size_t)i * 2 * MiB, 2 * MiB), CUDA_SUCCESS);
		CHECK_EQ(cuMemRelease(h[i]), CUDA_SUCCESS);
	}
	CHECK_EQ(cuMemAddressFree(va, 6 * MiB), CUDA_SUCCESS);
	return check_no_leak(&lm);
}

/* Each refusal: its errno, a log line saying why and what to do, nothing left behind. */
static int expect_pin_error(unsigned long addr, size_t size, uint32_t flags, int want,
			    const char *log_part)
{
	const char *log;
	gdr_mh_t mh = { 0 };
	int ret;

	test_capture_begin();
	ret = gdr_pin_buffer_v2(g, addr, size, flags, &mh);
	log = test_capture_end();
	if (ret != want)
		return test_fail("pin 0x%lx+%zu flags %u = %d, want %d", addr, size, flags, ret,
				   want);
	if (log_part && !strstr(log, log_part))
		return test_fail("pin 0x%lx: log lacks \"%s\": %s", addr, log_part, log);
	if (log_part && !strstr(log, "ERR:"))
		return test_fail("pin 0x%lx: no ERR line: %s", addr, log);
	return 0;
}

static int case_refusals(void)
{
	struct test_vmm vmm, nofd;
	CUdeviceptr dptr, managed;
	struct leak_mark lm;
	gdr_mh_t mh;
	void *host;
	char stack[64];
	int ret = 0;

	mark(&lm);
	CHECK_EQ(test_vmm_alloc(&vmm, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	CHECK_EQ(test_vmm_alloc(&nofd, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_NONE), CUDA_SUCCESS);
	CHECK_EQ(cuMemAlloc(&dptr, 1 * MiB), CUDA_SUCCESS);
	CHECK_EQ(cuMemAllocHost(&host, 65536), CUDA_SUCCESS);
	CHECK_EQ(cuMemAllocManaged(&managed, 65536, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);

	ret = ret ? ret : expect_pin_error(dptr, 65536, 0, ENOTSUP,
					   "requestedHandleTypes = "
					   "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR");
	ret = ret ? ret : expect_pin_error(dptr, 65536, 0, ENOTSUP, "gdrdrv backend");
	ret = ret ? ret : expect_pin_error(nofd.ptr, 65536, 0, ENOTSUP,
					   "without CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR");
	ret = ret ? ret : expect_pin_error((unsigned long)stack, sizeof(stack), 0, EINVAL,
					   "not a CUDA device pointer");
	ret = ret ? ret : expect_pin_error((unsigned long)host, 65536, 0, EINVAL, "host memory");
	ret = ret ? ret : expect_pin_error(managed, 65536, 0, EINVAL, "managed");
	ret = ret ? ret : expect_pin_error(vmm.ptr + 65536, vmm.size, 0, EINVAL,
					   "past the end of its allocation");
	ret = ret ? ret : expect_pin_error(vmm.ptr, 65536, GDR_PIN_FLAG_FORCE_PCIE, EINVAL,
					   "FORCE_PCIE");
	ret = ret ? ret : expect_pin_error(vmm.ptr, 65536, 0x4, EINVAL, NULL);
	ret = ret ? ret : expect_pin_error(vmm.ptr, 0, 0, EINVAL, NULL);
	if (ret)
		return ret;
	/* Tokens: refused when given, as gdrdrv in persistent mode; zero tokens are fine. */
	CHECK_EQ(gdr_pin_buffer(g, vmm.ptr, 65536, 1, 0, &mh), EINVAL);
	CHECK_EQ(gdr_pin_buffer(g, vmm.ptr, 65536, 0, 1, &mh), EINVAL);
	CHECK_EQ(gdr_pin_buffer(g, vmm.ptr, 65536, 0, 0, &mh), 0);
	CHECK_EQ(gdr_unpin_buffer(g, mh), 0);

	CHECK_EQ(cuMemFree(dptr), CUDA_SUCCESS);
	CHECK_EQ(cuMemFreeHost(host), CUDA_SUCCESS);
	CHECK_EQ(cuMemFree(managed), CUDA_SUCCESS);
	test_vmm_free(&vmm);
	test_vmm_free(&nofd);
	return check_no_leak(&lm);
}

static int case_map_errors(void)
{
	struct test_vmm m;
	gdr_info_t info;
	gdr_mh_t mh;
	void *va, *va2;
	const char *log;

	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	CHECK_EQ(gdr_pin_buffer_v2(g, m.ptr, 65536, 0, &mh), 0);
	test_capture_begin();
	CHECK_EQ(gdr_map_v2(g, mh, &va, 65536, GDR_MAP_FLAG_REQ_CACHE_MAPPING), EINVAL);
	CHECK_EQ(gdr_map_v2(g, mh, &va, 65536, GDR_MAP_FLAG_REQ_DEVICE_MAPPING), EINVAL);
	log = test_capture_end();
	CHECK(strstr(log, "write-combined") != NULL);
	CHECK_EQ(gdr_map_v2(g, mh, &va, 65536, 4), EINVAL);
	CHECK_EQ(gdr_map_v2(g, mh, &va, 65537, GDR_MAP_FLAG_DEFAULT), EINVAL);
	CHECK_EQ(gdr_unmap(g, mh, NULL, 65536), EINVAL);
	CHECK_EQ(gdr_map_v2(g, mh, &va, 4096, GDR_MAP_FLAG_REQ_WC_MAPPING), 0);
	CHECK_EQ(gdr_map_v2(g, mh, &va2, 4096, GDR_MAP_FLAG_REQ_WC_MAPPING), EAGAIN);
	CHECK_EQ(gdr_get_info(g, mh, &info), 0);
	CHECK_EQ(info.mapping_type, GDR_MAPPING_TYPE_WC);
	/* Copies outside the mapped 4096 bytes are refused. */
	CHECK_EQ(gdr_copy_to_mapping(mh, (char *)va + 4095, "ab", 2), EINVAL);
	CHECK_EQ(gdr_copy_to_mapping(mh, (char *)va + 4094, "ab", 2), 0);
	CHECK_EQ(gdr_unmap(g, mh, va, 4096), 0);
	CHECK_EQ(gdr_unmap(g, mh, va, 4096), EINVAL);
	CHECK_EQ(gdr_copy_to_mapping(mh, va, "ab", 2), EINVAL);
	CHECK_EQ(gdr_map(g, mh, &va, 65536), 0);
	CHECK_EQ(gdr_unpin_buffer(g, mh), 0);
	CHECK_EQ(gdr_unpin_buffer(g, mh), EINVAL);
	test_vmm_free(&m);
	return 0;
}

/* A second device without a Vulkan twin (GDRCOPY_SIM_CUDA_DEVICES=2 set in main). */
static int case_unmatched_device(void)
{
	struct test_vmm m;
	int count = 0;
	int ret;

	CHECK_EQ(cuDeviceGetCount(&count), CUDA_SUCCESS);
	if (count < 2) {
		return test_skip("the simulator has one device");
	}
	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	ret = expect_pin_error(m.ptr, 65536, 0, ENOTSUP,
			       "no Vulkan device matches CUDA device 1 (UUID GPU-");
	test_vmm_free(&m);
	return ret;
}

static int case_cycles_no_leak(void)
{
	struct test_vmm m;
	struct leak_mark lm;
	uint64_t v = 0;

	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	mark(&lm);
	for (int i = 0; i < 10000; i++) {
		gdr_mh_t mh;
		void *va;

		CHECK_EQ(gdr_pin_buffer_v2(g, m.ptr + (size_t)(i % 16) * 65536, 8, 0, &mh), 0);
		CHECK_EQ(gdr_map(g, mh, &va, 65536), 0);
		v = (uint64_t)i;
		CHECK_EQ(gdr_copy_to_mapping(mh, va, &v, sizeof(v)), 0);
		CHECK_EQ(gdr_unmap(g, mh, va, 65536), 0);
		CHECK_EQ(gdr_unpin_buffer(g, mh), 0);
		CHECK_EQ(*(volatile uint64_t *)(uintptr_t)(m.ptr + (size_t)(i % 16) * 65536),
			 (uint64_t)i);
	}
	CHECK(check_no_leak(&lm) == 0);
	test_vmm_free(&m);
	return 0;
}

/* The calling thread's CUDA context is left as it was, whether one was current or not. */
static void *no_context_thread(void *arg)
{
	const struct test_vmm *m = arg;
	CUcontext ctx = (CUcontext)1;
	gdr_mh_t mh;
	void *va;
	int ret;

	ret = gdr_pin_buffer_v2(g, m->ptr, 65536, 0, &mh);
	if (!ret)
		ret = gdr_map(g, mh, &va, 65536);
	if (!ret) {
		gdr_unmap(g, mh, va, 65536);
		gdr_unpin_buffer(g, mh);
	}
	if (!ret && (cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx != NULL))
		ret = -1;
	return (void *)(intptr_t)ret;
}

static int case_context_restored(void)
{
	struct simcuda_counters c0, c1;
	struct test_vmm m;
	CUcontext before, after;
	pthread_t t;
	void *ret;
	gdr_mh_t mh;

	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	simcuda_get_counters(&c0);
	CHECK_EQ(pthread_create(&t, NULL, no_context_thread, &m), 0);
	CHECK_EQ(pthread_join(t, &ret), 0);
	CHECK_EQ((intptr_t)ret, 0);
	simcuda_get_counters(&c1);
	CHECK_EQ(c1.primary_ctx_refs, c0.primary_ctx_refs);
	CHECK_EQ(cuCtxGetCurrent(&before), CUDA_SUCCESS);
	CHECK(before != NULL);
	CHECK_EQ(gdr_pin_buffer_v2(g, m.ptr, 65536, 0, &mh), 0);
	CHECK_EQ(gdr_unpin_buffer(g, mh), 0);
	CHECK_EQ(cuCtxGetCurrent(&after), CUDA_SUCCESS);
	CHECK(after == before);
	test_vmm_free(&m);
	return 0;
}

struct worker {
	int id;
	struct test_vmm *m;
	int ret;
	char why[256];
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint8_t buf[4096], back[4096];

	for (int i = 0; i < 300 && !w->ret; i++) {
		unsigned long addr = w->m->ptr + (size_t)w->id * 262144 + (size_t)(i % 4) * 65536;
		gdr_mh_t mh;
		void *va;
		size_t n = 1 + (size_t)(i * 37 + w->id) % sizeof(buf);

		fill_pattern(buf, n, (unsigned)(i + w->id * 1000));
		if (gdr_pin_buffer_v2(g, addr, n, 0, &mh)) {
			w->ret = 1;
			snprintf(w->why, sizeof(w->why), "pin %d failed", i);
			break;
		}
		if (gdr_map(g, mh, &va, 65536) || gdr_copy_to_mapping(mh, va, buf, n) ||
		    gdr_copy_from_mapping(mh, back, va, n) || memcmp(buf, back, n) ||
		    memcmp((const void *)(uintptr_t)addr, buf, n)) {
			w->ret = 1;
			snprintf(w->why, sizeof(w->why), "map/copy %d failed", i);
		}
		gdr_unmap(g, mh, va, 65536);
		if (gdr_unpin_buffer(g, mh)) {
			w->ret = 1;
			snprintf(w->why, sizeof(w->why), "unpin %d failed", i);
		}
	}
	return NULL;
}

static int case_threads(void)
{
	enum { T = 4 };
	struct worker w[T];
	pthread_t t[T];
	struct test_vmm m;
	struct leak_mark lm;

	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	mark(&lm);
	for (int i = 0; i < T; i++) {
		w[i] = (struct worker){ .id = i, .m = &m };
		CHECK_EQ(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < T; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < T; i++)
		if (w[i].ret)
			return test_fail("thread %d: %s", i, w[i].why);
	CHECK(check_no_leak(&lm) == 0);
	test_vmm_free(&m);
	return 0;
}

/* In the fork child: a gdr_t of its own pins, maps and copies. */
static int child_own_gdr(void)
{
	struct test_vmm m;
	gdr_mh_t mh;
	void *base;
	uint8_t *map;
	gdr_t own;

	CHECK(!test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
	      "the child's cuMemCreate failed");
	own = gdr_open();
	CHECK(own, "gdr_open in the child failed");
	g = own;
	CHECK(!pin_map(m.ptr + 65536, 100, &mh, &base, &map) &&
	      !gdr_copy_to_mapping(mh, map, "child", 5) &&
	      !memcmp((const void *)(uintptr_t)(m.ptr + 65536), "child", 5) &&
	      !unmap_unpin(mh, base) && !gdr_close(own), "the child's own gdr_t does not work");
	test_vmm_free(&m);
	return TEST_PASS;
}

/* A fork child can use nothing of the parent's gdr_t, touches nothing of it, and opens its own. */
static int case_fork(void)
{
	struct test_vmm m;
	struct fork_check fc;
	uint8_t *dev, *map, fill[4096];
	gdr_mh_t mh;
	void *base;

	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	dev = (uint8_t *)(uintptr_t)m.ptr;
	CHECK(pin_map(m.ptr, 65536, &mh, &base, &map) == 0);
	memset(fill, 0x11, sizeof(fill));
	CHECK_EQ(gdr_copy_to_mapping(mh, map, fill, sizeof(fill)), 0);
	fc = (struct fork_check){ .g = g, .mh = mh, .map = base, .map_size = 65536,
				  .pin_addr = m.ptr, .child_own = child_own_gdr };
	CHECK(fork_check_run(&fc) == TEST_PASS, "fork child: %s", test_reason());
	/* The parent's pin, mapping and data are as they were. */
	CHECK(!memcmp(dev, fill, sizeof(fill)));
	CHECK_EQ(gdr_copy_to_mapping(mh, map, "parent", 6), 0);
	CHECK(!memcmp(dev, "parent", 6));
	CHECK(unmap_unpin(mh, base) == 0);
	test_vmm_free(&m);
	return 0;
}

/*
 * gdr_open/gdr_close cycles, each with a pin and mapping left for gdr_close: the process's Vulkan
 * state serves them all, and descriptors, threads and resident memory stay as they were.
 */
static int case_open_close_cycles(void)
{
	enum { WARMUP = 50, CYCLES = 2000, RSS_SLACK_KIB = 1024 };
	struct test_usage before = { 0 }, after;
	struct test_vmm m;
	gdr_t saved = g;
	int ret = 0;

	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	for (int i = 0; i < WARMUP + CYCLES && !ret; i++) {
		gdr_mh_t mh;
		void *va;

		if (i == WARMUP)
			test_usage(&before);
		g = gdr_open();
		if (!g || gdr_pin_buffer_v2(g, m.ptr, 65536, 0, &mh) || gdr_map(g, mh, &va, 65536))
			ret = test_fail("cycle %d: open, pin or map failed", i);
		if (g && gdr_close(g))
			ret = test_fail("cycle %d: gdr_close failed", i);
	}
	test_usage(&after);
	g = saved;
	test_vmm_free(&m);
	if (ret)
		return ret;
	printf("%d cycles: fds %d -> %d, threads %d -> %d, RSS %ld -> %ld KiB\n", CYCLES,
	       before.fds, after.fds, before.threads, after.threads, before.rss_kib,
	       after.rss_kib);
	CHECK_EQ(after.fds, before.fds);
	if (test_threads_meaningful())
		CHECK_EQ(after.threads, before.threads);
	if (test_rss_meaningful())
		CHECK(after.rss_kib - before.rss_kib <= RSS_SLACK_KIB);
	return 0;
}

/* gdr_close with buffers still pinned and mapped releases everything. */
static int case_close_live(void)
{
	struct test_vmm m;
	struct leak_mark lm;
	gdr_mh_t mh[3];
	void *va[3];

	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	mark(&lm);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(gdr_pin_buffer_v2(g, m.ptr + (size_t)i * 65536, 65536, 0, &mh[i]), 0);
	CHECK_EQ(gdr_map(g, mh[0], &va[0], 65536), 0);
	CHECK_EQ(gdr_map(g, mh[2], &va[2], 65536), 0);
	CHECK_EQ(gdr_close(g), 0);
	g = NULL;
	/* Every pin's import and CUDA reference is gone; the process's VkDevice stays. */
	CHECK(check_no_leak(&lm) == 0);
	g = gdr_open();
	CHECK(g != NULL);
	CHECK_EQ(gdr_pin_buffer_v2(g, m.ptr, 65536, 0, &mh[0]), 0);
	CHECK_EQ(gdr_unpin_buffer(g, mh[0]), 0);
	test_vmm_free(&m);
	return 0;
}

static int case_close(void)
{
	CHECK_EQ(gdr_close(g), 0);
	g = NULL;
	return 0;
}

static const struct test_case cases[] = {
	{ "open", case_open },
	{ "attributes", case_attributes },
	{ "pin_info", case_pin_info },
	{ "copy_sizes_offsets", case_copy_sizes_offsets },
	{ "coherent_direct", case_coherent_direct },
	{ "many_buffers", case_many_buffers },
	{ "free_while_pinned", case_free_while_pinned },
	{ "segments", case_segments },
	{ "refusals", case_refusals },
	{ "map_errors", case_map_errors },
	{ "unmatched_device", case_unmatched_device },
	{ "cycles_no_leak", case_cycles_no_leak },
	{ "context_restored", case_context_restored },
	{ "threads", case_threads },
	{ "fork", case_fork },
	{ "open_close_cycles", case_open_close_cycles },
	{ "close_live", case_close_live },
	{ "close", case_close },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	const char *missing = test_lavapipe_missing();

	if (missing) {
		printf("%s\n", missing);
		return TEST_SKIP;
	}
	test_use_lavapipe();
	setenv("GDRCOPY_SIM_CUDA_DEVICES", "2", 1);
	if (test_cuda_init()) {
		printf("simulated CUDA driver failed to start\n");
		return 1;
	}
	if (strcmp(simcuda_backing(), "vulkan")) {
		printf("the simulated CUDA driver could not get memory from lavapipe\n");
		return 1;
	}
	return test_run(cases, argc, argv);
}

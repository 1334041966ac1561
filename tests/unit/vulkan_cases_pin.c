/* SPDX-License-Identifier: MIT */
/*
 * The vulkan backend's cases about opening and pinning: gdr_open, attributes, what a pin
 * reports, segmented allocations.
 */
#include <dlfcn.h>
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
#include "info_v1.h"
#include "simcuda.h"
#include "vulkan_cases.h"

int vulkan_case_open(void)
{
	int v = -1, major = 0, minor = 0;

	vk_gdr = gdr_open();
	CHECK(vk_gdr != NULL);
	CHECK_EQ(gdr_get_attribute(vk_gdr, GDR_ATTR_EXT_BACKEND, &v), 0);
	CHECK_EQ(v, GDR_BACKEND_VULKAN);
	CHECK_EQ(gdr_driver_get_version(vk_gdr, &major, &minor), 0);
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
		CHECK_EQ(gdr_pin_buffer(vk_gdr, m.ptr, 65536, 0, 0, &mh), 0);
		CHECK_EQ(gdr_unpin_buffer(vk_gdr, mh), 0);
		test_vmm_free(&m);
	}
	return 0;
}

int vulkan_case_attributes(void)
{
	int v = -1;

	CHECK_EQ(gdr_get_attribute(vk_gdr, GDR_ATTR_USE_PERSISTENT_MAPPING, &v), 0);
	CHECK_EQ(v, 1);
	CHECK_EQ(gdr_get_attribute(vk_gdr, GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE, &v), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(gdr_get_attribute(vk_gdr, GDR_ATTR_USING_DMA_BUF_MMAP, &v), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(gdr_get_attribute(vk_gdr, GDR_ATTR_MAX, &v), EINVAL);
	CHECK_EQ(gdr_get_attribute(vk_gdr, 0, &v), EINVAL);
	return 0;
}

int vulkan_case_pin_info(void)
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

	leak_mark_take(&lm);
	CHECK_EQ(test_vmm_alloc(&m, 4 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	/* From inside a GPU page to inside another: the pin covers both pages whole. */
	CHECK_EQ(gdr_pin_buffer(vk_gdr, m.ptr + 65536 + 100, 70000, 0, 0, &mh), 0);
	CHECK_EQ(gdr_get_info_v2(vk_gdr, mh, &info), 0);
	CHECK_EQ(info.va, m.ptr + 65536);
	CHECK_EQ(info.mapped_size, 2 * 65536);
	CHECK_EQ(info.page_size, 65536);
	CHECK_EQ(info.mapped, 0);
	CHECK_EQ(info.mapping_type, GDR_MAPPING_TYPE_NONE);
	CHECK_EQ(gdr_get_callback_flag(vk_gdr, mh, &flag), 0);
	CHECK_EQ(flag, 0);
	CHECK_EQ(gdr_map(vk_gdr, mh, &base, info.mapped_size), 0);
	CHECK_EQ(gdr_get_info_v2(vk_gdr, mh, &info), 0);
	CHECK_EQ(info.mapped, 1);
	CHECK_EQ(info.wc_mapping, 1);
	CHECK_EQ(info.mapping_type, GDR_MAPPING_TYPE_WC);

	/* gdrapi.h maps gdr_get_info to gdr_get_info_v2; old binaries bind the v1 symbol. */
	get_info_v1 = (int (*)(gdr_t, gdr_mh_t, gdr_info_v1_t *))dlsym(RTLD_DEFAULT, "gdr_get_info");
	CHECK(get_info_v1 != NULL);
	memset(&v1, 0xff, sizeof(v1));
	CHECK_EQ(get_info_v1(vk_gdr, mh, &v1), 0);
	CHECK_EQ(v1.va, m.ptr + 65536);
	CHECK_EQ(v1.mapped_size, 2 * 65536);
	CHECK_EQ(v1.page_size, 65536);
	CHECK_EQ(v1.mapped, 1);
	CHECK_EQ(v1.wc_mapping, 1);
	CHECK(unmap_unpin(mh, base) == 0);

	/* Mapped with the pin's own size (NVSHMEM): the mapping reaches the pin's last byte. */
	CHECK_EQ(gdr_pin_buffer(vk_gdr, m.ptr + 65536 + 100, 70000, 0, 0, &mh), 0);
	CHECK_EQ(gdr_map(vk_gdr, mh, &base, 70000), 0);
	memset((uint8_t *)(uintptr_t)m.ptr + 65536 + 100 + 69996, 0, 4);
	CHECK_EQ(gdr_copy_to_mapping(mh, (uint8_t *)base + 100 + 69996, "last", 4), 0);
	CHECK(!memcmp((uint8_t *)(uintptr_t)m.ptr + 65536 + 100 + 69996, "last", 4));
	CHECK_EQ(gdr_unmap(vk_gdr, mh, base, 70000), 0);
	CHECK_EQ(gdr_unpin_buffer(vk_gdr, mh), 0);

	/* The last bytes of the allocation: mapped_size stops at its end. */
	CHECK_EQ(gdr_pin_buffer_v2(vk_gdr, m.ptr + m.size - 10, 10, 0, &mh), 0);
	CHECK_EQ(gdr_get_info_v2(vk_gdr, mh, &info), 0);
	CHECK_EQ(info.va, m.ptr + m.size - 65536);
	CHECK_EQ(info.mapped_size, 65536);
	CHECK_EQ(gdr_unpin_buffer(vk_gdr, mh), 0);
	test_vmm_free(&m);
	return check_no_leak(&lm);
}

/*
 * Two allocations mapped back to back in one reservation (as PyTorch's expandable segments do):
 * each pin imports the allocation its address lies in, and a pin across the seam is refused.
 */
int vulkan_case_segments(void)
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

	leak_mark_take(&lm);
	CHECK_EQ(cuMemAddressReserve(&va, 6 * MiB, 0, 0, 0), CUDA_SUCCESS);
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(cuMemCreate(&h[i], 2 * MiB, &prop, 0), CUDA_SUCCESS);
		CHECK_EQ(cuMemMap(va + (size_t)i * 2 * MiB, 2 * MiB, 0, h[i], 0), CUDA_SUCCESS);
	}
	CHECK_EQ(cuMemSetAccess(va, 4 * MiB, &access, 1), CUDA_SUCCESS);
	if (pin_map(va + 2 * MiB + 65536 + 5, 1000, &mh, &base, &map))
		return 1;
	CHECK_EQ(gdr_get_info(vk_gdr, mh, &info), 0);
	CHECK_EQ(info.va, va + 2 * MiB + 65536);
	memcpy(map, "seam", 4);
	CHECK(!memcmp((const void *)(uintptr_t)(va + 2 * MiB + 65536 + 5), "seam", 4));
	CHECK(unmap_unpin(mh, base) == 0);
	CHECK_EQ(gdr_pin_buffer_v2(vk_gdr, va + 2 * MiB - 4096, 8192, 0, &mh), EINVAL);
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(cuMemUnmap(va + (size_t)i * 2 * MiB, 2 * MiB), CUDA_SUCCESS);
		CHECK_EQ(cuMemRelease(h[i]), CUDA_SUCCESS);
	}
	CHECK_EQ(cuMemAddressFree(va, 6 * MiB), CUDA_SUCCESS);
	return check_no_leak(&lm);
}

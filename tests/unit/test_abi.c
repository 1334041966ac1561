/* SPDX-License-Identifier: MIT */
/*
 * The public header's ABI, as GDRCopy 2.6 fixes it: layouts, enum values, macros. Clients compiled
 * against GDRCopy's header run against this library, so any change here breaks them.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gdrapi.h"
#include "gdrapi_ext.h"
#include "harness.h"

/* DPDK defines these again after including the header: legal only with identical tokens. */
#define GPU_PAGE_SHIFT   16
#define GPU_PAGE_SIZE    (1UL << GPU_PAGE_SHIFT)
#define GPU_PAGE_OFFSET  (GPU_PAGE_SIZE-1)
#define GPU_PAGE_MASK    (~GPU_PAGE_OFFSET)

#define STR_(x) #x
#define STR(x) STR_(x)

int main(void)
{
	gdr_info_v2_t info;
	uint32_t word;
	int major = 0, minor = 0;

	EXPECT(sizeof(gdr_info_v2_t) == 48);
	EXPECT(sizeof(gdr_info_t) == 48);
	EXPECT(offsetof(gdr_info_v2_t, va) == 0);
	EXPECT(offsetof(gdr_info_v2_t, mapped_size) == 8);
	EXPECT(offsetof(gdr_info_v2_t, page_size) == 16);
	EXPECT(offsetof(gdr_info_v2_t, tm_cycles) == 24);
	EXPECT(offsetof(gdr_info_v2_t, cycles_per_ms) == 32);
	EXPECT(offsetof(gdr_info_v2_t, mapping_type) == 40);
	EXPECT(sizeof(gdr_mapping_type_t) == 4);
	/* mapped is bit 0 and wc_mapping bit 1 of the word at offset 36. */
	memset(&info, 0, sizeof(info));
	info.mapped = 1;
	memcpy(&word, (char *)&info + 36, 4);
	EXPECT(word == 1);
	memset(&info, 0, sizeof(info));
	info.wc_mapping = 1;
	memcpy(&word, (char *)&info + 36, 4);
	EXPECT(word == 2);

	EXPECT(sizeof(gdr_mh_t) == 8);
	EXPECT(offsetof(gdr_mh_t, h) == 0);

	EXPECT(MAJOR_VERSION_SHIFT == 16);
	EXPECT(MINOR_VERSION_MASK == 0xffff);
	EXPECT(GDR_API_MAJOR_VERSION == 2 && GDR_API_MINOR_VERSION == 6);
	EXPECT(GDR_API_VERSION == 0x00020006);
	EXPECT(MINIMUM_GDRDRV_MAJOR_VERSION == 2 && MINIMUM_GDRDRV_MINOR_VERSION == 0);
	EXPECT(MINIMUM_GDRDRV_VERSION == 0x00020000);
	EXPECT(GPU_PAGE_SHIFT == 16);
	EXPECT(GPU_PAGE_SIZE == 65536);
	EXPECT(GPU_PAGE_OFFSET == 65535);
	EXPECT(GPU_PAGE_MASK == ~0xfffful);
	EXPECT(!strcmp(STR(gdr_get_info), "gdr_get_info_v2"));

	EXPECT(GDR_PIN_FLAG_DEFAULT == 0 && GDR_PIN_FLAG_FORCE_PCIE == 1);
	EXPECT(GDR_MAPPING_TYPE_NONE == 0 && GDR_MAPPING_TYPE_WC == 1);
	EXPECT(GDR_MAPPING_TYPE_CACHING == 2 && GDR_MAPPING_TYPE_DEVICE == 3);
	EXPECT(GDR_MAPPING_TYPE_MAX == 4);
	EXPECT(GDR_MAP_FLAG_DEFAULT == 0 && GDR_MAP_FLAG_REQ_WC_MAPPING == 1);
	EXPECT(GDR_MAP_FLAG_REQ_CACHE_MAPPING == 2 && GDR_MAP_FLAG_REQ_DEVICE_MAPPING == 3);
	EXPECT(GDR_ATTR_USE_PERSISTENT_MAPPING == 1 && GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE == 2);
	EXPECT(GDR_ATTR_USING_DMA_BUF_MMAP == 3 && GDR_ATTR_MAX == 4);
	/* Our extensions stay clear of GDRCopy's attribute range. */
	EXPECT(GDR_ATTR_EXT_BACKEND > 0xffff && GDR_ATTR_EXT_COPY_TO_IMPL > 0xffff);

	/* NVSHMEM: runtime major == header major, runtime minor >= header minor. UCX: both >= 2.4. */
	gdr_runtime_get_version(&major, &minor);
	EXPECT(major == GDR_API_MAJOR_VERSION && minor >= GDR_API_MINOR_VERSION);
	return test_status();
}

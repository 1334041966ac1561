/* SPDX-License-Identifier: MIT */
/* The dmabuf backend's cases about what gdr_get_attribute, gdr_get_info and the driver version say. */
#include <string.h>

#include "dmabuf_cases.h"
#include "gdrapi_ext.h"
#include "harness.h"
#include "info_v1.h"

int dmabuf_case_attributes(void)
{
	int v = -1;

	EXPECT_ERR(gdr_get_attribute(t.g, GDR_ATTR_USING_DMA_BUF_MMAP, &v), 0);
	EXPECT(v == 1);
	EXPECT_ERR(gdr_get_attribute(t.g, GDR_ATTR_USE_PERSISTENT_MAPPING, &v), 0);
	EXPECT(v == 1);
	EXPECT_ERR(gdr_get_attribute(t.g, GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE, &v), 0);
	EXPECT(v == 1);
	EXPECT_ERR(gdr_get_attribute(t.g, GDR_ATTR_EXT_BACKEND, &v), 0);
	EXPECT(v == GDR_BACKEND_DMABUF);
	return TEST_PASS;
}

int dmabuf_case_driver_version(void)
{
	int major = -1, minor = -1;

	EXPECT_ERR(gdr_driver_get_version(t.g, &major, &minor), 0);
	EXPECT(major == 2 && minor == 6);
	return TEST_PASS;
}

/* v2 and the exported v1 gdr_get_info, before and after mapping; and the callback flag. */
int dmabuf_case_info(void)
{
	CUdeviceptr buf = dev_alloc(1 << 20);
	gdr_mapping_type_t type = t.coherent ? GDR_MAPPING_TYPE_CACHING : GDR_MAPPING_TYPE_WC;
	struct gdr_info_v1 v1;
	gdr_info_t info;
	gdr_mh_t mh;
	void *map;
	int flag = -1;

	CHECK(buf);
	EXPECT_ERR(gdr_pin_buffer_v2(t.g, buf + 2 * 4096 + 3, 50, 0, &mh), 0);
	memset(&info, 0xff, sizeof(info));
	EXPECT_ERR(gdr_get_info(t.g, mh, &info), 0);
	EXPECT(info.va == buf && info.mapped_size == GPU_PAGE && info.page_size == GPU_PAGE);
	EXPECT(!info.mapped && !info.wc_mapping && info.mapping_type == GDR_MAPPING_TYPE_NONE);
	EXPECT(info.tm_cycles == 0 && info.cycles_per_ms == 0);
	EXPECT_ERR(gdr_get_callback_flag(t.g, mh, &flag), 0);
	EXPECT(flag == 0);
	EXPECT_ERR(gdr_map(t.g, mh, &map, info.mapped_size), 0);
	EXPECT_ERR(gdr_get_info(t.g, mh, &info), 0);
	EXPECT(info.mapped && info.mapping_type == type);
	EXPECT(info.wc_mapping == (type == GDR_MAPPING_TYPE_WC));
	memset(&v1, 0xff, sizeof(v1));
	EXPECT_ERR(t.get_info_v1(t.g, mh, &v1), 0);
	EXPECT(v1.va == buf && v1.mapped_size == GPU_PAGE && v1.page_size == GPU_PAGE);
	EXPECT(v1.mapped && v1.wc_mapping == (type == GDR_MAPPING_TYPE_WC));
	EXPECT(v1.tm_cycles == 0 && v1.cycles_per_ms == 0);
	EXPECT_ERR(gdr_unmap(t.g, mh, map, info.mapped_size), 0);
	EXPECT_ERR(gdr_unpin_buffer(t.g, mh), 0);
	t.cu->cuMemFree(buf);
	return TEST_PASS;
}

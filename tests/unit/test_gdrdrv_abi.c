/* SPDX-License-Identifier: MIT */
/*
 * The gdrdrv ioctl ABI must stay bit-identical to GDRCopy 2.6, so that either project's library
 * works with either project's module. Every value here is GDRCopy's, written out as a literal:
 * any change to kernel/include/uapi/gdrdrv.h that moves one of them fails this test.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "gdrapi.h"
#include "gdrdrv.h"
#include "harness.h"

/* expr must have GDRCopy 2.6's value (every failure is reported, then the test fails). */
#define ABI_EQ(expr, want) \
	EXPECT((unsigned long long)(expr) == (want), "%s: 0x%llx, GDRCopy 2.6 has 0x%llx", #expr, \
	       (unsigned long long)(expr), (unsigned long long)(want))

/* A field's offset and width; the struct's size is checked separately. */
#define FIELD(type, member, off, width) do { \
	ABI_EQ(offsetof(struct type, member), off); \
	ABI_EQ(sizeof(((struct type *)0)->member), width); \
} while (0)

static void check_commands(void)
{
	ABI_EQ(GDRDRV_IOCTL, 0xDA);
	ABI_EQ(GDRDRV_IOC_PIN_BUFFER, 0xC028DA01);
	ABI_EQ(GDRDRV_IOC_UNPIN_BUFFER, 0xC008DA02);
	ABI_EQ(GDRDRV_IOC_GET_CB_FLAG, 0xC008DA03);
	ABI_EQ(GDRDRV_IOC_GET_INFO, 0xC008DA04);
	ABI_EQ(GDRDRV_IOC_GET_INFO_V2, 0xC008DA05);
	ABI_EQ(GDRDRV_IOC_GET_ATTR, 0xC008DA06);
	ABI_EQ(GDRDRV_IOC_PIN_BUFFER_V2, 0xC020DA07);
	ABI_EQ(GDRDRV_IOC_REQ_MAPPING_TYPE, 0xC008DA08);
	ABI_EQ(GDRDRV_IOC_GET_VERSION, 0xC008DAFF);
	/* The same values decoded, as a kernel would see them. */
	ABI_EQ(_IOC_DIR(GDRDRV_IOC_GET_VERSION), _IOC_READ | _IOC_WRITE);
	ABI_EQ(_IOC_TYPE(GDRDRV_IOC_PIN_BUFFER), 0xDA);
	ABI_EQ(_IOC_NR(GDRDRV_IOC_GET_VERSION), 255);
	ABI_EQ(_IOC_SIZE(GDRDRV_IOC_PIN_BUFFER), 40);
	ABI_EQ(_IOC_SIZE(GDRDRV_IOC_PIN_BUFFER_V2), 32);
	ABI_EQ(_IOC_SIZE(GDRDRV_IOC_GET_INFO), 8);
}

static void check_structs(void)
{
	ABI_EQ(sizeof(gdr_hnd_t), 8);

	ABI_EQ(sizeof(struct gdrdrv_pin_buffer_params), 40);
	FIELD(gdrdrv_pin_buffer_params, addr, 0, 8);
	FIELD(gdrdrv_pin_buffer_params, size, 8, 8);
	FIELD(gdrdrv_pin_buffer_params, p2p_token, 16, 8);
	FIELD(gdrdrv_pin_buffer_params, va_space, 24, 4);
	FIELD(gdrdrv_pin_buffer_params, pad, 28, 4);
	FIELD(gdrdrv_pin_buffer_params, handle, 32, 8);

	ABI_EQ(sizeof(struct gdrdrv_unpin_buffer_params), 8);
	FIELD(gdrdrv_unpin_buffer_params, handle, 0, 8);

	ABI_EQ(sizeof(struct gdrdrv_get_cb_flag_params), 16);
	FIELD(gdrdrv_get_cb_flag_params, handle, 0, 8);
	FIELD(gdrdrv_get_cb_flag_params, flag, 8, 4);

	ABI_EQ(sizeof(struct gdrdrv_get_info_params), 48);
	FIELD(gdrdrv_get_info_params, handle, 0, 8);
	FIELD(gdrdrv_get_info_params, va, 8, 8);
	FIELD(gdrdrv_get_info_params, mapped_size, 16, 8);
	FIELD(gdrdrv_get_info_params, page_size, 24, 4);
	FIELD(gdrdrv_get_info_params, tsc_khz, 28, 4);
	FIELD(gdrdrv_get_info_params, tm_cycles, 32, 8);
	FIELD(gdrdrv_get_info_params, mapped, 40, 4);
	FIELD(gdrdrv_get_info_params, wc_mapping, 44, 4);

	ABI_EQ(sizeof(struct gdrdrv_get_info_v2_params), 48);
	FIELD(gdrdrv_get_info_v2_params, handle, 0, 8);
	FIELD(gdrdrv_get_info_v2_params, va, 8, 8);
	FIELD(gdrdrv_get_info_v2_params, mapped_size, 16, 8);
	FIELD(gdrdrv_get_info_v2_params, page_size, 24, 4);
	FIELD(gdrdrv_get_info_v2_params, tsc_khz, 28, 4);
	FIELD(gdrdrv_get_info_v2_params, tm_cycles, 32, 8);
	FIELD(gdrdrv_get_info_v2_params, mapping_type, 40, 4);

	ABI_EQ(sizeof(struct gdrdrv_get_attr_params), 8);
	FIELD(gdrdrv_get_attr_params, attr, 0, 4);
	FIELD(gdrdrv_get_attr_params, val, 4, 4);

	ABI_EQ(sizeof(struct gdrdrv_pin_buffer_v2_params), 32);
	FIELD(gdrdrv_pin_buffer_v2_params, addr, 0, 8);
	FIELD(gdrdrv_pin_buffer_v2_params, size, 8, 8);
	FIELD(gdrdrv_pin_buffer_v2_params, flags, 16, 4);
	FIELD(gdrdrv_pin_buffer_v2_params, pad, 20, 4);
	FIELD(gdrdrv_pin_buffer_v2_params, handle, 24, 8);

	ABI_EQ(sizeof(struct gdrdrv_req_mapping_type_params), 16);
	FIELD(gdrdrv_req_mapping_type_params, handle, 0, 8);
	FIELD(gdrdrv_req_mapping_type_params, mapping_type, 8, 4);

	ABI_EQ(sizeof(struct gdrdrv_get_version_params), 8);
	FIELD(gdrdrv_get_version_params, gdrdrv_version, 0, 4);
	FIELD(gdrdrv_get_version_params, minimum_gdr_api_version, 4, 4);
}

static void check_values(void)
{
	ABI_EQ(GDR_MR_NONE, 0);
	ABI_EQ(GDR_MR_WC, 1);
	ABI_EQ(GDR_MR_CACHING, 2);
	ABI_EQ(GDR_MR_DEVICE, 3);
	ABI_EQ(GDRDRV_ATTR_USE_PERSISTENT_MAPPING, 1);
	ABI_EQ(GDRDRV_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE, 2);
	ABI_EQ(GDRDRV_PIN_BUFFER_FLAG_DEFAULT, 0);
	ABI_EQ(GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE, 1);

	ABI_EQ(GDRDRV_MAJOR_VERSION_SHIFT, 16);
	ABI_EQ(GDRDRV_MAJOR_VERSION, 2);
	ABI_EQ(GDRDRV_MINOR_VERSION, 6);
	ABI_EQ(GDRDRV_VERSION, 0x00020006);
	ABI_EQ(MINIMUM_GDR_API_VERSION, 0x00020000);
	ABI_EQ(GDRDRV_MINIMUM_VERSION_WITH_GET_INFO_V2, 0x00020004);
	ABI_EQ(GDRDRV_MINIMUM_VERSION_WITH_GET_ATTR, 0x00020005);
	ABI_EQ(GDRDRV_MINIMUM_VERSION_WITH_PIN_BUFFER_V2, 0x00020005);
	ABI_EQ(GDRDRV_MINIMUM_VERSION_WITH_REQ_MAPPING_TYPE, 0x00020005);
	ABI_EQ(strcmp(GDRDRV_VERSION_STRING, "2.6"), 0);

	/* The library passes these through unchanged, so the two headers must agree. */
	ABI_EQ(GDR_MR_WC, GDR_MAPPING_TYPE_WC);
	ABI_EQ(GDR_MR_CACHING, GDR_MAPPING_TYPE_CACHING);
	ABI_EQ(GDR_MR_DEVICE, GDR_MAPPING_TYPE_DEVICE);
	ABI_EQ(GDRDRV_ATTR_USE_PERSISTENT_MAPPING, GDR_ATTR_USE_PERSISTENT_MAPPING);
	ABI_EQ(GDRDRV_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE, GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE);
	ABI_EQ(GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE, GDR_PIN_FLAG_FORCE_PCIE);
}

int main(void)
{
	check_commands();
	check_structs();
	check_values();
	if (test_status() != TEST_PASS) {
		printf("%d ABI values differ from GDRCopy 2.6\n", test_failures());
		return TEST_FAIL;
	}
	printf("gdrdrv ABI matches GDRCopy 2.6\n");
	return TEST_PASS;
}

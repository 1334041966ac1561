/* SPDX-License-Identifier: MIT */
/* The dmabuf backend's cases about mappings: the mapping-type table, the PCIE flag, a driver that refuses mmap. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dmabuf_cases.h"
#include "harness.h"

/* Map with every REQ flag a pin made with pin_flags; EINVAL where it differs from the pin. */
static void mapping_table_row(CUdeviceptr buf, uint32_t pin_flags)
{
	static const int map_flags[] = { GDR_MAP_FLAG_DEFAULT, GDR_MAP_FLAG_REQ_WC_MAPPING,
					 GDR_MAP_FLAG_REQ_CACHE_MAPPING,
					 GDR_MAP_FLAG_REQ_DEVICE_MAPPING };
	gdr_mapping_type_t want = t.coherent && !(pin_flags & GDR_PIN_FLAG_FORCE_PCIE) ?
				  GDR_MAPPING_TYPE_CACHING : GDR_MAPPING_TYPE_WC;
	gdr_mh_t mh;

	EXPECT_ERR(gdr_pin_buffer_v2(t.g, buf, GPU_PAGE, pin_flags, &mh), 0);
	for (size_t i = 0; i < sizeof(map_flags) / sizeof(map_flags[0]); i++) {
		int f = map_flags[i];
		bool ok = f == GDR_MAP_FLAG_DEFAULT ||
			  (f == GDR_MAP_FLAG_REQ_WC_MAPPING && want == GDR_MAPPING_TYPE_WC) ||
			  (f == GDR_MAP_FLAG_REQ_CACHE_MAPPING && want == GDR_MAPPING_TYPE_CACHING);
		uint32_t word = 0xc0ffee00u + (uint32_t)i, back = 0;
		gdr_info_t info;
		void *map = NULL;

		EXPECT_ERR(gdr_map_v2(t.g, mh, &map, GPU_PAGE, f), ok ? 0 : EINVAL);
		EXPECT_ERR(gdr_get_info(t.g, mh, &info), 0);
		if (!ok) {
			EXPECT(!info.mapped && info.mapping_type == GDR_MAPPING_TYPE_NONE);
			continue;
		}
		EXPECT(info.mapped && info.mapping_type == want);
		EXPECT(info.wc_mapping == (want == GDR_MAPPING_TYPE_WC));
		EXPECT_ERR(gdr_copy_to_mapping(mh, map, &word, sizeof(word)), 0);
		EXPECT(!memcmp((void *)buf, &word, sizeof(word)));
		EXPECT_ERR(gdr_copy_from_mapping(mh, &back, map, sizeof(back)), 0);
		EXPECT(back == word);
		EXPECT_ERR(gdr_unmap(t.g, mh, map, GPU_PAGE), 0);
		if (test_failures())
			fprintf(stderr, "  (pin flags %u, map flag %d)\n", pin_flags, f);
	}
	EXPECT_ERR(gdr_unpin_buffer(t.g, mh), 0);
}

int dmabuf_case_mapping_table(void)
{
	CUdeviceptr buf = dev_alloc(GPU_PAGE);

	CHECK(buf);
	mapping_table_row(buf, GDR_PIN_FLAG_DEFAULT);
	mapping_table_row(buf, GDR_PIN_FLAG_FORCE_PCIE);
	t.cu->cuMemFree(buf);
	return TEST_PASS;
}

/*
 * The simulated driver refuses the PCIE flag off a coherent platform, as the real one (which is
 * why the backend passes it only where the device is coherent).
 */
int dmabuf_case_sim_pcie_flag(void)
{
	CUdeviceptr buf = dev_alloc(GPU_PAGE);
	CUresult res;
	int fd = -1;

	CHECK(buf);
	res = t.cu->cuMemGetHandleForAddressRange(&fd, buf, GPU_PAGE,
						  CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
						  CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE);
	EXPECT(res == (t.coherent ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED));
	if (res == CUDA_SUCCESS)
		close(fd);
	t.cu->cuMemFree(buf);
	return TEST_PASS;
}

/* An R580-like driver: the export works, its mmap is refused, gdr_map says why. */
int dmabuf_case_mmap_refused(void)
{
	CUdeviceptr buf = dev_alloc(GPU_PAGE);
	gdr_info_t info;
	const char *log;
	gdr_mh_t mh;
	void *map = NULL;

	CHECK(buf);
	EXPECT_ERR(gdr_pin_buffer_v2(t.g, buf, GPU_PAGE, 0, &mh), 0);
	test_capture_begin();
	EXPECT_ERR(gdr_map(t.g, mh, &map, GPU_PAGE), EOPNOTSUPP);
	log = test_capture_end();
	EXPECT(strstr(log, "does not allow mmap of dma-buf memory") != NULL);
	EXPECT(strstr(log, "R610 (CUDA 13.3) or newer") != NULL);
	EXPECT_ERR(gdr_get_info(t.g, mh, &info), 0);
	EXPECT(!info.mapped && info.mapping_type == GDR_MAPPING_TYPE_NONE);
	EXPECT_ERR(gdr_map_v2(t.g, mh, &map, GPU_PAGE, GDR_MAP_FLAG_REQ_CACHE_MAPPING), EINVAL);
	EXPECT_ERR(gdr_unpin_buffer(t.g, mh), 0);
	t.cu->cuMemFree(buf);
	return TEST_PASS;
}

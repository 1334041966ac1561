/* SPDX-License-Identifier: MIT */
/*
 * Pinning through gdrdrv: the sanity catalogue's basic_* cases (v1, v2, FORCE_PCIE, tokens,
 * unaligned and small buffers). The refusals and the raw ioctls: test_ioctl.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gdrapi_ext.h"
#include "vmtest.h"

/* Pin [va, va + size) with v1 or v2, check what get_info says, then unpin. */
static int pin_check_unpin(gdr_t g, uint64_t va, size_t size, int v2, uint64_t want_va,
			   uint64_t want_size)
{
	uint64_t before = vm_pins();
	gdr_mh_t mh = { 0 };
	gdr_info_t info;

	if (v2)
		CHECK_OK(gdr_pin_buffer_v2(g, va, size, 0, &mh));
	else
		CHECK_OK(gdr_pin_buffer(g, va, size, 0, 0, &mh));
	CHECK(mh.h != 0, "the handle is null");
	CHECK(vm_pins() == before + 1, "the sim counts %llu pins, %llu before",
	      (unsigned long long)vm_pins(), (unsigned long long)before);
	CHECK_OK(gdr_get_info(g, mh, &info));
	CHECK(info.va == want_va && info.mapped_size == want_size && info.page_size == GPU_PAGE,
	      "get_info: va %#llx size %llu page %u; want va %#llx size %llu",
	      (unsigned long long)info.va, (unsigned long long)info.mapped_size, info.page_size,
	      (unsigned long long)want_va, (unsigned long long)want_size);
	CHECK(!info.mapped && info.mapping_type == GDR_MAPPING_TYPE_NONE, "unmapped pin is mapped");
	CHECK_OK(gdr_unpin_buffer(g, mh));
	CHECK(vm_pins() == before, "unpin left %llu pins", (unsigned long long)vm_pins());
	CHECK_ERR(gdr_unpin_buffer(g, mh), EINVAL);
	return TEST_PASS;
}

static int basic_pin(int v2)
{
	struct nvp2p_sim_alloc a;
	gdr_t g = vm_gdr_open();
	int ret;

	CHECK(g, "gdr_open");
	/* The sanity test's size: 256 KiB + 16, which rounds up to 320 KiB. */
	CHECK_OK(vm_alloc(256 * 1024 + 16, 0, &a));
	ret = pin_check_unpin(g, a.va, 256 * 1024 + 16, v2, a.va, 320 * 1024);
	if (ret)
		return ret;
	ret = pin_check_unpin(g, a.va + GPU_PAGE + 100, 2 * GPU_PAGE, v2, a.va + GPU_PAGE,
			      3 * GPU_PAGE);
	if (ret)
		return ret;
	CHECK_OK(gdr_close(g));
	return TEST_PASS;
}

static int case_basic_pin_v1(void)
{
	return basic_pin(0);
}

static int case_basic_pin_v2(void)
{
	struct nvp2p_sim_alloc a;
	gdr_mh_t mh;
	gdr_t g;
	int ret = basic_pin(1);

	if (ret)
		return ret;
	g = vm_gdr_open();
	CHECK(g, "gdr_open");
	CHECK_OK(vm_alloc(GPU_PAGE, 0, &a));
	CHECK_ERR(gdr_pin_buffer_v2(g, a.va, GPU_PAGE, 0x4, &mh), EINVAL);
	CHECK(vm_pins() == 0, "a refused pin left a pin");
	return TEST_PASS;
}

static int case_basic_pin_forcepci(void)
{
	struct nvp2p_sim_alloc plain, coherent;
	gdr_info_t info;
	gdr_mh_t mh;
	gdr_t g = vm_gdr_open();
	void *map;
	int support, ret;

	CHECK(g, "gdr_open");
	CHECK_OK(gdr_get_attribute(g, GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE, &support));
	CHECK_OK(vm_alloc(GPU_PAGE, 0, &plain));
	CHECK_OK(vm_alloc(2 * GPU_PAGE, NVP2P_SIM_ALLOC_CPU_CACHEABLE, &coherent));
	if (!vm_persistent()) {
		CHECK(!support, "FORCE_PCIE reported as supported without persistent mapping");
		CHECK_ERR(gdr_pin_buffer_v2(g, plain.va, GPU_PAGE, GDR_PIN_FLAG_FORCE_PCIE, &mh),
			  EINVAL);
		return TEST_PASS;
	}
	CHECK(support, "persistent gdrdrv built with FORCE_BAR1 reports no FORCE_PCIE support");
	/* A PCIe GPU refuses forced BAR1 (the sim plays one for non-coherent memory). */
	ret = gdr_pin_buffer_v2(g, plain.va, GPU_PAGE, GDR_PIN_FLAG_FORCE_PCIE, &mh);
	CHECK(ret != 0, "FORCE_PCIE pin of a non-coherent GPU's memory succeeded");
	CHECK(vm_pins() == 0, "the refused FORCE_PCIE pin left a pin");
	/* A coherent GPU gives BAR1 pages: never a cached mapping. */
	CHECK_OK(gdr_pin_buffer_v2(g, coherent.va, 2 * GPU_PAGE, GDR_PIN_FLAG_FORCE_PCIE, &mh));
	CHECK_OK(gdr_map(g, mh, &map, 2 * GPU_PAGE));
	CHECK_OK(gdr_get_info(g, mh, &info));
	CHECK(info.mapping_type != GDR_MAPPING_TYPE_CACHING, "a FORCE_PCIE pin was mapped cached");
	CHECK_OK(gdr_unmap(g, mh, map, 2 * GPU_PAGE));
	ret = vm_map_write_check(g, mh, coherent.va, 2 * GPU_PAGE, 7);
	if (ret)
		return ret;
	CHECK_OK(gdr_unpin_buffer(g, mh));
	return TEST_PASS;
}

static int case_basic_with_tokens(void)
{
	struct nvp2p_sim_alloc a;
	gdr_mh_t mh;
	gdr_t g = vm_gdr_open();
	int ret;

	CHECK(g, "gdr_open");
	CHECK_OK(vm_alloc(2 * GPU_PAGE, 0, &a));
	CHECK_ERR(gdr_pin_buffer(g, a.va, 2 * GPU_PAGE, a.p2p_token ^ 0x10, a.va_space, &mh),
		  EINVAL);
	CHECK_OK(gdr_pin_buffer(g, a.va, 2 * GPU_PAGE, a.p2p_token, a.va_space, &mh));
	ret = vm_map_write_check(g, mh, a.va, 2 * GPU_PAGE, 3);
	if (ret)
		return ret;
	CHECK_OK(gdr_unpin_buffer(g, mh));
	return TEST_PASS;
}

static int case_basic_tokens_rejected(void)
{
	struct nvp2p_sim_alloc a;
	uint64_t h;
	gdr_mh_t mh;
	gdr_t g = vm_gdr_open();
	int fd = vm_gdrdrv_open();

	CHECK(g && fd >= 0, "gdr_open or open");
	CHECK_OK(vm_alloc(GPU_PAGE, 0, &a));
	/* Persistent pins take no tokens: GDRCopy's driver answers EINVAL, and so does ours. */
	CHECK_ERR(gdr_pin_buffer(g, a.va, GPU_PAGE, a.p2p_token, a.va_space, &mh), EINVAL);
	CHECK_ERR(vm_raw_pin_v1(fd, a.va, GPU_PAGE, a.p2p_token, 0, &h), EINVAL);
	CHECK_ERR(vm_raw_pin_v1(fd, a.va, GPU_PAGE, 0, a.va_space, &h), EINVAL);
	CHECK_OK(vm_raw_pin_v1(fd, a.va, GPU_PAGE, 0, 0, &h));
	CHECK_OK(vm_raw_unpin(fd, h));
	return TEST_PASS;
}

static int case_basic_unaligned_mapping(void)
{
	struct nvp2p_sim_alloc a;
	gdr_mh_t unaligned, aligned, neighbour;
	gdr_info_t info;
	uint32_t v;
	void *map, *p;
	gdr_t g = vm_gdr_open();
	int ret;

	CHECK(g, "gdr_open");
	CHECK_OK(vm_alloc(4 * GPU_PAGE, 0, &a));

	/* Pinning an unaligned address works, mapping it does not. */
	CHECK_OK(gdr_pin_buffer(g, a.va + 4, GPU_PAGE, 0, 0, &unaligned));
	CHECK_OK(gdr_get_info(g, unaligned, &info));
	CHECK(info.va == a.va && info.mapped_size == 2 * GPU_PAGE,
	      "unaligned pin: va %#llx size %llu", (unsigned long long)info.va,
	      (unsigned long long)info.mapped_size);
	ret = gdr_map(g, unaligned, &p, GPU_PAGE);
	CHECK(ret != 0, "gdr_map of a pin at a 64 KiB offset of 4 succeeded");

	/* From the next GPU page it maps and works. */
	CHECK_OK(gdr_pin_buffer(g, a.va + GPU_PAGE, GPU_PAGE, 0, 0, &aligned));
	CHECK_OK(gdr_map(g, aligned, &map, GPU_PAGE));
	CHECK(vm_try_write32(map, 0xfeedf00d) == 0, "store through the mapping faulted");
	CHECK_OK(vm_sim_read(a.va + GPU_PAGE, &v, sizeof(v)));
	CHECK(v == 0xfeedf00d, "memory holds %#x after a store of 0xfeedf00d", v);

	/* A neighbour in the same GPU page comes and goes; the first mapping stays good. */
	CHECK_OK(gdr_pin_buffer(g, a.va + GPU_PAGE + 8, 8, 0, 0, &neighbour));
	CHECK(gdr_map(g, neighbour, &p, 8) != 0, "gdr_map of a pin at offset 8 succeeded");
	CHECK_OK(gdr_unpin_buffer(g, neighbour));
	CHECK(vm_try_write32((char *)map + 64, 0x600dcafe) == 0, "the mapping broke");
	CHECK_OK(vm_sim_read(a.va + GPU_PAGE + 64, &v, sizeof(v)));
	CHECK(v == 0x600dcafe, "memory holds %#x after a store of 0x600dcafe", v);

	CHECK_OK(gdr_unmap(g, aligned, map, GPU_PAGE));
	CHECK_OK(gdr_unpin_buffer(g, aligned));
	CHECK_OK(gdr_unpin_buffer(g, unaligned));
	return TEST_PASS;
}

static int case_basic_small_buffers_mapping(void)
{
	struct nvp2p_sim_alloc a;
	gdr_mh_t first, second;
	uint64_t v = 0x0123456789abcdefULL, got;
	void *map, *p;
	gdr_t g = vm_gdr_open();

	CHECK(g, "gdr_open");
	CHECK_OK(vm_alloc(GPU_PAGE, 0, &a));
	/* Two 8-byte buffers in one GPU page (GDRCopy #244). */
	CHECK_OK(gdr_pin_buffer(g, a.va, 8, 0, 0, &first));
	CHECK_OK(gdr_pin_buffer(g, a.va + 8, 8, 0, 0, &second));
	CHECK_OK(gdr_map(g, first, &map, 8));
	CHECK_OK(gdr_copy_to_mapping(first, map, &v, sizeof(v)));
	CHECK_OK(vm_sim_read(a.va, &got, sizeof(got)));
	CHECK(got == v, "memory holds %#llx", (unsigned long long)got);
	CHECK(gdr_map(g, second, &p, 8) != 0, "gdr_map of the buffer at offset 8 succeeded");
	CHECK_OK(gdr_unmap(g, first, map, 8));
	CHECK_OK(gdr_unpin_buffer(g, second));
	CHECK_OK(gdr_unpin_buffer(g, first));
	return TEST_PASS;
}

const struct vm_case vm_cases[] = {
	{ "basic_pin_v1", case_basic_pin_v1, "pn" },
	{ "basic_pin_v2", case_basic_pin_v2, "pn" },
	{ "basic_pin_forcepci", case_basic_pin_forcepci, "pn" },
	{ "basic_with_tokens", case_basic_with_tokens, "n" },
	{ "basic_tokens_rejected", case_basic_tokens_rejected, "p" },
	{ "basic_unaligned_mapping", case_basic_unaligned_mapping, "pn" },
	{ "basic_small_buffers_mapping", case_basic_small_buffers_mapping, "pn" },
	{ NULL, NULL, NULL },
};

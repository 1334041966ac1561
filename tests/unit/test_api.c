/* SPDX-License-Identifier: MIT */
/*
 * Every public function with good and bad arguments, on the test backend: exact errno, and state
 * unchanged after a failure.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "copy.h"
#include "fake_gpu.h"
#include "gdrapi.h"
#include "gdrapi_ext.h"
#include "harness.h"

#define MB (1024ul * 1024)

/* What the cases share: the test backend's gdr_t and the fake GPU memory they pin. */
static struct {
	gdr_t g;
	uint8_t *gpu;
	size_t gpu_size;
} api;

static gdr_t open_test_backend(void)
{
	setenv("GDRCOPY_BACKEND", "test", 1);
	return gdr_open();
}

static int case_versions(void)
{
	gdr_t g = api.g;
	int major = -1, minor = -1;

	gdr_runtime_get_version(&major, &minor);
	EXPECT(major == 2 && minor == 6);
	gdr_runtime_get_version(NULL, NULL);

	EXPECT_ERR(gdr_driver_get_version(NULL, &major, &minor), EINVAL);
	EXPECT_ERR(gdr_driver_get_version(g, NULL, &minor), EINVAL);
	EXPECT_ERR(gdr_driver_get_version(g, &major, NULL), EINVAL);
	major = minor = -1;
	EXPECT_ERR(gdr_driver_get_version(g, &major, &minor), 0);
	/* NCCL enables itself only with a driver >= 2.1. */
	EXPECT(major == 2 && minor >= 1);
	return TEST_PASS;
}

static int case_mapping_type_strings(void)
{
	const char *s = NULL;

	EXPECT_ERR(gdr_get_mapping_type_string(GDR_MAPPING_TYPE_NONE, &s), 0);
	EXPECT(s && !strcmp(s, "None"));
	EXPECT_ERR(gdr_get_mapping_type_string(GDR_MAPPING_TYPE_WC, &s), 0);
	EXPECT(s && !strcmp(s, "Write Combining"));
	EXPECT_ERR(gdr_get_mapping_type_string(GDR_MAPPING_TYPE_CACHING, &s), 0);
	EXPECT(s && !strcmp(s, "Caching"));
	EXPECT_ERR(gdr_get_mapping_type_string(GDR_MAPPING_TYPE_DEVICE, &s), 0);
	EXPECT(s && !strcmp(s, "Device"));
	s = "unchanged";
	EXPECT_ERR(gdr_get_mapping_type_string(GDR_MAPPING_TYPE_MAX, &s), EINVAL);
	EXPECT_ERR(gdr_get_mapping_type_string((gdr_mapping_type_t)-1, &s), EINVAL);
	EXPECT(!strcmp(s, "unchanged"));
	EXPECT_ERR(gdr_get_mapping_type_string(GDR_MAPPING_TYPE_WC, NULL), EINVAL);
	return TEST_PASS;
}

static int case_attributes(void)
{
	gdr_t g = api.g;
	int v = 42, to = -1, from = -1;

	EXPECT_ERR(gdr_get_attribute(NULL, GDR_ATTR_USE_PERSISTENT_MAPPING, &v), EINVAL);
	EXPECT_ERR(gdr_get_attribute(g, GDR_ATTR_USE_PERSISTENT_MAPPING, NULL), EINVAL);
	EXPECT_ERR(gdr_get_attribute(g, GDR_ATTR_USE_PERSISTENT_MAPPING, &v), 0);
	EXPECT(v == 1);
	EXPECT_ERR(gdr_get_attribute(g, GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE, &v), 0);
	EXPECT(v == 0);
	EXPECT_ERR(gdr_get_attribute(g, GDR_ATTR_USING_DMA_BUF_MMAP, &v), 0);
	EXPECT(v == 0);
	v = 42;
	EXPECT_ERR(gdr_get_attribute(g, (gdr_attr_t)0, &v), EINVAL);
	EXPECT(v == 42);
	EXPECT_ERR(gdr_get_attribute(g, GDR_ATTR_MAX, &v), EINVAL);
	EXPECT_ERR(gdr_get_attribute(g, (gdr_attr_t)-1, &v), EINVAL);
	EXPECT_ERR(gdr_get_attribute(g, (gdr_attr_t)GDR_ATTR_EXT_BACKEND, &v), 0);
	EXPECT(v == 100);
	EXPECT_ERR(gdr_get_attribute(g, (gdr_attr_t)GDR_ATTR_EXT_COPY_TO_IMPL, &to), 0);
	EXPECT_ERR(gdr_get_attribute(g, (gdr_attr_t)GDR_ATTR_EXT_COPY_FROM_IMPL, &from), 0);
	/* The routines GDRCOPY_COPY_IMPL can choose include the two in use and the portable ones. */
	EXPECT_ERR(gdr_get_attribute(g, (gdr_attr_t)GDR_ATTR_EXT_COPY_IMPLS, &v), 0);
	EXPECT(v & 1 << GDR_COPY_IMPL_GENERIC && v & 1 << GDR_COPY_IMPL_MEMCPY);
	EXPECT(v & 1 << to && v & 1 << from);
	/* Each names its own direction's routine for 4 KiB (on this CPU they may differ). */
	EXPECT(to == gdr_copy_impl_for(1, 4096) && from == gdr_copy_impl_for(0, 4096),
	       "COPY_TO_IMPL %d, COPY_FROM_IMPL %d; the library copies 4 KiB to WC with %d, "
	       "from WC with %d", to, from, gdr_copy_impl_for(1, 4096), gdr_copy_impl_for(0, 4096));
	EXPECT(!(v >> GDR_COPY_IMPL_COUNT));
	return TEST_PASS;
}

static int case_pin_arguments(void)
{
	gdr_t g = api.g;
	void *gpu = api.gpu;
	gdr_mh_t mh = { 0x5a5a };
	unsigned long a = (unsigned long)gpu;

	EXPECT_ERR(gdr_pin_buffer(NULL, a, 4096, 0, 0, &mh), EINVAL);
	EXPECT_ERR(gdr_pin_buffer(g, a, 4096, 0, 0, NULL), EINVAL);
	EXPECT_ERR(gdr_pin_buffer(g, a, 0, 0, 0, &mh), EINVAL);
	EXPECT_ERR(gdr_pin_buffer(g, 0, 4096, 0, 0, &mh), EINVAL);
	EXPECT_ERR(gdr_pin_buffer(g, ~0ul - 100, 4096, 0, 0, &mh), EINVAL);
	EXPECT_ERR(gdr_pin_buffer(g, a, SIZE_MAX, 0, 0, &mh), EINVAL);
	EXPECT_ERR(gdr_pin_buffer_v2(NULL, a, 4096, 0, &mh), EINVAL);
	EXPECT_ERR(gdr_pin_buffer_v2(g, a, 4096, 0, NULL), EINVAL);
	EXPECT_ERR(gdr_pin_buffer_v2(g, a, 0, 0, &mh), EINVAL);
	/* Unknown flag bits are an error, not silently dropped (GDRCopy drops them). */
	EXPECT_ERR(gdr_pin_buffer_v2(g, a, 4096, 2, &mh), EINVAL);
	gdr_ext_take_errors(NULL, 0);
	EXPECT_ERR(gdr_pin_buffer_v2(g, a, 4096, 0x80000000u, &mh), EINVAL);
	/* The reason names the bits refused and the one flag there is. */
	{
		char why[GDR_EXT_ERRORS_MAX];

		gdr_ext_take_errors(why, sizeof(why));
		EXPECT(strstr(why, "0x80000000") && strstr(why, "GDR_PIN_FLAG_FORCE_PCIE"), "%s", why);
	}
	/* The backend's refusal comes back as its errno. */
	EXPECT_ERR(gdr_pin_buffer_v2(g, a, 4096, GDR_PIN_FLAG_FORCE_PCIE, &mh), EINVAL);
	/* Memory that is not GPU memory. */
	EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)&mh, 8, 0, 0, &mh), EINVAL);
	/* Nothing was written to the handle by any failure. */
	EXPECT(mh.h == 0x5a5a);
	EXPECT(fake_backend_pins == 0);
	return TEST_PASS;
}

static int case_bad_handles(void)
{
	gdr_t g = api.g;
	void *gpu = api.gpu;
	gdr_mh_t mh, stale, forged[] = { { 0 }, { 1 }, { ~0ul }, { 0x100000001ul }, { 12345678 } };
	gdr_info_t info;
	void *va = NULL;
	int flag;
	char buf[8];

	EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)gpu, 64 * 1024, 0, 0, &mh), 0);
	EXPECT(mh.h != 0);
	stale = mh;
	EXPECT_ERR(gdr_unpin_buffer(g, mh), 0);

	for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]) + 1; i++) {
		gdr_mh_t h = i < sizeof(forged) / sizeof(forged[0]) ? forged[i] : stale;

		EXPECT_ERR(gdr_unpin_buffer(g, h), EINVAL);
		EXPECT_ERR(gdr_get_info(g, h, &info), EINVAL);
		EXPECT_ERR(gdr_get_callback_flag(g, h, &flag), EINVAL);
		EXPECT_ERR(gdr_map(g, h, &va, 4096), EINVAL);
		EXPECT_ERR(gdr_unmap(g, h, va, 4096), EINVAL);
		EXPECT_ERR(gdr_copy_to_mapping(h, buf, buf, sizeof(buf)), EINVAL);
		EXPECT_ERR(gdr_copy_from_mapping(h, buf, buf, sizeof(buf)), EINVAL);
	}
	EXPECT(va == NULL);

	/* A handle from another gdr_t is foreign here. */
	{
		gdr_t g2 = gdr_open();
		gdr_mh_t other;

		EXPECT(g2 != NULL);
		if (g2) {
			EXPECT_ERR(gdr_pin_buffer(g2, (unsigned long)gpu, 64 * 1024, 0, 0, &other), 0);
			EXPECT_ERR(gdr_unpin_buffer(g, other), EINVAL);
			EXPECT_ERR(gdr_get_info(g, other, &info), EINVAL);
			EXPECT_ERR(gdr_map(g, other, &va, 4096), EINVAL);
			EXPECT_ERR(gdr_get_info(g2, other, &info), 0);
			EXPECT_ERR(gdr_close(g2), 0);
			/* Closing g2 retired its handles. */
			EXPECT_ERR(gdr_get_info(g, other, &info), EINVAL);
		}
	}
	EXPECT_ERR(gdr_unpin_buffer(NULL, mh), EINVAL);
	EXPECT_ERR(gdr_get_info(NULL, mh, &info), EINVAL);
	return TEST_PASS;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static int case_pin_map_copy(void)
{
	gdr_t g = api.g;
	uint8_t *gpu = api.gpu;
	size_t gpu_size = api.gpu_size;
	gdr_mh_t mh;
	gdr_info_t info;
	uint8_t *map = NULL, host[4096], back[4096];
	void *va = NULL, *again = (void *)0x1;
	int flag = -1;

	EXPECT_ERR(gdr_pin_buffer_v2(g, (unsigned long)gpu, gpu_size, 0, &mh), 0);
	EXPECT_ERR(gdr_get_info(g, mh, NULL), EINVAL);
	EXPECT_ERR(gdr_get_info(g, mh, &info), 0);
	EXPECT(info.va == (uintptr_t)gpu);
	EXPECT(info.mapped_size == gpu_size);
	EXPECT(info.page_size == 65536);
	EXPECT(!info.mapped && info.mapping_type == GDR_MAPPING_TYPE_NONE);
	EXPECT_ERR(gdr_get_callback_flag(g, mh, NULL), EINVAL);
	EXPECT_ERR(gdr_get_callback_flag(g, mh, &flag), 0);
	EXPECT(flag == 0);

	/* Map arguments. */
	EXPECT_ERR(gdr_map(g, mh, NULL, gpu_size), EINVAL);
	EXPECT_ERR(gdr_map(g, mh, &va, 0), EINVAL);
	EXPECT_ERR(gdr_map(g, mh, &va, gpu_size + 1), EINVAL);
	EXPECT_ERR(gdr_map_v2(g, mh, &va, gpu_size, 4), EINVAL);
	EXPECT_ERR(gdr_map_v2(g, mh, &va, gpu_size, -1), EINVAL);
	EXPECT_ERR(gdr_map_v2(g, mh, &va, gpu_size, GDR_MAP_FLAG_REQ_DEVICE_MAPPING), EOPNOTSUPP);
	EXPECT(va == NULL);
	EXPECT_ERR(gdr_get_info(g, mh, &info), 0);
	EXPECT(!info.mapped);
	/* Copies to an unmapped handle fail, even of 0 bytes. */
	EXPECT_ERR(gdr_copy_to_mapping(mh, gpu, host, 8), EINVAL);
	EXPECT_ERR(gdr_copy_to_mapping(mh, gpu, host, 0), EINVAL);

	EXPECT_ERR(gdr_map(g, mh, &va, gpu_size), 0);
	map = va;
	EXPECT(map != NULL);
	EXPECT_ERR(gdr_map(g, mh, &again, gpu_size), EAGAIN);
	EXPECT(again == (void *)0x1);
	EXPECT_ERR(gdr_get_info(g, mh, &info), 0);
	EXPECT(info.mapped && info.wc_mapping && info.mapping_type == GDR_MAPPING_TYPE_WC);

	/* Copies land in GPU memory and come back; size 0 is a no-op. */
	fill(host, sizeof(host), 3);
	EXPECT_ERR(gdr_copy_to_mapping(mh, map + 100, host, sizeof(host)), 0);
	EXPECT(!memcmp(gpu + 100, host, sizeof(host)));
	memset(back, 0, sizeof(back));
	EXPECT_ERR(gdr_copy_from_mapping(mh, back, map + 100, sizeof(back)), 0);
	EXPECT(!memcmp(back, host, sizeof(back)));
	EXPECT_ERR(gdr_copy_to_mapping(mh, map, NULL, 0), 0);
	EXPECT_ERR(gdr_copy_from_mapping(mh, NULL, map, 0), 0);
	/* Of 0 bytes anywhere, as GDRCopy's (it checks no range): nothing is touched. */
	EXPECT_ERR(gdr_copy_to_mapping(mh, map + 2 * gpu_size, host, 0), 0);
	EXPECT_ERR(gdr_copy_from_mapping(mh, back, NULL, 0), 0);
	EXPECT_ERR(gdr_copy_to_mapping(mh, map, NULL, 8), EINVAL);
	EXPECT_ERR(gdr_copy_from_mapping(mh, NULL, map, 8), EINVAL);
	/* Ranges outside the mapping are refused before anything is touched. */
	EXPECT_ERR(gdr_copy_to_mapping(mh, map + gpu_size - 4, host, 8), EINVAL);
	EXPECT_ERR(gdr_copy_to_mapping(mh, map - 1, host, 8), EINVAL);
	EXPECT_ERR(gdr_copy_from_mapping(mh, back, map + gpu_size, 1), EINVAL);
	EXPECT_ERR(gdr_copy_to_mapping(mh, map, host, SIZE_MAX), EINVAL);
	EXPECT_ERR(gdr_copy_to_mapping(mh, map + gpu_size - 8, host, 8), 0);
	EXPECT(!memcmp(gpu + gpu_size - 8, host, 8));

	/* Unmap rules. A size of 0 is refused and leaves the mapping, as GDRCopy's munmap does. */
	EXPECT_ERR(gdr_unmap(NULL, mh, map, gpu_size), EINVAL);
	EXPECT_ERR(gdr_unmap(g, mh, map, 0), EINVAL);
	EXPECT_ERR(gdr_unmap(g, mh, NULL, 0), EINVAL);
	EXPECT_ERR(gdr_copy_to_mapping(mh, map, host, 8), 0);
	EXPECT_ERR(gdr_get_info(g, mh, &info), 0);
	EXPECT(info.mapped);
	EXPECT_ERR(gdr_unmap(g, mh, map, gpu_size), 0);
	EXPECT_ERR(gdr_unmap(g, mh, map, gpu_size), EINVAL);
	EXPECT_ERR(gdr_copy_to_mapping(mh, map, host, 8), EINVAL);
	EXPECT_ERR(gdr_get_info(g, mh, &info), 0);
	EXPECT(!info.mapped && info.mapping_type == GDR_MAPPING_TYPE_NONE);

	/* Remap works; an unmap given the device pointer (as DPDK does) unmaps the mapping. */
	EXPECT_ERR(gdr_map_v2(g, mh, &va, gpu_size, GDR_MAP_FLAG_REQ_WC_MAPPING), 0);
	EXPECT_ERR(gdr_unmap(g, mh, gpu, gpu_size), 0);
	EXPECT_ERR(gdr_get_info(g, mh, &info), 0);
	EXPECT(!info.mapped);

	/* Unpin of a mapped buffer unmaps it first. */
	EXPECT_ERR(gdr_map(g, mh, &va, gpu_size), 0);
	EXPECT_ERR(gdr_unpin_buffer(g, mh), 0);
	EXPECT_ERR(gdr_get_info(g, mh, &info), EINVAL);
	EXPECT(fake_backend_pins == 0);
	return TEST_PASS;
}

static int case_unaligned_pin(void)
{
	gdr_t g = api.g;
	uint8_t *gpu = api.gpu;
	gdr_mh_t mh;
	gdr_info_t info;
	void *va = NULL;

	/* GDRCopy's basic_unaligned_mapping: pin succeeds, map fails, info.va is aligned down. */
	EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)gpu + 16, 64, 0, 0, &mh), 0);
	EXPECT_ERR(gdr_get_info(g, mh, &info), 0);
	EXPECT(info.va == (uintptr_t)gpu);
	EXPECT(info.mapped_size == 65536);
	EXPECT_ERR(gdr_map(g, mh, &va, 64), EINVAL);
	EXPECT(va == NULL);
	EXPECT_ERR(gdr_unpin_buffer(g, mh), 0);
	return TEST_PASS;
}

static int case_v1_get_info(void)
{
	gdr_t g = api.g;
	uint8_t *gpu = api.gpu;
	/* The v1 layout, as NCCL declares it; the library still exports the symbol. */
	struct info_v1 {
		uint64_t va, mapped_size;
		uint32_t page_size;
		uint64_t tm_cycles;
		uint32_t cycles_per_ms;
		unsigned mapped:1, wc_mapping:1;
	} v1;
	extern int gdr_get_info_v1(gdr_t, gdr_mh_t, struct info_v1 *) __asm__("gdr_get_info");
	gdr_mh_t mh;
	void *va;

	EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &mh), 0);
	EXPECT_ERR(gdr_map(g, mh, &va, 65536), 0);
	memset(&v1, 0xff, sizeof(v1));
	EXPECT_ERR(gdr_get_info_v1(g, mh, &v1), 0);
	EXPECT(v1.va == (uintptr_t)gpu && v1.mapped_size == 65536 && v1.page_size == 65536);
	EXPECT(v1.mapped == 1 && v1.wc_mapping == 1);
	EXPECT_ERR(gdr_get_info_v1(g, mh, NULL), EINVAL);
	EXPECT_ERR(gdr_get_info_v1(NULL, mh, &v1), EINVAL);
	EXPECT_ERR(gdr_unpin_buffer(g, mh), 0);
	return TEST_PASS;
}

static int case_backend_failures(void)
{
	gdr_t g = api.g;
	uint8_t *gpu = api.gpu;
	gdr_mh_t mh;
	gdr_info_t info;
	void *va;

	EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &mh), 0);
	EXPECT_ERR(gdr_map(g, mh, &va, 65536), 0);

	/* A failed unmap leaves the mapping usable. */
	fake_backend_fail_unmap = EIO;
	EXPECT_ERR(gdr_unmap(g, mh, va, 65536), EIO);
	EXPECT_ERR(gdr_get_info(g, mh, &info), 0);
	EXPECT(info.mapped);
	EXPECT_ERR(gdr_copy_to_mapping(mh, va, &info, 8), 0);
	/* A failed unpin keeps the handle (GDRCopy frees it anyway). */
	EXPECT_ERR(gdr_unpin_buffer(g, mh), EIO);
	EXPECT_ERR(gdr_get_info(g, mh, &info), 0);
	fake_backend_fail_unmap = 0;
	fake_backend_fail_unpin = EBUSY;
	EXPECT_ERR(gdr_unpin_buffer(g, mh), EBUSY);
	EXPECT_ERR(gdr_get_info(g, mh, &info), 0);
	EXPECT(info.mapped, "a failed unpin of a mapped pin unmapped it");
	EXPECT_ERR(gdr_copy_to_mapping(mh, va, &info, 8), 0);
	fake_backend_fail_unpin = 0;
	EXPECT_ERR(gdr_unpin_buffer(g, mh), 0);
	return TEST_PASS;
}

/*
 * Every function leaves its outputs as they were when it fails: for bad arguments, bad handles,
 * and a backend that scribbles on what it was given before failing.
 */
static int case_outputs_untouched(void)
{
	gdr_t g = api.g;
	uint8_t *gpu = api.gpu;
	const gdr_info_v2_t info_was = { .va = 0x1234, .mapped_size = 99, .page_size = 7 };
	gdr_mh_t mh, bad = { 12345 }, out = { 0x5a5a };
	gdr_info_v2_t info = info_was;
	const char *str = "unchanged";
	uint8_t host[64], *map;
	int v = 42, major = 42, minor = 42, flag = 42;
	void *va = (void *)0x1;

	EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &mh), 0);
	EXPECT_ERR(gdr_map(g, mh, &va, 65536), 0);
	map = va;

	/* Bad handles and arguments. */
	va = (void *)0x1;
	EXPECT_ERR(gdr_map(g, bad, &va, 65536), EINVAL);
	EXPECT_ERR(gdr_get_info_v2(g, bad, &info), EINVAL);
	EXPECT_ERR(gdr_get_callback_flag(g, bad, &flag), EINVAL);
	EXPECT_ERR(gdr_pin_buffer_v2(g, (unsigned long)gpu, 65536, 8, &out), EINVAL);
	EXPECT_ERR(gdr_pin_buffer(g, 0, 65536, 0, 0, &out), EINVAL);
	EXPECT_ERR(gdr_get_attribute(g, GDR_ATTR_MAX, &v), EINVAL);
	EXPECT_ERR(gdr_driver_get_version(NULL, &major, &minor), EINVAL);
	EXPECT_ERR(gdr_get_mapping_type_string(GDR_MAPPING_TYPE_MAX, &str), EINVAL);
	memset(host, 0x5a, sizeof(host));
	memset(map, 0x11, sizeof(host));
	EXPECT_ERR(gdr_copy_from_mapping(bad, host, map, sizeof(host)), EINVAL);
	EXPECT_ERR(gdr_copy_from_mapping(mh, host, map + 65536 - 8, sizeof(host)), EINVAL);
	for (size_t i = 0; i < sizeof(host); i++)
		EXPECT(host[i] == 0x5a && map[i] == 0x11);
	EXPECT_ERR(gdr_copy_to_mapping(bad, map, host, sizeof(host)), EINVAL);
	EXPECT_ERR(gdr_copy_to_mapping(mh, map - 8, host, sizeof(host)), EINVAL);
	for (size_t i = 0; i < sizeof(host); i++)
		EXPECT(map[i] == 0x11);

	/* The backend fails after writing into the outputs it was handed. */
	fake_backend_fail_outputs = EIO;
	EXPECT_ERR(gdr_get_info_v2(g, mh, &info), EIO);
	EXPECT_ERR(gdr_get_callback_flag(g, mh, &flag), EIO);
	EXPECT_ERR(gdr_get_attribute(g, GDR_ATTR_USE_PERSISTENT_MAPPING, &v), EIO);
	EXPECT_ERR(gdr_driver_get_version(g, &major, &minor), EIO);
	EXPECT_ERR(gdr_unmap(g, mh, map, 65536), 0);
	EXPECT_ERR(gdr_map_v2(g, mh, &va, 65536, GDR_MAP_FLAG_REQ_WC_MAPPING), EIO);
	fake_backend_fail_outputs = 0;

	EXPECT(!memcmp(&info, &info_was, sizeof(info)));
	EXPECT(va == (void *)0x1 && out.h == 0x5a5a && !strcmp(str, "unchanged"));
	EXPECT(v == 42 && major == 42 && minor == 42 && flag == 42);
	EXPECT_ERR(gdr_get_info_v2(g, mh, &info), 0);
	EXPECT(!info.mapped);
	EXPECT_ERR(gdr_unpin_buffer(g, mh), 0);
	return TEST_PASS;
}

/* In a fork child: the parent's gdr_t and handle. */
static int child_uses_parents(void *arg)
{
	const gdr_mh_t *mh = arg;
	char why[GDR_EXT_ERRORS_MAX];
	gdr_info_t info;
	int v = 42;

	gdr_ext_take_errors(NULL, 0);
	CHECK_ERR(gdr_get_info(api.g, *mh, &info), EINVAL);
	CHECK(gdr_ext_take_errors(why, sizeof(why)) && strstr(why, "gdr_get_info: ") &&
	      strstr(why, "opened by a parent process") && strstr(why, "gdr_open a new one"),
	      "the reason: '%s'", why);
	CHECK_ERR(gdr_get_attribute(api.g, GDR_ATTR_USE_PERSISTENT_MAPPING, &v), EINVAL);
	CHECK(gdr_ext_take_errors(why, sizeof(why)) && strstr(why, "gdr_get_attribute: ") &&
	      strstr(why, "opened by a parent process"), "the reason: '%s'", why);
	CHECK(v == 42, "the refused call wrote its output");
	return TEST_PASS;
}

/*
 * A fork child's calls on its parent's gdr_t fail with EINVAL, as a bad handle's do, but
 * with a reason that tells the two apart: the gdr_t is the parent's, and the child opens its own.
 */
static int case_fork_child(void)
{
	const struct test_child child = { .timeout_s = 30 };
	gdr_mh_t mh;

	CHECK_OK(gdr_pin_buffer(api.g, (unsigned long)api.gpu, 65536, 0, 0, &mh));
	EXPECT(test_child_run(&child, child_uses_parents, &mh) == TEST_PASS, "fork child: %s",
	       test_reason());
	EXPECT_ERR(gdr_unpin_buffer(api.g, mh), 0);
	return TEST_PASS;
}

/*
 * A pin that waits inside the fake backend, its gdr_t's lock held, until let go. memh keeps the
 * library's block for it reachable in a fork child, where the thread that holds it is gone and
 * gdr_close leaves it to the exit: valgrind would otherwise call it lost.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool inside, let_go;
	struct gdr_memh *memh;
	gdr_mh_t mh;
} busy = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false, NULL, { 0 } };

static void busy_wait_inside_pin(struct gdr_memh *memh)
{
	pthread_mutex_lock(&busy.lock);
	busy.inside = true;
	busy.memh = memh;
	pthread_cond_broadcast(&busy.cond);
	while (!busy.let_go)
		pthread_cond_wait(&busy.cond, &busy.lock);
	pthread_mutex_unlock(&busy.lock);
}

static void *busy_pin(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)gdr_pin_buffer(api.g, (unsigned long)api.gpu, 65536, 0, 0,
						&busy.mh);
}

static int child_closes_busy_gdr(void *arg)
{
	(void)arg;
	CHECK_ERR(gdr_close(api.g), 0);
	return TEST_PASS;
}

/*
 * A fork while another thread is inside a call on the gdr_t: in the child that thread does not
 * exist and the gdr_t's lock stays taken for good, so gdr_close there must not wait for it. It
 * leaves the gdr_t to the child's exit, and returns 0. The parent's pin goes on unharmed.
 */
static int case_fork_while_another_thread_holds_the_gdr(void)
{
	const struct test_child child = { .timeout_s = 10 };
	void *pinned = (void *)(intptr_t)-1;
	pthread_t t;

	busy.inside = busy.let_go = false;
	fake_backend_in_pin = busy_wait_inside_pin;
	if (pthread_create(&t, NULL, busy_pin, NULL)) {
		fake_backend_in_pin = NULL;	/* else every later pin would wait in it */
		return test_fail("pthread_create failed");
	}
	pthread_mutex_lock(&busy.lock);
	while (!busy.inside)
		pthread_cond_wait(&busy.cond, &busy.lock);
	pthread_mutex_unlock(&busy.lock);

	EXPECT(test_child_run(&child, child_closes_busy_gdr, NULL) == TEST_PASS,
	       "fork child: %s", test_reason());

	pthread_mutex_lock(&busy.lock);
	busy.let_go = true;
	pthread_cond_broadcast(&busy.cond);
	pthread_mutex_unlock(&busy.lock);
	pthread_join(t, &pinned);
	fake_backend_in_pin = NULL;
	busy.memh = NULL;
	CHECK(!pinned, "the pin the parent's thread was making failed: %s",
	      strerror((int)(intptr_t)pinned));
	EXPECT_ERR(gdr_unpin_buffer(api.g, busy.mh), 0);
	return TEST_PASS;
}

static int case_close(void)
{
	void *gpu = api.gpu;
	gdr_t g = gdr_open();
	gdr_mh_t a, b;
	void *va;

	EXPECT(g != NULL);
	if (!g)
		return TEST_FAIL;
	EXPECT_ERR(gdr_close(NULL), EINVAL);
	/* Close unmaps and unpins everything. */
	EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &a), 0);
	EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &b), 0);
	EXPECT_ERR(gdr_map(g, a, &va, 65536), 0);
	EXPECT(fake_backend_pins == 2);
	EXPECT_ERR(gdr_close(g), 0);
	EXPECT(fake_backend_pins == 0);
	EXPECT_ERR(gdr_copy_to_mapping(a, va, &a, 8), EINVAL);

	/* A backend failure during close is reported, and g is freed all the same. */
	g = gdr_open();
	EXPECT(g != NULL);
	if (!g)
		return TEST_FAIL;
	EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &a), 0);
	fake_backend_fail_unpin = EIO;
	EXPECT_ERR(gdr_close(g), EIO);
	fake_backend_fail_unpin = 0;
	fake_backend_release_stuck();
	EXPECT(fake_backend_pins == 0);

	/*
	 * A mapped pin whose unmap and unpin both fail: the unmap's error is the one met first.
	 * The mapping stays where it was (gdr_close(3)): the test undoes it.
	 */
	g = gdr_open();
	EXPECT(g != NULL);
	if (!g)
		return TEST_FAIL;
	EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &a), 0);
	EXPECT_ERR(gdr_map(g, a, &va, 65536), 0);
	fake_backend_fail_unmap = EIO;
	fake_backend_fail_unpin = EBUSY;
	EXPECT_ERR(gdr_close(g), EIO);
	fake_backend_fail_unmap = 0;
	fake_backend_fail_unpin = 0;
	fake_backend_release_stuck();
	EXPECT(fake_backend_pins == 0);
	munmap(va, 65536);
	return TEST_PASS;
}

static int case_selection(void)
{
	setenv("GDRCOPY_BACKEND", "no-such-backend", 1);
	EXPECT(gdr_open() == NULL);
	setenv("GDRCOPY_BACKEND", "test", 1);
	return TEST_PASS;
}

/* gdr_close of the gdr_t the cases before shared. */
static int case_close_shared(void)
{
	EXPECT_ERR(gdr_close(api.g), 0);
	api.g = NULL;
	return TEST_PASS;
}

static const struct test_case cases[] = {
	{ "versions", case_versions },
	{ "mapping_type_strings", case_mapping_type_strings },
	{ "attributes", case_attributes },
	{ "pin_arguments", case_pin_arguments },
	{ "bad_handles", case_bad_handles },
	{ "pin_map_copy", case_pin_map_copy },
	{ "unaligned_pin", case_unaligned_pin },
	{ "v1_get_info", case_v1_get_info },
	{ "backend_failures", case_backend_failures },
	{ "outputs_untouched", case_outputs_untouched },
	{ "fork_child", case_fork_child },
	{ "fork_while_another_thread_holds_the_gdr", case_fork_while_another_thread_holds_the_gdr },
	{ "close_shared", case_close_shared },
	{ "close", case_close },
	{ "selection", case_selection },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	int status;

	api.gpu_size = 4 * MB;
	api.gpu = fake_gpu_alloc(api.gpu_size);
	if (!api.gpu) {
		fprintf(stderr, "fake_gpu_alloc failed\n");
		return TEST_FAIL;
	}
	api.g = open_test_backend();
	if (!api.g) {
		fprintf(stderr, "gdr_open with the test backend failed\n");
		return TEST_FAIL;
	}
	/* In order: each case starts where the one before left the shared gdr_t. */
	status = test_run(cases, argc, argv);
	fake_gpu_free(api.gpu);
	return status;
}

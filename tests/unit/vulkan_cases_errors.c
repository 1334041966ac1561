/* SPDX-License-Identifier: MIT */
/*
 * The vulkan backend's refusals and what survives them: the application freeing pinned
 * memory, every refused pin and map with its log line, a device without a Vulkan twin.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cuda_vmm.h"
#include "gdrapi.h"
#include "gdrapi_ext.h"
#include "harness.h"
#include "simcuda.h"
#include "vulkan_cases.h"

/* The pin outlives the application's free of the allocation (persistent semantics). */
int vulkan_case_free_while_pinned(void)
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

/* Each refusal: its errno, a log line saying why and what to do, nothing left behind. */
static int expect_pin_error(unsigned long addr, size_t size, uint32_t flags, int want,
			    const char *log_part)
{
	const char *log;
	gdr_mh_t mh = { 0 };
	int ret;

	test_capture_begin();
	ret = gdr_pin_buffer_v2(vk_gdr, addr, size, flags, &mh);
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

int vulkan_case_refusals(void)
{
	struct test_vmm vmm, nofd;
	struct leak_mark lm;
	CUdeviceptr dptr;
	gdr_mh_t mh;
	int ret = 0;

	leak_mark_take(&lm);
	CHECK_EQ(test_vmm_alloc(&vmm, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	CHECK_EQ(test_vmm_alloc(&nofd, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_NONE), CUDA_SUCCESS);
	CHECK_EQ(cuMemAlloc(&dptr, 1 * MiB), CUDA_SUCCESS);

	ret = ret ? ret : expect_pin_error(dptr, 65536, 0, ENOTSUP,
					   "requestedHandleTypes = "
					   "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR");
	ret = ret ? ret : expect_pin_error(dptr, 65536, 0, ENOTSUP, "gdrdrv backend");
	ret = ret ? ret : expect_pin_error(nofd.ptr, 65536, 0, ENOTSUP,
					   "without CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR");
	ret = ret ? ret : expect_pin_error(vmm.ptr + 65536, vmm.size, 0, EINVAL,
					   "past the end of its allocation");
	ret = ret ? ret : expect_pin_error(vmm.ptr, 65536, GDR_PIN_FLAG_FORCE_PCIE, EINVAL,
					   "FORCE_PCIE");
	ret = ret ? ret : expect_pin_error(vmm.ptr, 65536, 0x4, EINVAL, NULL);
	ret = ret ? ret : expect_pin_error(vmm.ptr, 0, 0, EINVAL, NULL);
	if (ret)
		return ret;
	/* Tokens: refused when given, as gdrdrv in persistent mode; zero tokens are fine. */
	CHECK_EQ(gdr_pin_buffer(vk_gdr, vmm.ptr, 65536, 1, 0, &mh), EINVAL);
	CHECK_EQ(gdr_pin_buffer(vk_gdr, vmm.ptr, 65536, 0, 1, &mh), EINVAL);
	CHECK_EQ(gdr_pin_buffer(vk_gdr, vmm.ptr, 65536, 0, 0, &mh), 0);
	CHECK_EQ(gdr_unpin_buffer(vk_gdr, mh), 0);

	CHECK_EQ(cuMemFree(dptr), CUDA_SUCCESS);
	test_vmm_free(&vmm);
	test_vmm_free(&nofd);
	return check_no_leak(&lm);
}

/* A broken driver's export: it succeeds and gives no descriptor. */
static int export_no_fd(int fd)
{
	close(fd);
	return -1;
}

/* A broken driver's export: it succeeds and gives a number that names no open file. */
static int export_closed_fd(int fd)
{
	close(fd);
	return fd;
}

/*
 * An export that succeeds with no descriptor (-1, or a number that is not open) is the driver's
 * fault (EIO, as a nonsensical range), not memory the backend cannot pin, nor a lack of
 * descriptors: refused, saying so, with the handle untouched and the reference on the
 * allocation given back.
 */
int vulkan_case_no_fd(void)
{
	static const struct {
		int (*hook)(int fd);
		const char *says;
	} exports[] = {
		{ export_no_fd, "gave no file descriptor (-1)" },
		{ export_closed_fd, ", which is not open)" },
	};
	struct test_vmm vmm;
	struct leak_mark lm;
	const char *log;
	char want[160];
	int ret;

	leak_mark_take(&lm);
	CHECK_EQ(test_vmm_alloc(&vmm, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
		 CUDA_SUCCESS);
	for (size_t i = 0; i < sizeof(exports) / sizeof(exports[0]); i++) {
		gdr_mh_t mh = { 0x77 };

		snprintf(want, sizeof(want), "vulkan: pin 0x%llx: cuMemExportToShareableHandle "
			 "succeeded but gave no file descriptor (", (unsigned long long)vmm.ptr);
		simcuda_set_export_hook(exports[i].hook);
		test_capture_begin();
		ret = gdr_pin_buffer_v2(vk_gdr, vmm.ptr, 65536, 0, &mh);
		log = test_capture_end();
		simcuda_set_export_hook(NULL);
		EXPECT_ERR(ret, EIO);
		EXPECT(strstr(log, want) && strstr(log, exports[i].says),
		       "the log lacks \"%s...%s\": %s", want, exports[i].says, log);
		EXPECT(mh.h == 0x77, "the handle was changed to 0x%lx", mh.h);
	}
	test_vmm_free(&vmm);
	return check_no_leak(&lm);
}

/*
 * With no descriptor left for the export, the pin fails with EMFILE and a log line that says
 * so, the handle untouched and the reference on the allocation given back.
 */
int vulkan_case_emfile(void)
{
	struct rlimit saved, low;
	struct test_vmm vmm;
	struct leak_mark lm;
	gdr_mh_t mh = { 0x77 };
	const char *log;
	int ret, lowest;

	leak_mark_take(&lm);
	CHECK_EQ(test_vmm_alloc(&vmm, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
		 CUDA_SUCCESS);
	CHECK(!getrlimit(RLIMIT_NOFILE, &saved));
	/* The lowest free number is where the next descriptor would go: the limit, there. */
	lowest = dup(0);
	CHECK(lowest >= 0);
	close(lowest);
	low = saved;
	low.rlim_cur = (rlim_t)lowest;
	test_capture_begin();
	CHECK(!setrlimit(RLIMIT_NOFILE, &low));
	ret = gdr_pin_buffer_v2(vk_gdr, vmm.ptr, 65536, 0, &mh);
	CHECK(!setrlimit(RLIMIT_NOFILE, &saved));
	log = test_capture_end();
	EXPECT_ERR(ret, EMFILE);
	EXPECT(strstr(log, "out of file descriptors") && strstr(log, "vulkan backend"),
	       "the log does not say the descriptors ran out: %s", log);
	EXPECT(mh.h == 0x77, "the handle was changed to 0x%lx", mh.h);
	test_vmm_free(&vmm);
	return check_no_leak(&lm);
}

/* A pointer that is not device memory, what its refusal must say it is, and the way out. */
struct not_device_memory {
	unsigned long addr;
	size_t size;
	const char *what, *hint;
};

static int expect_not_device_memory(const struct not_device_memory *m)
{
	int ret = expect_pin_error(m->addr, m->size, 0, EINVAL, m->what);

	return ret ? ret : expect_pin_error(m->addr, m->size, 0, EINVAL, m->hint);
}

/*
 * Pointers that are not device memory are refused with EINVAL, the log naming what CUDA's
 * pointer attributes make of each (not CUDA's at all, page-locked host memory, managed memory,
 * also when managed memory reports the HOST memory type, as CUDA allows) and what to do.
 */
int vulkan_case_not_device_memory(void)
{
	const char *unknown = "not memory CUDA knows", *host_memory = "page-locked host memory";
	const char *managed_memory = "managed (unified) memory";
	const char *pin_gpu_memory = "requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR";
	CUdeviceptr managed, freed;
	struct leak_mark lm;
	char stack[64];
	void *host, *heap;
	int ret = 0;

	leak_mark_take(&lm);
	heap = malloc(65536);
	CHECK(heap != NULL);
	CHECK_EQ(cuMemAllocHost(&host, 65536), CUDA_SUCCESS);
	CHECK_EQ(cuMemAllocManaged(&managed, 65536, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
	CHECK_EQ(cuMemAlloc(&freed, 65536), CUDA_SUCCESS);
	CHECK_EQ(cuMemFree(freed), CUDA_SUCCESS);
	{
		const struct not_device_memory cases[] = {
			{ (unsigned long)stack, sizeof(stack), unknown, "malloc, mmap or stack" },
			{ (unsigned long)heap, 65536, unknown, pin_gpu_memory },
			{ freed, 65536, unknown, "freed already" },
			{ (unsigned long)host, 65536, host_memory, "the CPU reaches it directly" },
			{ (unsigned long)host, 65536, host_memory, pin_gpu_memory },
			{ managed, 65536, managed_memory, "migrates between host and GPU" },
			{ managed, 65536, managed_memory, pin_gpu_memory },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]) && !ret; i++)
			ret = expect_not_device_memory(&cases[i]);
	}
	if (!ret) {
		const struct not_device_memory as_host = {
			managed, 65536, managed_memory, "migrates between host and GPU"
		};

		simcuda_set_managed_memory_type(CU_MEMORYTYPE_HOST);
		ret = expect_not_device_memory(&as_host);
		simcuda_set_managed_memory_type(CU_MEMORYTYPE_DEVICE);
	}
	CHECK_EQ(cuMemFreeHost(host), CUDA_SUCCESS);
	CHECK_EQ(cuMemFree(managed), CUDA_SUCCESS);
	free(heap);
	return ret ? ret : check_no_leak(&lm);
}

int vulkan_case_map_errors(void)
{
	struct test_vmm m;
	gdr_info_t info;
	gdr_mh_t mh;
	void *va, *va2;
	const char *log;

	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	CHECK_EQ(gdr_pin_buffer_v2(vk_gdr, m.ptr, 65536, 0, &mh), 0);
	test_capture_begin();
	CHECK_EQ(gdr_map_v2(vk_gdr, mh, &va, 65536, GDR_MAP_FLAG_REQ_CACHE_MAPPING), EINVAL);
	CHECK_EQ(gdr_map_v2(vk_gdr, mh, &va, 65536, GDR_MAP_FLAG_REQ_DEVICE_MAPPING), EINVAL);
	log = test_capture_end();
	CHECK(strstr(log, "write-combined") != NULL);
	CHECK_EQ(gdr_map_v2(vk_gdr, mh, &va, 65536, 4), EINVAL);
	CHECK_EQ(gdr_map_v2(vk_gdr, mh, &va, 65537, GDR_MAP_FLAG_DEFAULT), EINVAL);
	CHECK_EQ(gdr_unmap(vk_gdr, mh, NULL, 65536), EINVAL);
	CHECK_EQ(gdr_map_v2(vk_gdr, mh, &va, 4096, GDR_MAP_FLAG_REQ_WC_MAPPING), 0);
	CHECK_EQ(gdr_map_v2(vk_gdr, mh, &va2, 4096, GDR_MAP_FLAG_REQ_WC_MAPPING), EAGAIN);
	CHECK_EQ(gdr_get_info(vk_gdr, mh, &info), 0);
	CHECK_EQ(info.mapping_type, GDR_MAPPING_TYPE_WC);
	/* Copies outside the mapped 4096 bytes are refused. */
	CHECK_EQ(gdr_copy_to_mapping(mh, (char *)va + 4095, "ab", 2), EINVAL);
	CHECK_EQ(gdr_copy_to_mapping(mh, (char *)va + 4094, "ab", 2), 0);
	CHECK_EQ(gdr_unmap(vk_gdr, mh, va, 4096), 0);
	CHECK_EQ(gdr_unmap(vk_gdr, mh, va, 4096), EINVAL);
	CHECK_EQ(gdr_copy_to_mapping(mh, va, "ab", 2), EINVAL);
	CHECK_EQ(gdr_map(vk_gdr, mh, &va, 65536), 0);
	CHECK_EQ(gdr_unpin_buffer(vk_gdr, mh), 0);
	CHECK_EQ(gdr_unpin_buffer(vk_gdr, mh), EINVAL);
	test_vmm_free(&m);
	return 0;
}

/* A second device without a Vulkan twin (GDRCOPY_SIM_CUDA_DEVICES=2 set in main). */
int vulkan_case_unmatched_device(void)
{
	struct test_vmm m;
	int count = 0;
	int ret;

	CHECK_EQ(cuDeviceGetCount(&count), CUDA_SUCCESS);
	/* main asked the simulator for two: one device means the set-up failed, not a skip. */
	CHECK(count >= 2, "the simulator has %d device(s), asked for 2 (GDRCOPY_SIM_CUDA_DEVICES)",
	      count);
	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	ret = expect_pin_error(m.ptr, 65536, 0, ENOTSUP,
			       "no Vulkan device matches CUDA device 1 (UUID GPU-");
	test_vmm_free(&m);
	return ret;
}

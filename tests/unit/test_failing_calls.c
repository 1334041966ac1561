/* SPDX-License-Identifier: MIT */
/*
 * The failing-calls loop (failing_calls.h) on the backends the simulated GPU runs: dmabuf, and
 * vulkan over lavapipe. Besides libc's (failing_libc.c), the library's calls into the CUDA
 * driver fail: this program defines them, and they come before the simulator's, which it links,
 * in the simulator's own table of entry points; a failing one answers as a driver out of memory
 * would. The vulkan backend's Vulkan calls go through the loader's tables, out of this
 * program's reach: the hostile Vulkan loader (tests/sim/vulkan_hostile), loaded in front of the
 * real one, asks this program before each, fails it with each error the specification lets it
 * return, and counts the library's Vulkan objects. cuMemRelease, cuDevicePrimaryCtxRelease,
 * cuCtxSetCurrent(NULL), the error-string lookups, and Vulkan's destroy, free and unmap calls
 * never fail: they only release.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "cuda_vmm.h"
#include "failing_calls.h"
#include "simcuda.h"
#include "simcuda_dmabuf.h"
#include "vulkan_hostile.h"

#define MiB (1024UL * 1024)
#define PIN_OFFSET (128 * 1024UL)	/* the pin starts here in its allocation: not at its base */

/* A CUDA call the library makes: fails as a driver out of memory would. */
#define CUDA_FAIL_HERE(name) do { \
	if (FAIL_HERE(name)) { \
		failing_expect("CUDA_ERROR_OUT_OF_MEMORY", ENOMEM); \
		return CUDA_ERROR_OUT_OF_MEMORY; \
	} \
} while (0)

CUresult CUDAAPI cuInit(unsigned int flags)
{
	CUDA_FAIL_HERE("cuInit");
	return REAL(cuInit)(flags);
}

CUresult CUDAAPI cuDeviceGet(CUdevice *dev, int ordinal)
{
	CUDA_FAIL_HERE("cuDeviceGet");
	return REAL(cuDeviceGet)(dev, ordinal);
}

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
	CUDA_FAIL_HERE("cuDeviceGetCount");
	return REAL(cuDeviceGetCount)(count);
}

CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	CUDA_FAIL_HERE("cuDeviceGetUuid");
	return REAL(cuDeviceGetUuid)(uuid, dev);
}

CUresult CUDAAPI cuDeviceGetAttribute(int *v, CUdevice_attribute attr, CUdevice dev)
{
	CUDA_FAIL_HERE("cuDeviceGetAttribute");
	return REAL(cuDeviceGetAttribute)(v, attr, dev);
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
	CUDA_FAIL_HERE("cuDevicePrimaryCtxRetain");
	return REAL(cuDevicePrimaryCtxRetain)(ctx, dev);
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *ctx)
{
	CUDA_FAIL_HERE("cuCtxGetCurrent");
	return REAL(cuCtxGetCurrent)(ctx);
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
	if (ctx)
		CUDA_FAIL_HERE("cuCtxSetCurrent");
	return REAL(cuCtxSetCurrent)(ctx);
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr p)
{
	CUDA_FAIL_HERE("cuPointerGetAttribute");
	return REAL(cuPointerGetAttribute)(data, attr, p);
}

CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
	CUDA_FAIL_HERE("cuMemGetAddressRange");
	return REAL(cuMemGetAddressRange)(base, size, p);
}

CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *h, void *addr)
{
	CUDA_FAIL_HERE("cuMemRetainAllocationHandle");
	return REAL(cuMemRetainAllocationHandle)(h, addr);
}

CUresult CUDAAPI cuMemExportToShareableHandle(void *shareable, CUmemGenericAllocationHandle h,
					      CUmemAllocationHandleType type,
					      unsigned long long flags)
{
	CUDA_FAIL_HERE("cuMemExportToShareableHandle");
	return REAL(cuMemExportToShareableHandle)(shareable, h, type, flags);
}

CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
							 CUmemGenericAllocationHandle h)
{
	CUDA_FAIL_HERE("cuMemGetAllocationPropertiesFromHandle");
	return REAL(cuMemGetAllocationPropertiesFromHandle)(prop, h);
}

CUresult CUDAAPI cuMemGetHandleForAddressRange(void *handle, CUdeviceptr p, size_t size,
					       CUmemRangeHandleType type,
					       unsigned long long flags)
{
	CUDA_FAIL_HERE("cuMemGetHandleForAddressRange");
	return REAL(cuMemGetHandleForAddressRange)(handle, p, size, type, flags);
}

/* ---- the library's Vulkan calls ---- */

static vk_hostile_live_fn vk_live;

/* How a Vulkan error must be told: by its name, and as ENOMEM when memory ran out. */
static const struct {
	VkResult result;
	const char *name;
	int err;
} vk_errors[] = {
	{ VK_ERROR_OUT_OF_HOST_MEMORY, "VK_ERROR_OUT_OF_HOST_MEMORY", ENOMEM },
	{ VK_ERROR_OUT_OF_DEVICE_MEMORY, "VK_ERROR_OUT_OF_DEVICE_MEMORY", ENOMEM },
	{ VK_ERROR_INITIALIZATION_FAILED, "VK_ERROR_INITIALIZATION_FAILED", 0 },
	{ VK_ERROR_INCOMPATIBLE_DRIVER, "VK_ERROR_INCOMPATIBLE_DRIVER", 0 },
	{ VK_ERROR_TOO_MANY_OBJECTS, "VK_ERROR_TOO_MANY_OBJECTS", 0 },
	{ VK_ERROR_DEVICE_LOST, "VK_ERROR_DEVICE_LOST", 0 },
	{ VK_ERROR_MEMORY_MAP_FAILED, "VK_ERROR_MEMORY_MAP_FAILED", 0 },
	{ VK_ERROR_INVALID_EXTERNAL_HANDLE, "VK_ERROR_INVALID_EXTERNAL_HANDLE", 0 },
};

/* The hostile loader asks before each of the library's Vulkan calls that can fail. */
static VkResult vk_fail(const char *call, const VkResult *errors, unsigned int n)
{
	VkResult r;

	if (!failing_call(call, NULL))
		return VK_SUCCESS;
	r = errors[failing_way(n)];
	for (size_t i = 0; i < sizeof(vk_errors) / sizeof(vk_errors[0]); i++)
		if (vk_errors[i].result == r)
			failing_expect(vk_errors[i].name, vk_errors[i].err);
	return r;
}

#define VK_COUNTER(field) \
static long vk_##field(void) \
{ \
	struct vk_hostile_live live; \
\
	vk_live(&live); \
	return live.field; \
}
VK_COUNTER(instances)
VK_COUNTER(devices)
VK_COUNTER(memories)
VK_COUNTER(buffers)
VK_COUNTER(maps)

/* ---- the simulated GPU's objects ---- */

#define SIM_COUNTER(field) \
static long sim_##field(void) \
{ \
	struct simcuda_counters c; \
\
	simcuda_get_counters(&c); \
	return (long)c.field; \
}
SIM_COUNTER(allocations)
SIM_COUNTER(handle_refs)
SIM_COUNTER(mappings)
SIM_COUNTER(primary_ctx_refs)

static long sim_exports_open(void)
{
	struct simcuda_dmabuf_counters d;

	simcuda_dmabuf_get_counters(&d);
	return (long)d.open;
}

#define SIM_COUNTERS \
	{ "CUDA allocations", sim_allocations, false }, \
	{ "CUDA allocation handle references", sim_handle_refs, false }, \
	{ "CUDA mappings", sim_mappings, false }, \
	{ "CUDA primary context references", sim_primary_ctx_refs, false }, \
	{ "open dma-buf exports", sim_exports_open, false }

/* ---- the backends ---- */

/* The simulator's memory is this process's: the pin's bytes are at its device pointer. */
static uint8_t *sim_gpu_bytes(uint64_t dptr)
{
	return (uint8_t *)(uintptr_t)dptr;
}

static int dmabuf_setup(uint64_t *dptr)
{
	CUdeviceptr base = 0;

	CHECK_PASS(test_cuda_init());
	CHECK_EQ(cuMemAlloc(&base, 2 * MiB), CUDA_SUCCESS);
	*dptr = base + PIN_OFFSET;
	/* No context current: the library makes one current for each pin, and undoes that. */
	CHECK_EQ(cuCtxSetCurrent(NULL), CUDA_SUCCESS);
	return TEST_PASS;
}

static void no_cleanup(void)
{
}

static struct test_vmm vmm;

static int vulkan_setup(uint64_t *dptr)
{
	CHECK_PASS(test_cuda_init());
	CHECK_EQ(test_vmm_alloc(&vmm, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
		 CUDA_SUCCESS);
	*dptr = vmm.ptr + PIN_OFFSET;
	CHECK_EQ(cuCtxSetCurrent(NULL), CUDA_SUCCESS);
	return TEST_PASS;
}

static void vulkan_cleanup(void)
{
	test_vmm_free(&vmm);
}

static int case_dmabuf(void)
{
	static const char *const env[] = {
		"GDRCOPY_BACKEND", "dmabuf",
		"GDRCOPY_SIM_CUDA_VERSION", "13030",
		"GDRCOPY_SIM_CUDA_BACKING", "memfd",
		"GDRCOPY_SIM_CUDA_ATTR", "124=1",
		NULL,
	};
	static const struct failing_counter counters[] = { SIM_COUNTERS, { NULL, NULL, false } };
	const struct failing_backend b = {
		.child = { .env = env, .timeout_s = 60 },
		.setup = dmabuf_setup,
		.cleanup = no_cleanup,
		.gpu_bytes = sim_gpu_bytes,
		.counters = counters,
	};

	return failing_calls_run(&b);
}

/* The hostile Vulkan loader, or why not. */
static void *vk_hostile;
static const char *vk_hostile_missing;

static int case_vulkan(void)
{
	static const struct failing_counter counters[] = {
		SIM_COUNTERS,
		{ "VkInstances", vk_instances, true },
		{ "VkDevices", vk_devices, true },
		{ "VkDeviceMemory imports", vk_memories, false },
		{ "VkBuffers", vk_buffers, false },
		{ "Vulkan mappings", vk_maps, false },
		{ NULL, NULL, false },
	};
	const struct failing_backend b = {
		.child = { .timeout_s = 60, .quick_exit = true },
		.setup = vulkan_setup,
		.cleanup = vulkan_cleanup,
		.gpu_bytes = sim_gpu_bytes,
		.counters = counters,
	};
	const char *missing = test_lavapipe_missing();
	vk_hostile_fail_with_fn fail_with;

	if (missing)
		return test_skip("%s", missing);
	if (!vk_hostile)
		return test_skip("%s", vk_hostile_missing);
	fail_with = (vk_hostile_fail_with_fn)dlsym(vk_hostile, VK_HOSTILE_FAIL_WITH);
	vk_live = (vk_hostile_live_fn)dlsym(vk_hostile, VK_HOSTILE_LIVE);
	CHECK(fail_with && vk_live, "the hostile Vulkan loader has no %s or %s",
	      VK_HOSTILE_FAIL_WITH, VK_HOSTILE_LIVE);
	fail_with(vk_fail);
	test_use_lavapipe();
	unsetenv("GDRCOPY_ENABLE_LOGGING");
	return failing_calls_run(&b);
}

static const struct test_case cases[] = {
	{ "dmabuf", case_dmabuf },
	{ "vulkan", case_vulkan },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	char exe[PATH_MAX], dir[PATH_MAX + 32];
	ssize_t n;

	failing_calls_init();
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		printf("cannot find this program's path\n");
		return TEST_FAIL;
	}
	exe[n] = '\0';
	/* Before anything loads Vulkan: the simulated driver does, for its memory. */
	snprintf(dir, sizeof(dir), "%s/../../sim/vulkan-hostile", dirname(exe));
	vk_hostile = test_use_vulkan_hostile(dir, &vk_hostile_missing);
	return test_run(cases, argc, argv);
}

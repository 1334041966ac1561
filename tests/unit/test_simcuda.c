/* SPDX-License-Identifier: MIT */
/*
 * The simulated CUDA driver itself: the semantics the backends and tools rely on. A wrong
 * simulator would let a wrong backend pass, so its rules are tested on their own.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cudaTypedefs.h>

#include "cuda_vmm.h"
#include "harness.h"
#include "simcuda.h"

#define MiB (1UL << 20)

static int case_versions(void)
{
	PFN_cuMemAlloc_v3020 alloc;
	CUdriverProcAddressQueryResult status;
	void *pfn;
	int v = 0;

	CHECK_EQ(cuDriverGetVersion(&v), CUDA_SUCCESS);
	CHECK_EQ(v, 13000);
	CHECK_EQ(cuGetProcAddress("cuMemAlloc", &pfn, 12000, 0, &status), CUDA_SUCCESS);
	CHECK_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS);
	alloc = (PFN_cuMemAlloc_v3020)pfn;
	CHECK(alloc == cuMemAlloc);
	CHECK_EQ(cuGetProcAddress("cuMemAlloc", &pfn, 3000, 0, &status), CUDA_SUCCESS);
	CHECK(pfn == NULL);
	CHECK_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
	CHECK_EQ(cuGetProcAddress("cuNoSuchThing", &pfn, 12000, 0, &status), CUDA_SUCCESS);
	CHECK(pfn == NULL);
	CHECK_EQ(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
	/* Newer than the driver: an error, as documented. */
	CHECK_EQ(cuGetProcAddress("cuMemAlloc", &pfn, 13010, 0, &status), CUDA_ERROR_INVALID_VALUE);
	/* cuCtxSynchronize changed its signature in 13.0. */
	CHECK_EQ(cuGetProcAddress("cuCtxSynchronize", &pfn, 12080, 0, &status), CUDA_SUCCESS);
	CHECK(pfn == (void *)cuCtxSynchronize);
	CHECK_EQ(cuGetProcAddress("cuCtxSynchronize", &pfn, 13000, 0, &status), CUDA_SUCCESS);
	CHECK(pfn == (void *)cuCtxSynchronize_v2);
	/* So did cuCtxGetDevice. */
	CHECK_EQ(cuGetProcAddress("cuCtxGetDevice", &pfn, 12080, 0, &status), CUDA_SUCCESS);
	CHECK(pfn == (void *)cuCtxGetDevice);
	CHECK_EQ(cuGetProcAddress("cuCtxGetDevice", &pfn, 13000, 0, &status), CUDA_SUCCESS);
	CHECK(pfn == (void *)cuCtxGetDevice_v2);
	return 0;
}

static int case_devices(void)
{
	char name[64], bus[32];
	CUuuid uuid;
	int count = 0, cc = 0;
	size_t total = 0;

	CHECK_EQ(cuDeviceGetCount(&count), CUDA_SUCCESS);
	CHECK_EQ(count, 1);
	CHECK_EQ(cuDeviceGetName(name, sizeof(name), 1), CUDA_ERROR_INVALID_DEVICE);
	CHECK_EQ(cuDeviceGetName(name, sizeof(name), 0), CUDA_SUCCESS);
	CHECK(strstr(name, "H200") != NULL);
	CHECK_EQ(cuDeviceGetPCIBusId(bus, sizeof(bus), 0), CUDA_SUCCESS);
	CHECK(!strcmp(bus, "0000:06:00.0"));
	CHECK_EQ(cuDeviceGetAttribute(&cc, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0), CUDA_SUCCESS);
	CHECK_EQ(cc, 9);
	CHECK_EQ(cuDeviceGetAttribute(&cc, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 0), CUDA_SUCCESS);
	CHECK_EQ(cc, 0);
	CHECK_EQ(cuDeviceTotalMem(&total, 0), CUDA_SUCCESS);
	CHECK(total > 0);
	CHECK_EQ(cuDeviceGetUuid(&uuid, 0), CUDA_SUCCESS);
	return 0;
}

static int case_contexts(void)
{
	struct simcuda_counters c0, c1;
	CUcontext ctx, cur;
	CUdeviceptr p;
	CUdevice dev;

	simcuda_get_counters(&c0);
	CHECK_EQ(cuCtxSetCurrent(NULL), CUDA_SUCCESS);
	CHECK_EQ(cuMemAlloc(&p, 100), CUDA_ERROR_INVALID_CONTEXT);
	CHECK_EQ(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
	CHECK_EQ(cuCtxGetDevice(&dev), CUDA_ERROR_INVALID_CONTEXT);
	CHECK_EQ(cuCtxGetDevice_v2(&dev, NULL), CUDA_ERROR_INVALID_CONTEXT);
	CHECK_EQ(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
	/* An explicit context needs not be current. */
	dev = -1;
	CHECK_EQ(cuCtxGetDevice_v2(&dev, ctx), CUDA_SUCCESS);
	CHECK_EQ(dev, 0);
	CHECK_EQ(cuCtxGetDevice_v2(&dev, (CUcontext)&dev), CUDA_ERROR_INVALID_CONTEXT);
	CHECK_EQ(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
	CHECK_EQ(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
	CHECK(cur == ctx);
	dev = -1;
	CHECK_EQ(cuCtxGetDevice(&dev), CUDA_SUCCESS);
	CHECK_EQ(dev, 0);
	CHECK_EQ(cuCtxGetDevice(NULL), CUDA_ERROR_INVALID_VALUE);
	CHECK_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
	simcuda_get_counters(&c1);
	CHECK_EQ(c1.primary_ctx_refs, c0.primary_ctx_refs + 1);
	CHECK_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
	return 0;
}

static int case_plain_alloc(void)
{
	struct simcuda_counters c0, c1;
	CUmemGenericAllocationHandle h;
	unsigned long long types = 99;
	CUdeviceptr p, base;
	unsigned type = 0;
	int ordinal = -1;
	size_t size;
	char buf[8];

	simcuda_get_counters(&c0);
	CHECK_EQ(cuMemAlloc(&p, 1000), CUDA_SUCCESS);
	CHECK_EQ(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p + 10), CUDA_SUCCESS);
	CHECK_EQ(type, CU_MEMORYTYPE_DEVICE);
	CHECK_EQ(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p), CUDA_SUCCESS);
	CHECK_EQ(ordinal, 0);
	CHECK_EQ(cuPointerGetAttribute(&types, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, p), CUDA_SUCCESS);
	CHECK_EQ(types, 0);
	CHECK_EQ(cuMemGetAddressRange(&base, &size, p + 999), CUDA_SUCCESS);
	CHECK_EQ(base, p);
	CHECK_EQ(size, 1000);
	/* Not a VMM allocation: no handle to retain. */
	CHECK_EQ(cuMemRetainAllocationHandle(&h, (void *)(uintptr_t)p), CUDA_ERROR_INVALID_VALUE);
	/* The device pointer is the host address of the data. */
	CHECK_EQ(cuMemcpyHtoD(p + 3, "abcdefg", 8), CUDA_SUCCESS);
	CHECK(!memcmp((const char *)(uintptr_t)p + 3, "abcdefg", 8));
	CHECK_EQ(cuMemsetD8(p, 'x', 3), CUDA_SUCCESS);
	CHECK_EQ(cuMemcpyDtoH(buf, p, 4), CUDA_SUCCESS);
	CHECK(!memcmp(buf, "xxxa", 4));
	CHECK_EQ(cuMemcpyDtoH(buf, p + 996, 8), CUDA_ERROR_INVALID_VALUE);
	CHECK_EQ(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)buf),
		 CUDA_ERROR_INVALID_VALUE);
	CHECK_EQ(cuMemFree(p + 1), CUDA_ERROR_INVALID_VALUE);
	CHECK_EQ(cuMemFree(p), CUDA_SUCCESS);
	CHECK_EQ(cuMemFree(p), CUDA_ERROR_INVALID_VALUE);
	simcuda_get_counters(&c1);
	CHECK_EQ(c1.allocations, c0.allocations);
	CHECK_EQ(c1.mappings, c0.mappings);
	return 0;
}

/* A thread with no current context may free (CUDA allows it), but not allocate or copy. */
static void *free_elsewhere(void *arg)
{
	CUdeviceptr *p = arg;
	CUdeviceptr q;
	char c = 0;

	if (cuMemAlloc(&q, 100) != CUDA_ERROR_INVALID_CONTEXT ||
	    cuMemcpyHtoD(*p, &c, 1) != CUDA_ERROR_INVALID_CONTEXT)
		return (void *)"alloc or copy without a context";
	if (cuMemFree(*p) != CUDA_SUCCESS)
		return (void *)"cuMemFree without a context failed";
	if (cuMemFree(*p) != CUDA_ERROR_INVALID_VALUE)
		return (void *)"a second cuMemFree succeeded";
	return NULL;
}

static int case_free_without_context(void)
{
	struct simcuda_counters c0, c1;
	const char *why = "";
	CUdeviceptr p;
	pthread_t t;

	simcuda_get_counters(&c0);
	CHECK_EQ(cuMemAlloc(&p, 4096), CUDA_SUCCESS);
	CHECK_EQ(pthread_create(&t, NULL, free_elsewhere, &p), 0);
	CHECK_EQ(pthread_join(t, (void **)&why), 0);
	if (why) {
		printf("FAIL: %s\n", why);
		return 1;
	}
	simcuda_get_counters(&c1);
	CHECK_EQ(c1.allocations, c0.allocations);
	return 0;
}

static int case_pointer_attributes(void)
{
	CUpointer_attribute attrs[3] = { CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
					 CU_POINTER_ATTRIBUTE_IS_MANAGED,
					 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL };
	unsigned type = 7, managed = 7;
	int ordinal = 7;
	void *data[3] = { &type, &managed, &ordinal };
	CUdeviceptr m;
	void *host;
	char local;

	CHECK_EQ(cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
	CHECK_EQ(cuPointerGetAttributes(3, attrs, data, m), CUDA_SUCCESS);
	CHECK_EQ(type, CU_MEMORYTYPE_DEVICE);
	CHECK_EQ(managed, 1);
	CHECK_EQ(ordinal, 0);
	/* Unknown pointers: success, zeros. */
	CHECK_EQ(cuPointerGetAttributes(3, attrs, data, (CUdeviceptr)&local), CUDA_SUCCESS);
	CHECK_EQ(type, 0);
	CHECK_EQ(managed, 0);
	CHECK_EQ(cuMemAllocHost(&host, 100), CUDA_SUCCESS);
	CHECK_EQ(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				       (CUdeviceptr)host), CUDA_SUCCESS);
	CHECK_EQ(type, CU_MEMORYTYPE_HOST);
	CHECK_EQ(cuMemFreeHost(host), CUDA_SUCCESS);
	CHECK_EQ(cuMemFree(m), CUDA_SUCCESS);
	return 0;
}

static int case_vmm(void)
{
	struct simcuda_counters c0, c1;
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
	};
	CUmemAccessDesc access = { .location = prop.location,
				   .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	CUmemGenericAllocationHandle h, h2;
	CUmemAllocationProp got;
	CUdeviceptr va, base;
	size_t gran = 0, size;
	unsigned long long types = 0;
	struct stat st;
	int fd = -1;

	simcuda_get_counters(&c0);
	CHECK_EQ(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_SUCCESS);
	CHECK_EQ(gran, 2 * MiB);
	CHECK_EQ(cuMemCreate(&h, MiB, &prop, 0), CUDA_ERROR_INVALID_VALUE);
	CHECK_EQ(cuMemCreate(&h, 2 * gran, &prop, 0), CUDA_SUCCESS);
	CHECK_EQ(cuMemAddressReserve(&va, 4 * gran, 0, 0, 0), CUDA_SUCCESS);
	CHECK_EQ(va % gran, 0);
	CHECK_EQ(cuMemMap(va + gran, 2 * gran, 0, h, 0), CUDA_SUCCESS);
	CHECK_EQ(cuMemMap(va + 2 * gran, 2 * gran, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
	/* Mapped but not yet accessible: copies fail until cuMemSetAccess. */
	CHECK_EQ(cuMemsetD8(va + gran, 1, 16), CUDA_ERROR_INVALID_VALUE);
	CHECK_EQ(cuMemSetAccess(va + gran, 2 * gran, &access, 1), CUDA_SUCCESS);
	CHECK_EQ(cuMemsetD32(va + gran, 0x01020304, 4), CUDA_SUCCESS);
	CHECK_EQ(*(volatile uint32_t *)(uintptr_t)(va + gran + 12), 0x01020304);
	CHECK_EQ(cuMemGetAddressRange(&base, &size, va + gran + 12345), CUDA_SUCCESS);
	CHECK_EQ(base, va + gran);
	CHECK_EQ(size, 2 * gran);
	CHECK_EQ(cuMemGetAddressRange(&base, &size, va + 12), CUDA_ERROR_NOT_FOUND);
	CHECK_EQ(cuPointerGetAttribute(&types, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, va + gran), CUDA_SUCCESS);
	CHECK_EQ(types, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	CHECK_EQ(cuMemRetainAllocationHandle(&h2, (void *)(uintptr_t)(va + gran + 100)), CUDA_SUCCESS);
	CHECK_EQ(h2, h);
	CHECK_EQ(cuMemGetAllocationPropertiesFromHandle(&got, h2), CUDA_SUCCESS);
	CHECK_EQ(got.requestedHandleTypes, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	CHECK_EQ(cuMemExportToShareableHandle(&fd, h2, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), CUDA_SUCCESS);
	CHECK(fd >= 0 && fstat(fd, &st) == 0 && (size_t)st.st_size >= 2 * gran);
	close(fd);
	/* Freed by the application, kept by the retained handle. */
	CHECK_EQ(cuMemUnmap(va + gran, 2 * gran), CUDA_SUCCESS);
	CHECK_EQ(cuMemUnmap(va + gran, 2 * gran), CUDA_ERROR_INVALID_VALUE);
	CHECK_EQ(cuMemRelease(h), CUDA_SUCCESS);
	CHECK_EQ(cuMemAddressFree(va, 4 * gran), CUDA_SUCCESS);
	simcuda_get_counters(&c1);
	CHECK_EQ(c1.allocations, c0.allocations + 1);
	CHECK_EQ(c1.handle_refs, c0.handle_refs + 1);
	CHECK_EQ(cuMemRelease(h2), CUDA_SUCCESS);
	CHECK_EQ(cuMemRelease(h2), CUDA_ERROR_INVALID_VALUE);
	simcuda_get_counters(&c1);
	CHECK_EQ(c1.allocations, c0.allocations);
	CHECK_EQ(c1.handle_refs, c0.handle_refs);
	CHECK_EQ(c1.mappings, c0.mappings);
	CHECK_EQ(c1.reservations, c0.reservations);
	return 0;
}

static int case_vmm_no_fd(void)
{
	struct test_vmm m;
	CUmemGenericAllocationHandle h;
	int fd = -1;

	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_NONE), CUDA_SUCCESS);
	CHECK_EQ(cuMemRetainAllocationHandle(&h, (void *)(uintptr_t)m.ptr), CUDA_SUCCESS);
	CHECK_EQ(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
		 CUDA_ERROR_INVALID_VALUE);
	CHECK_EQ(cuMemRelease(h), CUDA_SUCCESS);
	test_vmm_free(&m);
	return 0;
}

static const struct test_case cases[] = {
	{ "versions", case_versions },
	{ "devices", case_devices },
	{ "contexts", case_contexts },
	{ "plain_alloc", case_plain_alloc },
	{ "free_without_context", case_free_without_context },
	{ "pointer_attributes", case_pointer_attributes },
	{ "vmm", case_vmm },
	{ "vmm_no_fd", case_vmm_no_fd },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	/* Without lavapipe the simulator still works, on plain memfds. */
	if (!test_lavapipe_missing())
		test_use_lavapipe();
	if (test_cuda_init()) {
		printf("simulated CUDA driver failed to start\n");
		return 1;
	}
	return test_run(cases, argc, argv);
}

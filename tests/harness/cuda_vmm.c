/* SPDX-License-Identifier: MIT */
/* CUDA set-up for test programs linked with libcuda (see cuda_vmm.h). */
#include <string.h>

#include "cuda_vmm.h"
#include "harness.h"

int test_cuda_init(void)
{
	CUcontext ctx;
	CUdevice dev;

	CHECK_EQ(cuInit(0), CUDA_SUCCESS);
	CHECK_EQ(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
	CHECK_EQ(cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
	CHECK_EQ(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
	return TEST_PASS;
}

CUresult test_vmm_alloc(struct test_vmm *m, size_t size, int device,
			CUmemAllocationHandleType types)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.requestedHandleTypes = types,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = device },
	};
	CUmemAccessDesc access = {
		.location = prop.location,
		.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
	};
	CUresult res;

	prop.allocFlags.gpuDirectRDMACapable = 1;
	memset(m, 0, sizeof(*m));
	res = cuMemCreate(&m->handle, size, &prop, 0);
	if (res)
		return res;
	res = cuMemAddressReserve(&m->ptr, size, 0, 0, 0);
	if (res)
		goto err_release;
	res = cuMemMap(m->ptr, size, 0, m->handle, 0);
	if (res)
		goto err_free;
	res = cuMemSetAccess(m->ptr, size, &access, 1);
	if (res)
		goto err_unmap;
	m->size = size;
	return CUDA_SUCCESS;

err_unmap:
	cuMemUnmap(m->ptr, size);
err_free:
	cuMemAddressFree(m->ptr, size);
err_release:
	cuMemRelease(m->handle);
	memset(m, 0, sizeof(*m));
	return res;
}

void test_vmm_free(struct test_vmm *m)
{
	if (!m->size)
		return;
	cuMemUnmap(m->ptr, m->size);
	cuMemAddressFree(m->ptr, m->size);
	cuMemRelease(m->handle);
	memset(m, 0, sizeof(*m));
}

/* SPDX-License-Identifier: MIT */
/* The helpers of simtest.h that call CUDA: only programs linked with libcuda use them. */
#include <string.h>

#include "simtest.h"

int simtest_cuda_init(void)
{
	CUcontext ctx;
	CUdevice dev;

	CHECK_CU(cuInit(0));
	CHECK_CU(cuDeviceGet(&dev, 0));
	CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK_CU(cuCtxSetCurrent(ctx));
	return 0;
}

CUresult simtest_vmm_alloc(struct simtest_vmm *m, size_t size, int device,
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

void simtest_vmm_free(struct simtest_vmm *m)
{
	if (!m->size)
		return;
	cuMemUnmap(m->ptr, m->size);
	cuMemAddressFree(m->ptr, m->size);
	cuMemRelease(m->handle);
	memset(m, 0, sizeof(*m));
}

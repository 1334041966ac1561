/* SPDX-License-Identifier: MIT */
/* GPU memory for the tools: cuMemAlloc, or a cuMemCreate VMM allocation the vulkan backend pins. */
#include <string.h>

#include "common.h"

const char *tool_alloc_name(enum tool_alloc_kind kind)
{
	return kind == TOOL_ALLOC_CUMEMCREATE ? "cuMemCreate" :
	       kind == TOOL_ALLOC_CUMEMALLOC ? "cuMemAlloc" : "auto";
}

enum tool_alloc_kind tool_alloc_resolve(enum tool_alloc_kind kind, gdr_t g)
{
	if (kind != TOOL_ALLOC_AUTO)
		return kind;
	return tool_backend(g) == GDR_BACKEND_VULKAN ? TOOL_ALLOC_CUMEMCREATE :
						       TOOL_ALLOC_CUMEMALLOC;
}

static CUresult vmm_alloc(struct gpu_buf *b, size_t size, CUdevice dev, const char **what)
{
	CUmemAllocationProp prop;
	CUmemAccessDesc access;
	size_t gran = 0;
	int rdma_vmm = 0;
	CUresult r;

	*what = "cuDeviceGetAttribute(GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED)";
	r = cuDeviceGetAttribute(&rdma_vmm,
				 CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, dev);
	if (r != CUDA_SUCCESS)
		return r;
	if (!rdma_vmm) {
		*what = "GPUDirect RDMA with CUDA VMM (the device says it is not supported)";
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	prop.allocFlags.gpuDirectRDMACapable = 1;
	*what = "cuMemGetAllocationGranularity";
	r = cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
	if (r != CUDA_SUCCESS)
		return r;
	gran = TOOL_ROUND_UP(gran ? gran : GPU_PAGE_SIZE, GPU_PAGE_SIZE);
	b->alloc_size = TOOL_ROUND_UP(size, gran);
	*what = "cuMemCreate";
	r = cuMemCreate(&b->handle, b->alloc_size, &prop, 0);
	if (r != CUDA_SUCCESS)
		return r;
	*what = "cuMemAddressReserve";
	r = cuMemAddressReserve(&b->base, b->alloc_size, gran, 0, 0);
	if (r != CUDA_SUCCESS)
		goto err_release;
	*what = "cuMemMap";
	r = cuMemMap(b->base, b->alloc_size, 0, b->handle, 0);
	if (r != CUDA_SUCCESS)
		goto err_free_va;
	memset(&access, 0, sizeof(access));
	access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	access.location.id = dev;
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	*what = "cuMemSetAccess";
	r = cuMemSetAccess(b->base, b->alloc_size, &access, 1);
	if (r != CUDA_SUCCESS)
		goto err_unmap;
	b->ptr = b->base;
	b->size = b->alloc_size;
	return CUDA_SUCCESS;

err_unmap:
	cuMemUnmap(b->base, b->alloc_size);
err_free_va:
	cuMemAddressFree(b->base, b->alloc_size);
err_release:
	cuMemRelease(b->handle);
	return r;
}

CUresult gpu_alloc(struct gpu_buf *b, size_t size, enum tool_alloc_kind kind, int aligned,
		   int sync_memops, CUdevice dev, const char **what)
{
	unsigned int one = 1;
	CUresult r;

	memset(b, 0, sizeof(*b));
	b->kind = kind;
	if (kind == TOOL_ALLOC_CUMEMCREATE)
		return vmm_alloc(b, size, dev, what);
	b->alloc_size = aligned ? size + GPU_PAGE_SIZE : size;
	*what = "cuMemAlloc";
	r = cuMemAlloc(&b->base, b->alloc_size);
	if (r != CUDA_SUCCESS)
		return r;
	b->ptr = aligned ? TOOL_ROUND_UP(b->base, GPU_PAGE_SIZE) : b->base;
	b->size = size;
	if (sync_memops) {
		*what = "cuPointerSetAttribute(SYNC_MEMOPS)";
		r = cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, b->ptr);
		if (r != CUDA_SUCCESS) {
			cuMemFree(b->base);
			return r;
		}
	}
	return CUDA_SUCCESS;
}

CUresult gpu_free(struct gpu_buf *b)
{
	CUresult r, r2;

	if (!b->base)
		return CUDA_SUCCESS;
	if (b->kind != TOOL_ALLOC_CUMEMCREATE) {
		r = cuMemFree(b->base);
	} else {
		r = cuMemUnmap(b->base, b->alloc_size);
		r2 = cuMemAddressFree(b->base, b->alloc_size);
		r = r ? r : r2;
		r2 = cuMemRelease(b->handle);
		r = r ? r : r2;
	}
	b->base = 0;
	b->ptr = 0;
	return r;
}

void gpu_alloc_or_die(struct gpu_buf *b, size_t size, enum tool_alloc_kind kind, CUdevice dev)
{
	const char *what = "allocation";
	CUresult r = gpu_alloc(b, size, kind, 1, 1, dev, &what);

	if (r != CUDA_SUCCESS)
		tool_die("%s of %zu bytes failed: %s", what, size, tool_cu_name(r));
}

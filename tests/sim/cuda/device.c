/* SPDX-License-Identifier: MIT */
/* Simulated devices: enumeration, names, UUIDs, attributes, and primary contexts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A primary context; the only kind of context the simulator has. */
struct CUctx_st {
	int device;
	unsigned refs;		/* cuDevicePrimaryCtxRetain - cuDevicePrimaryCtxRelease */
};

static struct CUctx_st primary[SIM_MAX_DEVICES];
static __thread CUcontext current;

/*
 * An H200-like device. GDRCOPY_SIM_CUDA_ATTR overrides or adds values, so a test (or the dma-buf
 * backend's tests, for DMA_BUF_SUPPORTED) can try other devices.
 */
static const struct {
	CUdevice_attribute attr;
	int value;
} device_attrs[] = {
	{ CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024 },
	{ CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32 },
	{ CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 1980000 },
	{ CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 132 },
	{ CU_DEVICE_ATTRIBUTE_INTEGRATED, 0 },
	{ CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 1 },
	{ CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, CU_COMPUTEMODE_DEFAULT },
	{ CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, 0 },
	{ CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, 0 },
	{ CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1 },
	{ CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9 },
	{ CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0 },
	{ CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 1 },
	{ CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 1 },
	{ CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, 0 },
	{ CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, 1 },
	{ CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 0 },
};

/* The value GDRCOPY_SIM_CUDA_ATTR ("attr=value,...") gives attr, if any. */
static bool attr_override(CUdevice_attribute attr, int *value)
{
	const char *s = sim_config()->attr_overrides;

	while (*s) {
		char *end;
		long a = strtol(s, &end, 0);

		if (end != s && *end == '=') {
			long v = strtol(end + 1, &end, 0);

			if (a == (long)attr) {
				*value = (int)v;
				return true;
			}
		}
		s = strchr(s, ',');
		if (!s)
			break;
		s++;
	}
	return false;
}

void sim_devices_init(void)
{
	const struct sim_config *cfg = sim_config();
	unsigned char vk_uuid[16];
	bool have_vulkan = sim_vulkan_init(vk_uuid);

	sim.vulkan_ok = have_vulkan && cfg->use_vulkan;
	for (int d = 0; d < SIM_MAX_DEVICES; d++) {
		primary[d].device = d;
		/* Devices past the first have UUIDs no Vulkan device has. */
		snprintf((char *)sim.uuid[d], sizeof(sim.uuid[d]), "simcuda-dev-%d", d);
	}
	if (cfg->uuid_forced)
		memcpy(sim.uuid[0], cfg->uuid, 16);
	else if (have_vulkan)
		memcpy(sim.uuid[0], vk_uuid, 16);
}

bool sim_device_valid(int device)
{
	return device >= 0 && device < sim_config()->device_count;
}

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
	CUresult res = sim_check_init();

	if (res)
		return res;
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = sim_config()->device_count;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
	CUresult res = sim_check_init();

	if (res)
		return res;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_device_valid(ordinal))
		return CUDA_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
	CUresult res = sim_check_init();

	if (res)
		return res;
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "NVIDIA H200 (simulated %d)", dev);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	CUresult res = sim_check_init();

	if (res)
		return res;
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	memcpy(uuid->bytes, sim.uuid[dev], sizeof(uuid->bytes));
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
	CUresult res = sim_check_init();

	if (res)
		return res;
	if (!pciBusId || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(pciBusId, (size_t)len, "0000:%02x:00.0", 6 + dev);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev)
{
	CUresult res = sim_check_init();

	if (res)
		return res;
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	*bytes = SIM_DEVICE_MEMORY;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	CUresult res = sim_check_init();

	if (res)
		return res;
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	if (attr_override(attrib, pi))
		return CUDA_SUCCESS;
	if (attrib == CU_DEVICE_ATTRIBUTE_PCI_BUS_ID) {
		*pi = 6 + dev;
		return CUDA_SUCCESS;
	}
	for (size_t i = 0; i < sizeof(device_attrs) / sizeof(device_attrs[0]); i++) {
		if (device_attrs[i].attr == attrib) {
			*pi = device_attrs[i].value;
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CUresult res = sim_check_init();

	if (res)
		return res;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&sim_lock);
	/*
	 * NVIDIA's driver makes the context here (about 0.1-0.2 s on the H200) and destroys it at
	 * the last release: what the library's references keep from happening on every call.
	 */
	if (!primary[dev].refs++)
		sim.counters.primary_ctx_creations++;
	sim.counters.primary_ctx_refs++;
	pthread_mutex_unlock(&sim_lock);
	*pctx = &primary[dev];
	return CUDA_SUCCESS;
}

/* Both versions of cuDevicePrimaryCtxRelease have this signature. */
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
	CUresult res = sim_check_init();

	if (res)
		return res;
	if (!sim_device_valid(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&sim_lock);
	if (primary[dev].refs == 0) {
		res = CUDA_ERROR_INVALID_CONTEXT;
	} else {
		primary[dev].refs--;
		sim.counters.primary_ctx_refs--;
	}
	pthread_mutex_unlock(&sim_lock);
	return res;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
	CUresult res = sim_check_init();

	if (res)
		return res;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = current;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
	CUresult res = sim_check_init();

	if (res)
		return res;
	if (ctx) {
		if (ctx < &primary[0] || ctx >= &primary[SIM_MAX_DEVICES] ||
		    !sim_device_valid(ctx->device))
			return CUDA_ERROR_INVALID_CONTEXT;
		pthread_mutex_lock(&sim_lock);
		if (ctx->refs == 0)
			res = CUDA_ERROR_INVALID_CONTEXT;
		pthread_mutex_unlock(&sim_lock);
		if (res)
			return res;
	}
	current = ctx;
	return CUDA_SUCCESS;
}

CUresult sim_check_ctx(void)
{
	CUresult res = sim_check_init();
	bool live;

	if (res)
		return res;
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&sim_lock);
	live = current->refs > 0;
	pthread_mutex_unlock(&sim_lock);
	return live ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
	CUresult res = sim_check_ctx();

	if (res)
		return res;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	*device = current->device;
	return CUDA_SUCCESS;
}

/* CUDA 13.0's: the device of ctx, or of the current context if ctx is NULL. */
CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
	CUresult res = sim_check_init();

	if (res)
		return res;
	if (!ctx)
		return cuCtxGetDevice(device);
	if (ctx < &primary[0] || ctx >= &primary[SIM_MAX_DEVICES] || !sim_device_valid(ctx->device))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	*device = ctx->device;
	return CUDA_SUCCESS;
}

/* Work is synchronous in the simulator: synchronising only checks the context. */
CUresult CUDAAPI cuCtxSynchronize(void)
{
	return sim_check_ctx();
}

CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx)
{
	CUresult res = sim_check_init();

	if (res)
		return res;
	if (!ctx)
		return sim_check_ctx();
	if (ctx < &primary[0] || ctx >= &primary[SIM_MAX_DEVICES])
		return CUDA_ERROR_INVALID_CONTEXT;
	return CUDA_SUCCESS;
}

/* The device whose primary context is current, or -1. */
int sim_current_device(void)
{
	return current ? current->device : -1;
}

CUcontext sim_primary_ctx(int device)
{
	return &primary[device];
}

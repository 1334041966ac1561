/* SPDX-License-Identifier: MIT */
/*
 * cuGetProcAddress: every entry point the simulator implements, by base name and the CUDA
 * version that introduced the ABI of that implementation. A lookup gets the newest entry not
 * newer than the version asked for, as with the real driver. GDRCOPY_SIM_CUDA_HIDE=name,...
 * makes names unknown, to simulate an old driver.
 *
 * To add an entry point: implement it (with cuda.h included, its definition gets the versioned
 * symbol name cuda.h maps it to), then add it to SIM_ENTRY_POINTS.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

CUresult CUDAAPI cuGetProcAddress_v1(const char *symbol, void **pfn, int cudaVersion,
				     cuuint64_t flags) __asm__("cuGetProcAddress");

#define SIM_ENTRY_POINTS(X) \
	X(cuGetErrorName, 6000) \
	X(cuGetErrorString, 6000) \
	X(cuInit, 2000) \
	X(cuDriverGetVersion, 2020) \
	X(cuGetProcAddress, 12000) \
	X(cuDeviceGet, 2000) \
	X(cuDeviceGetCount, 2000) \
	X(cuDeviceGetName, 2000) \
	X(cuDeviceGetUuid, 9020) \
	X(cuDeviceGetUuid, 11040) \
	X(cuDeviceGetAttribute, 2000) \
	X(cuDeviceGetPCIBusId, 4010) \
	X(cuDeviceTotalMem, 3020) \
	X(cuDevicePrimaryCtxRetain, 7000) \
	X(cuDevicePrimaryCtxRelease, 7000) \
	X(cuDevicePrimaryCtxRelease, 11000) \
	X(cuCtxGetCurrent, 4000) \
	X(cuCtxSetCurrent, 4000) \
	X(cuCtxGetDevice, 2000) \
	X(cuCtxSynchronize, 2000) \
	X(cuPointerGetAttribute, 4000) \
	X(cuPointerGetAttributes, 7000) \
	X(cuPointerSetAttribute, 6000) \
	X(cuMemAlloc, 3020) \
	X(cuMemFree, 3020) \
	X(cuMemAllocHost, 3020) \
	X(cuMemFreeHost, 2000) \
	X(cuMemAllocManaged, 6000) \
	X(cuMemGetAddressRange, 3020) \
	X(cuMemGetAllocationGranularity, 10020) \
	X(cuMemCreate, 10020) \
	X(cuMemRelease, 10020) \
	X(cuMemAddressReserve, 10020) \
	X(cuMemAddressFree, 10020) \
	X(cuMemMap, 10020) \
	X(cuMemUnmap, 10020) \
	X(cuMemSetAccess, 10020) \
	X(cuMemRetainAllocationHandle, 11000) \
	X(cuMemExportToShareableHandle, 10020) \
	X(cuMemGetAllocationPropertiesFromHandle, 10020) \
	X(cuMemGetHandleForAddressRange, 11070) \
	X(cuMemcpyHtoD, 3020) \
	X(cuMemcpyDtoH, 3020) \
	X(cuMemcpyDtoD, 3020) \
	X(cuMemsetD8, 3020) \
	X(cuMemsetD32, 3020)

static const struct {
	const char *name;
	int version;
	void *pfn;
} entries[] = {
#define SIM_ENTRY(name, version) { #name, version, (void *)name },
	SIM_ENTRY_POINTS(SIM_ENTRY)
#undef SIM_ENTRY
	/* cuCtxSynchronize and cuCtxGetDevice took a context argument in CUDA 13.0. */
	{ "cuCtxSynchronize", 13000, (void *)cuCtxSynchronize_v2 },
	{ "cuCtxGetDevice", 13000, (void *)cuCtxGetDevice_v2 },
};

static bool hidden(const char *symbol)
{
	char key[128];

	snprintf(key, sizeof(key), ",%s,", symbol);
	return strstr(sim_config()->hidden, key) != NULL;
}

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
				  cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
	CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	int best = -1;

	if (!symbol || !pfn || flags > (CU_GET_PROC_ADDRESS_LEGACY_STREAM |
					CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
		return CUDA_ERROR_INVALID_VALUE;
	/* As documented: asking for a version newer than the driver is an error. */
	if (cudaVersion > sim_config()->driver_version)
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	if (!hidden(symbol)) {
		for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
			if (strcmp(entries[i].name, symbol))
				continue;
			if (entries[i].version > cudaVersion) {
				if (best < 0)
					status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
				continue;
			}
			if (best < 0 || entries[i].version > entries[best].version)
				best = (int)i;
		}
	}
	if (best >= 0) {
		*pfn = entries[best].pfn;
		status = CU_GET_PROC_ADDRESS_SUCCESS;
	}
	if (symbolStatus)
		*symbolStatus = status;
	/* Not found is still CUDA_SUCCESS, with *pfn NULL. */
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetProcAddress_v1(const char *symbol, void **pfn, int cudaVersion,
				     cuuint64_t flags)
{
	return cuGetProcAddress(symbol, pfn, cudaVersion, flags, NULL);
}

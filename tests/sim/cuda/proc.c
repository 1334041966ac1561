/* SPDX-License-Identifier: MIT */
/*
 * cuGetProcAddress: every entry point the library and the tests look up (one list with theirs:
 * src/cuda_entry_points.h, tests/harness/testcuda_entry_points.h), and the ones a driver has that
 * they do not ask for, by base name and the CUDA version that introduced the ABI of that
 * implementation. A lookup gets the newest entry not newer than the version asked for, as with
 * the real driver. GDRCOPY_SIM_CUDA_HIDE=name,... makes names unknown, to simulate an old driver.
 *
 * To add an entry point: implement it (with cuda.h included, its definition gets the versioned
 * symbol name cuda.h maps it to), then add it to the list of whoever calls it, or to
 * SIM_OWN_ENTRY_POINTS.
 */
#include <stdio.h>
#include <string.h>

#include "cuda_entry_points.h"
#include "internal.h"
#include "testcuda_entry_points.h"

CUresult CUDAAPI cuGetProcAddress_v1(const char *symbol, void **pfn, int cudaVersion,
				     cuuint64_t flags) __asm__("cuGetProcAddress");

/* What the library and the tests do not look up: older ABIs, and the lookup calls themselves. */
#define SIM_OWN_ENTRY_POINTS(X) \
	X(cuDriverGetVersion, 2020) \
	X(cuGetProcAddress, 12000) \
	X(cuDeviceGetUuid, 9020) \
	X(cuDevicePrimaryCtxRelease, 7000) \
	X(cuCtxGetDevice, 2000)

static const struct {
	const char *name;
	int version;
	void *pfn;
} entries[] = {
#define SIM_ENTRY(name, version) { #name, version, (void *)name },
	GDR_CUDA_ENTRY_POINTS(SIM_ENTRY)
	TESTCUDA_ENTRY_POINTS(SIM_ENTRY)
	SIM_OWN_ENTRY_POINTS(SIM_ENTRY)
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

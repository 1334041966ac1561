/* SPDX-License-Identifier: MIT */
/*
 * The CUDA driver entry points libgdrapi calls, in one list for the library (src/cuda.c looks
 * each up) and for the simulated driver (tests/sim/cuda/proc.c serves each). It includes
 * nothing, so that the simulator, which sees NVIDIA's headers and none of the library's, can
 * include it alone. What only tests call is not here: tests look it up themselves
 * (tests/unit/cuda_test.h), so a driver without it still serves the library.
 *
 * X(name, version): the table's field is named as cuda.h spells the call (cuda.h maps
 * cuMemRelease to itself and cuDeviceGetUuid to cuDeviceGetUuid_v2, for the field as for a
 * direct call), typed PFN_<name>_v<version> from cudaTypedefs.h, and looked up as "<name>" at
 * <version>, the CUDA version whose ABI that typedef describes, so a newer driver hands back
 * the function with exactly that signature.
 */
#ifndef GDR_CUDA_ENTRY_POINTS_H
#define GDR_CUDA_ENTRY_POINTS_H

#define GDR_CUDA_ENTRY_POINTS(X) \
	X(cuGetErrorName, 6000) \
	X(cuGetErrorString, 6000) \
	X(cuInit, 2000) \
	X(cuDeviceGet, 2000) \
	X(cuDeviceGetCount, 2000) \
	X(cuDeviceGetUuid, 11040) \
	X(cuDeviceGetAttribute, 2000) \
	X(cuDevicePrimaryCtxRetain, 7000) \
	X(cuDevicePrimaryCtxRelease, 11000) \
	X(cuCtxGetCurrent, 4000) \
	X(cuCtxSetCurrent, 4000) \
	X(cuPointerGetAttribute, 4000) \
	X(cuMemGetAddressRange, 3020) \
	X(cuMemRelease, 10020) \
	X(cuMemRetainAllocationHandle, 11000) \
	X(cuMemExportToShareableHandle, 10020) \
	X(cuMemGetAllocationPropertiesFromHandle, 10020) \
	X(cuMemGetHandleForAddressRange, 11070)

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The CUDA driver entry points that only tests call, besides the library's own
 * (src/cuda_entry_points.h): testcuda.c looks them up for the test programs, and the simulated
 * driver (tests/sim/cuda/proc.c) serves each. X(name, version) as there. No includes, for the
 * simulator.
 */
#ifndef GDR_TESTCUDA_ENTRY_POINTS_H
#define GDR_TESTCUDA_ENTRY_POINTS_H

#define TESTCUDA_ENTRY_POINTS(X) \
	X(cuDeviceGetName, 2000) \
	X(cuDeviceGetPCIBusId, 4010) \
	X(cuDeviceTotalMem, 3020) \
	X(cuCtxSynchronize, 2000) \
	X(cuMemAlloc, 3020) \
	X(cuMemFree, 3020) \
	X(cuMemAllocHost, 3020) \
	X(cuMemAllocManaged, 6000) \
	X(cuMemFreeHost, 2000) \
	X(cuMemGetAllocationGranularity, 10020) \
	X(cuMemCreate, 10020) \
	X(cuMemAddressReserve, 10020) \
	X(cuMemAddressFree, 10020) \
	X(cuMemMap, 10020) \
	X(cuMemUnmap, 10020) \
	X(cuMemSetAccess, 10020) \
	X(cuMemcpyHtoD, 3020) \
	X(cuMemcpyDtoH, 3020) \
	X(cuMemsetD8, 3020)

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The CUDA driver API, loaded at run time: libgdrapi never links libcuda, so it loads (and
 * gdr_open works or explains itself) on machines without the NVIDIA driver. One table per
 * process, shared by every gdr_t and backend, reference counted; also linked into test and
 * tool programs (cuda.o needs only log.o and why.o).
 *
 * Every entry point is looked up with cuGetProcAddress_v2 at the CUDA version whose ABI its
 * typedef in cudaTypedefs.h describes (PFN_cuMemAlloc_v3020: version 3020), so a newer driver
 * hands back the function with exactly that signature. To add one, add a line to
 * GDR_CUDA_ENTRY_POINTS; the simulated driver (tests/sim/cuda) must then implement it too.
 *
 * (Not named cuda.h: src/ is on the include path before the toolkit, so a cuda.h here would
 * hide NVIDIA's from every file, cudaTypedefs.h included.)
 */
#ifndef GDR_CUDA_DRIVER_H
#define GDR_CUDA_DRIVER_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "backend.h"

/* The oldest driver with cuGetProcAddress_v2. */
#define GDR_CUDA_MIN_DRIVER_VERSION 12000

/*
 * X(name, version): the field is named as cuda.h spells the call (cuda.h maps cuMemAlloc to
 * cuMemAlloc_v2 for the field as for a direct call), typed PFN_<name>_v<version>, and looked up
 * as "<name>" at <version>.
 */
#define GDR_CUDA_ENTRY_POINTS(X) \
	X(cuGetErrorName, 6000) \
	X(cuGetErrorString, 6000) \
	X(cuInit, 2000) \
	X(cuDeviceGet, 2000) \
	X(cuDeviceGetCount, 2000) \
	X(cuDeviceGetName, 2000) \
	X(cuDeviceGetUuid, 11040) \
	X(cuDeviceGetAttribute, 2000) \
	X(cuDeviceGetPCIBusId, 4010) \
	X(cuDeviceTotalMem, 3020) \
	X(cuDevicePrimaryCtxRetain, 7000) \
	X(cuDevicePrimaryCtxRelease, 11000) \
	X(cuCtxGetCurrent, 4000) \
	X(cuCtxSetCurrent, 4000) \
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

struct gdr_cuda {
	int driver_version;		/* cuDriverGetVersion: 1000 * major + 10 * minor */
	PFN_cuGetProcAddress_v12000 cuGetProcAddress;
#define GDR_CUDA_FIELD(name, version) PFN_##name##_v##version name;
	GDR_CUDA_ENTRY_POINTS(GDR_CUDA_FIELD)
#undef GDR_CUDA_FIELD
};

/*
 * Take a reference on the table; the first caller dlopens libcuda.so.1 (then libcuda.so),
 * resolves every entry point and calls cuInit(0). NULL with why filled when that fails; a later
 * call tries again. Thread-safe.
 */
const struct gdr_cuda *gdr_cuda_acquire(struct gdr_why *why);

/* Drop a reference taken by gdr_cuda_acquire; the last one dlcloses libcuda. */
void gdr_cuda_release(void);

/* Look up an entry point the table lacks (kernels, for tests); 0 or ENOSYS with *pfn NULL. */
int gdr_cuda_proc(const struct gdr_cuda *cuda, const char *name, int version, void **pfn);

/* "CUDA_ERROR_INVALID_VALUE (invalid argument)" in buf, for log lines; returns buf. */
const char *gdr_cuda_strerror(const struct gdr_cuda *cuda, CUresult res, char *buf, size_t len);

/*
 * A CUDA context for the length of one library call. Driver calls need one; a thread of the
 * application may have none current (a fresh thread, a program that only used VMM calls). Then
 * enter retains device's primary context and makes it current, and leave undoes both, so the
 * thread ends as it began. With a context current, both do nothing.
 */
struct gdr_cuda_ctx_scope {
	CUdevice device;
	bool retained;
};

CUresult gdr_cuda_ctx_enter(const struct gdr_cuda *cuda, int ordinal,
			    struct gdr_cuda_ctx_scope *scope);
void gdr_cuda_ctx_leave(const struct gdr_cuda *cuda, struct gdr_cuda_ctx_scope *scope);

#endif

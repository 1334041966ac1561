/* SPDX-License-Identifier: MIT */
/*
 * The CUDA driver calls of the tools, bound to libcuda.so.1 at run time instead of at link time,
 * as libgdrapi binds its own: a tool then starts (and answers -h) on a machine without the NVIDIA
 * driver, and tool_cuda_load says in one line what is missing.
 *
 * Each call the tools make is defined here under the name cuda.h gives it (cuMemAlloc is
 * cuMemAlloc_v2), with cuda.h's own prototype, so the compiler checks every signature; it
 * forwards to the function of that same name in libcuda, which is what linking with -lcuda
 * would have bound. A name the loaded library lacks (the simulated driver implements only what
 * the library and the C tools call) answers CUDA_ERROR_NOT_FOUND when it is called.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "common.h"

/* X(name, parameters, arguments) for every CUDA call of tools/, pplat included. */
#define TOOL_CUDA_CALLS(X) \
	X(cuInit, (unsigned int flags), (flags)) \
	X(cuGetErrorName, (CUresult error, const char **str), (error, str)) \
	X(cuDeviceGet, (CUdevice *dev, int ordinal), (dev, ordinal)) \
	X(cuDeviceGetCount, (int *count), (count)) \
	X(cuDeviceGetName, (char *name, int len, CUdevice dev), (name, len, dev)) \
	X(cuDeviceGetAttribute, (int *value, CUdevice_attribute attr, CUdevice dev), \
	  (value, attr, dev)) \
	X(cuDevicePrimaryCtxRetain, (CUcontext *ctx, CUdevice dev), (ctx, dev)) \
	X(cuDevicePrimaryCtxRelease, (CUdevice dev), (dev)) \
	X(cuCtxSetCurrent, (CUcontext ctx), (ctx)) \
	X(cuCtxSynchronize, (void), ()) \
	X(cuPointerGetAttribute, (void *data, CUpointer_attribute attr, CUdeviceptr ptr), \
	  (data, attr, ptr)) \
	X(cuPointerSetAttribute, (const void *value, CUpointer_attribute attr, CUdeviceptr ptr), \
	  (value, attr, ptr)) \
	X(cuMemAlloc, (CUdeviceptr *ptr, size_t size), (ptr, size)) \
	X(cuMemFree, (CUdeviceptr ptr), (ptr)) \
	X(cuMemHostAlloc, (void **p, size_t size, unsigned int flags), (p, size, flags)) \
	X(cuMemHostGetDevicePointer, (CUdeviceptr *ptr, void *p, unsigned int flags), \
	  (ptr, p, flags)) \
	X(cuMemFreeHost, (void *p), (p)) \
	X(cuMemGetAllocationGranularity, (size_t *granularity, const CUmemAllocationProp *prop, \
	  CUmemAllocationGranularity_flags option), (granularity, prop, option)) \
	X(cuMemCreate, (CUmemGenericAllocationHandle *handle, size_t size, \
	  const CUmemAllocationProp *prop, unsigned long long flags), (handle, size, prop, flags)) \
	X(cuMemRelease, (CUmemGenericAllocationHandle handle), (handle)) \
	X(cuMemAddressReserve, (CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr, \
	  unsigned long long flags), (ptr, size, alignment, addr, flags)) \
	X(cuMemAddressFree, (CUdeviceptr ptr, size_t size), (ptr, size)) \
	X(cuMemMap, (CUdeviceptr ptr, size_t size, size_t offset, \
	  CUmemGenericAllocationHandle handle, unsigned long long flags), \
	  (ptr, size, offset, handle, flags)) \
	X(cuMemUnmap, (CUdeviceptr ptr, size_t size), (ptr, size)) \
	X(cuMemSetAccess, (CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count), \
	  (ptr, size, desc, count)) \
	X(cuMemcpy, (CUdeviceptr dst, CUdeviceptr src, size_t size), (dst, src, size)) \
	X(cuMemcpyHtoD, (CUdeviceptr dst, const void *src, size_t size), (dst, src, size)) \
	X(cuMemcpyDtoH, (void *dst, CUdeviceptr src, size_t size), (dst, src, size)) \
	X(cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t size, CUstream stream), \
	  (dst, src, size, stream)) \
	X(cuMemcpyHtoDAsync, (CUdeviceptr dst, const void *src, size_t size, CUstream stream), \
	  (dst, src, size, stream)) \
	X(cuMemcpyDtoHAsync, (void *dst, CUdeviceptr src, size_t size, CUstream stream), \
	  (dst, src, size, stream)) \
	X(cuMemsetD8, (CUdeviceptr dst, unsigned char value, size_t count), (dst, value, count)) \
	X(cuStreamCreate, (CUstream *stream, unsigned int flags), (stream, flags)) \
	X(cuStreamDestroy, (CUstream stream), (stream)) \
	X(cuStreamSynchronize, (CUstream stream), (stream))

/* The name cuda.h maps a call to, as a string: "cuMemAlloc_v2" for cuMemAlloc. */
#define TOOL_CUDA_SYMBOL(name) TOOL_CUDA_STRING(name)
#define TOOL_CUDA_STRING(name) #name

/* Written once, by tool_cuda_load, before any call is made; read-only after. */
static struct {
#define TOOL_CUDA_POINTER(name, params, args) CUresult (CUDAAPI *name) params;
	TOOL_CUDA_CALLS(TOOL_CUDA_POINTER)
#undef TOOL_CUDA_POINTER
} tool_cu;

/* libcuda.so.1, once tool_cuda_load has opened it. */
static void *lib;

int tool_cuda_load(char *why, size_t len)
{
	const char *err;

	if (lib)
		return 0;
	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		err = dlerror();
		snprintf(why, len, "no CUDA driver: %s (install the NVIDIA driver)",
			 err ? err : "libcuda.so.1 not found");
		return -1;
	}
#define TOOL_CUDA_RESOLVE(name, params, args) \
	*(void **)&tool_cu.name = dlsym(lib, TOOL_CUDA_SYMBOL(name));
	TOOL_CUDA_CALLS(TOOL_CUDA_RESOLVE)
#undef TOOL_CUDA_RESOLVE
	return 0;
}

int tool_cuda_has(const char *name)
{
	return lib && dlsym(lib, name);
}

#define TOOL_CUDA_FORWARD(name, params, args) \
	CUresult CUDAAPI name params \
	{ \
		return tool_cu.name ? tool_cu.name args : CUDA_ERROR_NOT_FOUND; \
	}
TOOL_CUDA_CALLS(TOOL_CUDA_FORWARD)
#undef TOOL_CUDA_FORWARD

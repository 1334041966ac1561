/* SPDX-License-Identifier: MIT */
/*
 * Synchronous copies and memsets. Device pointers are host addresses, so a copy is a memcpy once
 * the simulator has checked that the device side is mapped with the access the copy needs; an
 * address that is not gives CUDA_ERROR_INVALID_VALUE where the CPU would have faulted.
 */
#include <string.h>

#include "internal.h"

static CUresult copy(uintptr_t dst, bool dst_device, uintptr_t src, bool src_device, size_t n)
{
	CUresult res = sim_check_ctx();

	if (res)
		return res;
	if (n == 0)
		return CUDA_SUCCESS;
	if (!dst || !src)
		return CUDA_ERROR_INVALID_VALUE;
	if (sim_nvp2p_mode() && ((dst_device && sim_nvp2p_backs(dst)) ||
				 (src_device && sim_nvp2p_backs(src))))
		return sim_nvp2p_copy(dst, dst_device, src, src_device, n);
	pthread_mutex_lock(&sim_lock);
	if (dst_device)
		res = sim_check_access(dst, n, true);
	if (!res && src_device)
		res = sim_check_access(src, n, false);
	if (!res)
		memmove((void *)dst, (const void *)src, n);
	pthread_mutex_unlock(&sim_lock);
	return res;
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	return copy(dstDevice, true, (uintptr_t)srcHost, false, ByteCount);
}

CUresult CUDAAPI cuMemcpyDtoH(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	return copy((uintptr_t)dstHost, false, srcDevice, true, ByteCount);
}

CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
	return copy(dstDevice, true, srcDevice, true, ByteCount);
}

static CUresult fill(uintptr_t dst, uint32_t value, size_t width, size_t count)
{
	CUresult res = sim_check_ctx();
	size_t bytes;

	if (res)
		return res;
	if (count == 0)
		return CUDA_SUCCESS;
	if (__builtin_mul_overflow(count, width, &bytes) || dst % width)
		return CUDA_ERROR_INVALID_VALUE;
	if (sim_nvp2p_mode() && sim_nvp2p_backs(dst))
		return sim_nvp2p_fill(dst, value, width, bytes);
	pthread_mutex_lock(&sim_lock);
	res = sim_check_access(dst, bytes, true);
	if (!res) {
		if (width == 1) {
			memset((void *)dst, (int)(value & 0xff), bytes);
		} else {
			for (size_t i = 0; i < count; i++)
				memcpy((void *)(dst + i * width), &value, width);
		}
	}
	pthread_mutex_unlock(&sim_lock);
	return res;
}

CUresult CUDAAPI cuMemsetD8(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
	return fill(dstDevice, uc, 1, N);
}

CUresult CUDAAPI cuMemsetD32(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
	return fill(dstDevice, ui, 4, N);
}

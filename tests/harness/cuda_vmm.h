/* SPDX-License-Identifier: MIT */
/*
 * CUDA set-up for test programs linked with libcuda (the simulated driver, tests/sim/cuda):
 * the primary context, and VMM allocations of each handle type.
 */
#ifndef GDR_TEST_CUDA_VMM_H
#define GDR_TEST_CUDA_VMM_H

#include <stddef.h>

#include <cuda.h>

/* cuInit, and the primary context of device 0 current in this thread; a TEST_* status. */
int test_cuda_init(void);

/* A VMM allocation of size bytes (a multiple of 2 MiB) on a device, mapped read-write. */
struct test_vmm {
	CUdeviceptr ptr;
	size_t size;
	CUmemGenericAllocationHandle handle;
};

CUresult test_vmm_alloc(struct test_vmm *m, size_t size, int device,
			CUmemAllocationHandleType types);
/* Unmap, release and free the reservation; safe on a zeroed struct. */
void test_vmm_free(struct test_vmm *m);

#endif

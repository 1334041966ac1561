/* SPDX-License-Identifier: MIT */
/*
 * Shared by the tier-3 programs (test_gpu_vulkan, bench_vulkan): the real CUDA driver through
 * src/cuda.c (dlopen, so the programs start, and skip, where there is none), VMM allocations,
 * and the kernels of kernels.cu, loaded from an embedded fatbin without cudart.
 */
#ifndef GDR_TESTS_GPUCOMMON_H
#define GDR_TESTS_GPUCOMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "testcuda.h"

extern const struct testcuda *cu;

/*
 * Load libcuda, cuInit, make device 0's primary context current, and point Vulkan at NVIDIA's
 * ICD if VK_DRIVER_FILES is unset and one is found. 0, or 77 with the reason printed (no
 * driver, no GPU, no Vulkan loader).
 */
int gpu_init(void);

/*
 * Point Vulkan at NVIDIA's ICD if VK_DRIVER_FILES is unset and one is found; gpu_init does it,
 * and programs that must not load CUDA before forking call it alone.
 */
void gpu_use_nvidia_icd(void);

/*
 * For the tests of tier 3, after gpu_init: 0 where libcuda.so.1 is NVIDIA's driver; 77 with the
 * reason printed where it is the simulated one (tests/sim/cuda), on which every case would pass
 * without a GPU. GDR_TEST_ON_SIM=1 runs them there all the same, to try a program out.
 */
int gpu_need_nvidia(void);

/* Print the driver version, device 0's name, PCI id and UUID. */
void gpu_describe(void);

struct gpu_vmm {
	CUdeviceptr ptr;
	size_t size;
	CUmemGenericAllocationHandle handle;
};

/* size rounded up to the granularity; types: CU_MEM_HANDLE_TYPE_* to request. */
CUresult gpu_vmm_alloc(struct gpu_vmm *m, size_t size, CUmemAllocationHandleType types);
void gpu_vmm_free(struct gpu_vmm *m);

/* The pattern the kernels write and check, for the CPU side. */
static inline uint32_t gpu_pattern(uint32_t seed, unsigned long long i)
{
	return seed ^ (uint32_t)(i * 2654435761ull) ^ (uint32_t)(i >> 32);
}

/* CLOCK_MONOTONIC in nanoseconds, for the benchmarks. */
double gpu_now_ns(void);
/* The median of v[0..n), n > 0; sorts v. */
double gpu_median(double *v, int n);

/* Whether the kernels were built in (nvcc at build time) and load on this GPU. */
bool gpu_kernels_available(const char **why);
/* Fill n words at p with the pattern; synchronous. */
CUresult gpu_kernel_fill(CUdeviceptr p, size_t n, uint32_t seed);
/* Count words at p that differ from the pattern; synchronous. */
CUresult gpu_kernel_check(CUdeviceptr p, size_t n, uint32_t seed, unsigned long long *bad);
/*
 * Start one GPU thread that answers pings (kernels.cu: gdr_echo_u32) and return; it runs until
 * *ping has reached iters. The caller synchronizes (cuCtxSynchronize) once it has.
 */
CUresult gpu_kernel_echo_start(CUdeviceptr ping, CUdeviceptr pong, uint32_t iters);
/*
 * Start one GPU thread that stores 1, 2, 3, ... to *counter (kernels.cu: gdr_count_u32) and
 * return; it runs until *stop is not 0. The caller synchronizes once it has stored that.
 */
CUresult gpu_kernel_count_start(CUdeviceptr counter, CUdeviceptr stop);

#endif

// SPDX-License-Identifier: MIT
// Kernels for the tier-3 tests: write a pattern into GPU memory, or count where it differs.
// Built with nvcc into a fatbin that the tests load with cuModuleLoadData (no cudart).
#include <stdint.h>

__device__ __forceinline__ uint32_t pattern(uint32_t seed, unsigned long long i)
{
    return seed ^ (uint32_t)(i * 2654435761ull) ^ (uint32_t)(i >> 32);
}

extern "C" __global__ void gdr_fill_u32(uint32_t *p, unsigned long long n, uint32_t seed)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        p[i] = pattern(seed, i);
}

extern "C" __global__ void gdr_check_u32(const uint32_t *p, unsigned long long n, uint32_t seed,
                                         unsigned long long *mismatches)
{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        if (p[i] != pattern(seed, i))
            atomicAdd(mismatches, 1ull);
}

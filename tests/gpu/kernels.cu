// SPDX-License-Identifier: MIT
// Kernels for the tier-3 programs: write a pattern into GPU memory, count where it differs,
// answer a CPU's pings or keep changing a word (bench_poll).
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

// bench_poll's partner, one thread: for i = 1..iters, wait until the CPU has stored i (or more)
// to *ping through the mapping, then store i to *pong, which the CPU polls. Volatile accesses
// go to L2, where the BAR's accesses land, so each side sees the other's store without fences.
// A CPU that gives up stores iters to *ping, which lets the loop run out.
extern "C" __global__ void gdr_echo_u32(const volatile uint32_t *ping, volatile uint32_t *pong,
                                        uint32_t iters)
{
    for (uint32_t i = 1; i <= iters; i++) {
        while (*ping < i)
            ;
        *pong = i;
    }
}

// bench_poll's moving word, one thread: stores 1, 2, 3, ... to *counter back to back until the
// CPU stores a non-zero *stop, which it reads only every 256 stores so that the stores are not
// spaced out by reads. Volatile stores go to L2, where the BAR's reads land.
extern "C" __global__ void gdr_count_u32(volatile uint32_t *counter, const volatile uint32_t *stop)
{
    uint32_t i = 0;

    do {
        for (int k = 0; k < 256; k++)
            *counter = ++i;
    } while (!*stop);
}

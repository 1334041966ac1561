/* SPDX-License-Identifier: MIT */
/*
 * Test hooks of the simulated CUDA driver (tests/sim/cuda, built as libcuda.so.1). Not part of
 * the CUDA API: a test that links the simulated library calls these to check for leaks.
 */
#ifndef SIMCUDA_H
#define SIMCUDA_H

struct simcuda_counters {
	long allocations;	/* live physical allocations of every kind */
	long handle_refs;	/* live VMM handle references (cuMemCreate, cuMemRetainAllocationHandle) */
	long mappings;		/* live VA mappings (cuMemMap, and one per cuMemAlloc*) */
	long reservations;	/* live cuMemAddressReserve ranges */
	long primary_ctx_refs;	/* primary context references, all devices */
	long vulkan_backed;	/* live allocations whose backing came from a Vulkan export */
	long fds_exported;	/* fds handed out by cuMemExportToShareableHandle, ever */
	long primary_ctx_creations;	/* primary contexts made (at a first reference), ever */
};

/* A snapshot of the counters, taken under the simulator's lock. */
void simcuda_get_counters(struct simcuda_counters *c);

/* Where POSIX-fd VMM allocations get their memory: "vulkan" (lavapipe exports) or "memfd". */
const char *simcuda_backing(void);
/*
 * The CU_POINTER_ATTRIBUTE_MEMORY_TYPE (a CUmemorytype) that managed memory reports from now on:
 * CU_MEMORYTYPE_DEVICE by default; CUDA documents that managed memory may report either
 * CU_MEMORYTYPE_DEVICE or CU_MEMORYTYPE_HOST, whatever its location.
 */
void simcuda_set_managed_memory_type(unsigned type);
/*
 * Called by each export that made a descriptor (cuMemExportToShareableHandle,
 * cuMemGetHandleForAddressRange) as it returns, outside the simulator's lock: the call hands back
 * what the hook returns instead of fd. So a test can act while an export is under way (another
 * thread forks), or answer as a broken driver would (close fd, give -1). NULL: no hook.
 */
typedef int (*simcuda_export_hook)(int fd);
void simcuda_set_export_hook(simcuda_export_hook hook);

#endif

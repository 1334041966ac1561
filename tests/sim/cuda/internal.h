/* SPDX-License-Identifier: MIT */
/*
 * The simulated CUDA driver's internals, shared by its files. "Device memory" is host memory: a
 * device pointer is the host address of the data, so tests can read and write it directly and
 * compare with what the library under test did.
 *
 * Objects:
 *   struct sim_phys   a physical allocation (cuMemCreate, or the memory behind cuMemAlloc,
 *                     cuMemAllocHost, cuMemAllocManaged): a memfd and where the data starts in it
 *   struct sim_range  a range of addresses: a cuMemAddressReserve reservation, or the range of
 *                     one cuMemAlloc* allocation; it holds the mappings of physical allocations
 *                     into it
 * Every object is on a list in struct sim_state, under sim_lock.
 */
#ifndef SIMCUDA_INTERNAL_H
#define SIMCUDA_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>
#include <sys/types.h>

#include <cuda.h>

#include "simcuda.h"

#define SIM_INTERNAL __attribute__((visibility("hidden")))

#define SIM_MAX_DEVICES 8
/* Like an H100/H200: VMM sizes and addresses are multiples of 2 MiB. */
#define SIM_GRANULARITY (2UL << 20)
#define SIM_DEVICE_MEMORY (16ULL << 30)

/* Settings read from the environment once (README.md lists them). */
struct sim_config {
	int driver_version;		/* GDRCOPY_SIM_CUDA_VERSION */
	int device_count;		/* GDRCOPY_SIM_CUDA_DEVICES */
	CUresult init_error;		/* GDRCOPY_SIM_CUDA_INIT_ERROR */
	bool use_vulkan;		/* GDRCOPY_SIM_CUDA_BACKING != memfd */
	bool uuid_forced;		/* GDRCOPY_SIM_CUDA_UUID */
	unsigned char uuid[16];
	char hidden[512];		/* GDRCOPY_SIM_CUDA_HIDE: ",name,name," */
	char attr_overrides[512];	/* GDRCOPY_SIM_CUDA_ATTR: "attr=value,..." */
	char nvp2p_path[256];		/* GDRCOPY_SIM_CUDA_NVP2P: "" in the default mode */
	int bad_range;			/* GDRCOPY_SIM_CUDA_BAD_RANGE: a broken driver's ranges */
	bool bad_ordinal;		/* GDRCOPY_SIM_CUDA_BAD_ORDINAL */
	bool fork_refuses;		/* GDRCOPY_SIM_CUDA_FORK_REFUSES: as NVIDIA's driver */
};

enum sim_phys_kind {
	SIM_PHYS_VMM,		/* cuMemCreate */
	SIM_PHYS_DEVICE,	/* cuMemAlloc: device memory that is not a VMM allocation */
	SIM_PHYS_HOST,		/* cuMemAllocHost */
	SIM_PHYS_MANAGED,	/* cuMemAllocManaged */
};

struct sim_phys {
	LIST_ENTRY(sim_phys) link;
	unsigned long long id;		/* the CUmemGenericAllocationHandle value; never reused */
	enum sim_phys_kind kind;
	int device;
	size_t size;
	int fd;				/* memfd holding the data; -1 if nvp2p */
	off_t data_offset;		/* where the data starts in fd: 4096 for a lavapipe export */
	bool vulkan_backed;
	/* nvp2p mode, gpuDirectRDMACapable VMM: the data is nvp2p_sim memory at the va the
	 * allocation is mapped at, so gdrdrv can pin it there; mapped once at a time. */
	bool nvp2p;
	CUmemAllocationProp prop;	/* SIM_PHYS_VMM */
	unsigned handle_refs;		/* cuMemCreate + cuMemRetainAllocationHandle - cuMemRelease */
	unsigned map_refs;		/* mappings of it */
};

struct sim_mapping {
	LIST_ENTRY(sim_mapping) link;
	uintptr_t va;
	size_t size;
	struct sim_phys *phys;
	CUmemAccess_flags access;
};

enum sim_range_kind {
	SIM_RANGE_RESERVED,	/* cuMemAddressReserve */
	SIM_RANGE_ALLOC,	/* cuMemAlloc, cuMemAllocHost, cuMemAllocManaged */
};

struct sim_range {
	LIST_ENTRY(sim_range) link;
	enum sim_range_kind kind;
	uintptr_t base;
	size_t size;
	unsigned long long buffer_id;
	unsigned sync_memops;
	LIST_HEAD(, sim_mapping) mappings;
};

struct sim_state {
	bool initialized;		/* cuInit succeeded */
	pid_t init_pid;			/* in this process */
	bool vulkan_ok;			/* POSIX-fd VMM memory comes from Vulkan exports */
	LIST_HEAD(, sim_phys) phys;
	LIST_HEAD(, sim_range) ranges;
	unsigned long long next_id;
	struct simcuda_counters counters;
	unsigned char uuid[SIM_MAX_DEVICES][16];
};

/*
 * Protects sim_state and every object on its lists, and the primary contexts. The only lock of
 * the simulator; held across memory copies too, so a copy never races a free. Vulkan calls
 * made to get backing memory run under it.
 */
extern pthread_mutex_t sim_lock SIM_INTERNAL;
extern struct sim_state sim SIM_INTERNAL;

const struct sim_config *sim_config(void) SIM_INTERNAL;
/* CUDA_SUCCESS, or CUDA_ERROR_NOT_INITIALIZED before cuInit. */
CUresult sim_check_init(void) SIM_INTERNAL;
/* As sim_check_init, and a live context must be current in this thread. */
CUresult sim_check_ctx(void) SIM_INTERNAL;
bool sim_device_valid(int device) SIM_INTERNAL;
/* The device of the context current in this thread, or -1. */
int sim_current_device(void) SIM_INTERNAL;
CUcontext sim_primary_ctx(int device) SIM_INTERNAL;

/* Set up the simulated devices at cuInit. Caller holds sim_lock. */
void sim_devices_init(void) SIM_INTERNAL;

/* Lavapipe-backed memory (vulkan.c). */
/* Open Vulkan and read the first device's UUID; false if there is no usable Vulkan. */
bool sim_vulkan_init(unsigned char uuid[16]) SIM_INTERNAL;
/* A memfd holding size bytes exported by Vulkan as OPAQUE_FD; -1 on failure. */
int sim_vulkan_memfd(size_t size, off_t *data_offset) SIM_INTERNAL;

/* Memory objects (memory.c). Callers hold sim_lock. */
static inline size_t sim_round_up(size_t v, size_t to)
{
	return (v + to - 1) / to * to;
}
/*
 * A new physical allocation with one handle reference (VMM) or none. In nvp2p mode a VMM
 * allocation that nvidia_p2p may pin (gpuDirectRDMACapable) gets its memory from nvp2p_sim when
 * it is mapped.
 */
struct sim_phys *sim_phys_new(enum sim_phys_kind kind, int device, size_t size,
			      const CUmemAllocationProp *prop) SIM_INTERNAL;
/* Free p once nothing refers to it. */
void sim_phys_put(struct sim_phys *p) SIM_INTERNAL;
/* The VMM allocation of a live handle, or NULL. */
struct sim_phys *sim_phys_by_handle(CUmemGenericAllocationHandle h) SIM_INTERNAL;
/* size bytes of address space aligned to align, PROT_NONE; at hint if that is free; 0 if none. */
uintptr_t sim_reserve_va(size_t size, size_t align, uintptr_t hint) SIM_INTERNAL;
struct sim_range *sim_range_new(enum sim_range_kind kind, uintptr_t base, size_t size) SIM_INTERNAL;
void sim_range_free(struct sim_range *r) SIM_INTERNAL;
/* Map p at va (inside r) with the given access. */
CUresult sim_mapping_add(struct sim_range *r, uintptr_t va, size_t size, struct sim_phys *p,
			 CUmemAccess_flags access) SIM_INTERNAL;
/* Unmap m, back to reserved address space, and drop its reference on its allocation. */
void sim_mapping_remove(struct sim_mapping *m) SIM_INTERNAL;
struct sim_range *sim_range_find(uintptr_t addr) SIM_INTERNAL;
struct sim_mapping *sim_mapping_find(struct sim_range *r, uintptr_t addr) SIM_INTERNAL;
/* CUDA_SUCCESS if [addr, addr + size) is mapped memory the CPU can read (write: and write). */
CUresult sim_check_access(uintptr_t addr, size_t size, bool write) SIM_INTERNAL;
/* The descriptor an export that made fd hands back (simcuda_set_export_hook); no sim_lock held. */
int sim_export_hook_run(int fd) SIM_INTERNAL;

/*
 * nvp2p mode (nvp2p.c): cuMemAlloc memory, and the mappings of gpuDirectRDMACapable VMM
 * allocations, from nvp2p_sim's control device. The calls take sim_lock themselves, but for
 * those named _locked; the caller has checked init and context.
 */
bool sim_nvp2p_mode(void) SIM_INTERNAL;
/* Whether addr lies in cuMemAlloc memory of this process that nvp2p_sim holds. */
bool sim_nvp2p_owns(uintptr_t addr) SIM_INTERNAL;
/* Whether addr's data is in nvp2p_sim: cuMemAlloc memory or a mapped nvp2p VMM allocation. */
bool sim_nvp2p_backs(uintptr_t addr) SIM_INTERNAL;
/* Back the mapping [va, va + size) of an nvp2p VMM allocation; end it (as a free would). */
CUresult sim_nvp2p_map_locked(uintptr_t va, size_t size) SIM_INTERNAL;
void sim_nvp2p_unmap_locked(uintptr_t va) SIM_INTERNAL;
CUresult sim_nvp2p_alloc(CUdeviceptr *dptr, size_t size) SIM_INTERNAL;
CUresult sim_nvp2p_free(CUdeviceptr dptr) SIM_INTERNAL;
CUresult sim_nvp2p_copy(uintptr_t dst, bool dst_device, uintptr_t src, bool src_device,
			size_t n) SIM_INTERNAL;
/* bytes of value (width 1 or 4 bytes) at dst. */
CUresult sim_nvp2p_fill(uintptr_t dst, uint32_t value, size_t width, size_t bytes) SIM_INTERNAL;
CUresult sim_nvp2p_address_range(CUdeviceptr dptr, CUdeviceptr *pbase,
				 size_t *psize) SIM_INTERNAL;
CUresult sim_nvp2p_get_attribute(CUpointer_attribute attr, uintptr_t ptr,
				 void *data) SIM_INTERNAL;
CUresult sim_nvp2p_set_sync_memops(uintptr_t ptr, unsigned value) SIM_INTERNAL;

#endif

/* SPDX-License-Identifier: MIT */
/*
 * nvp2p mode (GDRCOPY_SIM_CUDA_NVP2P=/dev/nvp2p_sim): cuMemAlloc memory comes from nvp2p_sim's
 * control device, so gdrdrv, pinning it through nvidia_p2p, sees the very memory the CUDA calls
 * read and write. The device pointer is the fake GPU address ALLOC returns (not host memory:
 * dereferencing it faults), copies and memsets go through READ and WRITE, cuMemFree is FREE,
 * which fires the free callbacks of non-persistent pins as cudaFree does.
 *
 * Small cuMemAlloc allocations are placed as CUDA's pool places them: one after another at
 * 512-byte steps, so that most do not start on a GPU page (GDRCopy's basic_unaligned_mapping
 * needs one that does not, and a caller that assumes alignment is caught). Each still has an
 * nvp2p_sim allocation of its own, whose first bytes, before the address returned, stand for
 * its neighbour's: gdrdrv pins whole GPU pages, from the page the address lies in.
 *
 * A VMM allocation made gpuDirectRDMACapable, as the real driver lets nvidia_p2p pin those, is
 * nvp2p_sim memory too: each mapping of it is an allocation at the mapped address (ALLOC with
 * AT_VA, the host address of the reservation), and its unmapping the FREE.
 *
 * The control device ties an allocation to the process that made it and to the open file it
 * was made through. A fork child therefore gets a file of its own at its first call (the
 * parent's allocations are not its own, as a CUDA context does not survive fork), and what a
 * killed child allocated dies with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../nvp2p_sim/nvp2p_sim_ioctl.h"
#include "internal.h"

struct nvp2p_alloc {
	LIST_ENTRY(nvp2p_alloc) link;
	struct nvp2p_sim_alloc a;	/* what ALLOC answered */
	uintptr_t base;			/* the CUDA address: a.va + the pool's lead */
	size_t size;			/* bytes asked for */
	unsigned long long buffer_id;
	unsigned sync_memops;
	bool vmm;			/* the mapping of a VMM allocation, not cuMemAlloc memory */
};

/* All under sim_lock. fd belongs to fd_pid; another pid is a fork child of it. */
static LIST_HEAD(, nvp2p_alloc) nvp2p_allocs = LIST_HEAD_INITIALIZER(nvp2p_allocs);
static int nvp2p_fd = -1;
static pid_t nvp2p_fd_pid;
static unsigned long long nvp2p_next_id = 1;
/* Where the pool places the next small allocation, from a GPU page's start. */
static size_t nvp2p_pool_offset;

/* CUDA's pool: allocations below 2 MiB share pages; larger ones start on one. */
#define NVP2P_POOL_MAX (2UL << 20)
#define NVP2P_POOL_STEP 512UL
#define NVP2P_GPU_PAGE (64UL << 10)

bool sim_nvp2p_mode(void)
{
	return sim_config()->nvp2p_path[0] != '\0';
}

/* The control device of this process, opened at its first use; -1 with errno set. */
static int nvp2p_dev(void)
{
	struct nvp2p_alloc *n, *next;

	if (nvp2p_fd >= 0 && nvp2p_fd_pid == getpid())
		return nvp2p_fd;
	if (nvp2p_fd >= 0) {
		/* A fork child: the parent's allocations stay the parent's. All go, then the list. */
		for (n = LIST_FIRST(&nvp2p_allocs); n; n = next) {
			next = LIST_NEXT(n, link);
			/* A VMM mapping is counted by memory.c, as its own. */
			if (!n->vmm) {
				sim.counters.allocations--;
				sim.counters.mappings--;
			}
			free(n);
		}
		LIST_INIT(&nvp2p_allocs);
		close(nvp2p_fd);
	}
	nvp2p_fd = open(sim_config()->nvp2p_path, O_RDWR | O_CLOEXEC);
	nvp2p_fd_pid = getpid();
	if (nvp2p_fd < 0)
		fprintf(stderr, "simcuda: cannot open %s (GDRCOPY_SIM_CUDA_NVP2P): %s; is nvp2p_sim "
			"loaded?\n", sim_config()->nvp2p_path, strerror(errno));
	return nvp2p_fd;
}

static struct nvp2p_alloc *nvp2p_find(uintptr_t addr)
{
	struct nvp2p_alloc *n;

	if (nvp2p_fd_pid != getpid())
		return NULL;
	LIST_FOREACH(n, &nvp2p_allocs, link) {
		if (addr >= n->base && addr - n->base < n->size)
			return n;
	}
	return NULL;
}

/*
 * ALLOC through this process's control file, at va if at is non-zero, the CUDA address lead
 * bytes into it. Caller holds sim_lock.
 */
static CUresult nvp2p_alloc_locked(uintptr_t at, size_t lead, size_t size,
				   struct nvp2p_alloc **out)
{
	struct nvp2p_alloc *n = calloc(1, sizeof(*n));
	CUresult res;
	int fd;

	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	n->size = size;
	n->a.size = lead + size;
	if (at) {
		n->a.flags = NVP2P_SIM_ALLOC_AT_VA;
		n->a.va = at;
		n->vmm = true;
	}
	fd = nvp2p_dev();
	if (fd < 0 || ioctl(fd, NVP2P_SIM_IOC_ALLOC, &n->a)) {
		res = fd >= 0 && errno == ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_UNKNOWN;
		free(n);
		return res;
	}
	n->base = n->a.va + lead;
	n->buffer_id = nvp2p_next_id++;
	LIST_INSERT_HEAD(&nvp2p_allocs, n, link);
	*out = n;
	return CUDA_SUCCESS;
}

/* FREE n (its callbacks fire) and forget it. Caller holds sim_lock. */
static CUresult nvp2p_free_locked(struct nvp2p_alloc *n)
{
	struct nvp2p_sim_free f = { .va = n->a.va };
	CUresult res = CUDA_SUCCESS;

	if (ioctl(nvp2p_fd, NVP2P_SIM_IOC_FREE, &f))
		res = CUDA_ERROR_UNKNOWN;
	LIST_REMOVE(n, link);
	free(n);
	return res;
}

CUresult sim_nvp2p_alloc(CUdeviceptr *dptr, size_t size)
{
	struct nvp2p_alloc *n;
	size_t lead;
	CUresult res;

	if (size == 0 || size > NVP2P_SIM_ALLOC_MAX)
		return size ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_lock);
	lead = size < NVP2P_POOL_MAX ? nvp2p_pool_offset : 0;
	res = nvp2p_alloc_locked(0, lead, size, &n);
	if (!res) {
		if (size < NVP2P_POOL_MAX)
			nvp2p_pool_offset = (lead + sim_round_up(size, NVP2P_POOL_STEP)) %
					    NVP2P_GPU_PAGE;
		sim.counters.allocations++;
		sim.counters.mappings++;
		*dptr = n->base;
	}
	pthread_mutex_unlock(&sim_lock);
	return res;
}

CUresult sim_nvp2p_free(CUdeviceptr dptr)
{
	struct nvp2p_alloc *n;
	CUresult res;

	pthread_mutex_lock(&sim_lock);
	n = nvp2p_find(dptr);
	if (!n || n->vmm || n->base != dptr) {
		res = CUDA_ERROR_INVALID_VALUE;
	} else {
		res = nvp2p_free_locked(n);
		sim.counters.allocations--;
		sim.counters.mappings--;
	}
	pthread_mutex_unlock(&sim_lock);
	return res;
}

CUresult sim_nvp2p_map_locked(uintptr_t va, size_t size)
{
	struct nvp2p_alloc *n;

	if (size > NVP2P_SIM_ALLOC_MAX)
		return CUDA_ERROR_OUT_OF_MEMORY;
	return nvp2p_alloc_locked(va, 0, size, &n);
}

/* In a fork child the parent's mappings are not in the list: nothing to free here. */
void sim_nvp2p_unmap_locked(uintptr_t va)
{
	struct nvp2p_alloc *n = nvp2p_find(va);

	if (n && n->vmm && n->a.va == va)
		nvp2p_free_locked(n);
}

bool sim_nvp2p_owns(uintptr_t addr)
{
	struct nvp2p_alloc *n;
	bool owns;

	pthread_mutex_lock(&sim_lock);
	n = nvp2p_find(addr);
	owns = n && !n->vmm;
	pthread_mutex_unlock(&sim_lock);
	return owns;
}

bool sim_nvp2p_backs(uintptr_t addr)
{
	bool backs;

	pthread_mutex_lock(&sim_lock);
	backs = nvp2p_find(addr) != NULL;
	pthread_mutex_unlock(&sim_lock);
	return backs;
}

/* READ or WRITE; the whole range must lie in one allocation of this process. */
static CUresult nvp2p_rw(unsigned long cmd, uintptr_t va, void *buf, size_t n)
{
	struct nvp2p_sim_rw rw = { .va = va, .len = n, .buf = (uintptr_t)buf };
	struct nvp2p_alloc *a = nvp2p_find(va);

	if (!a || n > a->size - (va - a->base))
		return CUDA_ERROR_INVALID_VALUE;
	/* VMM memory is only as accessible as cuMemSetAccess made it. */
	if (a->vmm && sim_check_access(va, n, cmd == NVP2P_SIM_IOC_WRITE))
		return CUDA_ERROR_INVALID_VALUE;
	return ioctl(nvp2p_fd, cmd, &rw) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult sim_nvp2p_copy(uintptr_t dst, bool dst_device, uintptr_t src, bool src_device, size_t n)
{
	CUresult res;
	void *bounce;

	pthread_mutex_lock(&sim_lock);
	if (!dst_device) {
		res = nvp2p_rw(NVP2P_SIM_IOC_READ, src, (void *)dst, n);
	} else if (!src_device) {
		res = nvp2p_rw(NVP2P_SIM_IOC_WRITE, dst, (void *)src, n);
	} else {
		bounce = malloc(n);
		res = bounce ? nvp2p_rw(NVP2P_SIM_IOC_READ, src, bounce, n) :
			       CUDA_ERROR_OUT_OF_MEMORY;
		if (!res)
			res = nvp2p_rw(NVP2P_SIM_IOC_WRITE, dst, bounce, n);
		free(bounce);
	}
	pthread_mutex_unlock(&sim_lock);
	return res;
}

CUresult sim_nvp2p_fill(uintptr_t dst, uint32_t value, size_t width, size_t bytes)
{
	unsigned char *buf = malloc(bytes);
	CUresult res;

	if (!buf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (size_t i = 0; i < bytes; i += width)
		memcpy(buf + i, &value, width);
	pthread_mutex_lock(&sim_lock);
	res = nvp2p_rw(NVP2P_SIM_IOC_WRITE, dst, buf, bytes);
	pthread_mutex_unlock(&sim_lock);
	free(buf);
	return res;
}

CUresult sim_nvp2p_address_range(CUdeviceptr dptr, CUdeviceptr *pbase, size_t *psize)
{
	struct nvp2p_alloc *n;

	pthread_mutex_lock(&sim_lock);
	n = nvp2p_find(dptr);
	if (n && pbase)
		*pbase = n->base;
	if (n && psize)
		*psize = n->size;
	pthread_mutex_unlock(&sim_lock);
	return n ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

static void put(void *data, const void *v, size_t size)
{
	memcpy(data, v, size);
}

/* Caller holds sim_lock; n is the allocation ptr lies in. Widths as pointer.c writes them. */
static CUresult nvp2p_attribute(const struct nvp2p_alloc *n, CUpointer_attribute attr,
				uintptr_t ptr, void *data)
{
	CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tokens;
	unsigned long long u64;
	CUcontext ctx;
	unsigned u;
	int device = 0;
	size_t size;

	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		ctx = sim_primary_ctx(0);
		put(data, &ctx, sizeof(ctx));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		u = CU_MEMORYTYPE_DEVICE;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		put(data, &ptr, sizeof(ptr));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		put(data, &n->base, sizeof(uintptr_t));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
	case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
		size = attr == CU_POINTER_ATTRIBUTE_RANGE_SIZE ? n->size :
		       n->a.mapped_size - (n->base - n->a.va);
		put(data, &size, sizeof(size));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
		put(data, &n->base, sizeof(uintptr_t));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
		/* The allocation's own tokens: what lets another process pin it. */
		tokens.p2pToken = n->a.p2p_token;
		tokens.vaSpaceToken = n->a.va_space;
		put(data, &tokens, sizeof(tokens));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
		u = n->sync_memops;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
	case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
		u64 = n->buffer_id;
		put(data, &u64, sizeof(u64));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
		u64 = 0;
		put(data, &u64, sizeof(u64));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		put(data, &device, sizeof(device));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		u = 0;
		break;
	case CU_POINTER_ATTRIBUTE_MAPPED:
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
		u = 1;
		break;
	case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
		u = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
		break;
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
		u64 = 0;
		put(data, &u64, sizeof(uintptr_t));
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	put(data, &u, sizeof(u));
	return CUDA_SUCCESS;
}

CUresult sim_nvp2p_get_attribute(CUpointer_attribute attr, uintptr_t ptr, void *data)
{
	struct nvp2p_alloc *n;
	CUresult res;

	pthread_mutex_lock(&sim_lock);
	n = nvp2p_find(ptr);
	res = n ? nvp2p_attribute(n, attr, ptr, data) : CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&sim_lock);
	return res;
}

CUresult sim_nvp2p_set_sync_memops(uintptr_t ptr, unsigned value)
{
	struct nvp2p_alloc *n;

	pthread_mutex_lock(&sim_lock);
	n = nvp2p_find(ptr);
	if (n)
		n->sync_memops = value != 0;
	pthread_mutex_unlock(&sim_lock);
	return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

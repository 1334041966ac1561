/* SPDX-License-Identifier: MIT */
/*
 * The virtual memory management calls: reserve, create, map, set access, unmap, release, retain,
 * export (the objects under them: memory.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

static bool prop_valid(const CUmemAllocationProp *prop)
{
	return prop && prop->type == CU_MEM_ALLOCATION_TYPE_PINNED &&
	       prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
	       sim_device_valid(prop->location.id);
}

CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *granularity,
					       const CUmemAllocationProp *prop,
					       CUmemAllocationGranularity_flags option)
{
	CUresult res = sim_check_init();

	if (res)
		return res;
	if (!granularity || !prop_valid(prop) ||
	    (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
	     option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
		return CUDA_ERROR_INVALID_VALUE;
	*granularity = SIM_GRANULARITY;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
			     const CUmemAllocationProp *prop, unsigned long long flags)
{
	const unsigned long long known = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	CUresult res = sim_check_init();
	struct sim_phys *p;

	if (res)
		return res;
	if (!handle || !prop_valid(prop) || flags || size == 0 || size % SIM_GRANULARITY)
		return CUDA_ERROR_INVALID_VALUE;
	if (prop->requestedHandleTypes & ~known)
		return CUDA_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&sim_lock);
	p = sim_phys_new(SIM_PHYS_VMM, prop->location.id, size, prop);
	if (p)
		*handle = p->id;
	pthread_mutex_unlock(&sim_lock);
	return p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
	CUresult res = sim_check_init();
	struct sim_phys *p;

	if (res)
		return res;
	pthread_mutex_lock(&sim_lock);
	p = sim_phys_by_handle(handle);
	if (p) {
		p->handle_refs--;
		sim.counters.handle_refs--;
		sim_phys_put(p);
	}
	pthread_mutex_unlock(&sim_lock);
	return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
				     CUdeviceptr addr, unsigned long long flags)
{
	CUresult res = sim_check_init();
	uintptr_t va;

	if (res)
		return res;
	if (!alignment)
		alignment = SIM_GRANULARITY;
	if (!ptr || !size || size % SIM_GRANULARITY || flags || alignment % SIM_GRANULARITY ||
	    (alignment & (alignment - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_lock);
	va = sim_reserve_va(size, alignment, addr);
	if (va && !sim_range_new(SIM_RANGE_RESERVED, va, size)) {
		munmap((void *)va, size);
		va = 0;
	}
	pthread_mutex_unlock(&sim_lock);
	if (!va)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*ptr = va;
	return CUDA_SUCCESS;
}

/* The simulator insists that everything in the range was unmapped first. */
CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	CUresult res = sim_check_init();
	struct sim_range *r;

	if (res)
		return res;
	pthread_mutex_lock(&sim_lock);
	r = sim_range_find(ptr);
	if (!r || r->kind != SIM_RANGE_RESERVED || r->base != ptr || r->size != size ||
	    !LIST_EMPTY(&r->mappings)) {
		res = CUDA_ERROR_INVALID_VALUE;
	} else {
		munmap((void *)ptr, size);
		sim_range_free(r);
	}
	pthread_mutex_unlock(&sim_lock);
	return res;
}

CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
			  CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	CUresult res = sim_check_init();
	struct sim_mapping *m;
	struct sim_range *r;
	struct sim_phys *p;
	uintptr_t end;

	if (res)
		return res;
	/* CUDA documents offset as "currently must be zero". */
	if (offset || flags || !size || size % SIM_GRANULARITY || ptr % SIM_GRANULARITY ||
	    __builtin_add_overflow(ptr, size, &end))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_lock);
	res = CUDA_ERROR_INVALID_VALUE;
	p = sim_phys_by_handle(handle);
	r = sim_range_find(ptr);
	if (!p || size > p->size || !r || r->kind != SIM_RANGE_RESERVED || end > r->base + r->size)
		goto out_unlock;
	LIST_FOREACH(m, &r->mappings, link)
		if (m->va < end && ptr < m->va + m->size)
			goto out_unlock;
	/* Its data lives where it is mapped: a second place would be other memory. */
	if (p->nvp2p && p->map_refs) {
		res = CUDA_ERROR_NOT_SUPPORTED;
		goto out_unlock;
	}
	res = sim_mapping_add(r, ptr, size, p, CU_MEM_ACCESS_FLAGS_PROT_NONE);
out_unlock:
	pthread_mutex_unlock(&sim_lock);
	return res;
}

/* The mapping of r that starts at va, or NULL. */
static struct sim_mapping *mapping_at(struct sim_range *r, uintptr_t va)
{
	struct sim_mapping *m = sim_mapping_find(r, va);

	return m && m->va == va ? m : NULL;
}

/* True if [ptr, end) is covered by whole mappings of r, back to back. */
static bool whole_mappings(struct sim_range *r, uintptr_t ptr, uintptr_t end)
{
	while (ptr < end) {
		struct sim_mapping *m = mapping_at(r, ptr);

		if (!m || m->va + m->size > end)
			return false;
		ptr = m->va + m->size;
	}
	return true;
}

CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	CUresult res = sim_check_init();
	struct sim_range *r;
	uintptr_t end;

	if (res)
		return res;
	if (!size || __builtin_add_overflow(ptr, size, &end))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_lock);
	r = sim_range_find(ptr);
	if (!r || r->kind != SIM_RANGE_RESERVED || !whole_mappings(r, ptr, end)) {
		res = CUDA_ERROR_INVALID_VALUE;
	} else {
		struct sim_mapping *m;

		/* whole_mappings found a mapping at each step: the test only ends the walk. */
		while (ptr < end && (m = mapping_at(r, ptr))) {
			ptr = m->va + m->size;
			sim_mapping_remove(m);
		}
	}
	pthread_mutex_unlock(&sim_lock);
	return res;
}

CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
				size_t count)
{
	CUmemAccess_flags access = CU_MEM_ACCESS_FLAGS_PROT_NONE;
	CUresult res = sim_check_init();
	struct sim_range *r;
	uintptr_t end, va;
	int prot;

	if (res)
		return res;
	if (!desc || !count || !size || ptr % SIM_GRANULARITY || size % SIM_GRANULARITY ||
	    __builtin_add_overflow(ptr, size, &end))
		return CUDA_ERROR_INVALID_VALUE;
	/* One host mapping stands for every device's view: the widest access wins. */
	for (size_t i = 0; i < count; i++) {
		if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
		    !sim_device_valid(desc[i].location.id) ||
		    (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
		     desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
		     desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE))
			return CUDA_ERROR_INVALID_VALUE;
		if (desc[i].flags > access)
			access = desc[i].flags;
	}
	prot = access == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? PROT_READ | PROT_WRITE :
	       access == CU_MEM_ACCESS_FLAGS_PROT_READ ? PROT_READ : PROT_NONE;
	pthread_mutex_lock(&sim_lock);
	r = sim_range_find(ptr);
	res = CUDA_ERROR_INVALID_VALUE;
	if (!r || r->kind != SIM_RANGE_RESERVED || end > r->base + r->size)
		goto out_unlock;
	for (va = ptr; va < end;) {
		struct sim_mapping *m = sim_mapping_find(r, va);

		if (!m)
			goto out_unlock;
		va = m->va + m->size;
	}
	if (mprotect((void *)ptr, size, prot))
		goto out_unlock;
	for (va = ptr; va < end;) {
		struct sim_mapping *m = sim_mapping_find(r, va);

		m->access = access;
		va = m->va + m->size;
	}
	res = CUDA_SUCCESS;
out_unlock:
	pthread_mutex_unlock(&sim_lock);
	return res;
}

CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
	CUresult res = sim_check_init();
	struct sim_mapping *m;
	struct sim_range *r;

	if (res)
		return res;
	if (!handle)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_lock);
	r = sim_range_find((uintptr_t)addr);
	m = r ? sim_mapping_find(r, (uintptr_t)addr) : NULL;
	if (!m || m->phys->kind != SIM_PHYS_VMM) {
		res = CUDA_ERROR_INVALID_VALUE;
	} else {
		m->phys->handle_refs++;
		sim.counters.handle_refs++;
		*handle = m->phys->id;
	}
	pthread_mutex_unlock(&sim_lock);
	return res;
}

/*
 * A new fd for the allocation's memory with a file description of its own, as each export of
 * the real driver is: lavapipe's import reads a header at offset 0 with lseek + read, so
 * imports of dups (which share one offset) in several threads at once can read each other's
 * position and refuse the handle. Reopened through /proc; a dup where /proc is missing.
 */
static int export_fd(int fd)
{
	char path[64];
	int nfd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	nfd = open(path, O_RDWR | O_CLOEXEC);
	return nfd >= 0 ? nfd : fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

/* The test's export hook; called without sim_lock, so it may block or call in. */
static _Atomic simcuda_export_hook export_hook;

__attribute__((visibility("default"))) void simcuda_set_export_hook(simcuda_export_hook hook)
{
	atomic_store(&export_hook, hook);
}

int sim_export_hook_run(int fd)
{
	simcuda_export_hook hook = atomic_load(&export_hook);

	return hook ? hook(fd) : fd;
}

CUresult CUDAAPI cuMemExportToShareableHandle(void *shareableHandle,
					      CUmemGenericAllocationHandle handle,
					      CUmemAllocationHandleType handleType,
					      unsigned long long flags)
{
	CUresult res = sim_check_init();
	struct sim_phys *p;
	int fd = -1;

	if (res)
		return res;
	if (!shareableHandle || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&sim_lock);
	p = sim_phys_by_handle(handle);
	if (!p || !(p->prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) {
		res = CUDA_ERROR_INVALID_VALUE;
	} else if (p->nvp2p) {
		/* nvp2p_sim memory has no fd to give. */
		res = CUDA_ERROR_NOT_SUPPORTED;
	} else {
		fd = export_fd(p->fd);
		if (fd < 0) {
			res = errno == EMFILE ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_UNKNOWN;
		} else {
			sim.counters.fds_exported++;
		}
	}
	pthread_mutex_unlock(&sim_lock);
	if (!res)
		*(int *)shareableHandle = sim_export_hook_run(fd);
	return res;
}

CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
							CUmemGenericAllocationHandle handle)
{
	CUresult res = sim_check_init();
	struct sim_phys *p;

	if (res)
		return res;
	if (!prop)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_lock);
	p = sim_phys_by_handle(handle);
	if (p)
		*prop = p->prop;
	pthread_mutex_unlock(&sim_lock);
	return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

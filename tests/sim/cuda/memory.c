/* SPDX-License-Identifier: MIT */
/*
 * Simulated device memory: cuMemAlloc and friends, and the virtual memory management (VMM) calls.
 * Addresses are real host addresses: a reservation is a PROT_NONE anonymous mapping, cuMemMap
 * maps the allocation's memfd over part of it (still PROT_NONE), and cuMemSetAccess opens it with
 * mprotect, as CUDA requires the three steps before memory may be touched. cuMemAlloc memory is
 * the same machinery behind one call, but it is no VMM allocation: it has no handle to retain or
 * export, as with the real driver.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define SIM_PAGE 4096UL

static size_t round_up(size_t v, size_t to)
{
	return (v + to - 1) / to * to;
}

/* A sealed memfd of size bytes (sealed so that a udmabuf could be made of it). */
static int plain_memfd(size_t size)
{
	int fd = memfd_create("simcuda", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)size) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A new physical allocation with one handle reference (VMM) or none. Caller holds sim_lock. In
 * nvp2p mode a VMM allocation that nvidia_p2p may pin (gpuDirectRDMACapable) gets its memory
 * from nvp2p_sim when it is mapped.
 */
static struct sim_phys *phys_new(enum sim_phys_kind kind, int device, size_t size,
				 const CUmemAllocationProp *prop)
{
	struct sim_phys *p = calloc(1, sizeof(*p));
	bool nvp2p = kind == SIM_PHYS_VMM && sim_nvp2p_mode() &&
		     prop->allocFlags.gpuDirectRDMACapable;
	bool want_vulkan = kind == SIM_PHYS_VMM && !nvp2p && sim.vulkan_ok &&
			   (prop->requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);

	if (!p)
		return NULL;
	p->fd = nvp2p ? -1 : want_vulkan ? sim_vulkan_memfd(size, &p->data_offset) :
			     plain_memfd(size);
	if (!nvp2p && p->fd < 0) {
		free(p);
		return NULL;
	}
	p->nvp2p = nvp2p;
	p->vulkan_backed = want_vulkan;
	p->id = sim.next_id++;
	p->kind = kind;
	p->device = device;
	p->size = size;
	if (prop)
		p->prop = *prop;
	p->handle_refs = kind == SIM_PHYS_VMM;
	LIST_INSERT_HEAD(&sim.phys, p, link);
	sim.counters.allocations++;
	sim.counters.handle_refs += p->handle_refs;
	sim.counters.vulkan_backed += p->vulkan_backed;
	return p;
}

/* Free p once nothing refers to it. Caller holds sim_lock. */
static void phys_put(struct sim_phys *p)
{
	if (p->handle_refs || p->map_refs)
		return;
	LIST_REMOVE(p, link);
	if (p->fd >= 0)
		close(p->fd);
	sim.counters.allocations--;
	sim.counters.vulkan_backed -= p->vulkan_backed;
	free(p);
}

static struct sim_phys *phys_by_handle(CUmemGenericAllocationHandle h)
{
	struct sim_phys *p;

	LIST_FOREACH(p, &sim.phys, link)
		if (p->id == h && p->kind == SIM_PHYS_VMM && p->handle_refs)
			return p;
	return NULL;
}

/* size bytes of address space aligned to align, PROT_NONE; at hint if that is free. */
static uintptr_t reserve_va(size_t size, size_t align, uintptr_t hint)
{
	const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	uintptr_t start, aligned;
	void *p;

	if (hint && hint % align == 0) {
		p = mmap((void *)hint, size, PROT_NONE, flags | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != MAP_FAILED && (uintptr_t)p == hint)
			return hint;
		if (p != MAP_FAILED)
			munmap(p, size);
	}
	p = mmap(NULL, size + align, PROT_NONE, flags, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	start = (uintptr_t)p;
	aligned = round_up(start, align);
	if (aligned > start)
		munmap(p, aligned - start);
	if (aligned + size < start + size + align)
		munmap((void *)(aligned + size), start + size + align - aligned - size);
	return aligned;
}

/* Put [va, va + size) back to reserved, inaccessible address space. */
static void unreserve_to_none(uintptr_t va, size_t size)
{
	mmap((void *)va, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
	     -1, 0);
}

static struct sim_range *range_new(enum sim_range_kind kind, uintptr_t base, size_t size)
{
	struct sim_range *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->kind = kind;
	r->base = base;
	r->size = size;
	r->buffer_id = sim.next_id++;
	LIST_INIT(&r->mappings);
	LIST_INSERT_HEAD(&sim.ranges, r, link);
	if (kind == SIM_RANGE_RESERVED)
		sim.counters.reservations++;
	return r;
}

static void range_free(struct sim_range *r)
{
	LIST_REMOVE(r, link);
	if (r->kind == SIM_RANGE_RESERVED)
		sim.counters.reservations--;
	free(r);
}

/* Map p at va (inside r) with the given protection; CUDA_SUCCESS or an error. */
static CUresult mapping_add(struct sim_range *r, uintptr_t va, size_t size, struct sim_phys *p,
			    CUmemAccess_flags access)
{
	int prot = access == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? PROT_READ | PROT_WRITE :
		   access == CU_MEM_ACCESS_FLAGS_PROT_READ ? PROT_READ : PROT_NONE;
	struct sim_mapping *m = calloc(1, sizeof(*m));

	CUresult res = CUDA_SUCCESS;

	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (p->nvp2p)
		res = sim_nvp2p_map_locked(va, size);
	else if (mmap((void *)va, size, prot, MAP_SHARED | MAP_FIXED, p->fd, p->data_offset) ==
		 MAP_FAILED)
		res = CUDA_ERROR_OUT_OF_MEMORY;
	if (res) {
		free(m);
		return res;
	}
	m->va = va;
	m->size = size;
	m->phys = p;
	m->access = access;
	LIST_INSERT_HEAD(&r->mappings, m, link);
	p->map_refs++;
	sim.counters.mappings++;
	return CUDA_SUCCESS;
}

static void mapping_remove(struct sim_mapping *m)
{
	struct sim_phys *p = m->phys;

	if (p->nvp2p)
		sim_nvp2p_unmap_locked(m->va);
	unreserve_to_none(m->va, m->size);
	LIST_REMOVE(m, link);
	free(m);
	sim.counters.mappings--;
	p->map_refs--;
	phys_put(p);
}

struct sim_range *sim_range_find(uintptr_t addr)
{
	struct sim_range *r;

	LIST_FOREACH(r, &sim.ranges, link)
		if (addr >= r->base && addr - r->base < r->size)
			return r;
	return NULL;
}

struct sim_mapping *sim_mapping_find(struct sim_range *r, uintptr_t addr)
{
	struct sim_mapping *m;

	LIST_FOREACH(m, &r->mappings, link)
		if (addr >= m->va && addr - m->va < m->size)
			return m;
	return NULL;
}

CUresult sim_check_access(uintptr_t addr, size_t size, bool write)
{
	CUmemAccess_flags need = write ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE :
				 CU_MEM_ACCESS_FLAGS_PROT_READ;
	struct sim_range *r = sim_range_find(addr);
	uintptr_t end;

	if (!r || __builtin_add_overflow(addr, size, &end) || end > r->base + r->size)
		return CUDA_ERROR_INVALID_VALUE;
	while (addr < end) {
		struct sim_mapping *m = sim_mapping_find(r, addr);

		if (!m || (m->access & need) != need)
			return CUDA_ERROR_INVALID_VALUE;
		addr = m->va + m->size;
	}
	return CUDA_SUCCESS;
}

/* ---- cuMemAlloc and its kin: one range, one mapping, one anonymous physical allocation ---- */

static CUresult alloc_simple(enum sim_phys_kind kind, size_t size, uintptr_t *out)
{
	size_t mapped = round_up(size, SIM_PAGE);
	CUresult res = sim_check_ctx();
	struct sim_phys *p;
	struct sim_range *r;
	uintptr_t va;

	if (res)
		return res;
	if (!out || size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_lock);
	res = CUDA_ERROR_OUT_OF_MEMORY;
	va = reserve_va(mapped, 1UL << 16, 0);
	if (!va)
		goto out_unlock;
	p = phys_new(kind, sim_current_device(), mapped, NULL);
	if (!p)
		goto err_unreserve;
	r = range_new(SIM_RANGE_ALLOC, va, size);
	if (!r)
		goto err_phys;
	res = mapping_add(r, va, mapped, p, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	if (res)
		goto err_range;
	*out = va;
	pthread_mutex_unlock(&sim_lock);
	return CUDA_SUCCESS;

err_range:
	range_free(r);
err_phys:
	phys_put(p);
err_unreserve:
	munmap((void *)va, mapped);
out_unlock:
	pthread_mutex_unlock(&sim_lock);
	return res;
}

/* Free cuMemAlloc-style memory of one of two kinds; the caller has checked what it needs. */
static CUresult free_simple(uintptr_t va, enum sim_phys_kind kind1, enum sim_phys_kind kind2)
{
	struct sim_mapping *m;
	struct sim_range *r;
	size_t mapped;

	pthread_mutex_lock(&sim_lock);
	r = sim_range_find(va);
	m = r ? LIST_FIRST(&r->mappings) : NULL;
	if (!r || r->kind != SIM_RANGE_ALLOC || r->base != va || !m ||
	    (m->phys->kind != kind1 && m->phys->kind != kind2)) {
		pthread_mutex_unlock(&sim_lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	mapped = m->size;
	mapping_remove(m);
	munmap((void *)va, mapped);
	range_free(r);
	pthread_mutex_unlock(&sim_lock);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
{
	uintptr_t va = 0;
	CUresult res;

	if (sim_nvp2p_mode()) {
		res = sim_check_ctx();
		return res ? res : dptr ? sim_nvp2p_alloc(dptr, bytesize) : CUDA_ERROR_INVALID_VALUE;
	}
	res = alloc_simple(SIM_PHYS_DEVICE, bytesize, dptr ? &va : NULL);
	if (!res)
		*dptr = va;
	return res;
}

/* As CUDA's, it needs no current context (a thread other than the allocating one may free). */
CUresult CUDAAPI cuMemFree(CUdeviceptr dptr)
{
	CUresult res = sim_check_init();

	if (res)
		return res;
	if (sim_nvp2p_mode() && sim_nvp2p_owns(dptr))
		return sim_nvp2p_free(dptr);
	return free_simple(dptr, SIM_PHYS_DEVICE, SIM_PHYS_MANAGED);
}

CUresult CUDAAPI cuMemAllocHost(void **pp, size_t bytesize)
{
	uintptr_t va = 0;
	CUresult res = alloc_simple(SIM_PHYS_HOST, bytesize, pp ? &va : NULL);

	if (!res)
		*pp = (void *)va;
	return res;
}

CUresult CUDAAPI cuMemFreeHost(void *p)
{
	CUresult res = sim_check_ctx();

	return res ? res : free_simple((uintptr_t)p, SIM_PHYS_HOST, SIM_PHYS_HOST);
}

CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	uintptr_t va = 0;
	CUresult res;

	if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
		return CUDA_ERROR_INVALID_VALUE;
	res = alloc_simple(SIM_PHYS_MANAGED, bytesize, dptr ? &va : NULL);
	if (!res)
		*dptr = va;
	return res;
}

CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
	CUresult res = sim_check_ctx();
	struct sim_mapping *m;
	struct sim_range *r;

	if (res)
		return res;
	if (sim_nvp2p_mode() && sim_nvp2p_owns(dptr))
		return sim_nvp2p_address_range(dptr, pbase, psize);
	pthread_mutex_lock(&sim_lock);
	r = sim_range_find(dptr);
	m = r ? sim_mapping_find(r, dptr) : NULL;
	if (!m) {
		res = CUDA_ERROR_NOT_FOUND;
	} else if (r->kind == SIM_RANGE_ALLOC) {
		if (pbase)
			*pbase = r->base;
		if (psize)
			*psize = r->size;
	} else {
		/* A VMM address: the mapping it lies in. */
		if (pbase)
			*pbase = m->va;
		if (psize)
			*psize = m->size;
	}
	pthread_mutex_unlock(&sim_lock);
	return res;
}

/* ---- Virtual memory management ---- */

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
	p = phys_new(SIM_PHYS_VMM, prop->location.id, size, prop);
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
	p = phys_by_handle(handle);
	if (p) {
		p->handle_refs--;
		sim.counters.handle_refs--;
		phys_put(p);
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
	va = reserve_va(size, alignment, addr);
	if (va && !range_new(SIM_RANGE_RESERVED, va, size)) {
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
		range_free(r);
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
	p = phys_by_handle(handle);
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
	res = mapping_add(r, ptr, size, p, CU_MEM_ACCESS_FLAGS_PROT_NONE);
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
		while (ptr < end) {
			struct sim_mapping *m = mapping_at(r, ptr);

			ptr = m->va + m->size;
			mapping_remove(m);
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
	p = phys_by_handle(handle);
	if (!p || !(p->prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) {
		res = CUDA_ERROR_INVALID_VALUE;
	} else if (p->nvp2p) {
		/* nvp2p_sim memory has no fd to give. */
		res = CUDA_ERROR_NOT_SUPPORTED;
	} else {
		fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0) {
			res = errno == EMFILE ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_UNKNOWN;
		} else {
			*(int *)shareableHandle = fd;
			sim.counters.fds_exported++;
		}
	}
	pthread_mutex_unlock(&sim_lock);
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
	p = phys_by_handle(handle);
	if (p)
		*prop = p->prop;
	pthread_mutex_unlock(&sim_lock);
	return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

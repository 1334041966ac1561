/* SPDX-License-Identifier: MIT */
/*
 * Simulated device memory, the objects under it (internal.h): physical allocations, ranges of
 * addresses and the mappings between them. Addresses are real host addresses: a reservation is a
 * PROT_NONE anonymous mapping, cuMemMap maps the allocation's memfd over part of it (still
 * PROT_NONE), and cuMemSetAccess opens it with mprotect, as CUDA requires the three steps before
 * memory may be touched (vmm.c). cuMemAlloc memory is the same machinery behind one call
 * (memalloc.c), but it is no VMM allocation: it has no handle to retain or export, as with the
 * real driver.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

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
struct sim_phys *sim_phys_new(enum sim_phys_kind kind, int device, size_t size,
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
void sim_phys_put(struct sim_phys *p)
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

struct sim_phys *sim_phys_by_handle(CUmemGenericAllocationHandle h)
{
	struct sim_phys *p;

	LIST_FOREACH(p, &sim.phys, link)
		if (p->id == h && p->kind == SIM_PHYS_VMM && p->handle_refs)
			return p;
	return NULL;
}

/* size bytes of address space aligned to align, PROT_NONE; at hint if that is free. */
uintptr_t sim_reserve_va(size_t size, size_t align, uintptr_t hint)
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
	aligned = sim_round_up(start, align);
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

struct sim_range *sim_range_new(enum sim_range_kind kind, uintptr_t base, size_t size)
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

void sim_range_free(struct sim_range *r)
{
	LIST_REMOVE(r, link);
	if (r->kind == SIM_RANGE_RESERVED)
		sim.counters.reservations--;
	free(r);
}

/* Map p at va (inside r) with the given protection; CUDA_SUCCESS or an error. */
CUresult sim_mapping_add(struct sim_range *r, uintptr_t va, size_t size, struct sim_phys *p,
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

void sim_mapping_remove(struct sim_mapping *m)
{
	struct sim_phys *p = m->phys;

	if (p->nvp2p)
		sim_nvp2p_unmap_locked(m->va);
	unreserve_to_none(m->va, m->size);
	LIST_REMOVE(m, link);
	free(m);
	sim.counters.mappings--;
	p->map_refs--;
	sim_phys_put(p);
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

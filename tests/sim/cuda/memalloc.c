/* SPDX-License-Identifier: MIT */
/* cuMemAlloc and its kin: one range, one mapping, one anonymous physical allocation each. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define SIM_PAGE 4096UL

static CUresult alloc_simple(enum sim_phys_kind kind, size_t size, uintptr_t *out)
{
	size_t mapped = sim_round_up(size, SIM_PAGE);
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
	va = sim_reserve_va(mapped, 1UL << 16, 0);
	if (!va)
		goto out_unlock;
	p = sim_phys_new(kind, sim_current_device(), mapped, NULL);
	if (!p)
		goto err_unreserve;
	r = sim_range_new(SIM_RANGE_ALLOC, va, size);
	if (!r)
		goto err_phys;
	res = sim_mapping_add(r, va, mapped, p, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	if (res)
		goto err_range;
	*out = va;
	pthread_mutex_unlock(&sim_lock);
	return CUDA_SUCCESS;

err_range:
	sim_range_free(r);
err_phys:
	sim_phys_put(p);
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
	sim_mapping_remove(m);
	munmap((void *)va, mapped);
	sim_range_free(r);
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
	/* A driver that fails the lookup itself (4): out of memory, not "no such allocation". */
	if (sim_config()->bad_range == 4)
		return CUDA_ERROR_OUT_OF_MEMORY;
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
	/*
	 * A broken driver: the range reported starts one granule past the one dptr is in (1), or
	 * 512 bytes before it, still holding dptr but not in whole host pages (2).
	 */
	if (!res && pbase && sim_config()->bad_range == 1)
		*pbase += SIM_GRANULARITY;
	if (!res && pbase && sim_config()->bad_range == 2)
		*pbase -= 512;
	return res;
}

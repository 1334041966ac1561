/* SPDX-License-Identifier: MIT */
/*
 * cuPointerGetAttribute(s) and cuPointerSetAttribute. Each attribute is written with the width
 * the CUDA documentation gives it: unsigned int for booleans and enums, int for the device
 * ordinal, unsigned long long for ids and handle-type masks, pointer or size_t for addresses
 * and sizes. Callers that read into zeroed wider storage work with either.
 */
#include <string.h>

#include "internal.h"

/* What an address is, looked up under sim_lock. */
struct pointer_info {
	struct sim_range *range;
	struct sim_mapping *mapping;	/* NULL: reserved but not mapped */
};

/* What MEMORY_TYPE managed memory reports (simcuda_set_managed_memory_type). Under sim_lock. */
static unsigned managed_memory_type = CU_MEMORYTYPE_DEVICE;

static void put_uint(void *data, unsigned v)
{
	memcpy(data, &v, sizeof(v));
}

static void put_u64(void *data, unsigned long long v)
{
	memcpy(data, &v, sizeof(v));
}

static void put_size(void *data, size_t v)
{
	memcpy(data, &v, sizeof(v));
}

static void put_ptr(void *data, uintptr_t v)
{
	memcpy(data, &v, sizeof(v));
}

/* Fill data for attr of the address described by pi; CUDA_ERROR_INVALID_VALUE if it has none. */
static CUresult attribute(const struct pointer_info *pi, CUpointer_attribute attr,
			  uintptr_t ptr, void *data)
{
	const struct sim_range *r = pi->range;
	const struct sim_mapping *m = pi->mapping;
	const struct sim_phys *p = m ? m->phys : NULL;
	CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tokens;

	/* Reserved but unmapped address space answers only these. */
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_MAPPED:
		put_uint(data, m && m->access != CU_MEM_ACCESS_FLAGS_PROT_NONE);
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		put_ptr(data, r->base);
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		put_size(data, r->size);
		return CUDA_SUCCESS;
	default:
		break;
	}
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;

	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT: {
		CUcontext ctx = p->kind == SIM_PHYS_VMM ? NULL : sim_primary_ctx(p->device);

		memcpy(data, &ctx, sizeof(ctx));
		return CUDA_SUCCESS;
	}
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		/*
		 * Managed memory may report either type, whatever its location (CUDA documents
		 * it): callers must ask IS_MANAGED to tell. DEVICE unless a test asks for HOST.
		 */
		if (p->kind == SIM_PHYS_MANAGED)
			put_uint(data, managed_memory_type);
		else
			put_uint(data, p->kind == SIM_PHYS_HOST ? CU_MEMORYTYPE_HOST :
				 CU_MEMORYTYPE_DEVICE);
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		put_ptr(data, ptr);
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		if (p->kind != SIM_PHYS_HOST && p->kind != SIM_PHYS_MANAGED)
			return CUDA_ERROR_INVALID_VALUE;
		put_ptr(data, ptr);
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
		if (p->kind != SIM_PHYS_DEVICE)
			return CUDA_ERROR_INVALID_VALUE;
		tokens.p2pToken = 0x5eed000000000000ULL | r->buffer_id;
		tokens.vaSpaceToken = 1;
		memcpy(data, &tokens, sizeof(tokens));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
		put_uint(data, r->sync_memops);
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		put_u64(data, r->kind == SIM_RANGE_ALLOC ? r->buffer_id : p->id);
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		put_uint(data, p->kind == SIM_PHYS_MANAGED);
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: {
		/* A broken driver's: the ordinal just past the last device. */
		int device = sim_config()->bad_ordinal ? sim_config()->device_count : p->device;

		memcpy(data, &device, sizeof(device));
		return CUDA_SUCCESS;
	}
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
		put_uint(data, p->kind == SIM_PHYS_DEVICE);
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
		put_u64(data, p->kind == SIM_PHYS_VMM ? p->prop.requestedHandleTypes : 0);
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
		put_uint(data, p->kind == SIM_PHYS_DEVICE ||
			 (p->kind == SIM_PHYS_VMM && p->prop.allocFlags.gpuDirectRDMACapable));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
		put_uint(data, m->access);
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
		put_ptr(data, 0);
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
		if (sim_config()->bad_range == 1 || sim_config()->bad_range == 2 ||
		    sim_config()->bad_range == 4)
			return CUDA_ERROR_INVALID_VALUE;	/* as a driver without it */
		put_size(data, m->size);
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
		if (sim_config()->bad_range == 1 || sim_config()->bad_range == 2 ||
		    sim_config()->bad_range == 4)
			return CUDA_ERROR_INVALID_VALUE;
		/* 3: a broken driver's base, just past the mapping the address is in. */
		put_ptr(data, m->va + (sim_config()->bad_range == 3 ? m->size : 0));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
		put_u64(data, p->id);
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

static bool lookup(uintptr_t ptr, struct pointer_info *pi)
{
	pi->range = sim_range_find(ptr);
	pi->mapping = pi->range ? sim_mapping_find(pi->range, ptr) : NULL;
	return pi->range != NULL;
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute_,
				       CUdeviceptr ptr)
{
	CUresult res = sim_check_init();
	struct pointer_info pi;

	if (res)
		return res;
	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	if (sim_nvp2p_mode() && sim_nvp2p_owns(ptr))
		return sim_nvp2p_get_attribute(attribute_, ptr, data);
	pthread_mutex_lock(&sim_lock);
	res = lookup(ptr, &pi) ? attribute(&pi, attribute_, ptr, data) : CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&sim_lock);
	return res;
}

/* The size of the zero that an attribute of an unknown pointer reads as. */
static size_t attribute_size(CUpointer_attribute attr)
{
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
	case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
		return sizeof(void *);
	case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
		return sizeof(CUDA_POINTER_ATTRIBUTE_P2P_TOKENS);
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
	case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
		return sizeof(unsigned long long);
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
	case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
		return sizeof(size_t);
	default:
		return sizeof(unsigned);
	}
}

/* As CUDA documents: no error for an address CUDA does not know; its attributes read as zero. */
CUresult CUDAAPI cuPointerGetAttributes(unsigned int numAttributes,
					CUpointer_attribute *attributes, void **data,
					CUdeviceptr ptr)
{
	CUresult res = sim_check_init();
	struct pointer_info pi;
	bool known;

	if (res)
		return res;
	if (!numAttributes || !attributes || !data)
		return CUDA_ERROR_INVALID_VALUE;
	if (sim_nvp2p_mode() && sim_nvp2p_owns(ptr)) {
		for (unsigned i = 0; i < numAttributes; i++) {
			if (data[i] && sim_nvp2p_get_attribute(attributes[i], ptr, data[i]))
				memset(data[i], 0, attribute_size(attributes[i]));
		}
		return CUDA_SUCCESS;
	}
	pthread_mutex_lock(&sim_lock);
	known = lookup(ptr, &pi);
	for (unsigned i = 0; i < numAttributes; i++) {
		if (!data[i])
			continue;
		if (known && attribute(&pi, attributes[i], ptr, data[i]) == CUDA_SUCCESS)
			continue;
		memset(data[i], 0, attribute_size(attributes[i]));
	}
	pthread_mutex_unlock(&sim_lock);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuPointerSetAttribute(const void *value, CUpointer_attribute attribute_,
				       CUdeviceptr ptr)
{
	CUresult res = sim_check_init();
	struct pointer_info pi;
	unsigned v;

	if (res)
		return res;
	if (!value || attribute_ != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&v, value, sizeof(v));
	if (sim_nvp2p_mode() && sim_nvp2p_owns(ptr))
		return sim_nvp2p_set_sync_memops(ptr, v);
	pthread_mutex_lock(&sim_lock);
	if (lookup(ptr, &pi) && pi.mapping)
		pi.range->sync_memops = v != 0;
	else
		res = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&sim_lock);
	return res;
}

__attribute__((visibility("default"))) void simcuda_set_managed_memory_type(unsigned type)
{
	pthread_mutex_lock(&sim_lock);
	managed_memory_type = type;
	pthread_mutex_unlock(&sim_lock);
}

/* SPDX-License-Identifier: MIT */
/*
 * A baseline for bench_copy_impls: GDRCopy 2.6's copy strategy for a write-combined mapping,
 * written here from its documented behaviour (shared/reference/gdrcopy-2.6.md, section 5), so
 * that every run compares the library with GDRCopy's dispatch on the same mapping without
 * GDRCopy's source. x86-64 only (the H200's host).
 */
#ifndef GDR_TESTS_GDRCOPY26_COPY_H
#define GDR_TESTS_GDRCOPY26_COPY_H

#include <stddef.h>

#include "gdrapi.h"

/*
 * Check that a CPU with cpu_flags (enum gdr_cpu_feature) runs the strategy, as GDRCopy picks
 * its kernels in gdr_open. Returns 0, or -1 when this CPU or build cannot (it needs x86-64 with
 * SSE4.1 and AVX2). *movdir64b: whether gdrcopy26_copy_to_wc_movdir64b can run.
 */
int gdrcopy26_init(unsigned int cpu_flags, int *movdir64b);

/* One copy into / out of the mapping, as gdr_copy_to/from_mapping on an unmixed WC mapping. */
void gdrcopy26_copy_to_wc(void *dev, const void *host, size_t n);
void gdrcopy26_copy_from_wc(void *host, const void *dev, size_t n);
/* Stores with MOVDIR64B for whole aligned 64-byte blocks, as GDRCopy built with it does. */
void gdrcopy26_copy_to_wc_movdir64b(void *dev, const void *host, size_t n);

/*
 * GDRCopy 2.6's public calls around that strategy, from its documented rules (sections 2.2, 2.3,
 * 2.6 and 5.3): the handle is the address of a memh holding the mapping type; a copy through an
 * unmapped handle is EINVAL, one of 0 bytes returns 0; a copy picks the routine by the mapping's
 * type and ends with a full fence when the process holds mappings of more than one type, else
 * with a store fence for WC. No bounds check, as in GDRCopy. gdrcopy26_map makes a handle of
 * the given type and counts it, as gdr_map does ({0} if out of memory); gdrcopy26_unmap undoes it.
 */
gdr_mh_t gdrcopy26_map(gdr_mapping_type_t type);
void gdrcopy26_unmap(gdr_mh_t handle);
int gdrcopy26_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr, size_t size);
int gdrcopy26_copy_from_mapping(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size);
/* The same calls with kernels that check their arguments and the host's alignment as GDRCopy's do. */
int gdrcopy26_checked_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr,
				      size_t size);
int gdrcopy26_checked_copy_from_mapping(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr,
					size_t size);

#endif

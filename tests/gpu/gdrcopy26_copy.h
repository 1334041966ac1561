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

#endif

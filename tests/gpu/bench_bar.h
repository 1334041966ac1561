/* SPDX-License-Identifier: MIT */
/*
 * What the benchmarks that time copies through a mapping stand on: GPU memory from cuMemCreate,
 * pinned and mapped by the library, and the mapping's type. gpu_init must have run.
 */
#ifndef GDR_TESTS_BENCH_BAR_H
#define GDR_TESTS_BENCH_BAR_H

#include <stddef.h>

#include "gdrapi.h"
#include "gpucommon.h"

struct bench_bar {
	struct gpu_vmm vmm;	/* vmm.ptr: the memory's device address, vmm.size: its size */
	gdr_t g;
	gdr_mh_t mh;
	void *va;		/* the mapping of all vmm.size bytes */
	gdr_mapping_type_t type;
};

/* At least size bytes; 0, or 1 having said on stdout what failed (and nothing left held). */
int bench_bar_open(struct bench_bar *b, size_t size);
void bench_bar_close(struct bench_bar *b);

#endif

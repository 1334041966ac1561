/* SPDX-License-Identifier: MIT */
/*
 * GDRCopy <= 2.3's struct gdr_info: the v2 layout without mapping_type. Binaries built against
 * those versions, and dlopen users (NCCL, NVSHMEM), call the exported v1 gdr_get_info with it;
 * gdrapi.h names only v2, as GDRCopy 2.6's does. For gdrapi.c and the tests of that export.
 */
#ifndef GDR_INFO_V1_H
#define GDR_INFO_V1_H

#include <stdint.h>

typedef struct gdr_info_v1 {
	uint64_t va;
	uint64_t mapped_size;
	uint32_t page_size;
	uint64_t tm_cycles;
	uint32_t cycles_per_ms;
	unsigned mapped:1;
	unsigned wc_mapping:1;
} gdr_info_v1_t;

#endif

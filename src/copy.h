/* SPDX-License-Identifier: MIT */
/*
 * CPU copies to and from mappings of GPU memory. The routines are chosen once, per direction and
 * size class, from the CPU's features (cpu.h), or forced with GDRCOPY_COPY_IMPL.
 */
#ifndef GDR_COPY_H
#define GDR_COPY_H

#include <stddef.h>

#include "gdrapi.h"

/* Choose the routines; once per process, thread-safe. gdr_open calls it. */
void gdr_copy_init(void);

/*
 * Copy n bytes into (to) or out of (from) a mapping of the given type. Writes no byte outside
 * [dst, dst + n); reads no byte outside [src, src + n) except, out of a WC mapping, the rest of
 * the aligned 64-byte lines that hold its ends (never another page). Ends with the fence the
 * type needs, a full fence when mixed. Before gdr_copy_init they use the generic routines.
 */
void gdr_copy_to_mapping_type(gdr_mapping_type_t type, int mixed, void *dst, const void *src,
			      size_t n);
void gdr_copy_from_mapping_type(gdr_mapping_type_t type, int mixed, void *dst, const void *src,
				size_t n);

/* The GDR_COPY_IMPL_* routine used for n-byte copies into (to_device) or out of a WC mapping. */
int gdr_copy_impl_for(int to_device, size_t n);

#endif

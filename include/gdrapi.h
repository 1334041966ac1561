/* SPDX-License-Identifier: MIT */
/*
 * gdrapi.h - low-latency CPU access to NVIDIA GPU memory.
 *
 * API- and ABI-compatible with NVIDIA GDRCopy 2.6: the same names, values and layouts, so programs
 * built against GDRCopy's header link (or dlopen) this libgdrapi.so.2 unchanged.
 *
 * Environment variables (read by the library):
 *   GDRCOPY_ENABLE_LOGGING   any value turns logging to stderr on (default off).
 *   GDRCOPY_LOG_LEVEL        threshold, parsed as an integer: 1 debug, 2 info, 3 warn, 4 error
 *                            (default 4).
 *   GDRCOPY_USE_DMABUF_MMAP  exactly "1": skip the gdrdrv kernel module and use the dma-buf backend
 *                            (CUDA driver 13.3+); gdr_open fails if that backend cannot work.
 *   GDRCOPY_BACKEND          gdrdrv | dmabuf | vulkan: use only that backend (gdrcopy extension;
 *                            ignored in setuid/setgid programs). Default: gdrdrv, then dmabuf,
 *                            then vulkan, the first that works.
 *   GDRCOPY_COPY_IMPL        force one CPU copy routine for copies to and from write-combined
 *                            mappings (gdrcopy extension; the names are in gdrapi_ext.h). Ignored
 *                            in setuid/setgid programs.
 *
 * Threads: unlike GDRCopy's, a gdr_t of this library may be used from many threads at once.
 * Copies take no lock. Pinning, mapping and unmapping one handle from two threads at once is
 * serialised; using a mapping while another thread unmaps it is the caller's bug, as with munmap.
 *
 * Handles: a gdr_mh_t that is zero, stale (unpinned), forged, or from another gdr_t gives EINVAL,
 * never a crash.
 *
 * This header holds GDRCopy 2.6's API alone; gdrcopy's extensions to it are in gdrapi_ext.h.
 */
#ifndef GDRAPI_H
#define GDRAPI_H

#include <stdint.h>
#include <stddef.h>
#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Version ---------------------------------------------------------------------------------- */

#define MAJOR_VERSION_SHIFT 16
#define MINOR_VERSION_MASK  (((uint32_t)1 << MAJOR_VERSION_SHIFT) - 1)

#define GDR_API_MAJOR_VERSION 2
#define GDR_API_MINOR_VERSION 6
#define GDR_API_VERSION ((GDR_API_MAJOR_VERSION << MAJOR_VERSION_SHIFT) | GDR_API_MINOR_VERSION)

#define MINIMUM_GDRDRV_MAJOR_VERSION 2
#define MINIMUM_GDRDRV_MINOR_VERSION 0
#define MINIMUM_GDRDRV_VERSION \
    ((MINIMUM_GDRDRV_MAJOR_VERSION << MAJOR_VERSION_SHIFT) | MINIMUM_GDRDRV_MINOR_VERSION)

/*
 * GPU pages. Clients (DPDK) define these again after including this header, which C allows only
 * when the token sequences are identical: keep them exactly as GDRCopy spells them.
 */
#define GPU_PAGE_SHIFT   16
#define GPU_PAGE_SIZE    (1UL << GPU_PAGE_SHIFT)
#define GPU_PAGE_OFFSET  (GPU_PAGE_SIZE-1)
#define GPU_PAGE_MASK    (~GPU_PAGE_OFFSET)

/* ---- Types ------------------------------------------------------------------------------------ */

struct gdr;
typedef struct gdr *gdr_t;

/* A pinned buffer. Passed by value; h == 0 is never a valid handle. */
typedef struct gdr_mh_s {
    unsigned long h;
} gdr_mh_t;

typedef enum gdr_pin_flags {
    GDR_PIN_FLAG_DEFAULT    = 0,
    GDR_PIN_FLAG_FORCE_PCIE = 1
} gdr_pin_flags_t;

typedef enum gdr_mapping_type {
    GDR_MAPPING_TYPE_NONE    = 0,
    GDR_MAPPING_TYPE_WC      = 1,
    GDR_MAPPING_TYPE_CACHING = 2,
    GDR_MAPPING_TYPE_DEVICE  = 3,
    GDR_MAPPING_TYPE_MAX             /* internal */
} gdr_mapping_type_t;

/* Values, not bits: exactly one is passed to gdr_map_v2. */
typedef enum gdr_map_flags {
    GDR_MAP_FLAG_DEFAULT            = 0,
    GDR_MAP_FLAG_REQ_WC_MAPPING     = 1,
    GDR_MAP_FLAG_REQ_CACHE_MAPPING  = 2,
    GDR_MAP_FLAG_REQ_DEVICE_MAPPING = 3
} gdr_map_flags_t;

typedef enum gdr_attr {
    GDR_ATTR_USE_PERSISTENT_MAPPING      = 1,
    GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE = 2,
    GDR_ATTR_USING_DMA_BUF_MMAP          = 3,
    GDR_ATTR_MAX
} gdr_attr_t;

/*
 * Information about a pinned buffer. va and mapped_size describe the GPU-page-aligned range that
 * was pinned, which may start before and end after the range asked for.
 */
typedef struct gdr_info_v2 {
    uint64_t va;
    uint64_t mapped_size;
    uint32_t page_size;
    uint64_t tm_cycles;      /* deprecated */
    uint32_t cycles_per_ms;  /* deprecated */
    unsigned mapped:1;
    unsigned wc_mapping:1;
    gdr_mapping_type_t mapping_type;
} gdr_info_v2_t;
typedef gdr_info_v2_t gdr_info_t;

/* ---- Lifecycle -------------------------------------------------------------------------------- */

/* Open the library: pick a backend. NULL when none works (the log says why, per backend). */
gdr_t gdr_open(void);

/* Unmap and unpin everything still held, then free g, always. Returns the first error seen. */
int gdr_close(gdr_t g);

/* ---- Pin and map ------------------------------------------------------------------------------ */

/*
 * Pin [addr, addr + size) of GPU memory for CPU mapping; *handle receives the handle. The range
 * is not CPU-accessible until gdr_map. p2p_token and va_space are deprecated; pass 0.
 */
int gdr_pin_buffer(gdr_t g, unsigned long addr, size_t size, uint64_t p2p_token,
                   uint32_t va_space, gdr_mh_t *handle);

/* As gdr_pin_buffer, with gdr_pin_flags_t bits; an unknown bit gives EINVAL. */
int gdr_pin_buffer_v2(gdr_t g, unsigned long addr, size_t size, uint32_t flags, gdr_mh_t *handle);

/* Destroy the pinning; unmaps it first if still mapped. On error the handle stays valid. */
int gdr_unpin_buffer(gdr_t g, gdr_mh_t handle);

/* *flag = 1 once the driver revoked the pin (memory freed before unpin); always 0 when persistent. */
int gdr_get_callback_flag(gdr_t g, gdr_mh_t handle, int *flag);

int gdr_get_info_v2(gdr_t g, gdr_mh_t handle, gdr_info_v2_t *info);
#define gdr_get_info gdr_get_info_v2

/*
 * Map a pinned buffer into the CPU's address space. The mapping starts at info.va, not at the
 * pinned address: add (addr - info.va). With the gdrdrv backend the pin must start on a GPU page
 * (64 KiB) boundary (EINVAL otherwise); the dmabuf and vulkan backends map any pin. A handle
 * maps once; a second map gives EAGAIN.
 */
int gdr_map(gdr_t g, gdr_mh_t handle, void **va, size_t size);

/* As gdr_map; flags is one gdr_map_flags_t value asking for a mapping type (EINVAL if not given). */
int gdr_map_v2(gdr_t g, gdr_mh_t handle, void **va, size_t size, int flags);

int gdr_unmap(gdr_t g, gdr_mh_t handle, void *va, size_t size);

/* ---- Copy ------------------------------------------------------------------------------------- */

/*
 * Copy between host memory and a mapping of handle, storing no byte outside the range on either
 * side (a read may load the rest of the aligned 16- to 64-byte blocks of the mapping it
 * touches), with the fence the mapping type needs. No ordering with GPU work already running is
 * implied (see the GPUDirect RDMA documentation on synchronisation).
 */
int gdr_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr, size_t size);
int gdr_copy_from_mapping(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size);

/* ---- Versions, attributes --------------------------------------------------------------------- */

void gdr_runtime_get_version(int *major, int *minor);

/*
 * Version of the kernel driver in use, or, for backends with no kernel module, the gdrdrv version
 * whose behaviour they provide (2.6). Never aborts; NULL arguments give EINVAL.
 */
int gdr_driver_get_version(gdr_t g, int *major, int *minor);

int gdr_get_attribute(gdr_t g, gdr_attr_t attr, int *v);

/* *pstr = "None", "Write Combining", "Caching" or "Device"; EINVAL for any other type. */
int gdr_get_mapping_type_string(gdr_mapping_type_t type, const char **pstr);

#ifdef __cplusplus
}
#endif

#endif /* GDRAPI_H */

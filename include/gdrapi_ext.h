/* SPDX-License-Identifier: MIT */
/*
 * gdrapi_ext.h - gdrcopy's extensions to the GDRCopy 2.6 API of gdrapi.h, beside it as mlx5dv.h
 * sits beside verbs.h: which backend and which CPU copy routines a gdr_t uses, and why the
 * calling thread's calls failed. NVIDIA's libgdrapi answers the attributes with EINVAL and has
 * no gdr_ext_* function. See gdrapi_ext(7).
 */
#ifndef GDRAPI_EXT_H
#define GDRAPI_EXT_H

#include <stddef.h>

#include "gdrapi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Attributes --------------------------------------------------------------------------------- */

/*
 * More values for gdr_get_attribute. They lie outside gdr_attr_t so that GDR_ATTR_MAX keeps
 * GDRCopy's value; pass them cast, (gdr_attr_t)GDR_ATTR_EXT_BACKEND.
 *   GDR_ATTR_EXT_BACKEND: which backend this gdr_t uses, a GDR_BACKEND_* value.
 *   GDR_ATTR_EXT_COPY_TO_IMPL / _FROM_IMPL: the GDR_COPY_IMPL_* routine chosen for copies of
 *   4 KiB into / out of a write-combined mapping.
 *   GDR_ATTR_EXT_COPY_IMPLS: the routines GDRCOPY_COPY_IMPL can choose in this process (this
 *   library has them and this CPU runs them), as a mask of 1 << GDR_COPY_IMPL_*.
 */
#define GDR_ATTR_EXT_BACKEND        0x10001
#define GDR_ATTR_EXT_COPY_TO_IMPL   0x10002
#define GDR_ATTR_EXT_COPY_FROM_IMPL 0x10003
#define GDR_ATTR_EXT_COPY_IMPLS     0x10004

/* ---- Backends ----------------------------------------------------------------------------------- */

#define GDR_BACKEND_GDRDRV 1
#define GDR_BACKEND_DMABUF 2
#define GDR_BACKEND_VULKAN 3

/* "gdrdrv", "dmabuf" or "vulkan", as GDRCOPY_BACKEND names them; NULL for any other value. */
static inline const char *gdr_ext_backend_name(int backend)
{
    static const char *const names[] = { NULL, "gdrdrv", "dmabuf", "vulkan" };

    return backend > 0 && backend < (int)(sizeof(names) / sizeof(names[0])) ? names[backend] :
                                                                             NULL;
}

/* ---- CPU copy routines -------------------------------------------------------------------------- */

/* One value per family of routines; gdrapi_ext(7) says what each does and where it runs. */
#define GDR_COPY_IMPL_GENERIC   0
#define GDR_COPY_IMPL_MEMCPY    1
#define GDR_COPY_IMPL_SSE       2   /* x86 */
#define GDR_COPY_IMPL_SSE41     3   /* x86 */
#define GDR_COPY_IMPL_AVX2      4   /* x86 */
#define GDR_COPY_IMPL_AVX512    5   /* x86 */
#define GDR_COPY_IMPL_MOVDIR64B 6   /* x86, stores only */
#define GDR_COPY_IMPL_REP_MOVSB 7   /* x86, stores only */
#define GDR_COPY_IMPL_NEON      8   /* arm64 */
#define GDR_COPY_IMPL_SCALAR    9   /* ppc64le: unrolled scalar loops */
#define GDR_COPY_IMPL_STP       10  /* arm64: plain 128-bit LDP/STP pairs */
#define GDR_COPY_IMPL_COUNT     11

/*
 * The name GDRCOPY_COPY_IMPL takes for a GDR_COPY_IMPL_* value ("avx2"); NULL for any other
 * value. GDRCOPY_COPY_IMPL also takes "power", the old name of "scalar".
 */
static inline const char *gdr_ext_copy_impl_name(int impl)
{
    static const char *const names[GDR_COPY_IMPL_COUNT] = {
        "generic", "memcpy", "sse", "sse41", "avx2", "avx512", "movdir64b", "rep_movsb",
        "neon", "scalar", "stp",
    };

    return impl >= 0 && impl < GDR_COPY_IMPL_COUNT ? names[impl] : NULL;
}

/* ---- Error reasons ------------------------------------------------------------------------------ */

/* The most text gdr_ext_take_errors keeps per thread, its NUL included. */
#define GDR_EXT_ERRORS_MAX 1024

/*
 * Why the calling thread's calls failed: the messages the library gave at error level (what
 * GDRCOPY_ENABLE_LOGGING prints as "ERR:"), recorded whether or not logging is on, one per line,
 * oldest first, since the previous gdr_ext_take_errors in this thread. Copies at most size - 1
 * bytes of them and a NUL into buf, forgets them all, and returns the length copied; buf NULL
 * or size 0 only forgets them. Bindings call it once before a call to start clean and once
 * after it fails. Failures that are plain argument errors (a NULL pointer, a stale handle) log
 * nothing: an empty result means the errno says it all.
 */
size_t gdr_ext_take_errors(char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* GDRAPI_EXT_H */

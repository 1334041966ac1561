/* SPDX-License-Identifier: MIT */
/*
 * The CUDA driver API, loaded at run time: libgdrapi never links libcuda, so it loads (and
 * gdr_open works or explains itself) on machines without the NVIDIA driver. One table per
 * process, shared by every gdr_t and backend; also linked into test programs (cuda.o needs only
 * log.o). The entry points are those of cuda_entry_points.h, looked up with cuGetProcAddress_v2.
 *
 * libcuda is loaded once per process and never unloaded once cuInit has been called on it: its
 * destructors would act on driver state that outlives every gdr_t (and, in a fork child, is
 * shared with the parent), and loading it again would pay for its start-up again.
 *
 * (Not named cuda.h: src/ is on the include path before the toolkit, so a cuda.h here would
 * hide NVIDIA's from every file, cudaTypedefs.h included.)
 */
#ifndef GDR_CUDA_DRIVER_H
#define GDR_CUDA_DRIVER_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "cuda_entry_points.h"
#include "log.h"

/* The oldest driver with cuGetProcAddress_v2. */
#define GDR_CUDA_MIN_DRIVER_VERSION 12000

struct gdr_cuda {
	int driver_version;		/* cuDriverGetVersion: 1000 * major + 10 * minor */
	PFN_cuGetProcAddress_v12000 cuGetProcAddress;
#define GDR_CUDA_FIELD(name, version) PFN_##name##_v##version name;
	GDR_CUDA_ENTRY_POINTS(GDR_CUDA_FIELD)
#undef GDR_CUDA_FIELD
};

/*
 * The table, without initialising CUDA: the first call dlopens libcuda.so.1 (then libcuda.so),
 * checks the driver's version and looks up every entry point. What a probe needs: cheap after
 * the first call, and cuInit is not called. NULL with why filled when that fails; a later call
 * tries again. Thread-safe.
 */
const struct gdr_cuda *gdr_cuda_load(struct gdr_why *why);

/*
 * The table, with CUDA initialised: gdr_cuda_load, then cuInit(0) once per process (again in a
 * fork child, where NVIDIA's driver refuses it: why then says so). NULL with why filled when
 * that fails; a later call tries again. Thread-safe.
 */
const struct gdr_cuda *gdr_cuda_acquire(struct gdr_why *why);

/* Look up an entry point the table lacks (tests); 0 or ENOSYS with *pfn NULL. */
int gdr_cuda_proc(const struct gdr_cuda *cuda, const char *name, int version, void **pfn);

/* "CUDA_ERROR_INVALID_VALUE (invalid argument)" in buf, for log lines; returns buf. */
const char *gdr_cuda_strerror(const struct gdr_cuda *cuda, CUresult res, char *buf, size_t len);

/*
 * The errno for a CUresult:
 *   INVALID_VALUE, NOT_FOUND, INVALID_HANDLE  -> EINVAL  (not CUDA memory, bad range)
 *   NOT_SUPPORTED                             -> ENOTSUP (device or platform cannot do it)
 *   OUT_OF_MEMORY                             -> ENOMEM
 *   NOT_PERMITTED                             -> EPERM
 *   INVALID_DEVICE, NO_DEVICE                 -> ENODEV
 *   anything else                             -> EIO
 * GDRCopy returned raw CUresult numbers, which clients read as errnos (801 is not an errno).
 */
int gdr_cuda_errno(CUresult res);

/* A driver version (1000 * major + 10 * minor) as its major and minor numbers. */
static inline int gdr_cuda_version_major(int version)
{
	return version / 1000;
}

static inline int gdr_cuda_version_minor(int version)
{
	return version % 1000 / 10;
}

/*
 * A CUDA context for the length of one library call. Driver calls need one; a thread of the
 * application may have none current (a fresh thread, a program that only used VMM calls). Then
 * enter retains device's primary context and makes it current, and leave undoes both, so the
 * thread ends as it began. With a context current, both do nothing.
 */
struct gdr_cuda_ctx_scope {
	CUdevice device;
	bool retained;
};

CUresult gdr_cuda_ctx_enter(const struct gdr_cuda *cuda, int ordinal,
			    struct gdr_cuda_ctx_scope *scope);
void gdr_cuda_ctx_leave(const struct gdr_cuda *cuda, struct gdr_cuda_ctx_scope *scope);

/*
 * After a gdr_cuda_ctx_enter that had to retain the device's primary context (no context was
 * current): keep one more reference to it in held (gdr.h) until gdr_cuda_ctx_release_held, once
 * per device. A primary context lives while it is referenced: without this, each pin and unpin
 * made from a thread with no context of its own creates the device's context and destroys it
 * again (0.18 s each on the H200: docs/performance.md). Ordinals from 64 on are not kept.
 */
struct gdr_cuda_held;
void gdr_cuda_ctx_hold(const struct gdr_cuda *cuda, const struct gdr_cuda_ctx_scope *scope,
		       int ordinal, struct gdr_cuda_held *held);

/* Release the references held keeps, and empty it. */
void gdr_cuda_ctx_release_held(const struct gdr_cuda *cuda, struct gdr_cuda_held *held);

#endif

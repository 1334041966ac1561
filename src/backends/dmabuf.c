/* SPDX-License-Identifier: MIT */
/*
 * The dma-buf backend: no kernel module. A pin exports the range as a dma-buf fd with
 * cuMemGetHandleForAddressRange, a map mmap()s that fd. NVIDIA allows that mmap for discrete
 * GPUs from driver R610 (CUDA 13.3); R580 exports the fd but refuses the mmap (errno 524).
 * What users see (alignment, mapping types, errors) is in gdrapi(7).
 *
 * The export starts on the GPU page below the pin and is mapped at offset 0, where GDRCopy
 * exported from the host page and mapped at the offset inside it, which mmap refuses unless it
 * is 0 (GDRCopy 2.6 pitfall 4): so gdr_map works for any pin, and info.va and info.page_size are
 * gdrdrv's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuda_driver.h"
#include "fork_fds.h"
#include "gdr.h"
#include "log.h"

/* The first CUDA version whose driver (R610) allows mmap of dma-bufs of discrete GPUs. */
#define DMABUF_MIN_DRIVER_VERSION 13030
/* The kernel's internal ENOTSUPP, which R580's dma-buf mmap returns; user space has no name. */
#define KERNEL_ENOTSUPP 524

/* Per gdr_t; every field is under g->lock. */
struct dmabuf_state {
	const struct gdr_cuda *cuda;
	unsigned long pins;		/* live pins, each holding one fd */
};

struct dmabuf_pin {
	int fd;				/* the dma-buf of [mh->va, mh->va + mh->mapped_size) */
	struct gdr_fork_fd *fork_fd;	/* closes fd in fork children */
	gdr_mapping_type_t type;	/* fixed by the export */
};

static const char *mapping_type_name(gdr_mapping_type_t type)
{
	switch (type) {
	case GDR_MAPPING_TYPE_WC:
		return "WC";
	case GDR_MAPPING_TYPE_CACHING:
		return "CACHING";
	case GDR_MAPPING_TYPE_DEVICE:
		return "DEVICE";
	default:
		return "NONE";
	}
}

/* Some CUDA device can export dma-bufs; 0 or an errno with why. */
static int dmabuf_check_devices(const struct gdr_cuda *cuda, struct gdr_why *why)
{
	CUresult res, query_err = CUDA_SUCCESS;
	int count = 0, query_dev = -1;
	char err[128];

	res = cuda->cuDeviceGetCount(&count);
	if (res != CUDA_SUCCESS) {
		gdr_why_set(why, "cuDeviceGetCount failed: %s",
			    gdr_cuda_strerror(cuda, res, err, sizeof(err)));
		return gdr_cuda_errno(res);
	}
	for (int i = 0; i < count; i++) {
		CUdevice dev;
		int supported = 0;

		res = cuda->cuDeviceGet(&dev, i);
		if (res == CUDA_SUCCESS)
			res = cuda->cuDeviceGetAttribute(&supported,
							 CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev);
		if (res == CUDA_SUCCESS && supported)
			return 0;
		if (res != CUDA_SUCCESS && query_err == CUDA_SUCCESS) {
			query_err = res;
			query_dev = i;
		}
	}
	/* A device the driver would not describe is not one that lacks the attribute. */
	if (query_err != CUDA_SUCCESS) {
		gdr_why_set(why, "cannot ask CUDA device %d whether it supports dma-buf export: %s",
			    query_dev, gdr_cuda_strerror(cuda, query_err, err, sizeof(err)));
		return gdr_cuda_errno(query_err);
	}
	gdr_why_set(why, "none of the %d CUDA device(s) supports dma-buf export "
		    "(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 0)", count);
	return ENOTSUP;
}

/* libcuda loads and its driver is new enough: no cuInit, no device query. */
static int dmabuf_probe(struct gdr_why *why)
{
	const struct gdr_cuda *cuda = gdr_cuda_load(why);
	int v;

	if (!cuda)
		return ENODEV;
	v = cuda->driver_version;
	if (v < DMABUF_MIN_DRIVER_VERSION) {
		gdr_why_set(why, "CUDA driver %d.%d < %d.%d: dma-buf mmap of discrete GPU memory "
			    "needs driver R610 (CUDA 13.3) or newer",
			    gdr_cuda_version_major(v), gdr_cuda_version_minor(v),
			    gdr_cuda_version_major(DMABUF_MIN_DRIVER_VERSION),
			    gdr_cuda_version_minor(DMABUF_MIN_DRIVER_VERSION));
		return ENOTSUP;
	}
	return 0;
}

static int dmabuf_open(struct gdr *g, struct gdr_why *why)
{
	struct dmabuf_state *st;
	const struct gdr_cuda *cuda = gdr_cuda_acquire(why);
	int ret;

	if (!cuda)
		return ENODEV;
	ret = dmabuf_check_devices(cuda, why);
	if (ret)
		return ret;
	st = calloc(1, sizeof(*st));
	if (!st) {
		gdr_why_set(why, "out of memory");
		return ENOMEM;
	}
	st->cuda = cuda;
	g->backend_priv = st;
	return 0;
}

/*
 * Every pin holds a descriptor, so running out of them is the likely failure of a program with
 * many pins, and CUDA reports it as a generic error. 0, EMFILE or ENFILE (logged).
 */
static int check_fds(const struct dmabuf_state *st)
{
	char held[128];

	snprintf(held, sizeof(held), "the dmabuf backend holds one per pinned buffer and this "
		 "gdr_t holds %lu pins", st->pins);
	return gdr_backend_check_fds(held);
}

/* The CUDA allocation a pin starts in, as cuMemGetAddressRange reports it. */
struct pin_allocation {
	CUdeviceptr base;
	size_t size;
	bool known;	/* false: CUDA did not say (or said nonsense); the export uses host pages */
};

/*
 * Set the range to export for the pin: whole GPU pages inside its allocation, else host pages
 * (gdr_backend_set_pin_range); *alloc is the allocation. Caller has a context current.
 */
static void set_export_range(struct gdr *g, const struct gdr_cuda *cuda, struct gdr_memh *mh,
			     const struct gdr_pin_request *req, struct pin_allocation *alloc)
{
	CUdeviceptr base = (CUdeviceptr)req->addr;
	size_t len = req->size;
	char err[128];
	CUresult res;

	res = cuda->cuMemGetAddressRange(&base, &len, (CUdeviceptr)req->addr);
	alloc->known = res == CUDA_SUCCESS && gdr_backend_range_holds(base, len, req->addr);
	if (!alloc->known) {
		gdr_dbg("dmabuf: cuMemGetAddressRange(0x%lx) %s (%s); exporting host pages",
			req->addr, res != CUDA_SUCCESS ? "failed" : "gave a range without it",
			res != CUDA_SUCCESS ? gdr_cuda_strerror(cuda, res, err, sizeof(err)) :
			"a broken driver");
		base = (CUdeviceptr)req->addr;
		len = req->size;
	}
	alloc->base = base;
	alloc->size = len;
	gdr_backend_set_pin_range(g, mh, req->addr, req->size, base, len);
}

/*
 * Log the CUDA driver's refusal (res) of the pin's export. The pin's end is left for the driver
 * to judge (gdr_backend_set_pin_range), which refuses one past the allocation with a bare
 * "invalid argument": that case names the allocation and the size that fits.
 */
static void log_export_refused(const struct gdr_cuda *cuda, const struct gdr_memh *mh,
			       const struct gdr_pin_request *req,
			       const struct pin_allocation *alloc, unsigned long long export_flags,
			       CUresult res)
{
	/* The allocation holds req->addr (it is the pin itself when not known): no wrap. */
	size_t fits = alloc->size - (req->addr - alloc->base);
	char err[128];

	gdr_cuda_strerror(cuda, res, err, sizeof(err));
	if (alloc->known && req->size > fits) {
		gdr_err("gdr_pin_buffer: 0x%lx/%zu runs %zu bytes past the end of its CUDA "
			"allocation 0x%llx+%zu (cuMemGetAddressRange), and the CUDA driver refused "
			"its export (cuMemGetHandleForAddressRange(0x%llx, %llu, DMA_BUF_FD, flags "
			"0x%llx): %s); pin within the allocation: at most %zu bytes from 0x%lx",
			req->addr, req->size, req->size - fits, (unsigned long long)alloc->base,
			alloc->size, (unsigned long long)mh->va, (unsigned long long)mh->mapped_size,
			export_flags, err, fits, req->addr);
		return;
	}
	gdr_err("gdr_pin_buffer: cuMemGetHandleForAddressRange(0x%llx, %llu, DMA_BUF_FD, flags "
		"0x%llx) for 0x%lx/%zu failed: %s", (unsigned long long)mh->va,
		(unsigned long long)mh->mapped_size, export_flags, req->addr, req->size, err);
}

/* CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL of addr; 0, EINVAL or the driver's errno (logged). */
static int pointer_device(const struct gdr_cuda *cuda, unsigned long addr, int *ordinal)
{
	char err[128];
	CUresult res;

	res = cuda->cuPointerGetAttribute(ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
					  (CUdeviceptr)addr);
	if (res == CUDA_ERROR_INVALID_VALUE) {
		gdr_err("gdr_pin_buffer: 0x%lx is not CUDA device memory "
			"(cuPointerGetAttribute(DEVICE_ORDINAL): %s)",
			addr, gdr_cuda_strerror(cuda, res, err, sizeof(err)));
		return EINVAL;
	}
	/* Any other answer is the driver failing, not the memory being wrong: its errno. */
	if (res != CUDA_SUCCESS) {
		gdr_err("gdr_pin_buffer: CUDA cannot say which device 0x%lx is on "
			"(cuPointerGetAttribute(DEVICE_ORDINAL): %s)",
			addr, gdr_cuda_strerror(cuda, res, err, sizeof(err)));
		return gdr_cuda_errno(res);
	}
	return 0;
}

/* Whether device can export, and whether the CPU reaches its memory coherently. */
static int device_caps(const struct gdr_cuda *cuda, int ordinal, bool *coherent)
{
	int supported = 0, pageable = 0;
	char err[128];
	CUdevice dev;
	CUresult res;

	res = cuda->cuDeviceGet(&dev, ordinal);
	if (res == CUDA_SUCCESS)
		res = cuda->cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
						 dev);
	if (res != CUDA_SUCCESS) {
		gdr_err("gdr_pin_buffer: cannot query CUDA device %d: %s", ordinal,
			gdr_cuda_strerror(cuda, res, err, sizeof(err)));
		return gdr_cuda_errno(res);
	}
	if (!supported) {
		gdr_err("gdr_pin_buffer: CUDA device %d does not support dma-buf export "
			"(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 0)", ordinal);
		return ENOTSUP;
	}
	/* GDRCopy's coherence test; an error means not coherent, as there. */
	res = cuda->cuDeviceGetAttribute(&pageable,
		CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, dev);
	*coherent = res == CUDA_SUCCESS && pageable;
	return 0;
}

static int dmabuf_pin(struct gdr *g, struct gdr_memh *mh, const struct gdr_pin_request *req)
{
	struct dmabuf_state *st = g->backend_priv;
	const struct gdr_cuda *cuda = st->cuda;
	struct gdr_cuda_ctx_scope scope;
	unsigned long long export_flags = 0;
	struct pin_allocation alloc;
	struct dmabuf_pin *pin;
	bool coherent = false;
	int ordinal, fd = -1, ret;
	char err[128];
	CUresult res;

	if (req->legacy && (req->p2p_token || req->va_space)) {
		gdr_err("gdr_pin_buffer: p2p_token/va_space must be 0 with the dmabuf backend, whose "
			"pins are persistent; pass 0 or use gdr_pin_buffer_v2");
		return EINVAL;
	}
	ret = pointer_device(cuda, req->addr, &ordinal);
	if (ret)
		return ret;
	ret = device_caps(cuda, ordinal, &coherent);
	if (ret)
		return ret;
	/*
	 * On a coherent platform (Grace) the default export uses the coherent link and maps
	 * cached; FORCE_PCIE asks for BAR1, which maps WC. Elsewhere every CPU mapping already goes
	 * through BAR1 and the driver refuses the PCIE flag (CUDA_ERROR_NOT_SUPPORTED), so the flag
	 * is not passed and the pin is WC, as GDRCopy's mode table says.
	 */
	if (coherent && (req->flags & GDR_PIN_FLAG_FORCE_PCIE))
		export_flags = CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE;
	pin = calloc(1, sizeof(*pin));
	if (!pin) {
		gdr_err("gdr_pin_buffer: out of memory for the pin of 0x%lx", req->addr);
		return ENOMEM;
	}
	pin->type = coherent && !export_flags ? GDR_MAPPING_TYPE_CACHING : GDR_MAPPING_TYPE_WC;

	ret = check_fds(st);
	if (ret)
		goto err_free;
	res = gdr_cuda_ctx_enter(cuda, ordinal, &scope);
	if (res != CUDA_SUCCESS) {
		gdr_err("gdr_pin_buffer: no CUDA context for device %d: %s", ordinal,
			gdr_cuda_strerror(cuda, res, err, sizeof(err)));
		ret = gdr_cuda_errno(res);
		goto err_free;
	}
	set_export_range(g, cuda, mh, req, &alloc);
	gdr_backend_export_begin();
	res = cuda->cuMemGetHandleForAddressRange(&fd, (CUdeviceptr)mh->va, mh->mapped_size,
						  CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
						  export_flags);
	/* NVIDIA's driver makes it close-on-exec already; the library does not count on that. */
	ret = gdr_backend_export_take(res == CUDA_SUCCESS, fd, &pin->fork_fd, "gdr_pin_buffer: "
				      "cuMemGetHandleForAddressRange(0x%llx, %llu) for 0x%lx/%zu",
				      (unsigned long long)mh->va,
				      (unsigned long long)mh->mapped_size, req->addr, req->size);
	/* Once pinned: a failed pin keeps nothing. */
	if (res == CUDA_SUCCESS && !ret)
		gdr_cuda_ctx_hold(cuda, &scope, ordinal, &g->cuda_held);
	gdr_cuda_ctx_leave(cuda, &scope);
	if (res != CUDA_SUCCESS) {
		/* Another thread may have taken the last descriptor meanwhile. */
		ret = check_fds(st);
		if (!ret) {
			log_export_refused(cuda, mh, req, &alloc, export_flags, res);
			ret = gdr_cuda_errno(res);
		}
		goto err_free;
	}
	if (ret)
		goto err_free;
	pin->fd = fd;
	mh->backend_priv = pin;
	st->pins++;
	gdr_dbg("dmabuf: pinned 0x%lx/%zu as [0x%llx, 0x%llx), fd %d, %s", req->addr, req->size,
		(unsigned long long)mh->va, (unsigned long long)(mh->va + mh->mapped_size), fd,
		mapping_type_name(pin->type));
	return 0;

err_free:
	free(pin);
	return ret;
}

/* Unmapped first: the munmap may fail, the close of the descriptor cannot. */
static int dmabuf_unpin(struct gdr *g, struct gdr_memh *mh)
{
	struct dmabuf_state *st = g->backend_priv;
	struct dmabuf_pin *pin = mh->backend_priv;
	int ret;

	if (mh->map_va) {
		ret = gdr_backend_munmap(g, mh);
		if (ret)
			return ret;
	}
	gdr_fork_fd_drop(pin->fork_fd);	/* before the close: fork_fds.h */
	/* Linux frees the descriptor even when close reports an error: nothing to retry. */
	close(pin->fd);
	free(pin);
	mh->backend_priv = NULL;
	st->pins--;
	return 0;
}

/* Whether flags (a gdr_map_flags_t) can be met by a pin of type; logs why not. */
static bool map_flags_ok(const struct gdr_memh *mh, int flags, gdr_mapping_type_t type)
{
	gdr_mapping_type_t want;

	switch (flags) {
	case GDR_MAP_FLAG_REQ_WC_MAPPING:
		want = GDR_MAPPING_TYPE_WC;
		break;
	case GDR_MAP_FLAG_REQ_CACHE_MAPPING:
		want = GDR_MAPPING_TYPE_CACHING;
		break;
	case GDR_MAP_FLAG_REQ_DEVICE_MAPPING:
		want = GDR_MAPPING_TYPE_DEVICE;
		break;
	default:
		return true;
	}
	if (want == type)
		return true;
	gdr_err("gdr_map_v2: a %s mapping of the pin at 0x%lx was asked for, but the CUDA driver "
		"fixed it as %s when it was pinned (dma-buf mappings cannot change type); map with "
		"GDR_MAP_FLAG_DEFAULT%s", mapping_type_name(want), mh->addr, mapping_type_name(type),
		want == GDR_MAPPING_TYPE_WC ? ", or pin with GDR_PIN_FLAG_FORCE_PCIE for WC" : "");
	return false;
}

static int dmabuf_map(struct gdr *g, struct gdr_memh *mh, size_t size, int flags, void **va,
		      gdr_mapping_type_t *type)
{
	struct dmabuf_pin *pin = mh->backend_priv;
	size_t len = gdr_backend_map_length(g, size);
	void *p;
	int err;

	if (!map_flags_ok(mh, flags, pin->type))
		return EINVAL;
	gdr_backend_map_begin();
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, pin->fd, 0);
	err = errno;
	gdr_backend_map_end(g, p == MAP_FAILED ? NULL : p, len);
	if (p == MAP_FAILED) {
		if (err == KERNEL_ENOTSUPP || err == EINVAL || err == ENODEV || err == ENOTSUP) {
			gdr_err("gdr_map: mmap of the dma-buf of 0x%lx failed (errno %d): this CUDA "
				"driver does not allow mmap of dma-buf memory; driver R610 (CUDA "
				"13.3) or newer does", mh->addr, err);
			return EOPNOTSUPP;
		}
		gdr_err("gdr_map: mmap of %zu bytes of the dma-buf of 0x%lx failed: %s", len,
			mh->addr, strerror(err));
		return err;
	}
	*va = p;
	*type = pin->type;
	return 0;
}

static int dmabuf_unmap(struct gdr *g, struct gdr_memh *mh)
{
	return gdr_backend_munmap(g, mh);
}

static int dmabuf_get_attribute(struct gdr *g, int attr, int *value)
{
	(void)g;
	switch (attr) {
	case GDR_ATTR_USE_PERSISTENT_MAPPING:
	case GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE:
	case GDR_ATTR_USING_DMA_BUF_MMAP:
		*value = 1;
		return 0;
	default:
		return EINVAL;
	}
}

/* CUDA stays loaded, as the process's; the primary contexts the gdr_t kept go. */
static int dmabuf_close(struct gdr *g)
{
	struct dmabuf_state *st = g->backend_priv;

	gdr_cuda_ctx_release_held(st->cuda, &g->cuda_held);
	gdr_backend_forget_priv(g);
	return 0;
}

static const struct gdr_backend_ops dmabuf_ops = {
	.close = dmabuf_close,
	/* In a fork child: the fds are left open (their numbers may be the child's own by now). */
	.forget_pin = gdr_backend_forget_pin_priv,
	.forget = gdr_backend_forget_priv,
	.pin = dmabuf_pin,
	.unpin = dmabuf_unpin,
	.map = dmabuf_map,
	.unmap = dmabuf_unmap,
	.get_info = gdr_backend_info_from_memh,
	.get_callback_flag = gdr_backend_persistent_callback_flag,
	.get_attribute = dmabuf_get_attribute,
	.driver_get_version = gdr_backend_no_module_version,
};

const struct gdr_backend gdr_backend_dmabuf = {
	.name = "dmabuf",
	.id = GDR_BACKEND_DMABUF,
	.probe = dmabuf_probe,
	.open = dmabuf_open,
	.ops = &dmabuf_ops,
};

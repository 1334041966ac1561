/* SPDX-License-Identifier: MIT */
/*
 * The dma-buf backend: no kernel module. A pin exports the range as a dma-buf fd with
 * cuMemGetHandleForAddressRange, a map mmap()s that fd. NVIDIA allows that mmap for discrete
 * GPUs from driver R610 (CUDA 13.3); R580 exports the fd but refuses the mmap (errno 524).
 *
 * Alignment (GDRCopy 2.6 pitfall 4, fixed here). GDRCopy exported from the host page below the
 * address and mmap()ed the fd at the offset inside that page, which mmap refuses unless it is
 * 0: gdr_map worked only for host-page-aligned pins, and info.page_size was 4096 where gdrdrv
 * reports 65536. This backend exports from the GPU page (64 KiB) below the address and maps the
 * fd at offset 0, so info.va, info.page_size and gdr_map behave as with gdrdrv, and clients that
 * add (addr - info.va) to the mapping keep working. The rounding never leaves the allocation
 * (cuMemGetAddressRange): where the allocation starts or ends inside a GPU page, that end is
 * rounded to the host page instead, and page_size is the host page when va is not 64 KiB aligned.
 * (A pin that itself runs past its allocation is exported as asked; the driver judges it.)
 *
 * Errors. GDRCopy returned raw CUresult numbers, which clients read as errnos (801 is not an
 * errno). Here CUDA errors become errnos (cuda_errno() below) and the log names the CUDA error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cuda_driver.h"
#include "gdr.h"
#include "log.h"

/* The first CUDA version whose driver (R610) allows mmap of dma-bufs of discrete GPUs. */
#define DMABUF_MIN_DRIVER_VERSION 13030
#define DMABUF_GPU_PAGE (64UL * 1024)
/* The kernel's internal ENOTSUPP, which R580's dma-buf mmap returns; user space has no name. */
#define KERNEL_ENOTSUPP 524

/* Per gdr_t; every field is under g->lock. */
struct dmabuf_state {
	const struct gdr_cuda *cuda;
	unsigned long pins;		/* live pins, each holding one fd */
};

struct dmabuf_pin {
	int fd;				/* the dma-buf of [mh->va, mh->va + mh->mapped_size) */
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

/*
 * CUresult to errno:
 *   INVALID_VALUE, NOT_FOUND, INVALID_HANDLE  -> EINVAL  (not CUDA memory, bad range)
 *   NOT_SUPPORTED                             -> ENOTSUP (device or platform cannot do it)
 *   OUT_OF_MEMORY                             -> ENOMEM
 *   NOT_PERMITTED                             -> EPERM
 *   INVALID_DEVICE, NO_DEVICE                 -> ENODEV
 *   anything else                             -> EIO
 */
static int cuda_errno(CUresult res)
{
	switch (res) {
	case CUDA_SUCCESS:
		return 0;
	case CUDA_ERROR_INVALID_VALUE:
	case CUDA_ERROR_NOT_FOUND:
	case CUDA_ERROR_INVALID_HANDLE:
		return EINVAL;
	case CUDA_ERROR_NOT_SUPPORTED:
		return ENOTSUP;
	case CUDA_ERROR_OUT_OF_MEMORY:
		return ENOMEM;
	case CUDA_ERROR_NOT_PERMITTED:
		return EPERM;
	case CUDA_ERROR_INVALID_DEVICE:
	case CUDA_ERROR_NO_DEVICE:
		return ENODEV;
	default:
		return EIO;
	}
}

static int driver_version_major(int v)
{
	return v / 1000;
}

static int driver_version_minor(int v)
{
	return v % 1000 / 10;
}

/* The driver is new enough and some device can export dma-bufs; 0 or an errno with why. */
static int dmabuf_check_driver(const struct gdr_cuda *cuda, struct gdr_why *why)
{
	int v = cuda->driver_version, count = 0;
	char err[128];
	CUresult res;

	if (v < DMABUF_MIN_DRIVER_VERSION) {
		gdr_why_set(why, "CUDA driver %d.%d < %d.%d: dma-buf mmap of discrete GPU memory "
			    "needs driver R610 (CUDA 13.3) or newer",
			    driver_version_major(v), driver_version_minor(v),
			    driver_version_major(DMABUF_MIN_DRIVER_VERSION),
			    driver_version_minor(DMABUF_MIN_DRIVER_VERSION));
		return ENOTSUP;
	}
	res = cuda->cuDeviceGetCount(&count);
	if (res != CUDA_SUCCESS) {
		gdr_why_set(why, "cuDeviceGetCount failed: %s",
			    gdr_cuda_strerror(cuda, res, err, sizeof(err)));
		return cuda_errno(res);
	}
	for (int i = 0; i < count; i++) {
		CUdevice dev;
		int supported = 0;

		if (cuda->cuDeviceGet(&dev, i) == CUDA_SUCCESS &&
		    cuda->cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
					       dev) == CUDA_SUCCESS && supported)
			return 0;
	}
	gdr_why_set(why, "none of the %d CUDA device(s) supports dma-buf export "
		    "(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 0)", count);
	return ENOTSUP;
}

static int dmabuf_probe(struct gdr_why *why)
{
	const struct gdr_cuda *cuda = gdr_cuda_acquire(why);
	int ret;

	if (!cuda)
		return ENODEV;
	ret = dmabuf_check_driver(cuda, why);
	gdr_cuda_release();
	return ret;
}

static int dmabuf_open(struct gdr *g, struct gdr_why *why)
{
	struct dmabuf_state *st;
	const struct gdr_cuda *cuda = gdr_cuda_acquire(why);
	int ret;

	if (!cuda)
		return ENODEV;
	ret = dmabuf_check_driver(cuda, why);
	if (ret)
		goto err_release;
	st = calloc(1, sizeof(*st));
	if (!st) {
		gdr_why_set(why, "out of memory");
		ret = ENOMEM;
		goto err_release;
	}
	st->cuda = cuda;
	g->backend_priv = st;
	return 0;

err_release:
	gdr_cuda_release();
	return ret;
}

static void dmabuf_close(struct gdr *g)
{
	free(g->backend_priv);
	g->backend_priv = NULL;
	gdr_cuda_release();
}

/*
 * Every pin holds a descriptor, so running out of them is the likely failure of a program with
 * many pins; CUDA reports it as a generic error, so look first. 0, EMFILE or ENFILE.
 */
static int check_fd_available(const struct dmabuf_state *st)
{
	int fd = open("/", O_PATH | O_CLOEXEC);
	struct rlimit rl;
	int err;

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	err = errno;
	if (err == EMFILE) {
		if (getrlimit(RLIMIT_NOFILE, &rl))
			rl.rlim_cur = RLIM_INFINITY;
		gdr_err("gdr_pin_buffer: out of file descriptors (RLIMIT_NOFILE %llu): the dmabuf "
			"backend holds one per pinned buffer and this gdr_t holds %lu pins; raise "
			"the limit (ulimit -n, setrlimit) or pin fewer buffers",
			(unsigned long long)rl.rlim_cur, st->pins);
		return EMFILE;
	}
	if (err == ENFILE) {
		gdr_err("gdr_pin_buffer: the system's file table is full (ENFILE); this gdr_t holds "
			"%lu pins, one descriptor each; raise fs.file-max", st->pins);
		return ENFILE;
	}
	return 0;
}

static uint64_t align_down(uint64_t v, uint64_t to)
{
	return v & ~(to - 1);
}

static uint64_t align_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) & ~(to - 1);
}

/*
 * The range to export for [addr, addr + size): GPU pages where the allocation allows, host pages
 * at an allocation's edge; see the comment at the top. Caller has a context current.
 */
static void export_range(struct gdr *g, const struct gdr_cuda *cuda, unsigned long addr,
			 size_t size, uint64_t *start, uint64_t *end)
{
	uint64_t hp = g->host_page_size;
	uint64_t gp = hp > DMABUF_GPU_PAGE ? hp : DMABUF_GPU_PAGE;
	uint64_t last = (uint64_t)addr + size;
	CUdeviceptr base;
	size_t bsize;
	uint64_t lo, hi;
	char err[128];
	CUresult res;

	*start = align_down(addr, gp);
	*end = align_up(last, gp);
	res = cuda->cuMemGetAddressRange(&base, &bsize, (CUdeviceptr)addr);
	if (res != CUDA_SUCCESS) {
		gdr_dbg("dmabuf: cuMemGetAddressRange(0x%lx) failed (%s); exporting host pages",
			addr, gdr_cuda_strerror(cuda, res, err, sizeof(err)));
		*start = align_down(addr, hp);
		*end = align_up(last, hp);
		return;
	}
	lo = align_down(base, hp);
	hi = align_up((uint64_t)base + bsize, hp);
	if (*start < lo)
		*start = lo;
	/* A pin may run past the allocation (into the next one); never cut it short. */
	if (*end > hi)
		*end = hi > align_up(last, hp) ? hi : align_up(last, hp);
}

/* CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL of addr; 0 or EINVAL (logged). */
static int pointer_device(const struct gdr_cuda *cuda, unsigned long addr, int *ordinal)
{
	char err[128];
	CUresult res;

	res = cuda->cuPointerGetAttribute(ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
					  (CUdeviceptr)addr);
	if (res != CUDA_SUCCESS) {
		gdr_err("gdr_pin_buffer: 0x%lx is not CUDA device memory "
			"(cuPointerGetAttribute(DEVICE_ORDINAL): %s)",
			addr, gdr_cuda_strerror(cuda, res, err, sizeof(err)));
		return EINVAL;
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
		return cuda_errno(res);
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
	struct dmabuf_pin *pin;
	uint64_t start, end;
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
	if (!pin)
		return ENOMEM;
	pin->type = coherent && !export_flags ? GDR_MAPPING_TYPE_CACHING : GDR_MAPPING_TYPE_WC;

	ret = check_fd_available(st);
	if (ret)
		goto err_free;
	res = gdr_cuda_ctx_enter(cuda, ordinal, &scope);
	if (res != CUDA_SUCCESS) {
		gdr_err("gdr_pin_buffer: no CUDA context for device %d: %s", ordinal,
			gdr_cuda_strerror(cuda, res, err, sizeof(err)));
		ret = cuda_errno(res);
		goto err_free;
	}
	export_range(g, cuda, req->addr, req->size, &start, &end);
	res = cuda->cuMemGetHandleForAddressRange(&fd, (CUdeviceptr)start, end - start,
						  CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
						  export_flags);
	gdr_cuda_ctx_leave(cuda, &scope);
	if (res != CUDA_SUCCESS) {
		/* Another thread may have taken the last descriptor meanwhile. */
		ret = check_fd_available(st);
		if (!ret) {
			gdr_err("gdr_pin_buffer: cuMemGetHandleForAddressRange(0x%llx, %llu, "
				"DMA_BUF_FD, flags 0x%llx) for 0x%lx/%zu failed: %s",
				(unsigned long long)start, (unsigned long long)(end - start),
				export_flags, req->addr, req->size,
				gdr_cuda_strerror(cuda, res, err, sizeof(err)));
			ret = cuda_errno(res);
		}
		goto err_free;
	}
	pin->fd = fd;
	mh->va = start;
	mh->mapped_size = end - start;
	mh->page_size = start % DMABUF_GPU_PAGE ? (uint32_t)g->host_page_size : DMABUF_GPU_PAGE;
	mh->backend_priv = pin;
	st->pins++;
	gdr_dbg("dmabuf: pinned 0x%lx/%zu as [0x%llx, 0x%llx), fd %d, %s", req->addr, req->size,
		(unsigned long long)start, (unsigned long long)end, fd,
		mapping_type_name(pin->type));
	return 0;

err_free:
	free(pin);
	return ret;
}

static int dmabuf_unpin(struct gdr *g, struct gdr_memh *mh)
{
	struct dmabuf_state *st = g->backend_priv;
	struct dmabuf_pin *pin = mh->backend_priv;

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
	size_t len = align_up(size, g->host_page_size);
	void *p;
	int err;

	if (!map_flags_ok(mh, flags, pin->type))
		return EINVAL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, pin->fd, 0);
	if (p == MAP_FAILED) {
		err = errno;
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
	gdr_backend_keep_from_fork(p, len);
	*va = p;
	*type = pin->type;
	return 0;
}

static int dmabuf_unmap(struct gdr *g, struct gdr_memh *mh)
{
	if (munmap(mh->map_va, align_up(mh->map_size, g->host_page_size))) {
		int err = errno;

		gdr_err("gdr_unmap: munmap(%p, %zu) failed: %s", mh->map_va, mh->map_size,
			strerror(err));
		return err;
	}
	return 0;
}

static int dmabuf_get_callback_flag(struct gdr *g, struct gdr_memh *mh, int *flag)
{
	(void)g, (void)mh;
	/* Persistent pins: nothing ever invalidates them. */
	*flag = 0;
	return 0;
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

const struct gdr_backend_ops gdr_backend_dmabuf = {
	.name = "dmabuf",
	.id = GDR_BACKEND_DMABUF,
	.probe = dmabuf_probe,
	.open = dmabuf_open,
	.close = dmabuf_close,
	/* In a fork child: no close of the fds, no release of CUDA. */
	.forget_pin = gdr_backend_forget_pin_priv,
	.forget = gdr_backend_forget_priv,
	.pin = dmabuf_pin,
	.unpin = dmabuf_unpin,
	.map = dmabuf_map,
	.unmap = dmabuf_unmap,
	.get_info = gdr_backend_info_from_memh,
	.get_callback_flag = dmabuf_get_callback_flag,
	.get_attribute = dmabuf_get_attribute,
	.driver_get_version = gdr_backend_no_module_version,
};

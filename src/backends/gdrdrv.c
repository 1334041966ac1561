/* SPDX-License-Identifier: MIT */
/*
 * The gdrdrv backend: pins and maps through /dev/gdrdrv, the ioctl ABI of GDRCopy 2.6, so it
 * works with this project's gdrdrv.ko and with NVIDIA's. Older drivers get only the commands
 * they have (GET_INFO_V2 since 2.4; GET_ATTR, PIN_BUFFER_V2 and REQ_MAPPING_TYPE since 2.5).
 *
 * GDRCOPY_GDRDRV_PATH (ignored in setuid/setgid programs) names another device node, for tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend.h"
#include "fork_fds.h"
#include "gdr.h"
#include "gdrdrv.h"
#include "log.h"

#define GDRDRV_DEFAULT_PATH "/dev/gdrdrv"

struct gdrdrv_state {
	int fd;
	struct gdr_fork_fd *fork_fd;	/* closes fd in fork children */
	uint32_t version;	/* the driver's, from GET_VERSION */
	unsigned int page_shift;
	char path[256];
};

struct gdrdrv_pin {
	uint64_t handle;	/* the kernel's, all 64 bits */
};

static const char *gdrdrv_path(void)
{
	const char *path = secure_getenv("GDRCOPY_GDRDRV_PATH");

	return path && *path ? path : GDRDRV_DEFAULT_PATH;
}

static struct gdrdrv_state *state_of(struct gdr *g)
{
	return g->backend_priv;
}

static uint64_t handle_of(struct gdr_memh *mh)
{
	return ((struct gdrdrv_pin *)mh->backend_priv)->handle;
}

#define GDRDRV_EINTR_TRIES 1000

/*
 * ioctl, retried on EINTR (up to GDRDRV_EINTR_TRIES times in a row); 0 or a positive errno.
 * Every gdrdrv answers 0 or -1: anything else is EPROTO, whatever it wrote (GDRCopy's library
 * takes it as a failure too).
 */
static int gdrdrv_ioctl(struct gdrdrv_state *st, unsigned long cmd, void *arg)
{
	/* A driver that answers EINTR for ever would hold the caller, and g->lock, for ever. */
	int tries = GDRDRV_EINTR_TRIES;
	int ret, err;

	do
		ret = ioctl(st->fd, cmd, arg);
	while (ret == -1 && errno == EINTR && --tries);
	if (ret == -1) {
		err = errno;
		if (err == EINTR)
			gdr_err("gdrdrv: ioctl 0x%lx on %s was interrupted %d times in a row; "
				"giving up: the driver is not answering sanely, try again or reload "
				"it", cmd, st->path, GDRDRV_EINTR_TRIES);
		return err;
	}
	if (ret) {
		gdr_err("gdrdrv: ioctl 0x%lx on %s returned %d, where a gdrdrv returns 0 or -1: the "
			"driver behind it is not one this library knows; check which module owns %s, "
			"or use another backend (GDRCOPY_BACKEND=vulkan)", cmd, st->path, ret,
			st->path);
		return EPROTO;
	}
	return 0;
}

static int gdrdrv_probe(struct gdr_why *why)
{
	const char *path = gdrdrv_path();

	if (access(path, F_OK)) {
		if (errno == ENOENT)
			gdr_why_set(why, "no %s: load the gdrdrv kernel module (modprobe gdrdrv)",
				    path);
		else
			gdr_why_set(why, "cannot look up %s: %s", path, strerror(errno));
		return ENODEV;
	}
	return 0;
}

static int gdrdrv_open(struct gdr *g, struct gdr_why *why)
{
	struct gdrdrv_get_version_params ver = { 0 };
	const char *path = gdrdrv_path();
	struct gdrdrv_state *st;
	int ret;

	st = calloc(1, sizeof(*st));
	if (!st) {
		gdr_why_set(why, "out of memory");
		return ENOMEM;
	}
	snprintf(st->path, sizeof(st->path), "%s", path);
	while ((1UL << st->page_shift) < g->host_page_size)
		st->page_shift++;

	st->fd = open(path, O_RDWR | O_CLOEXEC);
	if (st->fd < 0) {
		ret = errno;
		gdr_why_set(why, "cannot open %s: %s%s", path, strerror(ret),
			    ret == EACCES ? ": run as a user who may open it, or load gdrdrv "
			    "with dev_mode=0666 (its default)" :
			    ret == ENXIO || ret == ENODEV ? ": the node is there but no gdrdrv "
			    "answers: reload the module (rmmod gdrdrv; modprobe gdrdrv)" : "");
		goto err_free;
	}
	st->fork_fd = gdr_fork_fd_hold(st->fd);
	ret = gdrdrv_ioctl(st, GDRDRV_IOC_GET_VERSION, &ver);
	if (ret) {
		gdr_why_set(why, "GET_VERSION on %s failed: %s (not gdrdrv, or a gdrdrv older "
			    "than 2.0): check which module owns %s (lsmod | grep gdrdrv) and "
			    "install gdrdrv 2.6, or use another backend (GDRCOPY_BACKEND=vulkan)",
			    path, strerror(ret), path);
		goto err_close;
	}
	if (ver.gdrdrv_version < MINIMUM_GDRDRV_VERSION) {
		gdr_why_set(why, "gdrdrv %u.%u is too old: this library needs %d.%d or newer; "
			    "install this release's (the gdrdrv-dkms package, or dkms install "
			    "gdrdrv/%d.%d) and reload it (rmmod gdrdrv; modprobe gdrdrv)",
			    ver.gdrdrv_version >> MAJOR_VERSION_SHIFT,
			    ver.gdrdrv_version & MINOR_VERSION_MASK, MINIMUM_GDRDRV_MAJOR_VERSION,
			    MINIMUM_GDRDRV_MINOR_VERSION, GDR_API_MAJOR_VERSION,
			    GDR_API_MINOR_VERSION);
		ret = ENODEV;
		goto err_close;
	}
	if (ver.minimum_gdr_api_version > GDR_API_VERSION) {
		gdr_why_set(why, "gdrdrv needs libgdrapi %u.%u or newer, this is %d.%d: install "
			    "the libgdrapi of the loaded gdrdrv's release",
			    ver.minimum_gdr_api_version >> MAJOR_VERSION_SHIFT,
			    ver.minimum_gdr_api_version & MINOR_VERSION_MASK, GDR_API_MAJOR_VERSION,
			    GDR_API_MINOR_VERSION);
		ret = ENODEV;
		goto err_close;
	}
	st->version = ver.gdrdrv_version;
	g->backend_priv = st;
	gdr_info("gdrdrv %u.%u at %s", st->version >> MAJOR_VERSION_SHIFT,
		 st->version & MINOR_VERSION_MASK, path);
	return 0;

err_close:
	gdr_fork_fd_drop(st->fork_fd);
	close(st->fd);
err_free:
	free(st);
	return ret;
}

/* As GDRCopy's gdr_close: close(2)'s errno when it fails (the descriptor is gone all the same). */
static int gdrdrv_close(struct gdr *g)
{
	struct gdrdrv_state *st = state_of(g);
	int ret = 0;

	gdr_fork_fd_drop(st->fork_fd);
	if (close(st->fd)) {
		ret = errno;
		gdr_err("gdr_close: closing %s failed: %s", st->path, strerror(ret));
	}
	free(st);
	g->backend_priv = NULL;
	return ret;
}

static int gdrdrv_info_of(struct gdrdrv_state *st, uint64_t handle, gdr_info_v2_t *info)
{
	int ret;

	if (st->version >= GDRDRV_MINIMUM_VERSION_WITH_GET_INFO_V2) {
		struct gdrdrv_get_info_v2_params p = { .handle = handle };

		ret = gdrdrv_ioctl(st, GDRDRV_IOC_GET_INFO_V2, &p);
		if (ret)
			return ret;
		info->va = p.va;
		info->mapped_size = p.mapped_size;
		info->page_size = p.page_size;
		info->tm_cycles = p.tm_cycles;
		info->cycles_per_ms = p.tsc_khz;
		info->mapping_type = (gdr_mapping_type_t)p.mapping_type;
	} else {
		struct gdrdrv_get_info_params p = { .handle = handle };

		ret = gdrdrv_ioctl(st, GDRDRV_IOC_GET_INFO, &p);
		if (ret)
			return ret;
		info->va = p.va;
		info->mapped_size = p.mapped_size;
		info->page_size = p.page_size;
		info->tm_cycles = p.tm_cycles;
		info->cycles_per_ms = p.tsc_khz;
		/* Before 2.4 a mapping was WC or, on coherent platforms, cached. */
		info->mapping_type = !p.mapped ? GDR_MAPPING_TYPE_NONE :
				     p.wc_mapping ? GDR_MAPPING_TYPE_WC : GDR_MAPPING_TYPE_CACHING;
	}
	info->mapped = info->mapping_type != GDR_MAPPING_TYPE_NONE;
	info->wc_mapping = info->mapping_type == GDR_MAPPING_TYPE_WC;
	return 0;
}

static int gdrdrv_unpin_ioctl(struct gdrdrv_state *st, uint64_t handle)
{
	struct gdrdrv_unpin_buffer_params p = { .handle = handle };
	int ret = gdrdrv_ioctl(st, GDRDRV_IOC_UNPIN_BUFFER, &p);

	if (ret)
		gdr_err("gdrdrv UNPIN_BUFFER of handle 0x%llx failed: %s",
			(unsigned long long)handle, strerror(ret));
	return ret;
}

/* A pin ioctl's handle field before the call: no gdrdrv gives it out. */
#define GDRDRV_NO_HANDLE UINT64_MAX

/*
 * A pin that answered EPROTO (neither 0 nor -1) may have pinned all the same: a handle it wrote
 * is given back, so that the driver keeps nothing the library does not know of.
 */
static void gdrdrv_unpin_stray(struct gdrdrv_state *st, int ret, uint64_t handle)
{
	if (ret == EPROTO && handle != GDRDRV_NO_HANDLE)
		gdrdrv_unpin_ioctl(st, handle);
}

static int gdrdrv_pin_v2_ioctl(struct gdrdrv_state *st, const struct gdr_pin_request *req,
			       uint64_t *handle)
{
	struct gdrdrv_pin_buffer_v2_params p = {
		.addr = req->addr,
		.size = req->size,
		.handle = GDRDRV_NO_HANDLE,
		.flags = req->flags & GDR_PIN_FLAG_FORCE_PCIE ? GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE :
			 GDRDRV_PIN_BUFFER_FLAG_DEFAULT,
	};
	int ret = gdrdrv_ioctl(st, GDRDRV_IOC_PIN_BUFFER_V2, &p);

	if (ret) {
		gdr_err("gdrdrv PIN_BUFFER_V2 of 0x%lx+%zu failed: %s", req->addr, req->size,
			strerror(ret));
		gdrdrv_unpin_stray(st, ret, p.handle);
		return ret;
	}
	*handle = p.handle;
	return 0;
}

/*
 * NVIDIA's gdrdrv before 2.4.2 (reporting 2.4 or less) handed nvidia_p2p_get_pages its page-
 * aligned start with the caller's length, which NVIDIA's driver refuses from R555 on ("address
 * or length are not aligned", GDRCopy #299, #305). Such a driver is given the pin in whole GPU
 * pages, as later drivers make it themselves: the same pages are pinned, and GET_INFO reports
 * the same va and mapped size. A range whose rounding would wrap is sent as it is (the driver
 * refuses it).
 */
static void gdrdrv_pin_range(const struct gdrdrv_state *st, const struct gdr_pin_request *req,
			     __u64 *addr, __u64 *size)
{
	__u64 start = req->addr & GPU_PAGE_MASK, end;

	*addr = req->addr;
	*size = req->size;
	if (st->version >= GDRDRV_MINIMUM_VERSION_WITH_PIN_BUFFER_V2 ||
	    __builtin_add_overflow((__u64)req->addr, (__u64)req->size, &end) ||
	    __builtin_add_overflow(end, GPU_PAGE_SIZE - 1, &end))
		return;
	*addr = start;
	*size = (end & GPU_PAGE_MASK) - start;
}

static int gdrdrv_pin_v1_ioctl(struct gdrdrv_state *st, const struct gdr_pin_request *req,
			       uint64_t *handle)
{
	struct gdrdrv_pin_buffer_params p = {
		.p2p_token = req->p2p_token,
		.va_space = req->va_space,
		.handle = GDRDRV_NO_HANDLE,
	};
	int ret;

	gdrdrv_pin_range(st, req, &p.addr, &p.size);
	ret = gdrdrv_ioctl(st, GDRDRV_IOC_PIN_BUFFER, &p);

	if (ret) {
		gdr_err("gdrdrv PIN_BUFFER of 0x%lx+%zu failed: %s%s", req->addr, req->size,
			strerror(ret), ret == EINVAL && (req->p2p_token || req->va_space) ?
			" (a driver in persistent mode takes no p2p tokens)" : "");
		gdrdrv_unpin_stray(st, ret, p.handle);
		return ret;
	}
	*handle = p.handle;
	return 0;
}

/*
 * gdr_pin_buffer sends its tokens on every driver version, where GDRCopy's library silently drops
 * them on 2.5+ (it sends PIN_BUFFER_V2). A driver in persistent mode, GDRCopy's as this project's,
 * then answers EINVAL for non-zero tokens rather than ignoring them.
 */
static int gdrdrv_pin_ioctl(struct gdrdrv_state *st, const struct gdr_pin_request *req,
			    uint64_t *handle)
{
	if (req->legacy)
		return gdrdrv_pin_v1_ioctl(st, req, handle);
	if (st->version >= GDRDRV_MINIMUM_VERSION_WITH_PIN_BUFFER_V2)
		return gdrdrv_pin_v2_ioctl(st, req, handle);
	if (req->flags) {
		gdr_err("gdr_pin_buffer_v2: gdrdrv %u.%u has no pin flags (they need 2.5)",
			st->version >> MAJOR_VERSION_SHIFT, st->version & MINOR_VERSION_MASK);
		return EINVAL;
	}
	return gdrdrv_pin_v1_ioctl(st, req, handle);
}

static int gdrdrv_pin(struct gdr *g, struct gdr_memh *mh, const struct gdr_pin_request *req)
{
	struct gdrdrv_state *st = state_of(g);
	struct gdrdrv_pin *pin;
	gdr_info_v2_t info = { 0 };
	int ret;

	pin = calloc(1, sizeof(*pin));
	if (!pin) {
		gdr_err("gdr_pin_buffer: out of memory for the pin of 0x%lx", req->addr);
		return ENOMEM;
	}
	ret = gdrdrv_pin_ioctl(st, req, &pin->handle);
	if (ret)
		goto err_free;
	ret = gdrdrv_info_of(st, pin->handle, &info);
	if (ret) {
		gdr_err("gdrdrv GET_INFO after pinning 0x%lx failed: %s", req->addr, strerror(ret));
		goto err_unpin;
	}
	/* Maps and copies work from va and mapped_size: they must hold the pin, from a GPU page. */
	if (!info.mapped_size || (info.va & (GPU_PAGE_SIZE - 1)) ||
	    !gdr_backend_range_holds(info.va, info.mapped_size, req->addr) ||
	    req->size > info.mapped_size - (req->addr - info.va)) {
		gdr_err("gdrdrv GET_INFO after pinning 0x%lx+%zu reported va 0x%llx, mapped size "
			"%llu, which do not hold it from a 64 KiB page: the driver behind %s is not "
			"answering sanely; reload gdrdrv, or use another backend "
			"(GDRCOPY_BACKEND=vulkan)", req->addr, req->size, (unsigned long long)info.va,
			(unsigned long long)info.mapped_size, st->path);
		ret = EPROTO;
		goto err_unpin;
	}
	mh->va = info.va;
	mh->mapped_size = info.mapped_size;
	mh->page_size = info.page_size;
	mh->backend_priv = pin;
	return 0;

err_unpin:
	gdrdrv_unpin_ioctl(st, pin->handle);
err_free:
	free(pin);
	return ret;
}

/*
 * NVIDIA's gdrdrv before 2.4.4 freed a pin at UNPIN that its mapping's close then wrote to
 * (GDRCopy #314: a kernel use-after-free, panics on Grace Hopper). 2.4.4 reports 2.4, as
 * 2.4.0-2.4.3 do, so below 2.5 a mapped pin is unmapped before it is unpinned.
 */
#define GDRDRV_VERSION_UNPIN_WHILE_MAPPED ((2 << MAJOR_VERSION_SHIFT) | 5)

/*
 * The driver may refuse the unpin: it goes first, so that a mapped pin is still mapped then.
 * Once unpinned, the driver has revoked the mapping (a touch raises SIGBUS); the munmap of the
 * whole of it that follows does not split a mapping, and so has nothing to fail on. Below
 * GDRDRV_VERSION_UNPIN_WHILE_MAPPED the munmap goes first, and a refused unpin leaves the pin
 * unmapped (map_va NULL tells the core).
 */
static int gdrdrv_unpin(struct gdr *g, struct gdr_memh *mh)
{
	struct gdrdrv_state *st = state_of(g);
	int ret;

	if (mh->map_va && st->version < GDRDRV_VERSION_UNPIN_WHILE_MAPPED) {
		ret = gdr_backend_munmap(g, mh);
		if (ret)
			return ret;
		mh->map_va = NULL;
	}
	ret = gdrdrv_unpin_ioctl(st, handle_of(mh));
	if (ret)
		return ret;
	if (mh->map_va && gdr_backend_munmap(g, mh))
		gdr_err("gdr_unpin_buffer: the revoked mapping %p of the pin of 0x%lx stays until "
			"the process exits (or the caller munmaps it)", mh->map_va, mh->addr);
	free(mh->backend_priv);
	mh->backend_priv = NULL;
	return 0;
}

static const gdr_mr_type_t map_flag_request[] = {
	[GDR_MAP_FLAG_DEFAULT] = GDR_MR_NONE,
	[GDR_MAP_FLAG_REQ_WC_MAPPING] = GDR_MR_WC,
	[GDR_MAP_FLAG_REQ_CACHE_MAPPING] = GDR_MR_CACHING,
	[GDR_MAP_FLAG_REQ_DEVICE_MAPPING] = GDR_MR_DEVICE,
};

static int gdrdrv_map(struct gdr *g, struct gdr_memh *mh, size_t size, int flags, void **va,
		      gdr_mapping_type_t *type)
{
	struct gdrdrv_state *st = state_of(g);
	uint64_t handle = handle_of(mh);
	size_t len = gdr_backend_map_length(g, size);
	gdr_mr_type_t want = map_flag_request[flags];
	gdr_info_v2_t info = { 0 };
	void *p;
	int ret;

	/* The mmap offset is the handle in pages; off_t is signed. */
	if (handle > ((uint64_t)INT64_MAX >> st->page_shift)) {
		gdr_err("gdr_map: kernel handle 0x%llx is beyond any mmap offset",
			(unsigned long long)handle);
		return EINVAL;
	}
	if (st->version >= GDRDRV_MINIMUM_VERSION_WITH_REQ_MAPPING_TYPE) {
		struct gdrdrv_req_mapping_type_params req = {
			.handle = handle,
			.mapping_type = want,
		};

		ret = gdrdrv_ioctl(st, GDRDRV_IOC_REQ_MAPPING_TYPE, &req);
		if (ret) {
			gdr_err("gdr_map: gdrdrv refused mapping type %d: %s", want, strerror(ret));
			return ret;
		}
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, st->fd,
		 (off_t)(handle << st->page_shift));
	if (p == MAP_FAILED) {
		ret = errno;
		gdr_err("gdr_map: mmap of %zu bytes of handle 0x%llx failed: %s", len,
			(unsigned long long)handle, strerror(ret));
		return ret;
	}
	ret = gdrdrv_info_of(st, handle, &info);
	if (ret) {
		gdr_err("gdr_map: GET_INFO after mmap failed: %s", strerror(ret));
		goto err_unmap;
	}
	if (!info.mapped) {
		/* The pages went (cudaFree in another thread) between mmap and now. */
		gdr_err("gdr_map: the mapping was torn down at once");
		ret = EAGAIN;
		goto err_unmap;
	}
	if (want != GDR_MR_NONE && info.mapping_type != (gdr_mapping_type_t)want) {
		gdr_err("gdr_map: asked for mapping type %d, gdrdrv gave %d", want,
			info.mapping_type);
		ret = EINVAL;
		goto err_unmap;
	}
	*va = p;
	*type = info.mapping_type;
	return 0;

err_unmap:
	munmap(p, len);
	return ret;
}

static int gdrdrv_unmap(struct gdr *g, struct gdr_memh *mh)
{
	return gdr_backend_munmap(g, mh);
}

static int gdrdrv_get_info(struct gdr *g, struct gdr_memh *mh, gdr_info_v2_t *info)
{
	int ret = gdrdrv_info_of(state_of(g), handle_of(mh), info);

	if (ret)
		gdr_err("gdr_get_info: gdrdrv GET_INFO of handle 0x%llx failed: %s; the pin is "
			"unchanged, ask again or unpin it", (unsigned long long)handle_of(mh),
			strerror(ret));
	return ret;
}

static int gdrdrv_get_callback_flag(struct gdr *g, struct gdr_memh *mh, int *flag)
{
	struct gdrdrv_get_cb_flag_params p = { .handle = handle_of(mh) };
	int ret = gdrdrv_ioctl(state_of(g), GDRDRV_IOC_GET_CB_FLAG, &p);

	if (ret) {
		gdr_err("gdr_get_callback_flag: gdrdrv GET_CB_FLAG of handle 0x%llx failed: %s; "
			"the pin is unchanged, ask again or unpin it", (unsigned long long)p.handle,
			strerror(ret));
		return ret;
	}
	*flag = p.flag != 0;
	return 0;
}

static int gdrdrv_get_attribute(struct gdr *g, int attr, int *value)
{
	struct gdrdrv_state *st = state_of(g);
	struct gdrdrv_get_attr_params p = { 0 };
	int ret;

	switch (attr) {
	case GDR_ATTR_USE_PERSISTENT_MAPPING:
		p.attr = GDRDRV_ATTR_USE_PERSISTENT_MAPPING;
		break;
	case GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE:
		p.attr = GDRDRV_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE;
		break;
	case GDR_ATTR_USING_DMA_BUF_MMAP:
		*value = 0;
		return 0;
	default:
		return EINVAL;
	}
	/* Drivers before 2.5 know neither: they pin non-persistently, without flags. */
	if (st->version < GDRDRV_MINIMUM_VERSION_WITH_GET_ATTR) {
		*value = 0;
		return 0;
	}
	ret = gdrdrv_ioctl(st, GDRDRV_IOC_GET_ATTR, &p);
	if (ret) {
		gdr_err("gdr_get_attribute: gdrdrv GET_ATTR of attribute %u failed: %s; nothing "
			"changed, ask again", p.attr, strerror(ret));
		return ret;
	}
	*value = (int)p.val;
	return 0;
}

static int gdrdrv_driver_get_version(struct gdr *g, int *major, int *minor)
{
	struct gdrdrv_state *st = state_of(g);

	*major = (int)(st->version >> MAJOR_VERSION_SHIFT);
	*minor = (int)(st->version & MINOR_VERSION_MASK);
	return 0;
}

static const struct gdr_backend_ops gdrdrv_ops = {
	.close = gdrdrv_close,
	.forget_pin = gdr_backend_forget_pin_priv,
	.forget = gdr_backend_forget_priv,
	.pin = gdrdrv_pin,
	.unpin = gdrdrv_unpin,
	.map = gdrdrv_map,
	.unmap = gdrdrv_unmap,
	.get_info = gdrdrv_get_info,
	.get_callback_flag = gdrdrv_get_callback_flag,
	.get_attribute = gdrdrv_get_attribute,
	.driver_get_version = gdrdrv_driver_get_version,
};

const struct gdr_backend gdr_backend_gdrdrv = {
	.name = "gdrdrv",
	.id = GDR_BACKEND_GDRDRV,
	.probe = gdrdrv_probe,
	.open = gdrdrv_open,
	.ops = &gdrdrv_ops,
};

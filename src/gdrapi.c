/* SPDX-License-Identifier: MIT */
/*
 * Public entry points: check the arguments, find the handle, take g->lock, call the backend.
 * Every function returns 0 or a positive errno and leaves state unchanged when it fails.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "copy.h"
#include "cpu.h"
#include "fork.h"
#include "gdr.h"
#include "handle.h"
#include "inflight.h"
#include "info_v1.h"
#include "log.h"

#define GDR_PUBLIC __attribute__((visibility("default")))

GDR_PUBLIC gdr_t gdr_open(void)
{
	struct gdr *g = calloc(1, sizeof(*g));
	long page;

	if (!g) {
		gdr_err("gdr_open: out of memory");
		return NULL;
	}
	pthread_mutex_init(&g->lock, NULL);
	TAILQ_INIT(&g->memhs);
	page = sysconf(_SC_PAGESIZE);
	g->host_page_size = page > 0 ? (size_t)page : 4096;
	gdr_fork_init();
	g->fork_epoch = gdr_fork_epoch();
	gdr_copy_init();
	gdr_inflight_init();
	if (gdr_backend_select(g)) {
		pthread_mutex_destroy(&g->lock);
		free(g);
		return NULL;
	}
	return g;
}

/*
 * A gdr_t that the parent process opened, used in a fork child: refuse without touching it (its
 * lock may be held forever by a thread that does not exist here). See gdr_open(3).
 */
static bool inherited(const struct gdr *g, const char *fn)
{
	if (g->fork_epoch == gdr_fork_epoch())
		return false;
	gdr_err("%s: this gdr_t was opened by a parent process and cannot be used after fork; "
		"gdr_open a new one in this process", fn);
	return true;
}

/* The mapping types this library knows, and so the handle table counts. */
static bool mapping_type_known(gdr_mapping_type_t type)
{
	return type == GDR_MAPPING_TYPE_WC || type == GDR_MAPPING_TYPE_CACHING ||
	       type == GDR_MAPPING_TYPE_DEVICE;
}

/* Copies stop finding mh's mapping, and those that found it finish; its type, to restore. */
static gdr_mapping_type_t memh_withdraw(struct gdr_memh *mh)
{
	gdr_mapping_type_t type = mh->mapping_type;

	mh->mapping_type = GDR_MAPPING_TYPE_NONE;
	gdr_handle_publish_mapping(mh);
	gdr_inflight_wait();
	return type;
}

/* After an undo that failed: copies find the mapping again. */
static void memh_restore(struct gdr_memh *mh, gdr_mapping_type_t type)
{
	mh->mapping_type = type;
	gdr_handle_publish_mapping(mh);
}

/* mh has no mapping any more (its type is already NONE). Caller holds g->lock. */
static void memh_unmapped(struct gdr_memh *mh)
{
	mh->map_va = NULL;
	mh->map_size = 0;
	mh->map_asked = 0;
}

/* Undo a mapping; on failure the buffer stays mapped. Caller holds g->lock. */
static int memh_unmap(struct gdr *g, struct gdr_memh *mh)
{
	gdr_mapping_type_t type = memh_withdraw(mh);
	int ret = g->ops.unmap(g, mh);

	if (ret) {
		memh_restore(mh, type);
		return ret;
	}
	memh_unmapped(mh);
	return 0;
}

/* mh leaves g and the handle table, and is freed: its pin is gone. Caller holds g->lock. */
static void memh_free(struct gdr *g, struct gdr_memh *mh)
{
	TAILQ_REMOVE(&g->memhs, mh, link);
	gdr_handle_unregister(mh);
	free(mh);
}

/*
 * Unpin and unmap, if mapped (the backend does both: gdrdrv's driver may refuse the unpin, after
 * which the mapping must still be there), and free mh. On failure mh stays pinned, and mapped if
 * it was, unless the backend had to unmap first (it then clears map_va). Caller holds g->lock.
 */
static int memh_release(struct gdr *g, struct gdr_memh *mh)
{
	gdr_mapping_type_t type = GDR_MAPPING_TYPE_NONE;
	int ret;

	if (mh->mapping_type != GDR_MAPPING_TYPE_NONE)
		type = memh_withdraw(mh);
	ret = g->ops.unpin(g, mh);
	if (ret) {
		if (type != GDR_MAPPING_TYPE_NONE && mh->map_va)
			memh_restore(mh, type);
		else if (type != GDR_MAPPING_TYPE_NONE)
			memh_unmapped(mh);
		return ret;
	}
	memh_free(g, mh);
	return 0;
}

/*
 * gdr_close of an inherited gdr_t in a fork child: free this process's copy of the library's
 * memory and nothing else. No driver call, munmap or close: the objects are the parent's, and
 * addresses and descriptor numbers may be the child's own by now. A lock held at fork by a
 * thread of the parent stays held here, so its gdr_t is left as it is rather than waited for.
 */
static int close_inherited(struct gdr *g)
{
	struct gdr_memh *mh, *next;

	if (pthread_mutex_trylock(&g->lock)) {
		gdr_warn("gdr_close: a thread of the parent was using this gdr_t when it forked; "
			 "its memory is left to this process's exit");
		return 0;
	}
	for (mh = TAILQ_FIRST(&g->memhs); mh; mh = next) {
		next = TAILQ_NEXT(mh, link);
		g->ops.forget_pin(g, mh);
		free(mh);
	}
	g->ops.forget(g);
	pthread_mutex_unlock(&g->lock);
	pthread_mutex_destroy(&g->lock);
	free(g);
	return 0;
}

/*
 * gdr_close's release of mh, which goes whatever fails: 0 or the first error (logged). A mapping
 * that cannot be undone stays where it is, but the pin under it is still released: its
 * descriptor (dmabuf) or import would otherwise outlive the gdr_t. Caller holds g->lock.
 */
static int memh_close(struct gdr *g, struct gdr_memh *mh)
{
	int unmap_err = 0, ret;

	if (mh->mapping_type != GDR_MAPPING_TYPE_NONE) {
		unmap_err = memh_unmap(g, mh);
		if (unmap_err) {
			gdr_err("gdr_close: the mapping %p/%zu of the pin of 0x%lx stays until the "
				"process exits (or the caller munmaps it); releasing the pin",
				mh->map_va, mh->map_size, mh->addr);
			/*
			 * No copy may find it once the pin is gone, nor the backend undo it. The
			 * failed unmap gave it back to copies: wait for those that found it.
			 */
			memh_withdraw(mh);
			mh->map_va = NULL;
		}
	}
	ret = g->ops.unpin(g, mh);
	if (ret) {
		gdr_err("gdr_close: releasing the pin of 0x%lx failed (%s); its handle is "
			"retired anyway", mh->addr, strerror(ret));
		/* What the driver kept stays with it; the library's own memory goes. */
		g->ops.forget_pin(g, mh);
	}
	memh_free(g, mh);
	return unmap_err ? unmap_err : ret;
}

GDR_PUBLIC int gdr_close(gdr_t g)
{
	struct gdr_memh *mh, *next;
	int first_err = 0, ret;

	if (!g)
		return EINVAL;
	if (g->fork_epoch != gdr_fork_epoch())
		return close_inherited(g);
	pthread_mutex_lock(&g->lock);
	for (mh = TAILQ_FIRST(&g->memhs); mh; mh = next) {
		next = TAILQ_NEXT(mh, link);
		ret = memh_close(g, mh);
		if (ret && !first_err)
			first_err = ret;
	}
	ret = g->ops.close(g);
	if (ret && !first_err)
		first_err = ret;
	pthread_mutex_unlock(&g->lock);
	pthread_mutex_destroy(&g->lock);
	free(g);
	return first_err;
}

static int pin(gdr_t g, const struct gdr_pin_request *req, gdr_mh_t *handle)
{
	struct gdr_memh *mh;
	unsigned long end;
	int ret;

	if (!g || !handle || inherited(g, "gdr_pin_buffer"))
		return EINVAL;
	if (!req->addr || !req->size || __builtin_add_overflow(req->addr, req->size, &end)) {
		gdr_dbg("gdr_pin_buffer: bad range addr=0x%lx size=%zu", req->addr, req->size);
		return EINVAL;
	}
	if (req->flags & ~(uint32_t)GDR_PIN_FLAG_FORCE_PCIE) {
		gdr_err("gdr_pin_buffer_v2: unknown flag bits 0x%x; the one pin flag is "
			"GDR_PIN_FLAG_FORCE_PCIE (1)", req->flags & ~(uint32_t)GDR_PIN_FLAG_FORCE_PCIE);
		return EINVAL;
	}
	mh = calloc(1, sizeof(*mh));
	if (!mh) {
		gdr_err("gdr_pin_buffer: out of memory for the pin of 0x%lx", req->addr);
		return ENOMEM;
	}
	mh->g = g;
	mh->addr = req->addr;
	mh->size = req->size;

	pthread_mutex_lock(&g->lock);
	ret = gdr_handle_register(mh);
	if (ret)
		goto err_free;
	ret = g->ops.pin(g, mh, req);
	if (ret)
		goto err_unregister;
	TAILQ_INSERT_HEAD(&g->memhs, mh, link);
	handle->h = mh->handle;
	pthread_mutex_unlock(&g->lock);
	return 0;

err_unregister:
	gdr_handle_unregister(mh);
err_free:
	pthread_mutex_unlock(&g->lock);
	free(mh);
	return ret;
}

GDR_PUBLIC int gdr_pin_buffer(gdr_t g, unsigned long addr, size_t size, uint64_t p2p_token,
			      uint32_t va_space, gdr_mh_t *handle)
{
	struct gdr_pin_request req = {
		.addr = addr, .size = size, .p2p_token = p2p_token, .va_space = va_space,
		.legacy = true,
	};

	return pin(g, &req, handle);
}

GDR_PUBLIC int gdr_pin_buffer_v2(gdr_t g, unsigned long addr, size_t size, uint32_t flags,
				 gdr_mh_t *handle)
{
	struct gdr_pin_request req = { .addr = addr, .size = size, .flags = flags };

	return pin(g, &req, handle);
}

/* Lock g and find handle in it; on success the caller must unlock g. */
static struct gdr_memh *lock_memh(gdr_t g, gdr_mh_t handle, const char *fn)
{
	struct gdr_memh *mh;

	if (!g || inherited(g, fn))
		return NULL;
	pthread_mutex_lock(&g->lock);
	mh = gdr_handle_lookup(g, handle.h);
	if (!mh)
		pthread_mutex_unlock(&g->lock);
	return mh;
}

GDR_PUBLIC int gdr_unpin_buffer(gdr_t g, gdr_mh_t handle)
{
	struct gdr_memh *mh = lock_memh(g, handle, "gdr_unpin_buffer");
	int ret;

	if (!mh)
		return EINVAL;
	ret = memh_release(g, mh);
	pthread_mutex_unlock(&g->lock);
	return ret;
}

GDR_PUBLIC int gdr_get_callback_flag(gdr_t g, gdr_mh_t handle, int *flag)
{
	struct gdr_memh *mh;
	int ret, value = 0;

	if (!flag)
		return EINVAL;
	mh = lock_memh(g, handle, "gdr_get_callback_flag");
	if (!mh)
		return EINVAL;
	ret = g->ops.get_callback_flag(g, mh, &value);
	pthread_mutex_unlock(&g->lock);
	if (!ret)
		*flag = value;
	return ret;
}

GDR_PUBLIC int gdr_get_info_v2(gdr_t g, gdr_mh_t handle, gdr_info_v2_t *info)
{
	struct gdr_memh *mh;
	gdr_info_v2_t tmp;
	int ret;

	if (!info)
		return EINVAL;
	mh = lock_memh(g, handle, "gdr_get_info");
	if (!mh)
		return EINVAL;
	memset(&tmp, 0, sizeof(tmp));
	ret = g->ops.get_info(g, mh, &tmp);
	if (!ret && tmp.mapping_type != GDR_MAPPING_TYPE_NONE && !mapping_type_known(tmp.mapping_type)) {
		gdr_err("gdr_get_info: the %s backend reports mapping type %d, which this library "
			"does not know (a newer driver?); the pin stays usable", g->backend->name,
			(int)tmp.mapping_type);
		ret = EPROTO;
	}
	pthread_mutex_unlock(&g->lock);
	if (!ret)
		*info = tmp;
	return ret;
}

/* Exported for binaries built against GDRCopy <= 2.3 and for dlopen users (NCCL, NVSHMEM). */
#undef gdr_get_info
GDR_PUBLIC int gdr_get_info(gdr_t g, gdr_mh_t handle, gdr_info_v1_t *info);
GDR_PUBLIC int gdr_get_info(gdr_t g, gdr_mh_t handle, gdr_info_v1_t *info)
{
	gdr_info_v2_t v2;
	int ret;

	if (!info)
		return EINVAL;
	ret = gdr_get_info_v2(g, handle, &v2);
	if (ret)
		return ret;
	memset(info, 0, sizeof(*info));
	info->va = v2.va;
	info->mapped_size = v2.mapped_size;
	info->page_size = v2.page_size;
	info->tm_cycles = v2.tm_cycles;
	info->cycles_per_ms = v2.cycles_per_ms;
	info->mapped = v2.mapped;
	info->wc_mapping = v2.wc_mapping;
	return 0;
}

/*
 * The backend mapped the pin but calls the mapping something this library does not know (a
 * newer gdrdrv, or a node given through GDRCOPY_GDRDRV_PATH): without knowing which fence it
 * needs, no copy can be right. Unmap it; the pin stays usable. Caller holds g->lock.
 */
static int refuse_mapping(struct gdr *g, struct gdr_memh *mh, gdr_mapping_type_t type)
{
	int ret;

	gdr_err("gdr_map: the %s backend reports mapping type %d, which this library does not "
		"know (a newer driver?); the mapping is undone", g->backend->name, (int)type);
	ret = g->ops.unmap(g, mh);
	if (ret)
		gdr_err("gdr_map: undoing that mapping failed (%s): %p/%zu stays mapped until the "
			"process exits", strerror(ret), mh->map_va, mh->map_size);
	memh_unmapped(mh);
	return EPROTO;
}

/*
 * How much of the pin gdr_map maps, from info.va. A pin that starts inside a GPU page (mh->addr
 * above mh->va) has its first byte (addr - va) into the mapping; clients such as NVSHMEM map the
 * pin's own size and then reach addr at (addr - va): the mapping goes that much further, as far
 * as the pin does. gdrdrv refuses such pins (GDRCopy's rule), the other backends map them.
 */
static size_t map_span(const struct gdr_memh *mh, size_t size)
{
	uint64_t lead = mh->addr - mh->va;

	return size > mh->mapped_size - lead ? mh->mapped_size : size + lead;
}

GDR_PUBLIC int gdr_map_v2(gdr_t g, gdr_mh_t handle, void **va, size_t size, int flags)
{
	struct gdr_memh *mh;
	gdr_mapping_type_t type = GDR_MAPPING_TYPE_NONE;
	void *p = NULL;
	size_t span;
	int ret;

	if (!va || !size)
		return EINVAL;
	if (flags < GDR_MAP_FLAG_DEFAULT || flags > GDR_MAP_FLAG_REQ_DEVICE_MAPPING) {
		gdr_err("gdr_map_v2: unknown flags %d; the flags are one value, 0 "
			"(GDR_MAP_FLAG_DEFAULT) to 3 (GDR_MAP_FLAG_REQ_DEVICE_MAPPING)", flags);
		return EINVAL;
	}
	mh = lock_memh(g, handle, "gdr_map");
	if (!mh)
		return EINVAL;
	if (mh->mapping_type != GDR_MAPPING_TYPE_NONE) {
		ret = EAGAIN;
		goto out_unlock;
	}
	if (size > mh->mapped_size) {
		gdr_err("gdr_map: size %zu exceeds the pinned range of %llu bytes", size,
			(unsigned long long)mh->mapped_size);
		ret = EINVAL;
		goto out_unlock;
	}
	span = map_span(mh, size);
	ret = g->ops.map(g, mh, span, flags, &p, &type);
	if (ret)
		goto out_unlock;
	mh->map_va = p;
	mh->map_size = span;
	mh->map_asked = size;
	if (!mapping_type_known(type)) {
		ret = refuse_mapping(g, mh, type);
		goto out_unlock;
	}
	mh->mapping_type = type;
	gdr_handle_publish_mapping(mh);
	*va = p;
out_unlock:
	pthread_mutex_unlock(&g->lock);
	return ret;
}

GDR_PUBLIC int gdr_map(gdr_t g, gdr_mh_t handle, void **va, size_t size)
{
	return gdr_map_v2(g, handle, va, size, GDR_MAP_FLAG_DEFAULT);
}

GDR_PUBLIC int gdr_unmap(gdr_t g, gdr_mh_t handle, void *va, size_t size)
{
	struct gdr_memh *mh = lock_memh(g, handle, "gdr_unmap");
	int ret;

	if (!mh)
		return EINVAL;
	if (mh->mapping_type == GDR_MAPPING_TYPE_NONE) {
		ret = EINVAL;
		goto out_unlock;
	}
	/* GDRCopy's munmap(va, 0) fails and leaves the mapping: so does a size of 0 here. */
	if (!size) {
		gdr_err("gdr_unmap: size 0; pass the size given to gdr_map (%zu)", mh->map_asked);
		ret = EINVAL;
		goto out_unlock;
	}
	/*
	 * GDRCopy munmaps whatever va it is given; DPDK passes the device pointer here. Unmapping
	 * the mapping the handle owns serves such callers and can never unmap foreign memory.
	 */
	if (va != mh->map_va || size != mh->map_asked)
		gdr_warn("gdr_unmap: called with %p/%zu, the mapping is %p/%zu; unmapping the mapping",
			 va, size, mh->map_va, mh->map_asked);
	ret = memh_unmap(g, mh);
out_unlock:
	pthread_mutex_unlock(&g->lock);
	return ret;
}

/*
 * Copies take no lock. The handle's mapping is looked up inside an announced copy (inflight.h),
 * so an unmap of the handle waits for the copy instead of pulling the mapping from under it.
 *
 * The common case (a thread that has copied before, not inside a copy, a write-combined mapping
 * in a process whose mappings are all of one type) is one flat function that keeps nothing
 * across its routine's call: tiny writes make no call at all. On a BAR, every instruction
 * around a read's loads delays the next read's; docs/performance.md has the measurements.
 * Everything else takes the general path, with the same checks and order.
 */

/* A copy once its handle's mapping is known: the checks, then the dispatcher. */
static int copy_to(gdr_mapping_type_t type, int mixed, void *map_d_ptr, const void *h_ptr,
		   size_t size)
{
	if (type == GDR_MAPPING_TYPE_NONE || (size && !h_ptr))
		return EINVAL;
	if (size)
		gdr_copy_to_mapping_type(type, mixed, map_d_ptr, h_ptr, size);
	return 0;
}

static int copy_from(gdr_mapping_type_t type, int mixed, void *h_ptr, const void *map_d_ptr,
		     size_t size)
{
	if (type == GDR_MAPPING_TYPE_NONE || (size && !h_ptr))
		return EINVAL;
	if (size)
		gdr_copy_from_mapping_type(type, mixed, h_ptr, map_d_ptr, size);
	return 0;
}

/* The general path: a thread's first copy, a copy in a signal handler that interrupted one. */
static __attribute__((noinline)) int copy_to_announced(gdr_mh_t handle, void *map_d_ptr,
						       const void *h_ptr, size_t size)
{
	unsigned long leave;
	struct gdr_inflight *r = gdr_inflight_enter(&leave);
	int mixed = 0, ret;

	if (!r)
		return ENOMEM;
	ret = copy_to(gdr_handle_mapping(handle.h, map_d_ptr, size, &mixed), mixed, map_d_ptr,
		      h_ptr, size);
	gdr_inflight_leave(r, leave);
	return ret;
}

static __attribute__((noinline)) int copy_from_announced(gdr_mh_t handle, void *h_ptr,
							 const void *map_d_ptr, size_t size)
{
	unsigned long leave;
	struct gdr_inflight *r = gdr_inflight_enter(&leave);
	int mixed = 0, ret;

	if (!r)
		return ENOMEM;
	ret = copy_from(gdr_handle_mapping(handle.h, map_d_ptr, size, &mixed), mixed, h_ptr,
			map_d_ptr, size);
	gdr_inflight_leave(r, leave);
	return ret;
}

/*
 * The rest of a copy that gdr_inflight_enter_outer announced, when it is not the common case:
 * a tail call, so that the common case shares no code with it.
 */
static __attribute__((noinline)) int copy_to_other(gdr_mh_t handle, void *map_d_ptr,
						   const void *h_ptr, size_t size)
{
	int mixed = 0, ret;

	ret = copy_to(gdr_handle_mapping(handle.h, map_d_ptr, size, &mixed), mixed, map_d_ptr,
		      h_ptr, size);
	gdr_inflight_leave_outer();
	return ret;
}

static __attribute__((noinline)) int copy_from_other(gdr_mh_t handle, void *h_ptr,
						     const void *map_d_ptr, size_t size)
{
	int mixed = 0, ret;

	ret = copy_from(gdr_handle_mapping(handle.h, map_d_ptr, size, &mixed), mixed, h_ptr,
			map_d_ptr, size);
	gdr_inflight_leave_outer();
	return ret;
}

GDR_PUBLIC int gdr_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr,
				   size_t size)
{
	if (__builtin_expect(!gdr_inflight_enter_outer(), 0))
		return copy_to_announced(handle, map_d_ptr, h_ptr, size);
	if (__builtin_expect(gdr_handle_maps_fast(handle.h, map_d_ptr, size) && size && h_ptr, 1)) {
		gdr_copy_to_wc(map_d_ptr, h_ptr, size);
		gdr_inflight_leave_outer();
		return 0;
	}
	return copy_to_other(handle, map_d_ptr, h_ptr, size);
}

GDR_PUBLIC int gdr_copy_from_mapping(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr,
				     size_t size)
{
	if (__builtin_expect(!gdr_inflight_enter_outer(), 0))
		return copy_from_announced(handle, h_ptr, map_d_ptr, size);
	if (__builtin_expect(gdr_handle_maps_fast(handle.h, map_d_ptr, size) && size && h_ptr, 1)) {
		gdr_copy_from_wc(h_ptr, map_d_ptr, size);
		gdr_inflight_leave_outer();
		return 0;
	}
	return copy_from_other(handle, h_ptr, map_d_ptr, size);
}

GDR_PUBLIC void gdr_runtime_get_version(int *major, int *minor)
{
	if (major)
		*major = GDR_API_MAJOR_VERSION;
	if (minor)
		*minor = GDR_API_MINOR_VERSION;
}

GDR_PUBLIC int gdr_driver_get_version(gdr_t g, int *major, int *minor)
{
	int maj, min, ret;

	if (!g || !major || !minor || inherited(g, "gdr_driver_get_version"))
		return EINVAL;
	pthread_mutex_lock(&g->lock);
	ret = g->ops.driver_get_version(g, &maj, &min);
	pthread_mutex_unlock(&g->lock);
	if (!ret) {
		*major = maj;
		*minor = min;
	}
	return ret;
}

GDR_PUBLIC int gdr_get_attribute(gdr_t g, gdr_attr_t attr, int *v)
{
	int value = 0, ret = 0;

	if (!g || !v || inherited(g, "gdr_get_attribute"))
		return EINVAL;
	pthread_mutex_lock(&g->lock);
	switch ((int)attr) {
	case GDR_ATTR_USE_PERSISTENT_MAPPING:
	case GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE:
	case GDR_ATTR_USING_DMA_BUF_MMAP:
		ret = g->ops.get_attribute(g, attr, &value);
		break;
	case GDR_ATTR_EXT_BACKEND:
		value = g->backend->id;
		break;
	case GDR_ATTR_EXT_COPY_TO_IMPL:
		value = gdr_copy_impl_for(1, 4096);
		break;
	case GDR_ATTR_EXT_COPY_FROM_IMPL:
		value = gdr_copy_impl_for(0, 4096);
		break;
	case GDR_ATTR_EXT_COPY_IMPLS:
		value = gdr_copy_impl_mask(gdr_cpu_features());
		break;
	default:
		ret = EINVAL;
	}
	pthread_mutex_unlock(&g->lock);
	if (!ret)
		*v = value;
	return ret;
}

GDR_PUBLIC int gdr_get_mapping_type_string(gdr_mapping_type_t type, const char **pstr)
{
	static const char *const names[] = {
		[GDR_MAPPING_TYPE_NONE] = "None",
		[GDR_MAPPING_TYPE_WC] = "Write Combining",
		[GDR_MAPPING_TYPE_CACHING] = "Caching",
		[GDR_MAPPING_TYPE_DEVICE] = "Device",
	};

	if (!pstr || (int)type < 0 || type >= GDR_MAPPING_TYPE_MAX)
		return EINVAL;
	*pstr = names[type];
	return 0;
}

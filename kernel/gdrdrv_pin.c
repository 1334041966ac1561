// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Memory regions: pinning through nvidia_p2p, the per-file table of MRs and its handles, the
 * free callback, and unpinning.
 */
#include "gdrdrv_priv.h"

#include <linux/atomic.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/timex.h>
#ifdef CONFIG_X86
#include <asm/tsc.h>
#endif

/* Page tables gdrdrv holds, all files together: /proc/driver/gdrdrv/nv_get_pages_refcount. */
static atomic64_t gdrdrv_tables = ATOMIC64_INIT(0);

s64 gdrdrv_pinned_tables(void)
{
	return atomic64_read(&gdrdrv_tables);
}

bool gdrdrv_persistent_in_use(void)
{
#if defined(NVIDIA_P2P_CAP_GET_PAGES_PERSISTENT_API)
	return gdrdrv_use_persistent_mapping;
#elif defined(NVIDIA_P2P_CAP_PERSISTENT_PAGES)
	/* Before R535, persistence meant get_pages with a NULL callback, where supported. */
	return gdrdrv_use_persistent_mapping && nvidia_p2p_cap_persistent_pages;
#else
	return false;
#endif
}

bool gdrdrv_force_pcie_supported(void)
{
#ifdef NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING
	return gdrdrv_persistent_in_use();
#else
	return false;
#endif
}

static void gdrdrv_mr_free(struct kref *ref)
{
	struct gdrdrv_mr *mr = container_of(ref, struct gdrdrv_mr, ref);

	WARN_ON(mr->page_table);
	kfree(mr);
}

void gdrdrv_mr_put(struct gdrdrv_mr *mr)
{
	kref_put(&mr->ref, gdrdrv_mr_free);
}

/* The MR with this handle, with a reference the caller drops with gdrdrv_mr_put(), or NULL. */
struct gdrdrv_mr *gdrdrv_mr_get(struct gdrdrv_file *fp, u64 handle)
{
	struct gdrdrv_mr *mr = NULL;

	if (handle > ULONG_MAX)
		return NULL;
	mutex_lock(&fp->lock);
	mr = xa_load(&fp->mrs, handle);
	if (mr)
		kref_get(&mr->ref);
	mutex_unlock(&fp->lock);
	return mr;
}

/*
 * NVIDIA revokes the pages (the memory was freed before unpin). Runs with NVIDIA's locks held:
 * takes only mr->sem, and must not call put_pages. Once it returns the table is freed.
 */
static void gdrdrv_free_callback(void *data)
{
	struct gdrdrv_mr *mr = data;
	struct nvidia_p2p_page_table *pt;

	down_write(&mr->sem);
	mr->cb_flag = true;
	/* Later CPU touches get SIGBUS: the BAR1 space is about to be reused. */
	gdrdrv_mr_zap(mr);
	if (mr->page_table)
		gdrdrv_mr_release_wc(mr);
	pt = mr->page_table;
	mr->page_table = NULL;
	up_write(&mr->sem);
	if (pt) {
		nvidia_p2p_free_page_table(pt);
		atomic64_dec(&gdrdrv_tables);
	}
	gdrdrv_dbg("handle 0x%llx: pages revoked\n", mr->handle);
}

static int gdrdrv_get_pages(struct gdrdrv_mr *mr, struct nvidia_p2p_page_table **pt)
{
	if (mr->persistent) {
#if defined(NVIDIA_P2P_CAP_GET_PAGES_PERSISTENT_API)
		u32 flags = 0;

#ifdef NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING
		if (mr->force_pcie)
			flags |= NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING;
#endif
		return nvidia_p2p_get_pages_persistent(mr->va, mr->mapped_size, pt, flags);
#else
		return nvidia_p2p_get_pages(0, 0, mr->va, mr->mapped_size, pt, NULL, NULL);
#endif
	}
	return nvidia_p2p_get_pages(mr->p2p_token, mr->va_space, mr->va, mr->mapped_size, pt,
				    gdrdrv_free_callback, mr);
}

static int gdrdrv_put_pages(struct gdrdrv_mr *mr, struct nvidia_p2p_page_table *pt)
{
	if (mr->persistent) {
#if defined(NVIDIA_P2P_CAP_GET_PAGES_PERSISTENT_API)
		return nvidia_p2p_put_pages_persistent(mr->va, pt, 0);
#else
		return nvidia_p2p_put_pages(0, 0, mr->va, pt);
#endif
	}
	return nvidia_p2p_put_pages(mr->p2p_token, mr->va_space, mr->va, pt);
}

/* Whether the CPU may map the pages cached: the provider says so, or they are RAM. */
static bool gdrdrv_table_cacheable(const struct nvidia_p2p_page_table *pt)
{
#if GDRDRV_P2P_HEADER_HAS_FLAGS
	if (GDRDRV_P2P_TABLE_HAS_FLAGS(pt->version) &&
	    (pt->flags & NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE))
		return true;
#endif
#if (defined(CONFIG_ARM64) || defined(CONFIG_PPC64)) && defined(GDRDRV_NVIDIA_OPENSOURCE)
	/*
	 * Coherent memory the kernel knows as RAM, e.g. onlined Grace HBM. page_is_ram() is
	 * GPL-only: the proprietary flavor relies on the flag alone and maps such memory WC where
	 * the driver does not set it (GDRCopy's proprietary build is slower there too).
	 */
	return gdrdrv_cpu_may_cache && pt->entries &&
	       page_is_ram(pt->pages[0]->physical_address >> PAGE_SHIFT);
#else
	return false;
#endif
}

/*
 * Adopt the table get_pages returned. If the free callback already ran, pt is gone: the MR stays
 * pinned but revoked (cb_flag set, no mapping possible), as if the callback came just after.
 */
static int gdrdrv_mr_take_table(struct gdrdrv_mr *mr, struct nvidia_p2p_page_table *pt)
{
	int ret = 0;

	/* Holding sem keeps a concurrent callback, and so the freeing of pt, waiting. */
	down_write(&mr->sem);
	if (mr->cb_flag)
		goto out_unlock;
	if (!GDRDRV_P2P_TABLE_COMPATIBLE(pt->version)) {
		pr_err("nvidia_p2p page table version 0x%08x is not 1.x or 2.x\n", pt->version);
		ret = -EFAULT;
		goto out_unlock;
	}
	if (pt->page_size != NVIDIA_P2P_PAGE_SIZE_64KB) {
		gdrdrv_dbg("page size type %u, not 64 KiB\n", pt->page_size);
		ret = -EINVAL;
		goto out_unlock;
	}
	mr->cpu_cacheable = gdrdrv_table_cacheable(pt);
	mr->page_table = pt;
	gdrdrv_mr_reserve_wc(mr);
	atomic64_inc(&gdrdrv_tables);
out_unlock:
	up_write(&mr->sem);
	return ret;
}

/* Zap mr's CPU mappings (later touches get SIGBUS) and take its table, if it still has one. */
static struct nvidia_p2p_page_table *gdrdrv_mr_detach(struct gdrdrv_mr *mr)
{
	struct nvidia_p2p_page_table *pt;

	down_write(&mr->sem);
	mr->unpinned = true;
	gdrdrv_mr_zap(mr);
	if (mr->page_table)
		gdrdrv_mr_release_wc(mr);
	pt = mr->page_table;
	mr->page_table = NULL;
	up_write(&mr->sem);
	return pt;
}

/* Give back a table taken by gdrdrv_mr_detach(). Unlocked: put_pages waits for a callback. */
static void gdrdrv_mr_release_table(struct gdrdrv_mr *mr, struct nvidia_p2p_page_table *pt)
{
	int ret;

	if (!pt)
		return;		/* revoked by the free callback */
	ret = gdrdrv_put_pages(mr, pt);
	if (ret) {
		pr_err("handle 0x%llx: put_pages failed (%d); the pages stay pinned\n",
		       mr->handle, ret);
		return;
	}
	atomic64_dec(&gdrdrv_tables);
}

/* Reserve the handle range for mr, so that publishing it after the pin cannot fail. */
static int gdrdrv_handle_reserve(struct gdrdrv_file *fp, struct gdrdrv_mr *mr)
{
	u64 pages = max_t(u64, 1, mr->mapped_size >> PAGE_SHIFT);
	u64 end;
	int ret;

	mutex_lock(&fp->lock);
	if (check_add_overflow(fp->next_handle, pages, &end) || end > GDRDRV_HANDLE_LIMIT) {
		gdrdrv_dbg("no mmap offsets left for 0x%llx bytes\n", mr->mapped_size);
		ret = -ENOMEM;
		goto out_unlock;
	}
	ret = xa_reserve(&fp->mrs, fp->next_handle, GFP_KERNEL);
	if (ret)
		goto out_unlock;
	mr->handle = fp->next_handle;
	fp->next_handle = end;
out_unlock:
	mutex_unlock(&fp->lock);
	return ret;
}

static void gdrdrv_handle_release(struct gdrdrv_file *fp, u64 handle)
{
	mutex_lock(&fp->lock);
	xa_release(&fp->mrs, handle);
	mutex_unlock(&fp->lock);
}

static int gdrdrv_handle_publish(struct gdrdrv_file *fp, struct gdrdrv_mr *mr)
{
	int ret;

	mutex_lock(&fp->lock);
	ret = xa_err(xa_store(&fp->mrs, mr->handle, mr, GFP_KERNEL));
	mutex_unlock(&fp->lock);
	return ret;
}

static struct gdrdrv_mr *gdrdrv_mr_alloc(struct gdrdrv_file *fp,
					 const struct gdrdrv_pin_args *args)
{
	struct gdrdrv_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL);

	if (!mr)
		return NULL;
	kref_init(&mr->ref);
	init_rwsem(&mr->sem);
	mr->file = fp;
	/* NVIDIA wants both ends 64 KiB aligned; the ioctl layer made sure round_up cannot wrap. */
	mr->va = args->addr & ~GDRDRV_GPU_PAGE_OFFSET;
	mr->mapped_size = round_up(args->addr + args->size, GDRDRV_GPU_PAGE_SIZE) - mr->va;
	mr->offset = args->addr & GDRDRV_GPU_PAGE_OFFSET;
	mr->p2p_token = args->p2p_token;
	mr->va_space = args->va_space;
	mr->persistent = gdrdrv_persistent_in_use();
	mr->force_pcie = args->flags & GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE;
#ifdef CONFIG_X86
	mr->tsc_khz = tsc_khz;
#endif
	mr->map_type = GDR_MR_NONE;
	mr->req_type = GDR_MR_NONE;
	return mr;
}

/* Pin args (already validated) for fp and return the new MR's handle. */
int gdrdrv_pin(struct gdrdrv_file *fp, const struct gdrdrv_pin_args *args, u64 *handle)
{
	struct nvidia_p2p_page_table *pt = NULL;
	struct gdrdrv_mr *mr;
	cycles_t start;
	int ret;

	mr = gdrdrv_mr_alloc(fp, args);
	if (!mr)
		return -ENOMEM;
	ret = gdrdrv_handle_reserve(fp, mr);
	if (ret)
		goto err_free;

	/* No gdrdrv lock held: the callback may run as soon as NVIDIA knows it (see the top). */
	start = get_cycles();
	ret = gdrdrv_get_pages(mr, &pt);
	mr->tm_cycles = get_cycles() - start;
	if (ret) {
		gdrdrv_dbg("get_pages(0x%llx, 0x%llx) failed: %d\n", mr->va, mr->mapped_size, ret);
		goto err_release_handle;
	}
	ret = gdrdrv_mr_take_table(mr, pt);
	if (ret)
		goto err_put_pages;
	ret = gdrdrv_handle_publish(fp, mr);
	if (ret) {
		gdrdrv_mr_release_table(mr, gdrdrv_mr_detach(mr));
		goto err_release_handle;
	}

	gdrdrv_info("handle 0x%llx: va 0x%llx size 0x%llx offset 0x%x%s\n", mr->handle, mr->va,
		    mr->mapped_size, mr->offset, mr->persistent ? " persistent" : "");
	*handle = mr->handle;
	return 0;

err_put_pages:
	if (gdrdrv_put_pages(mr, pt))
		pr_err("put_pages of a rejected page table failed; the pages stay pinned\n");
err_release_handle:
	gdrdrv_handle_release(fp, mr->handle);
err_free:
	gdrdrv_mr_put(mr);
	return ret;
}

int gdrdrv_unpin(struct gdrdrv_file *fp, u64 handle)
{
	struct gdrdrv_mr *mr = NULL;

	mutex_lock(&fp->lock);
	/* A handle whose pin is still running is only reserved: xa_load sees nothing there. */
	if (handle <= ULONG_MAX)
		mr = xa_load(&fp->mrs, handle);
	if (mr)
		xa_erase(&fp->mrs, handle);
	mutex_unlock(&fp->lock);
	if (!mr)
		return -EINVAL;
	gdrdrv_mr_release_table(mr, gdrdrv_mr_detach(mr));
	gdrdrv_mr_put(mr);
	return 0;
}

/* At release: whoever closes the last reference, every pin of the file goes (GDRCopy #313). */
void gdrdrv_unpin_all(struct gdrdrv_file *fp)
{
	for (;;) {
		unsigned long index = 0;
		struct gdrdrv_mr *mr;

		mutex_lock(&fp->lock);
		mr = xa_find(&fp->mrs, &index, ULONG_MAX, XA_PRESENT);
		if (mr)
			xa_erase(&fp->mrs, index);
		mutex_unlock(&fp->lock);
		if (!mr)
			break;
		gdrdrv_mr_release_table(mr, gdrdrv_mr_detach(mr));
		gdrdrv_mr_put(mr);
	}
}

int gdrdrv_mr_query(struct gdrdrv_file *fp, u64 handle, struct gdrdrv_mr_state *state)
{
	struct gdrdrv_mr *mr = gdrdrv_mr_get(fp, handle);
	int ret = 0;

	if (!mr)
		return -EINVAL;
	down_read(&mr->sem);
	if (mr->unpinned) {
		ret = -EINVAL;
		goto out_unlock;
	}
	state->va = mr->va;
	state->mapped_size = mr->mapped_size;
	state->page_size = GDRDRV_GPU_PAGE_SIZE;
	state->tsc_khz = mr->tsc_khz;
	state->tm_cycles = mr->tm_cycles;
	state->map_type = mr->map_type;
	state->cb_flag = mr->cb_flag;
out_unlock:
	up_read(&mr->sem);
	gdrdrv_mr_put(mr);
	return ret;
}

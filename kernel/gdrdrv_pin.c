// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Memory regions: pinning through nvidia_p2p (with the memory type its pages get under x86 PAT),
 * the per-file table of MRs and its handles, the free callback, and unpinning, which take the
 * pages away from CPU mappings. gdrdrv_mmap.c builds on this file, never the other way round.
 */
#include "gdrdrv_priv.h"

#include <linux/atomic.h>
#include <linux/io.h>
#include <linux/list.h>
#include <linux/module.h>
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
 * Whoever clears put_pending, the free callback or an unpin whose put_pages succeeded, ends the
 * release with gdrdrv_mr_end_put(): true if that is the caller.
 */
static bool gdrdrv_mr_take_put_pending(struct gdrdrv_mr *mr)
{
	bool pending;

	lockdep_assert_held(&mr->sem);
	pending = mr->put_pending;
	mr->put_pending = false;
	return pending;
}

/* The table went back to NVIDIA: drop what put_pending held. mr may be freed. */
static void gdrdrv_mr_end_put(struct gdrdrv_mr *mr)
{
	atomic64_dec(&gdrdrv_tables);
	gdrdrv_mr_put(mr);
	module_put(THIS_MODULE);
}

/* The free callback freed an orphaned MR's table (counted off there): drop what it held. */
static void gdrdrv_mr_end_orphan(struct gdrdrv_mr *mr)
{
	gdrdrv_mr_put(mr);
	module_put(THIS_MODULE);
}

/*
 * Remove every CPU mapping of mr, VMAs stay. Caller holds mr->sem. Without a VMA there is none,
 * and mr may not even have its handle yet (the free callback can come while it is pinned).
 */
static void gdrdrv_mr_zap(struct gdrdrv_mr *mr)
{
	lockdep_assert_held(&mr->sem);
	if (!mr->nr_vmas)
		return;
	/* The whole handle range: a mapping may have been split or moved, never beyond it. */
	unmap_mapping_range(&mr->file->mapping, (loff_t)mr->handle << PAGE_SHIFT,
			    mr->mapped_size, 1);
}

/* The run of physically contiguous pages from entry i: its start and length; the next entry. */
static u32 gdrdrv_run(const struct nvidia_p2p_page_table *pt, u32 i, u64 *phys, u64 *len)
{
	*phys = pt->pages[i]->physical_address;
	*len = GDRDRV_GPU_PAGE_SIZE;
	for (i++; i < pt->entries && pt->pages[i]->physical_address == *phys + *len; i++)
		*len += GDRDRV_GPU_PAGE_SIZE;
	return i;
}

static void gdrdrv_free_wc_runs(const struct nvidia_p2p_page_table *pt, u32 end)
{
	u64 phys, len;
	u32 i = 0;

	while (i < end) {
		i = gdrdrv_run(pt, i, &phys, &len);
		arch_io_free_memtype_wc(phys, len);
	}
}

/*
 * Whether the kernel keeps its own memory type for pfn, which gdrdrv must leave alone: RAM. The
 * proprietary flavor cannot ask page_is_ram(), which is GPL-only, nor call pfn_valid() itself,
 * which takes rcu_read_unlock_strict() (GPL-only) in Debian's 5.10; virt_addr_valid() asks
 * pfn_valid() inside the kernel. It also answers yes for device memory with struct pages
 * (ZONE_DEVICE), whose owner set its type. Only x86 PAT reserves memory types.
 */
static bool gdrdrv_pfn_has_kernel_memtype(unsigned long pfn)
{
#ifdef GDRDRV_NVIDIA_OPENSOURCE
	return page_is_ram(pfn);
#elif defined(CONFIG_X86)
	return virt_addr_valid(pfn_to_kaddr(pfn));
#else
	return true;
#endif
}

/*
 * Under x86 PAT a PFN inserted at fault time gets the memory type recorded for its physical
 * range, UC- for MMIO nobody claimed: record WC for the pin's pages, as DRM drivers do for their
 * apertures. RAM (the test provider's pages) keeps its own type. A no-op without PAT. On failure
 * the mapping gets whatever type PAT has, as with GDRCopy. Caller holds mr->sem.
 */
static void gdrdrv_mr_reserve_wc(struct gdrdrv_mr *mr)
{
	const struct nvidia_p2p_page_table *pt = mr->page_table;
	u64 phys, len;
	u32 i = 0;

	lockdep_assert_held(&mr->sem);
	if (!pt->entries ||
	    gdrdrv_pfn_has_kernel_memtype(pt->pages[0]->physical_address >> PAGE_SHIFT))
		return;
	while (i < pt->entries) {
		u32 next = gdrdrv_run(pt, i, &phys, &len);
		int ret = arch_io_reserve_memtype_wc(phys, len);

		if (ret) {
			gdrdrv_dbg("handle 0x%llx: no WC memory type for 0x%llx+0x%llx: %d\n",
				   mr->handle, phys, len, ret);
			gdrdrv_free_wc_runs(pt, i);
			return;
		}
		i = next;
	}
	mr->wc_reserved = true;
}

/* Undo gdrdrv_mr_reserve_wc() once no entry maps the pages. Caller holds mr->sem. */
static void gdrdrv_mr_release_wc(struct gdrdrv_mr *mr)
{
	lockdep_assert_held(&mr->sem);
	if (!mr->wc_reserved)
		return;
	gdrdrv_free_wc_runs(mr->page_table, mr->page_table->entries);
	mr->wc_reserved = false;
}

/*
 * Take mr's page table away from its CPU mappings, with mr->sem held for writing: zap them
 * (later touches get SIGBUS), drop the table's WC reservation, and hand the table to the caller,
 * who frees it (the free callback) or gives it back to NVIDIA (unpin). NULL when mr has none:
 * then no entry can map its pages either, since faults find no table.
 */
static struct nvidia_p2p_page_table *gdrdrv_mr_take_pages(struct gdrdrv_mr *mr)
{
	struct nvidia_p2p_page_table *pt = mr->page_table;

	lockdep_assert_held(&mr->sem);
	if (!pt)
		return NULL;
	gdrdrv_mr_zap(mr);
	gdrdrv_mr_release_wc(mr);
	mr->page_table = NULL;
	return pt;
}

/*
 * Serializes non-persistent get_pages with the put_pages of gdrdrv_mr_release_table(), from its
 * check that the callback has not run until put_pages returns. The callback can still run, and
 * end, in between: NVIDIA frees the table when it returns, and put_pages, which finds a table
 * by the calling process, the address and the table's pointer, reports success for one it no
 * longer knows. A get_pages in that gap could hand the freed table's memory to a new pin of the
 * same address, whose pages that put_pages would then release while gdrdrv maps them. The
 * callback never takes this lock; under it, put_pages may wait for a callback in flight.
 */
static DEFINE_MUTEX(gdrdrv_p2p_lock);

/*
 * NVIDIA revokes the pages (the memory was freed before unpin). Runs with NVIDIA's locks held:
 * takes only mr->sem, and must not call put_pages. Once it returns the table is freed.
 *
 * An unpin that finds the table already gone calls no put_pages, so it does not wait for this
 * callback: it may free mr as soon as sem is released, and close the file, and rmmod may follow.
 * So nothing here touches mr after up_write, and a module reference keeps this code until its
 * last call. (mr is alive on entry: it is in its file's table, or being pinned, or put_pending
 * holds it, and each of those holds the module too.) The return from that last module_put is
 * the one window no module can close for a callback of another module's: on a fully
 * preemptible kernel, an rmmod that lands while this task is preempted there frees the code it
 * returns through (kernel/README.md).
 */
static void gdrdrv_free_callback(void *data)
{
	struct nvidia_p2p_page_table *pt;
	struct gdrdrv_mr *mr = data;
	bool end_put, end_orphan;
	u64 va;

	__module_get(THIS_MODULE);
	down_write(&mr->sem);
	mr->cb_flag = true;
	/* The BAR1 space is about to be reused. */
	pt = gdrdrv_mr_take_pages(mr);
	if (pt)
		atomic64_dec(&gdrdrv_tables);
	/* Also when an unpin or a failed pin has taken it, or the pin has yet to adopt it. */
	nvidia_p2p_free_page_table(mr->nv_table);
	end_put = gdrdrv_mr_take_put_pending(mr);
	end_orphan = mr->orphaned;
	mr->orphaned = false;
	va = mr->va;
	up_write(&mr->sem);

	if (end_put)
		gdrdrv_mr_end_put(mr);
	if (end_orphan)
		gdrdrv_mr_end_orphan(mr);
	gdrdrv_dbg("va 0x%llx: pages revoked\n", va);
	module_put(THIS_MODULE);
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

static int gdrdrv_put_pages_persistent(u64 va, struct nvidia_p2p_page_table *pt)
{
#if defined(NVIDIA_P2P_CAP_GET_PAGES_PERSISTENT_API)
	return nvidia_p2p_put_pages_persistent(va, pt, 0);
#else
	return nvidia_p2p_put_pages(0, 0, va, pt);
#endif
}

static int gdrdrv_put_pages(struct gdrdrv_mr *mr, struct nvidia_p2p_page_table *pt)
{
	if (mr->persistent)
		return gdrdrv_put_pages_persistent(mr->va, pt);
	return nvidia_p2p_put_pages(mr->p2p_token, mr->va_space, mr->va, pt);
}

/*
 * Persistent tables NVIDIA refused to take back. A persistent pin has no free callback: when
 * put_pages_persistent fails, NVIDIA keeps the table, and its pages pinned, until someone asks
 * again, and only gdrdrv can. So gdrdrv keeps them here and asks again at each file's release
 * and at unload (gdrdrv_retry_refused_puts). Their MRs are gone; the list holds what a put needs.
 */
struct gdrdrv_refused_put {
	struct list_head node;
	u64 va;
	struct nvidia_p2p_page_table *pt;
};

static LIST_HEAD(gdrdrv_refused_puts);
/* Protects gdrdrv_refused_puts; never held across a put. */
static DEFINE_MUTEX(gdrdrv_refused_lock);
/* Refused tables that cannot be asked again (see below): forgotten at unload. */
static atomic64_t gdrdrv_refused_lost = ATOMIC64_INIT(0);

/*
 * Before R535 a persistent pin was get_pages with no callback, and put_pages finds such a pin
 * by the calling process: asked again from another process, it would report success and
 * release nothing. Only R535's persistent API can be asked again from anywhere.
 */
#if defined(NVIDIA_P2P_CAP_GET_PAGES_PERSISTENT_API)
#define GDRDRV_REFUSED_PUT_RETRIES true
#else
#define GDRDRV_REFUSED_PUT_RETRIES false
#endif

static void gdrdrv_keep_refused_put(u64 va, struct nvidia_p2p_page_table *pt, int err)
{
	struct gdrdrv_refused_put *r = NULL;

	if (GDRDRV_REFUSED_PUT_RETRIES)
		r = kmalloc(sizeof(*r), GFP_KERNEL);
	if (!r) {
		atomic64_inc(&gdrdrv_refused_lost);
		pr_err("va 0x%llx: put_pages_persistent failed (%d); the pages stay pinned until NVIDIA's driver unloads\n",
		       va, err);
		return;
	}
	r->va = va;
	r->pt = pt;
	mutex_lock(&gdrdrv_refused_lock);
	list_add_tail(&r->node, &gdrdrv_refused_puts);
	mutex_unlock(&gdrdrv_refused_lock);
	pr_err("va 0x%llx: put_pages_persistent failed (%d); the pages stay pinned, and gdrdrv asks again when a /dev/gdrdrv file is closed and at unload\n",
	       va, err);
}

/*
 * Ask NVIDIA again for every refused table. No lock is held across the puts: the list is taken
 * whole, and what is still refused goes back. At unload, what is still refused is reported and
 * forgotten: the pages stay pinned in NVIDIA's driver, and gdrdrv's count, which would otherwise
 * warn of a leak of gdrdrv's own, no longer holds them.
 */
void gdrdrv_retry_refused_puts(bool unloading)
{
	struct gdrdrv_refused_put *r, *tmp;
	LIST_HEAD(todo);
	s64 left = 0;
	int ret;

	mutex_lock(&gdrdrv_refused_lock);
	list_splice_init(&gdrdrv_refused_puts, &todo);
	mutex_unlock(&gdrdrv_refused_lock);

	list_for_each_entry_safe(r, tmp, &todo, node) {
		ret = gdrdrv_put_pages_persistent(r->va, r->pt);
		if (ret) {
			gdrdrv_dbg("va 0x%llx: put_pages_persistent refused again (%d)\n", r->va, ret);
			if (!unloading)
				continue;	/* back on the list below */
			left++;
		} else {
			pr_info("va 0x%llx: put_pages_persistent succeeded on a retry; the pages are released\n",
				r->va);
			atomic64_dec(&gdrdrv_tables);
		}
		list_del(&r->node);
		kfree(r);
	}

	if (!unloading) {
		mutex_lock(&gdrdrv_refused_lock);
		list_splice_tail(&todo, &gdrdrv_refused_puts);
		mutex_unlock(&gdrdrv_refused_lock);
		return;
	}
	left += atomic64_xchg(&gdrdrv_refused_lost, 0);
	if (left) {
		pr_warn("%lld persistent page tables NVIDIA refused to release stay pinned until NVIDIA's driver unloads\n",
			left);
		atomic64_sub(left, &gdrdrv_tables);
	}
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
	if (mr->cb_flag) {
		/* The callback found no table to count off: it is gone all the same. */
		atomic64_dec(&gdrdrv_tables);
		goto out_unlock;
	}
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
out_unlock:
	up_write(&mr->sem);
	return ret;
}

/* Mark mr unpinned and take its table, if it still has one (gdrdrv_mr_take_pages). */
static struct nvidia_p2p_page_table *gdrdrv_mr_detach(struct gdrdrv_mr *mr)
{
	struct nvidia_p2p_page_table *pt;

	down_write(&mr->sem);
	mr->unpinned = true;
	pt = gdrdrv_mr_take_pages(mr);
	up_write(&mr->sem);
	return pt;
}

/*
 * NVIDIA may call gdrdrv_free_callback(mr) until put_pages says the table is released: keep mr
 * and the module for it. False if the callback has run already (after the detach, so it found
 * no table): NVIDIA frees the table itself then, and put_pages must not be given its address,
 * which a later pin of the same range may have been handed again by then.
 */
static bool gdrdrv_mr_expect_callback(struct gdrdrv_mr *mr)
{
	bool revoked;

	down_write(&mr->sem);
	revoked = mr->cb_flag;
	if (!revoked) {
		kref_get(&mr->ref);
		__module_get(THIS_MODULE);
		mr->put_pending = true;
	}
	up_write(&mr->sem);
	return !revoked;
}

/*
 * Give back a table taken by gdrdrv_mr_detach(), or refused by gdrdrv_mr_take_table(). No lock
 * the callback takes is held: put_pages waits for a callback in flight. If put_pages fails,
 * NVIDIA still has the pages and may call the free callback with mr whenever the memory is
 * freed, so mr and the module stay, on purpose, until it does (forever if it never does).
 */
static void gdrdrv_mr_release_table(struct gdrdrv_mr *mr, struct nvidia_p2p_page_table *pt)
{
	bool end_put;
	int ret;

	if (!pt)
		return;		/* revoked by the free callback */
	if (mr->persistent) {
		ret = gdrdrv_put_pages(mr, pt);
		if (ret)
			gdrdrv_keep_refused_put(mr->va, pt, ret);
		else
			atomic64_dec(&gdrdrv_tables);
		return;
	}

	mutex_lock(&gdrdrv_p2p_lock);
	if (!gdrdrv_mr_expect_callback(mr)) {
		mutex_unlock(&gdrdrv_p2p_lock);
		atomic64_dec(&gdrdrv_tables);	/* the callback found it detached: not counted off */
		return;
	}
	ret = gdrdrv_put_pages(mr, pt);
	mutex_unlock(&gdrdrv_p2p_lock);
	down_write(&mr->sem);
	/* A callback that ran meanwhile has ended the release itself. */
	end_put = !ret && gdrdrv_mr_take_put_pending(mr);
	up_write(&mr->sem);
	if (ret)
		pr_err("va 0x%llx: put_pages failed (%d); the pages stay pinned, and gdrdrv keeps their region and stays loaded until NVIDIA revokes them\n",
		       mr->va, ret);
	if (end_put)
		gdrdrv_mr_end_put(mr);
}

/* Count a pin of fp against max_pins_per_file. */
static int gdrdrv_pin_slot_get(struct gdrdrv_file *fp)
{
	unsigned int max = READ_ONCE(gdrdrv_max_pins_per_file);
	int ret = 0;

	mutex_lock(&fp->lock);
	if (fp->nr_pins >= max)
		ret = -ENOSPC;
	else
		fp->nr_pins++;
	mutex_unlock(&fp->lock);
	if (ret)
		pr_warn_ratelimited("pid %d: an open /dev/gdrdrv holds %u pins, max_pins_per_file: unpin some, or load gdrdrv with a larger max_pins_per_file\n",
				    task_tgid_nr(current), max);
	return ret;
}

static void gdrdrv_pin_slot_put(struct gdrdrv_file *fp)
{
	mutex_lock(&fp->lock);
	fp->nr_pins--;
	mutex_unlock(&fp->lock);
}

/*
 * Give mr the next mmap offsets and put it in fp's table. Only a successful pin takes offsets,
 * so a refused one, however large, leaves the file as it was; offsets are never reused, so a
 * stale handle never names another pin.
 *
 * From the unlock on the table holds mr's only reference, and handles are predictable: another
 * thread of the owner may unpin and free mr before the PIN ioctl returns. So the handle is
 * handed back in *handle, and mr is logged here, under fp->lock, where no unpin can reach it.
 */
static int gdrdrv_mr_publish(struct gdrdrv_file *fp, struct gdrdrv_mr *mr, u64 *handle)
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
	mr->handle = fp->next_handle;
	ret = gdrdrv_should_fail("pin: handle table") ? -ENOMEM :
	      xa_insert(&fp->mrs, mr->handle, mr, GFP_KERNEL);
	if (ret)
		goto out_unlock;
	fp->next_handle = end;
	*handle = mr->handle;
	gdrdrv_info("handle 0x%llx: va 0x%llx size 0x%llx offset 0x%x%s\n", mr->handle, mr->va,
		    mr->mapped_size, mr->offset, mr->persistent ? " persistent" : "");
out_unlock:
	mutex_unlock(&fp->lock);
	return ret;
}

static struct gdrdrv_mr *gdrdrv_mr_alloc(struct gdrdrv_file *fp,
					 const struct gdrdrv_pin_args *args)
{
	struct gdrdrv_mr *mr;

	if (gdrdrv_should_fail("pin: memory region"))
		return NULL;
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
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

/*
 * The clock GET_INFO's tm_cycles counts get_pages in (tsc_khz converts it on x86). Not on
 * arm64, as GDRCopy: there get_cycles() reads the timer through arch_timer_read_counter, a
 * GPL-only export the proprietary flavor must not import, and no tsc_khz gives it a unit.
 */
static cycles_t gdrdrv_cycles(void)
{
#ifdef CONFIG_ARM64
	return 0;
#else
	return get_cycles();
#endif
}

/* Pin args (already validated) for fp and return the new MR's handle. */
int gdrdrv_pin(struct gdrdrv_file *fp, const struct gdrdrv_pin_args *args, u64 *handle)
{
	struct nvidia_p2p_page_table *pt = NULL;
	struct gdrdrv_mr *mr;
	cycles_t start;
	int ret;

	ret = gdrdrv_pin_slot_get(fp);
	if (ret)
		return ret;
	mr = gdrdrv_mr_alloc(fp, args);
	if (!mr) {
		ret = -ENOMEM;
		goto err_slot_put;
	}

	/*
	 * No lock the callback takes is held: it may run as soon as NVIDIA knows mr (see the top).
	 * gdrdrv_p2p_lock keeps a put_pages of a table NVIDIA may have freed from meeting this pin.
	 */
	start = gdrdrv_cycles();
	if (!mr->persistent)
		mutex_lock(&gdrdrv_p2p_lock);
	/* Into mr, where the free callback finds it if it comes before get_pages returns. */
	ret = gdrdrv_get_pages(mr, &mr->nv_table);
	if (!mr->persistent)
		mutex_unlock(&gdrdrv_p2p_lock);
	mr->tm_cycles = gdrdrv_cycles() - start;
	if (ret) {
		gdrdrv_dbg("get_pages(0x%llx, 0x%llx) failed: %d\n", mr->va, mr->mapped_size, ret);
		goto err_free;
	}
	pt = mr->nv_table;
	atomic64_inc(&gdrdrv_tables);
	ret = gdrdrv_mr_take_table(mr, pt);
	if (ret)
		goto err_release_table;
	ret = gdrdrv_mr_publish(fp, mr, handle);
	if (ret) {
		pt = gdrdrv_mr_detach(mr);
		goto err_release_table;
	}
	/* mr may be gone already (see gdrdrv_mr_publish): not a read of it from here on. */
	return 0;

err_release_table:
	gdrdrv_mr_release_table(mr, pt);
err_free:
	gdrdrv_mr_put(mr);
err_slot_put:
	gdrdrv_pin_slot_put(fp);
	return ret;
}

int gdrdrv_unpin(struct gdrdrv_file *fp, u64 handle)
{
	struct gdrdrv_mr *mr = NULL;

	mutex_lock(&fp->lock);
	if (handle <= ULONG_MAX)
		mr = xa_erase(&fp->mrs, handle);
	if (mr)
		fp->nr_pins--;
	mutex_unlock(&fp->lock);
	if (!mr)
		return -EINVAL;
	gdrdrv_mr_release_table(mr, gdrdrv_mr_detach(mr));
	gdrdrv_mr_put(mr);
	return 0;
}

/*
 * Release, by a process other than the pinning one, of a pin with a free callback. NVIDIA finds
 * the pin of put_pages(0, 0, ...) by the calling process: from here it would find none, report
 * success without releasing anything, and call gdrdrv_free_callback(mr) later, when the owner
 * frees the memory or exits, with mr long freed. So the pages leave every CPU mapping now, and
 * mr keeps its table, with orphaned holding mr and the module, until that callback frees it.
 * A pin whose callback already ran has nothing left to wait for.
 */
static void gdrdrv_mr_orphan(struct gdrdrv_mr *mr)
{
	bool pending;

	down_write(&mr->sem);
	mr->unpinned = true;
	/* The file is going, and with it every VMA: nothing can map the pages any more. */
	gdrdrv_mr_zap(mr);
	gdrdrv_mr_release_wc(mr);
	pending = mr->page_table != NULL;
	if (pending) {
		kref_get(&mr->ref);
		__module_get(THIS_MODULE);
		mr->orphaned = true;
	}
	up_write(&mr->sem);
	if (pending)
		gdrdrv_dbg("va 0x%llx: released outside its process; the pages go when NVIDIA revokes them\n",
			   mr->va);
}

/* At release: whoever closes the last reference, every pin of the file goes (GDRCopy #313). */
void gdrdrv_unpin_all(struct gdrdrv_file *fp)
{
	bool owner = gdrdrv_caller_is_owner(fp);

	for (;;) {
		unsigned long index = 0;
		struct gdrdrv_mr *mr;

		mutex_lock(&fp->lock);
		mr = xa_find(&fp->mrs, &index, ULONG_MAX, XA_PRESENT);
		if (mr) {
			xa_erase(&fp->mrs, index);
			fp->nr_pins--;
		}
		mutex_unlock(&fp->lock);
		if (!mr)
			break;
		if (!owner && !mr->persistent)
			gdrdrv_mr_orphan(mr);
		else
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

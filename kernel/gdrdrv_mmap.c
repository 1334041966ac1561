// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * CPU mappings of pinned GPU memory: mmap(fd, handle << PAGE_SHIFT) maps the MR with that handle,
 * from its start, once at a time. There is no fault handler: once a mapping is zapped (unpin,
 * free callback), touching it raises SIGBUS.
 */
#include "gdrdrv_priv.h"

/* Which caching an mmap of mr gets when REQ_MAPPING_TYPE asked for nothing. */
static bool gdrdrv_mr_can_cache(const struct gdrdrv_mr *mr)
{
	/* FORCE_PCIE pins are BAR1 addresses, never coherent. */
	return gdrdrv_cpu_may_cache && mr->cpu_cacheable && !mr->force_pcie;
}

static gdr_mr_type_t gdrdrv_mr_pick_type(const struct gdrdrv_mr *mr)
{
	lockdep_assert_held(&mr->sem);
	if (mr->req_type != GDR_MR_NONE)
		return mr->req_type;
	if (gdrdrv_mr_can_cache(mr))
		return GDR_MR_CACHING;
	if (gdrdrv_need_device_mapping)
		return GDR_MR_DEVICE;
	return GDR_MR_WC;
}

static int gdrdrv_type_prot(gdr_mr_type_t type, pgprot_t *prot)
{
	switch (type) {
	case GDR_MR_WC:
		*prot = pgprot_writecombine(*prot);
		return 0;
	case GDR_MR_CACHING:
		return 0;
	case GDR_MR_DEVICE:
#ifdef CONFIG_ARM64
		*prot = pgprot_device(*prot);
		return 0;
#else
		break;
#endif
	default:
		break;
	}
	return -EINVAL;
}

/* Reject what REQ_MAPPING_TYPE may not ask for mr. */
static int gdrdrv_type_allowed(const struct gdrdrv_mr *mr, gdr_mr_type_t type)
{
	switch (type) {
	case GDR_MR_NONE:
		return 0;
	case GDR_MR_WC:
		return gdrdrv_need_device_mapping ? -EOPNOTSUPP : 0;
	case GDR_MR_CACHING:
		return gdrdrv_mr_can_cache(mr) ? 0 : -EOPNOTSUPP;
	case GDR_MR_DEVICE:
		return gdrdrv_need_device_mapping ? 0 : -EOPNOTSUPP;
	}
	return -EINVAL;
}

int gdrdrv_mr_request_type(struct gdrdrv_file *fp, u64 handle, gdr_mr_type_t type)
{
	struct gdrdrv_mr *mr = gdrdrv_mr_get(fp, handle);
	int ret;

	if (!mr)
		return -EINVAL;
	down_write(&mr->sem);
	if (mr->unpinned) {
		ret = -EINVAL;
		goto out_unlock;
	}
	if (mr->nr_vmas) {
		ret = -EBUSY;
		goto out_unlock;
	}
	ret = gdrdrv_type_allowed(mr, type);
	if (ret)
		goto out_unlock;
	mr->req_type = type;
out_unlock:
	up_write(&mr->sem);
	gdrdrv_mr_put(mr);
	return ret;
}

/* Remove every CPU mapping of mr, VMAs stay. Caller holds mr->sem. */
void gdrdrv_mr_zap(struct gdrdrv_mr *mr)
{
	lockdep_assert_held(&mr->sem);
	/* The whole handle range: a mapping may have been split or moved, never beyond it. */
	unmap_mapping_range(&mr->file->mapping, (loff_t)mr->handle << PAGE_SHIFT,
			    mr->mapped_size, 1);
}

static void gdrdrv_vma_open(struct vm_area_struct *vma)
{
	struct gdrdrv_mr *mr = vma->vm_private_data;

	/* A split or a move: one more VMA of the same mapping, with its own reference. */
	kref_get(&mr->ref);
	down_write(&mr->sem);
	mr->nr_vmas++;
	up_write(&mr->sem);
}

/*
 * The VMA holds a reference on its MR, so the MR is still there even after unpin or release
 * freed its pages (the use-after-free of GDRCopy #314 cannot happen).
 */
static void gdrdrv_vma_close(struct vm_area_struct *vma)
{
	struct gdrdrv_mr *mr = vma->vm_private_data;

	down_write(&mr->sem);
	if (!--mr->nr_vmas)
		mr->map_type = GDR_MR_NONE;
	up_write(&mr->sem);
	gdrdrv_mr_put(mr);
}

static const struct vm_operations_struct gdrdrv_vm_ops = {
	.open = gdrdrv_vma_open,
	.close = gdrdrv_vma_close,
};

static void gdrdrv_vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
#ifdef GDRDRV_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/*
 * x86 PAT (track_pfn_remap) reserves a memory type only for a remap of a whole VMA. A smaller
 * remap takes the type already recorded for its first page and fails with -EINVAL if any other
 * page of it has another (GDRCopy #199, #240): so when a VMA needs several runs, remap it one
 * host page at a time. One run keeps the fast path and the requested type.
 */
static int gdrdrv_remap_run(struct vm_area_struct *vma, unsigned long addr, u64 phys,
			    unsigned long len, pgprot_t prot)
{
	unsigned long step = len;
	unsigned long done;
	int ret;

	if (IS_ENABLED(CONFIG_X86) && len != vma->vm_end - vma->vm_start)
		step = PAGE_SIZE;
	for (done = 0; done < len; done += step) {
		ret = io_remap_pfn_range(vma, addr + done, (phys + done) >> PAGE_SHIFT, step, prot);
		if (ret)
			return ret;
	}
	return 0;
}

/* Map the VMA onto the table's pages, merging physically contiguous 64 KiB pages into runs. */
static int gdrdrv_remap(struct vm_area_struct *vma, const struct nvidia_p2p_page_table *pt,
			pgprot_t prot)
{
	unsigned long addr = vma->vm_start;
	u32 i = 0;

	/* The caller checked that the VMA is no larger than the table. */
	while (addr < vma->vm_end) {
		u64 phys = pt->pages[i]->physical_address;
		unsigned long len = GDRDRV_GPU_PAGE_SIZE;
		int ret;

		for (i++; i < pt->entries && len < vma->vm_end - addr &&
		     pt->pages[i]->physical_address == phys + len; i++)
			len += GDRDRV_GPU_PAGE_SIZE;
		len = min(len, vma->vm_end - addr);
		ret = gdrdrv_remap_run(vma, addr, phys, len, prot);
		if (ret) {
			gdrdrv_dbg("remap of 0x%llx+0x%lx failed: %d\n", phys, len, ret);
			return -EAGAIN;
		}
		addr += len;
	}
	return 0;
}

static int gdrdrv_mmap_check(const struct gdrdrv_mr *mr, unsigned long size)
{
	lockdep_assert_held(&mr->sem);
	if (mr->unpinned || mr->cb_flag || !mr->page_table || !mr->page_table->entries) {
		gdrdrv_dbg("handle 0x%llx: no pages to map\n", mr->handle);
		return -EINVAL;
	}
	if (mr->offset) {
		gdrdrv_dbg("handle 0x%llx: pinned address is not 64 KiB aligned\n", mr->handle);
		return -EINVAL;
	}
	if (mr->nr_vmas) {
		gdrdrv_dbg("handle 0x%llx: already mapped\n", mr->handle);
		return -EINVAL;
	}
	if (size > mr->mapped_size ||
	    size > (u64)mr->page_table->entries * GDRDRV_GPU_PAGE_SIZE) {
		gdrdrv_dbg("handle 0x%llx: 0x%lx bytes exceed the pin\n", mr->handle, size);
		return -EINVAL;
	}
	return 0;
}

/*
 * A free callback that runs after this returns but before the VM links the VMA into the file's
 * mapping finds nothing to zap; GDRCopy shares this window. Persistent pins have no callback.
 */
int gdrdrv_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct gdrdrv_file *fp = filp->private_data;
	unsigned long size = vma->vm_end - vma->vm_start;
	struct gdrdrv_mr *mr;
	gdr_mr_type_t type;
	pgprot_t prot;
	int ret;

	if (!gdrdrv_caller_is_owner(fp))
		return -EACCES;
	if (!(vma->vm_flags & VM_SHARED)) {
		gdrdrv_dbg("only MAP_SHARED mappings\n");
		return -EINVAL;
	}
	mr = gdrdrv_mr_get(fp, vma->vm_pgoff);
	if (!mr) {
		gdrdrv_dbg("no MR at page offset 0x%lx\n", vma->vm_pgoff);
		return -EINVAL;
	}

	down_write(&mr->sem);
	ret = gdrdrv_mmap_check(mr, size);
	if (ret)
		goto err_unlock;
	type = gdrdrv_mr_pick_type(mr);
	prot = vma->vm_page_prot;
	ret = gdrdrv_type_prot(type, &prot);
	if (ret)
		goto err_unlock;
	/* Not inherited by fork: a child touching the range gets SIGSEGV. */
	gdrdrv_vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY);
	vma->vm_page_prot = prot;
	/* On failure the VM unmaps whatever part was remapped. */
	ret = gdrdrv_remap(vma, mr->page_table, prot);
	if (ret)
		goto err_unlock;
	vma->vm_ops = &gdrdrv_vm_ops;
	vma->vm_private_data = mr;	/* the lookup's reference is now the VMA's */
	mr->nr_vmas = 1;
	mr->map_type = type;
	up_write(&mr->sem);
	gdrdrv_info("handle 0x%llx: mapped 0x%lx bytes, type %d\n", mr->handle, size, type);
	return 0;

err_unlock:
	up_write(&mr->sem);
	gdrdrv_mr_put(mr);
	return ret;
}

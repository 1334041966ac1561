// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * CPU mappings of pinned GPU memory: mmap(fd, handle << PAGE_SHIFT) maps the MR with that handle,
 * from its start, once at a time. The page table entries are made at fault time, under the MR's
 * lock, never in mmap: the VM links a new VMA into the file's mapping only after ->mmap returns,
 * so entries made in ->mmap could escape a zap (unpin, free callback) that ran in between, and the
 * pages could be touched after NVIDIA freed them. Once an MR's pages are gone its faults get
 * SIGBUS.
 */
#include "gdrdrv_priv.h"

#include <linux/io.h>
#include <linux/mem_encrypt.h>

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

/*
 * Write-combining and unencrypted: MMIO is never encrypted memory (SME, SEV, TDX), as
 * io_remap_pfn_range() would say too. On x86, pgprot_writecombine() and, on kernels with
 * confidential-computing support, pgprot_decrypted() (cc_mkdec) are GPL-only exports, which the
 * proprietary flavor must not use. It builds the same bits from exports that are not, as GDRCopy
 * does: cachemode2protval() gives the bits PAT programmed for WC (UC- when PAT is off, so no need
 * to know whether it is on), and __sme_clr() clears AMD's encryption bit. Intel TDX's shared bit
 * it cannot set: gdrdrv_init() refuses TDX guests in that flavor.
 */
static pgprot_t gdrdrv_pgprot_wc(pgprot_t prot)
{
#if defined(CONFIG_X86) && !defined(GDRDRV_NVIDIA_OPENSOURCE)
	return __pgprot(__sme_clr(pgprot_val(prot) | cachemode2protval(_PAGE_CACHE_MODE_WC)));
#else
	return pgprot_decrypted(pgprot_writecombine(prot));
#endif
}

static int gdrdrv_type_prot(gdr_mr_type_t type, pgprot_t *prot)
{
	switch (type) {
	case GDR_MR_WC:
		*prot = gdrdrv_pgprot_wc(*prot);
		return 0;
	case GDR_MR_CACHING:
		return 0;
	case GDR_MR_DEVICE:
#ifdef CONFIG_ARM64
		*prot = pgprot_decrypted(pgprot_device(*prot));
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

/*
 * Add flags to a VMA that ->mmap is setting up. vm_flags_set() write-locks the VMA first, and on
 * 6.15+ that takes a GPL-only export (__vma_start_write), which the proprietary flavor must not
 * import: Linux would refuse to load it next to NVIDIA's driver (GDRCopy 2.5.2's build has that
 * import). That flavor sets the flags without the lock, as the kernel's own unlocked setters do:
 * ->mmap runs before the VMA is linked into the tree, so no other thread can find it yet.
 */
static void gdrdrv_vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
#if !defined(GDRDRV_NVIDIA_OPENSOURCE) && defined(GDRDRV_HAVE_VMA_FLAGS_SET_WORD)
	vma_flags_set_word(&vma->flags, flags);
#elif !defined(GDRDRV_NVIDIA_OPENSOURCE) && defined(GDRDRV_HAVE_VM_FLAGS_INIT)
	vm_flags_init(vma, vma->vm_flags | flags);
#elif defined(GDRDRV_HAVE_VM_FLAGS_SET)
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/*
 * Map the GPU page around the fault, as far as it lies in the VMA. The VMA may be a piece of a
 * split mapping: its vm_pgoff says where it starts in the MR. The bounds are measured from the
 * fault, never from where the GPU page would begin: a piece moved to an address below its
 * offset in the GPU page (mremap to a low address) would wrap that start around.
 */
static vm_fault_t gdrdrv_vma_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct gdrdrv_mr *mr = vma->vm_private_data;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	unsigned long addr, start, end, in_page;
	u64 off, phys;

	down_read(&mr->sem);
	if (mr->unpinned || mr->cb_flag || !mr->page_table)
		goto out_unlock;
	off = ((u64)(vma->vm_pgoff - mr->handle) << PAGE_SHIFT) + (vmf->address - vma->vm_start);
	if (off >> GDRDRV_GPU_PAGE_SHIFT >= mr->page_table->entries)
		goto out_unlock;
	in_page = off & GDRDRV_GPU_PAGE_OFFSET;
	start = vmf->address - min(in_page, vmf->address - vma->vm_start);
	end = vmf->address + min_t(unsigned long, GDRDRV_GPU_PAGE_SIZE - in_page,
				   vma->vm_end - vmf->address);
	/* The physical address of start. */
	phys = mr->page_table->pages[off >> GDRDRV_GPU_PAGE_SHIFT]->physical_address + in_page -
	       (vmf->address - start);
	for (addr = start; addr < end; addr += PAGE_SIZE) {
		ret = vmf_insert_pfn(vma, addr, (phys + (addr - start)) >> PAGE_SHIFT);
		if (ret != VM_FAULT_NOPAGE)
			break;
	}
out_unlock:
	up_read(&mr->sem);
	return ret;
}

static const struct vm_operations_struct gdrdrv_vm_ops = {
	.open = gdrdrv_vma_open,
	.close = gdrdrv_vma_close,
	.fault = gdrdrv_vma_fault,
};

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

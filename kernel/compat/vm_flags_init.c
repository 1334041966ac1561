// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vm_flags_init(): Linux 6.3+, beside vm_flags_set(). It sets a VMA's flags without locking the
 * VMA, which ->mmap may do (the VMA is not in the tree yet) and the proprietary flavor must do
 * where vm_flags_set() locks through a GPL-only export (gdrdrv_mmap.c).
 */
#include <linux/mm.h>
#include <linux/module.h>

void gdrdrv_probe_vm_flags_init(struct vm_area_struct *vma);
void gdrdrv_probe_vm_flags_init(struct vm_area_struct *vma)
{
	vm_flags_init(vma, vma->vm_flags | VM_IO);
}

MODULE_LICENSE("Dual MIT/GPL");

// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vma_flags_set_word(): the kernels whose VMA flags became a bitmap wider than vm_flags_t (7.x).
 * There vm_flags_init() clears the words beyond the first, so adding flags without a lock takes
 * this helper (gdrdrv_mmap.c).
 */
#include <linux/mm.h>
#include <linux/module.h>

void gdrdrv_probe_vma_flags_set_word(struct vm_area_struct *vma);
void gdrdrv_probe_vma_flags_set_word(struct vm_area_struct *vma)
{
	vma_flags_set_word(&vma->flags, VM_IO);
}

MODULE_LICENSE("Dual MIT/GPL");

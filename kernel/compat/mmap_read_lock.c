// SPDX-License-Identifier: GPL-2.0 OR MIT
/* mmap_read_lock(): Linux 5.8+; before it, mm->mmap_sem. */
#include <linux/mm.h>
#include <linux/module.h>

void gdrdrv_probe_mmap_read_lock(struct mm_struct *mm);
void gdrdrv_probe_mmap_read_lock(struct mm_struct *mm)
{
	mmap_read_lock(mm);
	mmap_read_unlock(mm);
}

MODULE_LICENSE("Dual MIT/GPL");

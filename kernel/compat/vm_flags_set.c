// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vm_flags_set(): Linux 6.3+, where vma->vm_flags became read-only, and backports such as RHEL
 * 9.5's 5.14 (GDRCopy #309, #312), which is why this is a probe and not a version test. The
 * licence matters: on 6.15+ the helper calls a GPL-only symbol (GDRCopy #335).
 */
#include <linux/mm.h>
#include <linux/module.h>

void gdrdrv_probe_vm_flags_set(struct vm_area_struct *vma);
void gdrdrv_probe_vm_flags_set(struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_IO);
}

MODULE_LICENSE("Dual MIT/GPL");

// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * address_space.invalidate_lock: Linux 5.15+. inode_init_always() initialises it for an inode's
 * own mapping; address_space_init_once(), which gdrdrv's per-file mapping goes through, does not.
 */
#include <linux/fs.h>
#include <linux/module.h>

void gdrdrv_probe_mapping_invalidate_lock(struct address_space *mapping);
void gdrdrv_probe_mapping_invalidate_lock(struct address_space *mapping)
{
	init_rwsem(&mapping->invalidate_lock);
}

MODULE_LICENSE("Dual MIT/GPL");

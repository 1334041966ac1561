// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Build-time only, never installed or loaded: exports the nvidia_p2p symbols gdrdrv imports,
 * declared by the same nv-p2p.h, so that modpost resolves them and records their versions. At
 * load time nvidia.ko provides them (in tests, tests/sim/nvp2p_sim).
 */
#include <linux/errno.h>
#include <linux/module.h>

#include "nv-p2p.h"

int nvidia_p2p_get_pages(u64 p2p_token, u32 va_space, u64 virtual_address, u64 length,
			 struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data)
{
	return -ENODEV;
}
EXPORT_SYMBOL(nvidia_p2p_get_pages);

int nvidia_p2p_put_pages(u64 p2p_token, u32 va_space, u64 virtual_address,
			 struct nvidia_p2p_page_table *page_table)
{
	return -ENODEV;
}
EXPORT_SYMBOL(nvidia_p2p_put_pages);

int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table)
{
	return -ENODEV;
}
EXPORT_SYMBOL(nvidia_p2p_free_page_table);

#ifdef NVIDIA_P2P_CAP_GET_PAGES_PERSISTENT_API
int nvidia_p2p_get_pages_persistent(u64 virtual_address, u64 length,
				    struct nvidia_p2p_page_table **page_table, u32 flags)
{
	return -ENODEV;
}
EXPORT_SYMBOL(nvidia_p2p_get_pages_persistent);

int nvidia_p2p_put_pages_persistent(u64 virtual_address,
				    struct nvidia_p2p_page_table *page_table, u32 flags)
{
	return -ENODEV;
}
EXPORT_SYMBOL(nvidia_p2p_put_pages_persistent);
#endif

#ifdef NVIDIA_P2P_CAP_PERSISTENT_PAGES
int nvidia_p2p_cap_persistent_pages;
EXPORT_SYMBOL(nvidia_p2p_cap_persistent_pages);
#endif

MODULE_LICENSE("Dual MIT/GPL");
MODULE_DESCRIPTION("nvidia_p2p symbol stub for building gdrdrv; not for loading");

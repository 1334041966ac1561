// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Must compile: if it does not, the kernel build tree is broken and no other answer counts. */
#include <linux/module.h>

MODULE_LICENSE("Dual MIT/GPL");

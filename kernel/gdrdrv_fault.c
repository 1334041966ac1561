// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Fault injection, in test builds only (make GDRDRV_FAULT_INJECT=y; never in packages): the
 * steps of gdrdrv that fail when the kernel is out of memory, counted from when fail_nth was
 * last set, and the fail_nth-th of them made to fail. The VM tier sets it to 1, 2, ... in turn
 * and checks that each failure unwinds whole (tests/vm/test_faults.c). The kernel's own
 * fault injection (CONFIG_FAULT_INJECTION, failslab) is not built into the distribution kernels
 * the VM tier boots.
 */
#include "gdrdrv_priv.h"

#include <linux/atomic.h>
#include <linux/module.h>

static atomic_t gdrdrv_fail_countdown = ATOMIC_INIT(0);

static int gdrdrv_fail_nth_set(const char *val, const struct kernel_param *kp)
{
	int n, ret;

	ret = kstrtoint(val, 0, &n);
	if (ret)
		return ret;
	if (n < 0)
		return -EINVAL;
	atomic_set(&gdrdrv_fail_countdown, n);
	return 0;
}

/* Not sysfs_emit: a GPL-only export, which the proprietary flavor must not use. */
static int gdrdrv_fail_nth_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%d\n", atomic_read(&gdrdrv_fail_countdown));
}

static const struct kernel_param_ops gdrdrv_fail_nth_ops = {
	.set = gdrdrv_fail_nth_set,
	.get = gdrdrv_fail_nth_get,
};
module_param_cb(fail_nth, &gdrdrv_fail_nth_ops, NULL, 0644);
MODULE_PARM_DESC(fail_nth,
		 "test builds only: the Nth fallible step from now fails as if out of memory; reads back how many steps are left until then (0: none fails)");

bool gdrdrv_should_fail(const char *step)
{
	int left = atomic_read(&gdrdrv_fail_countdown);

	/* Counted down by one step at a time, whichever threads pass the steps. */
	do {
		if (left <= 0)
			return false;
	} while (!atomic_try_cmpxchg(&gdrdrv_fail_countdown, &left, left - 1));
	if (left != 1)
		return false;
	pr_info("fault injected: %s\n", step);
	return true;
}

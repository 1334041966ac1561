// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvp2p_sim: a stand-in for NVIDIA's kernel driver, for tests of nvidia_p2p consumers (gdrdrv)
 * on machines without a GPU. It exports the nvidia_p2p API (nvp2p_sim_p2p.c) over host pages
 * and gives tests a control device, /dev/nvp2p_sim (nvp2p_sim_ioctl.h), to play the CUDA
 * program's part: allocate, access and free the "GPU" memory, inject failures, count pins.
 */
#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "nvp2p_sim.h"

struct sim_state sim = {
	.lock = __MUTEX_INITIALIZER(sim.lock),
	.allocs = LIST_HEAD_INIT(sim.allocs),
	.pins = LIST_HEAD_INIT(sim.pins),
	.next_va = NVP2P_SIM_VA_BASE,
	.revoke_wq = __WAIT_QUEUE_HEAD_INITIALIZER(sim.revoke_wq),
	.quarantine = LIST_HEAD_INIT(sim.quarantine),
};

static int sim_open(struct inode *inode, struct file *filp)
{
	struct sim_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	INIT_LIST_HEAD(&ctx->allocs);
	filp->private_data = ctx;
	return 0;
}

static int sim_release(struct inode *inode, struct file *filp)
{
	struct sim_ctx *ctx = filp->private_data;

	sim_ctx_release(ctx);
	kfree(ctx);
	return 0;
}

static long sim_ioctl_alloc(struct sim_ctx *ctx, void __user *uarg)
{
	struct nvp2p_sim_alloc req;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	ret = sim_alloc_create(ctx, &req);
	if (ret)
		return ret;
	if (copy_to_user(uarg, &req, sizeof(req))) {
		/* The caller cannot know the va: take the allocation back. */
		sim_alloc_free(req.va);
		return -EFAULT;
	}
	return 0;
}

static long sim_ioctl_free(void __user *uarg)
{
	struct nvp2p_sim_free req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	return sim_alloc_free(req.va);
}

static long sim_ioctl_rw(void __user *uarg, bool write)
{
	struct nvp2p_sim_rw req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	return sim_rw(req.va, req.len, u64_to_user_ptr(req.buf), write);
}

static long sim_ioctl_counts(void __user *uarg)
{
	struct nvp2p_sim_counts c;

	/* What was freed since the last call is checked now, so misuses counts its writes. */
	sim_quarantine_drain();
	mutex_lock(&sim.lock);
	c = sim.counts;
	c.backing_bytes = sim.total_bytes;
	mutex_unlock(&sim.lock);
	c.get_pages_calls = atomic64_read(&sim.get_pages_calls);
	c.put_pages_calls = atomic64_read(&sim.put_pages_calls);
	c.callbacks = atomic64_read(&sim.callbacks);
	c.misuses = atomic64_read(&sim.misuses);
	if (copy_to_user(uarg, &c, sizeof(c)))
		return -EFAULT;
	return 0;
}

static long sim_ioctl_inject(void __user *uarg)
{
	struct nvp2p_sim_inject req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	switch (req.error) {
	case ENOMEM:
	case EINVAL:
	case EIO:
	case EBUSY:
	case ENODEV:
	case ENOTSUPP:
		break;
	default:
		return -EINVAL;
	}
	if (req.count > 1U << 20)
		return -EINVAL;
	mutex_lock(&sim.lock);
	sim.inject_count = req.count;
	sim.inject_error = -(int)req.error;
	mutex_unlock(&sim.lock);
	return 0;
}

static long sim_ioctl_inject_put(void __user *uarg)
{
	struct nvp2p_sim_inject req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if ((req.error != EINVAL && req.error != EIO) || req.count > 1U << 20)
		return -EINVAL;
	mutex_lock(&sim.lock);
	sim.inject_put_count = req.count;
	sim.inject_put_error = -(int)req.error;
	mutex_unlock(&sim.lock);
	return 0;
}

static long sim_ioctl_inject_revoke(void __user *uarg)
{
	struct nvp2p_sim_inject req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.error || req.count > 1U << 20)
		return -EINVAL;
	mutex_lock(&sim.lock);
	sim.inject_revoke_count = req.count;
	mutex_unlock(&sim.lock);
	return 0;
}

static long sim_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct sim_ctx *ctx = filp->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case NVP2P_SIM_IOC_ALLOC:
		return sim_ioctl_alloc(ctx, uarg);
	case NVP2P_SIM_IOC_FREE:
		return sim_ioctl_free(uarg);
	case NVP2P_SIM_IOC_WRITE:
		return sim_ioctl_rw(uarg, true);
	case NVP2P_SIM_IOC_READ:
		return sim_ioctl_rw(uarg, false);
	case NVP2P_SIM_IOC_COUNTS:
		return sim_ioctl_counts(uarg);
	case NVP2P_SIM_IOC_INJECT:
		return sim_ioctl_inject(uarg);
	case NVP2P_SIM_IOC_INJECT_PUT:
		return sim_ioctl_inject_put(uarg);
	case NVP2P_SIM_IOC_INJECT_REVOKE:
		return sim_ioctl_inject_revoke(uarg);
	case NVP2P_SIM_IOC_SELFTEST:
		return sim_selftest(ctx);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations sim_fops = {
	.owner = THIS_MODULE,
	.open = sim_open,
	.release = sim_release,
	.unlocked_ioctl = sim_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice sim_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "nvp2p_sim",
	.fops = &sim_fops,
	.mode = 0666,
};

static int sim_module_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	if (action == MODULE_STATE_GOING)
		sim_release_pins_of(data);
	return NOTIFY_DONE;
}

static struct notifier_block sim_module_nb = {
	.notifier_call = sim_module_notify,
};

static int __init sim_init(void)
{
	int ret;

	ret = register_module_notifier(&sim_module_nb);
	if (ret)
		return ret;
	ret = misc_register(&sim_miscdev);
	if (ret)
		goto err_unregister_notifier;
	pr_info("nvp2p_sim: loaded; control device /dev/%s\n", sim_miscdev.name);
	return 0;

err_unregister_notifier:
	unregister_module_notifier(&sim_module_nb);
	return ret;
}

static void __exit sim_exit(void)
{
	misc_deregister(&sim_miscdev);
	unregister_module_notifier(&sim_module_nb);
	/* Every control file is closed (each held a module reference), so no allocation is left. */
	WARN_ON(!list_empty(&sim.allocs));
	sim_release_leaked_pins();
	sim_quarantine_drain();
	WARN(sim.total_bytes, "nvp2p_sim: %llu bytes of backing outstanding at unload\n",
	     sim.total_bytes);
	pr_info("nvp2p_sim: unloaded\n");
}

module_init(sim_init);
module_exit(sim_exit);

MODULE_LICENSE(NVP2P_SIM_LICENSE);
MODULE_DESCRIPTION("Simulated NVIDIA nvidia_p2p provider over host pages, for tests");

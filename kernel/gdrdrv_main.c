// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gdrdrv: CPU mappings of NVIDIA GPU memory pinned through nvidia_p2p, with GDRCopy 2.6's ioctl
 * ABI. This part: module parameters, the /dev/gdrdrv misc device, open files, procfs.
 */
#include "gdrdrv_priv.h"

#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#ifdef CONFIG_PPC64
#include <asm/reg.h>
#endif

#ifdef GDRDRV_NVIDIA_OPENSOURCE
#define GDRDRV_NVIDIA_FLAVOR "opensource"
#else
#define GDRDRV_NVIDIA_FLAVOR "proprietary"
#endif

int gdrdrv_dbg_enabled;
module_param_named(dbg_enabled, gdrdrv_dbg_enabled, int, 0644);
MODULE_PARM_DESC(dbg_enabled, "log debug messages, including why requests fail (default 0)");

int gdrdrv_info_enabled;
module_param_named(info_enabled, gdrdrv_info_enabled, int, 0644);
MODULE_PARM_DESC(info_enabled, "log pins and mappings (default 0)");

/* Read-only once loaded: every pin of a load must use the same nvidia_p2p API. */
int gdrdrv_use_persistent_mapping = 1;
module_param_named(use_persistent_mapping, gdrdrv_use_persistent_mapping, int, 0444);
MODULE_PARM_DESC(use_persistent_mapping,
		 "persistent pins: mappings survive cudaFree, no free callback (default 1)");

/*
 * /dev/gdrdrv is open to every user by default: bound the kernel memory one open file can pin
 * down (as udmabuf bounds its lists). Changes apply to later pins.
 */
unsigned int gdrdrv_max_pins_per_file = 65536;
module_param_named(max_pins_per_file, gdrdrv_max_pins_per_file, uint, 0644);
MODULE_PARM_DESC(max_pins_per_file,
		 "pins one open /dev/gdrdrv may hold; more fail with ENOSPC (default 65536)");

static ushort dev_mode = 0666;
module_param(dev_mode, ushort, 0444);
MODULE_PARM_DESC(dev_mode, "permissions of /dev/gdrdrv (default 0666, as GDRCopy's scripts)");

bool gdrdrv_cpu_may_cache;
bool gdrdrv_need_device_mapping;

static int gdrdrv_open(struct inode *inode, struct file *filp)
{
	struct gdrdrv_file *fp;

	if (gdrdrv_should_fail("open"))
		return -ENOMEM;
	fp = kzalloc(sizeof(*fp), GFP_KERNEL);
	if (!fp)
		return -ENOMEM;
	mutex_init(&fp->lock);
	xa_init(&fp->mrs);
	fp->owner = gdrdrv_process_current();
	address_space_init_once(&fp->mapping);
#ifdef GDRDRV_HAVE_MAPPING_INVALIDATE_LOCK
	/* Left out by address_space_init_once: inode_init_always does it for an inode's mapping. */
	init_rwsem(&fp->mapping.invalidate_lock);
#endif
	/* The VFS reads f_mapping->host after ->open, and a_ops on fadvise and the like. */
	fp->mapping.host = inode;
	fp->mapping.a_ops = inode->i_mapping->a_ops;
	filp->f_mapping = &fp->mapping;
	filp->private_data = fp;
	return 0;
}

/* The last reference went, whoever held it: its pins go too. No VMA is left (each holds one). */
static int gdrdrv_release(struct inode *inode, struct file *filp)
{
	struct gdrdrv_file *fp = filp->private_data;

	gdrdrv_unpin_all(fp);
	gdrdrv_retry_refused_puts(false);
	xa_destroy(&fp->mrs);
	mutex_destroy(&fp->lock);
	kfree(fp);
	return 0;
}

static const struct file_operations gdrdrv_fops = {
	.owner = THIS_MODULE,
	.open = gdrdrv_open,
	.release = gdrdrv_release,
	.unlocked_ioctl = gdrdrv_ioctl,
	/* Every struct has one layout for 32- and 64-bit callers: fixed-width, explicitly padded. */
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = gdrdrv_mmap,
};

static struct miscdevice gdrdrv_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "gdrdrv",
	.fops = &gdrdrv_fops,
};

static int gdrdrv_params_show(struct seq_file *m, void *v)
{
	seq_printf(m, "Version: %s\n", GDRDRV_VERSION_STRING);
	seq_printf(m, "Built for NVIDIA driver flavor: %s\n", GDRDRV_NVIDIA_FLAVOR);
	seq_printf(m, "Use persistent mapping: %s\n", gdrdrv_persistent_in_use() ? "yes" : "no");
	seq_printf(m, "dbg_enabled: %d\n", gdrdrv_dbg_enabled);
	seq_printf(m, "info_enabled: %d\n", gdrdrv_info_enabled);
	return 0;
}

/* Always there (GDRCopy needs dbg_enabled): leak tests read it, and it reveals only a count. */
static int gdrdrv_refcount_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%lld\n", gdrdrv_pinned_tables());
	return 0;
}

static struct proc_dir_entry *gdrdrv_proc_dir;

static int gdrdrv_proc_init(void)
{
	gdrdrv_proc_dir = gdrdrv_should_fail("procfs directory") ? NULL :
			  proc_mkdir("driver/gdrdrv", NULL);
	if (!gdrdrv_proc_dir)
		return -ENOMEM;
	if (!proc_create_single("params", 0444, gdrdrv_proc_dir, gdrdrv_params_show) ||
	    gdrdrv_should_fail("procfs file") ||
	    !proc_create_single("nv_get_pages_refcount", 0444, gdrdrv_proc_dir,
				gdrdrv_refcount_show)) {
		remove_proc_subtree("driver/gdrdrv", NULL);
		return -ENOMEM;
	}
	return 0;
}

static void gdrdrv_detect_platform(void)
{
#if defined(CONFIG_ARM64)
	static const unsigned short bf3_root_ports[] = { 0xa2da, 0xa2db };
	unsigned int i;

	gdrdrv_cpu_may_cache = true;
	/* BlueField-3 only accepts Device-type CPU mappings of GPU memory. */
	for (i = 0; i < ARRAY_SIZE(bf3_root_ports); i++) {
		struct pci_dev *pdev = pci_get_device(PCI_VENDOR_ID_MELLANOX, bf3_root_ports[i],
						      NULL);

		if (pdev) {
			pci_dev_put(pdev);
			gdrdrv_need_device_mapping = true;
		}
	}
#elif defined(CONFIG_PPC64)
	gdrdrv_cpu_may_cache = pvr_version_is(PVR_POWER9);
#endif
}

/*
 * The proprietary flavor cannot mark its mappings shared in an Intel TDX guest (see
 * gdrdrv_pgprot_wc()), so the CPU could not touch them: refuse to load rather than map wrong.
 */
static int gdrdrv_check_flavor_platform(void)
{
#if defined(CONFIG_X86) && !defined(GDRDRV_NVIDIA_OPENSOURCE) && defined(X86_FEATURE_TDX_GUEST)
	if (boot_cpu_has(X86_FEATURE_TDX_GUEST)) {
		pr_err("this build, for the proprietary NVIDIA driver, cannot map GPU memory in a TDX guest; build gdrdrv for the open NVIDIA driver\n");
		return -EOPNOTSUPP;
	}
#endif
	return 0;
}

static int __init gdrdrv_init(void)
{
	int ret;

	BUILD_BUG_ON(PAGE_SIZE > GDRDRV_GPU_PAGE_SIZE);
	if (dev_mode & ~0777) {
		pr_err("dev_mode 0%o is not a permission mode\n", dev_mode);
		return -EINVAL;
	}
	ret = gdrdrv_check_flavor_platform();
	if (ret)
		return ret;
	gdrdrv_misc.mode = dev_mode;
	gdrdrv_detect_platform();

	ret = gdrdrv_proc_init();
	if (ret)
		return ret;
	ret = gdrdrv_should_fail("misc device") ? -ENOMEM : misc_register(&gdrdrv_misc);
	if (ret)
		goto err_proc;

	pr_info("gdrdrv %s built for the %s NVIDIA driver, /dev/gdrdrv mode 0%o\n",
		GDRDRV_VERSION_STRING, GDRDRV_NVIDIA_FLAVOR, dev_mode);
	if (gdrdrv_use_persistent_mapping && !gdrdrv_persistent_in_use())
		pr_info("persistent mapping requested, but this nv-p2p.h has no persistent API\n");
	gdrdrv_info("%s mapping; CPU-cached mappings %s; device mappings %s\n",
		    gdrdrv_persistent_in_use() ? "persistent" : "non-persistent",
		    gdrdrv_cpu_may_cache ? "possible" : "off",
		    gdrdrv_need_device_mapping ? "required" : "off");
	return 0;

err_proc:
	remove_proc_subtree("driver/gdrdrv", NULL);
	return ret;
}

static void __exit gdrdrv_exit(void)
{
	misc_deregister(&gdrdrv_misc);
	remove_proc_subtree("driver/gdrdrv", NULL);
	gdrdrv_retry_refused_puts(true);
	/*
	 * Open files hold the module, release unpins everything, and the tables NVIDIA refused
	 * to release are off the count now: a count left is a bug.
	 */
	WARN(gdrdrv_pinned_tables(), "gdrdrv: %lld page tables still pinned at unload\n",
	     gdrdrv_pinned_tables());
}

module_init(gdrdrv_init);
module_exit(gdrdrv_exit);

MODULE_LICENSE("Dual MIT/GPL");
MODULE_VERSION(GDRDRV_VERSION_STRING);
MODULE_DESCRIPTION("GDRCopy-compatible kernel-mode driver built for " GDRDRV_NVIDIA_FLAVOR
		   " NVIDIA driver");
/* Which nv-p2p.h, and so which nvidia_p2p symbol versions (kernel/Kbuild). */
MODULE_INFO(nv_p2p_h, GDRDRV_NV_P2P_H);

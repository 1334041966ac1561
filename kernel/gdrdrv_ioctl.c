// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The ioctls, in three layers: gdrdrv_ioctl() checks the caller and dispatches; one function per
 * command copies its struct in and validates every field before anything is allocated or pinned;
 * the core functions (gdrdrv_pin.c, gdrdrv_mmap.c) work on kernel structs only.
 *
 * Padding: NVIDIA's libgdrapi fills PIN_BUFFER_V2's pad but leaves the 4 bytes after va_space in
 * PIN_BUFFER (implicit padding in GDRCopy's struct) and REQ_MAPPING_TYPE's pad uninitialised, so
 * those two are ignored: rejecting stack garbage would break that library on this module.
 */
#include "gdrdrv_priv.h"

#include <linux/overflow.h>
#include <linux/uaccess.h>

static int gdrdrv_check_pin(const struct gdrdrv_pin_args *a)
{
	u64 end;

	if (!a->addr || !a->size) {
		gdrdrv_dbg("addr 0x%llx size 0x%llx: empty range\n", a->addr, a->size);
		return -EINVAL;
	}
	/* The end is rounded up to 64 KiB, which must not wrap either. */
	if (check_add_overflow(a->addr, a->size, &end) || end > U64_MAX - GDRDRV_GPU_PAGE_OFFSET) {
		gdrdrv_dbg("addr 0x%llx size 0x%llx: range wraps\n", a->addr, a->size);
		return -EINVAL;
	}
	if (a->flags & ~GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE) {
		gdrdrv_dbg("unknown pin flags 0x%x\n", a->flags);
		return -EINVAL;
	}
	if (!gdrdrv_persistent_in_use()) {
		if (a->flags) {
			gdrdrv_dbg("pin flags need persistent mapping\n");
			return -EINVAL;
		}
		return 0;
	}
	if (a->p2p_token || a->va_space) {
		gdrdrv_dbg("p2p tokens are deprecated and unsupported with persistent mapping\n");
		return -EINVAL;
	}
	if ((a->flags & GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE) && !gdrdrv_force_pcie_supported()) {
		gdrdrv_dbg("FORCE_PCIE needs NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING in nv-p2p.h\n");
		return -EINVAL;
	}
	return 0;
}

/*
 * Pin, then hand the handle out; if that fails the caller could never unpin, so undo the pin.
 * An output that cannot be written (read-only memory) is refused before the pin: an undone pin
 * would have used up its mmap offsets, which are never reused.
 */
static int gdrdrv_pin_and_return(struct gdrdrv_file *fp, const struct gdrdrv_pin_args *args,
				 gdr_hnd_t __user *uhandle)
{
	u64 handle;
	int ret;

	ret = gdrdrv_check_pin(args);
	if (ret)
		return ret;
	if (put_user(0, uhandle))
		return -EFAULT;
	ret = gdrdrv_pin(fp, args, &handle);
	if (ret)
		return ret;
	if (put_user(handle, uhandle)) {
		gdrdrv_unpin(fp, handle);
		return -EFAULT;
	}
	return 0;
}

static int gdrdrv_ioc_pin_buffer(struct gdrdrv_file *fp, void __user *uarg)
{
	struct gdrdrv_pin_buffer_params p;
	struct gdrdrv_pin_args args;

	if (copy_from_user(&p, uarg, sizeof(p)))
		return -EFAULT;
	args = (struct gdrdrv_pin_args) {
		.addr = p.addr,
		.size = p.size,
		.p2p_token = p.p2p_token,
		.va_space = p.va_space,
	};
	return gdrdrv_pin_and_return(fp, &args,
				     &((struct gdrdrv_pin_buffer_params __user *)uarg)->handle);
}

static int gdrdrv_ioc_pin_buffer_v2(struct gdrdrv_file *fp, void __user *uarg)
{
	struct gdrdrv_pin_buffer_v2_params p;
	struct gdrdrv_pin_args args;

	if (copy_from_user(&p, uarg, sizeof(p)))
		return -EFAULT;
	if (p.pad) {
		gdrdrv_dbg("non-zero padding\n");
		return -EINVAL;
	}
	args = (struct gdrdrv_pin_args) {
		.addr = p.addr,
		.size = p.size,
		.flags = p.flags,
	};
	return gdrdrv_pin_and_return(fp, &args,
				     &((struct gdrdrv_pin_buffer_v2_params __user *)uarg)->handle);
}

static int gdrdrv_ioc_unpin_buffer(struct gdrdrv_file *fp, void __user *uarg)
{
	struct gdrdrv_unpin_buffer_params p;

	if (copy_from_user(&p, uarg, sizeof(p)))
		return -EFAULT;
	return gdrdrv_unpin(fp, p.handle);
}

static int gdrdrv_ioc_get_cb_flag(struct gdrdrv_file *fp, void __user *uarg)
{
	struct gdrdrv_get_cb_flag_params __user *up = uarg;
	struct gdrdrv_mr_state st;
	gdr_hnd_t handle;
	int ret;

	if (get_user(handle, &up->handle))
		return -EFAULT;
	ret = gdrdrv_mr_query(fp, handle, &st);
	if (ret)
		return ret;
	return put_user((__u32)st.cb_flag, &up->flag) ? -EFAULT : 0;
}

static int gdrdrv_ioc_get_info(struct gdrdrv_file *fp, void __user *uarg)
{
	struct gdrdrv_get_info_params p;
	struct gdrdrv_mr_state st;
	int ret;

	if (copy_from_user(&p, uarg, sizeof(p)))
		return -EFAULT;
	ret = gdrdrv_mr_query(fp, p.handle, &st);
	if (ret)
		return ret;
	p = (struct gdrdrv_get_info_params) {
		.handle = p.handle,
		.va = st.va,
		.mapped_size = st.mapped_size,
		.page_size = st.page_size,
		.tsc_khz = st.tsc_khz,
		.tm_cycles = st.tm_cycles,
		.mapped = st.map_type != GDR_MR_NONE,
		.wc_mapping = st.map_type == GDR_MR_WC,
	};
	return copy_to_user(uarg, &p, sizeof(p)) ? -EFAULT : 0;
}

static int gdrdrv_ioc_get_info_v2(struct gdrdrv_file *fp, void __user *uarg)
{
	struct gdrdrv_get_info_v2_params p;
	struct gdrdrv_mr_state st;
	int ret;

	if (copy_from_user(&p, uarg, sizeof(p)))
		return -EFAULT;
	ret = gdrdrv_mr_query(fp, p.handle, &st);
	if (ret)
		return ret;
	p = (struct gdrdrv_get_info_v2_params) {
		.handle = p.handle,
		.va = st.va,
		.mapped_size = st.mapped_size,
		.page_size = st.page_size,
		.tsc_khz = st.tsc_khz,
		.tm_cycles = st.tm_cycles,
		.mapping_type = st.map_type,
	};
	return copy_to_user(uarg, &p, sizeof(p)) ? -EFAULT : 0;
}

static int gdrdrv_ioc_get_attr(void __user *uarg)
{
	struct gdrdrv_get_attr_params p;

	if (copy_from_user(&p, uarg, sizeof(p)))
		return -EFAULT;
	switch (p.attr) {
	case GDRDRV_ATTR_USE_PERSISTENT_MAPPING:
		p.val = gdrdrv_persistent_in_use();
		break;
	case GDRDRV_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE:
		p.val = gdrdrv_force_pcie_supported();
		break;
	default:
		gdrdrv_dbg("unknown attribute %u\n", p.attr);
		return -EINVAL;
	}
	return copy_to_user(uarg, &p, sizeof(p)) ? -EFAULT : 0;
}

static int gdrdrv_ioc_req_mapping_type(struct gdrdrv_file *fp, void __user *uarg)
{
	struct gdrdrv_req_mapping_type_params p;

	if (copy_from_user(&p, uarg, sizeof(p)))
		return -EFAULT;
	if (p.mapping_type > GDR_MR_DEVICE) {
		gdrdrv_dbg("unknown mapping type %u\n", p.mapping_type);
		return -EINVAL;
	}
	return gdrdrv_mr_request_type(fp, p.handle, p.mapping_type);
}

static int gdrdrv_ioc_get_version(void __user *uarg)
{
	struct gdrdrv_get_version_params p = {
		.gdrdrv_version = GDRDRV_VERSION,
		.minimum_gdr_api_version = MINIMUM_GDR_API_VERSION,
	};

	return copy_to_user(uarg, &p, sizeof(p)) ? -EFAULT : 0;
}

long gdrdrv_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct gdrdrv_file *fp = filp->private_data;
	void __user *uarg = (void __user *)arg;

	/* Not an fd inherited across fork or passed over a socket: its pins are the opener's. */
	if (!gdrdrv_caller_is_owner(fp))
		return -EACCES;

	switch (cmd) {
	case GDRDRV_IOC_PIN_BUFFER:
		return gdrdrv_ioc_pin_buffer(fp, uarg);
	case GDRDRV_IOC_PIN_BUFFER_V2:
		return gdrdrv_ioc_pin_buffer_v2(fp, uarg);
	case GDRDRV_IOC_UNPIN_BUFFER:
		return gdrdrv_ioc_unpin_buffer(fp, uarg);
	case GDRDRV_IOC_GET_CB_FLAG:
		return gdrdrv_ioc_get_cb_flag(fp, uarg);
	case GDRDRV_IOC_GET_INFO:
		return gdrdrv_ioc_get_info(fp, uarg);
	case GDRDRV_IOC_GET_INFO_V2:
		return gdrdrv_ioc_get_info_v2(fp, uarg);
	case GDRDRV_IOC_GET_ATTR:
		return gdrdrv_ioc_get_attr(uarg);
	case GDRDRV_IOC_REQ_MAPPING_TYPE:
		return gdrdrv_ioc_req_mapping_type(fp, uarg);
	case GDRDRV_IOC_GET_VERSION:
		return gdrdrv_ioc_get_version(uarg);
	default:
		return -ENOTTY;
	}
}

/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * gdrdrv ioctl ABI: /dev/gdrdrv, shared by the kernel module and libgdrapi.
 *
 * The command numbers are bit-identical to NVIDIA GDRCopy 2.6, so this library works with NVIDIA's
 * gdrdrv.ko and NVIDIA's libgdrapi works with this module. GDRCopy built seven of the nine numbers
 * from a pointer type, so their size field says 8 whatever the struct's size; those values are
 * frozen here as literals. The driver always copies sizeof(struct), not the encoded size. Any new
 * command must encode its own struct size.
 *
 * mmap: after a pin, mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, handle << PAGE_SHIFT)
 * maps the pinned range; PAGE_SHIFT is the host page shift.
 */
#ifndef _UAPI_GDRDRV_H
#define _UAPI_GDRDRV_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define GDRDRV_IOCTL 0xDA

#define GDRDRV_MAJOR_VERSION_SHIFT 16
#define GDRDRV_MAJOR_VERSION 2
#define GDRDRV_MINOR_VERSION 6
#define GDRDRV_VERSION ((GDRDRV_MAJOR_VERSION << GDRDRV_MAJOR_VERSION_SHIFT) | GDRDRV_MINOR_VERSION)
#define GDRDRV_VERSION_STRING "2.6"
#define MINIMUM_GDR_API_VERSION ((2 << GDRDRV_MAJOR_VERSION_SHIFT) | 0)

/* First driver versions with each command the library may send. */
#define GDRDRV_MINIMUM_VERSION_WITH_GET_INFO_V2      ((2 << GDRDRV_MAJOR_VERSION_SHIFT) | 4)
#define GDRDRV_MINIMUM_VERSION_WITH_GET_ATTR         ((2 << GDRDRV_MAJOR_VERSION_SHIFT) | 5)
#define GDRDRV_MINIMUM_VERSION_WITH_PIN_BUFFER_V2    ((2 << GDRDRV_MAJOR_VERSION_SHIFT) | 5)
#define GDRDRV_MINIMUM_VERSION_WITH_REQ_MAPPING_TYPE ((2 << GDRDRV_MAJOR_VERSION_SHIFT) | 5)

typedef __u64 gdr_hnd_t;

/* Mapping types; the same values as gdr_mapping_type_t. */
typedef enum {
	GDR_MR_NONE = 0,
	GDR_MR_WC = 1,
	GDR_MR_CACHING = 2,
	GDR_MR_DEVICE = 3,
} gdr_mr_type_t;

typedef enum {
	GDRDRV_ATTR_USE_PERSISTENT_MAPPING = 1,
	GDRDRV_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE = 2,
} gdrdrv_attr_t;

#define GDRDRV_PIN_BUFFER_FLAG_DEFAULT    0x0
#define GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE 0x1

/* nr 1, since 1.x. The 4 bytes after va_space are implicit padding in GDRCopy. */
struct gdrdrv_pin_buffer_params {
	__u64 addr;		/* in */
	__u64 size;		/* in */
	__u64 p2p_token;	/* in, deprecated */
	__u32 va_space;		/* in, deprecated */
	__u32 pad;
	gdr_hnd_t handle;	/* out */
};

/* nr 2, since 1.x */
struct gdrdrv_unpin_buffer_params {
	gdr_hnd_t handle;	/* in */
};

/* nr 3, since 1.x */
struct gdrdrv_get_cb_flag_params {
	gdr_hnd_t handle;	/* in */
	__u32 flag;		/* out */
	__u32 pad;
};

/* nr 4, since 1.x */
struct gdrdrv_get_info_params {
	gdr_hnd_t handle;	/* in */
	__u64 va;		/* out: GPU-page-aligned start */
	__u64 mapped_size;	/* out */
	__u32 page_size;	/* out */
	__u32 tsc_khz;		/* out */
	__u64 tm_cycles;	/* out */
	__u32 mapped;		/* out */
	__u32 wc_mapping;	/* out */
};

/* nr 5, since 2.4 */
struct gdrdrv_get_info_v2_params {
	gdr_hnd_t handle;	/* in */
	__u64 va;		/* out */
	__u64 mapped_size;	/* out */
	__u32 page_size;	/* out */
	__u32 tsc_khz;		/* out */
	__u64 tm_cycles;	/* out */
	__u32 mapping_type;	/* out: gdr_mr_type_t */
	__u32 pad;
};

/* nr 6, since 2.5 */
struct gdrdrv_get_attr_params {
	__u32 attr;		/* in: gdrdrv_attr_t */
	__u32 val;		/* out */
};

/* nr 7, since 2.5 */
struct gdrdrv_pin_buffer_v2_params {
	__u64 addr;		/* in */
	__u64 size;		/* in */
	__u32 flags;		/* in: GDRDRV_PIN_BUFFER_FLAG_* */
	__u32 pad;
	gdr_hnd_t handle;	/* out */
};

/* nr 8, since 2.5 */
struct gdrdrv_req_mapping_type_params {
	gdr_hnd_t handle;	/* in */
	__u32 mapping_type;	/* in: gdr_mr_type_t; GDR_MR_NONE clears the request */
	__u32 pad;
};

/* nr 255, since 2.0 */
struct gdrdrv_get_version_params {
	__u32 gdrdrv_version;		/* out */
	__u32 minimum_gdr_api_version;	/* out */
};

/* Frozen values: the size field of all but PIN_BUFFER and PIN_BUFFER_V2 is GDRCopy's sizeof(void *). */
#define GDRDRV_IOC_PIN_BUFFER        _IOC(_IOC_READ | _IOC_WRITE, GDRDRV_IOCTL, 1, 40)	/* 0xC028DA01 */
#define GDRDRV_IOC_UNPIN_BUFFER      _IOC(_IOC_READ | _IOC_WRITE, GDRDRV_IOCTL, 2, 8)	/* 0xC008DA02 */
#define GDRDRV_IOC_GET_CB_FLAG       _IOC(_IOC_READ | _IOC_WRITE, GDRDRV_IOCTL, 3, 8)	/* 0xC008DA03 */
#define GDRDRV_IOC_GET_INFO          _IOC(_IOC_READ | _IOC_WRITE, GDRDRV_IOCTL, 4, 8)	/* 0xC008DA04 */
#define GDRDRV_IOC_GET_INFO_V2       _IOC(_IOC_READ | _IOC_WRITE, GDRDRV_IOCTL, 5, 8)	/* 0xC008DA05 */
#define GDRDRV_IOC_GET_ATTR          _IOC(_IOC_READ | _IOC_WRITE, GDRDRV_IOCTL, 6, 8)	/* 0xC008DA06 */
#define GDRDRV_IOC_PIN_BUFFER_V2     _IOC(_IOC_READ | _IOC_WRITE, GDRDRV_IOCTL, 7, 32)	/* 0xC020DA07 */
#define GDRDRV_IOC_REQ_MAPPING_TYPE  _IOC(_IOC_READ | _IOC_WRITE, GDRDRV_IOCTL, 8, 8)	/* 0xC008DA08 */
#define GDRDRV_IOC_GET_VERSION       _IOC(_IOC_READ | _IOC_WRITE, GDRDRV_IOCTL, 255, 8)	/* 0xC008DAFF */

#endif /* _UAPI_GDRDRV_H */

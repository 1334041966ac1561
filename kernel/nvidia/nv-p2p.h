/* SPDX-License-Identifier: MIT */
/*
 * Our own declarations of NVIDIA's nvidia_p2p kernel interface (R580 page-table version 2.0),
 * written from its documented signatures and layouts. gdrdrv builds against NVIDIA's nv-p2p.h
 * instead when NVIDIA_SRC_DIR is given; tests/sim/nvp2p_sim implements this interface over host
 * pages. Field order and types must match NVIDIA's: gdrdrv reads tables the real driver fills.
 */
#ifndef GDRCOPY_NV_P2P_H
#define GDRCOPY_NV_P2P_H

#include <linux/types.h>

#define NVIDIA_P2P_MAJOR_VERSION_MASK 0xffff0000
#define NVIDIA_P2P_MINOR_VERSION_MASK 0x0000ffff
#define NVIDIA_P2P_MAJOR_VERSION(v) (((v) & NVIDIA_P2P_MAJOR_VERSION_MASK) >> 16)
#define NVIDIA_P2P_MINOR_VERSION(v) ((v) & NVIDIA_P2P_MINOR_VERSION_MASK)
#define NVIDIA_P2P_MAJOR_VERSION_MATCHES(p, v) \
	(NVIDIA_P2P_MAJOR_VERSION((p)->version) == NVIDIA_P2P_MAJOR_VERSION(v))
/* Same major, and the driver's minor at least the caller's. */
#define NVIDIA_P2P_VERSION_COMPATIBLE(p, v) \
	(NVIDIA_P2P_MAJOR_VERSION_MATCHES(p, v) && \
	 NVIDIA_P2P_MINOR_VERSION((p)->version) >= NVIDIA_P2P_MINOR_VERSION(v))

enum nvidia_p2p_page_size_type {
	NVIDIA_P2P_PAGE_SIZE_4KB = 0,
	NVIDIA_P2P_PAGE_SIZE_64KB = 1,
	NVIDIA_P2P_PAGE_SIZE_128KB = 2,
	NVIDIA_P2P_PAGE_SIZE_COUNT
};

struct nvidia_p2p_page {
	u64 physical_address;
	/* Legacy request-mailbox words; never filled on current drivers. */
	union {
		struct {
			u32 wreqmb_h;
			u32 rreqmb_h;
			u32 rreqmb_0;
			u32 reserved[3];
		} fermi;
	} registers;
};

#define NVIDIA_P2P_PAGE_TABLE_VERSION 0x00020000
#define NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(p) \
	NVIDIA_P2P_VERSION_COMPATIBLE(p, NVIDIA_P2P_PAGE_TABLE_VERSION)

#define NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE 0x1

struct nvidia_p2p_page_table {
	u32 version;
	u32 page_size;			/* enum nvidia_p2p_page_size_type */
	struct nvidia_p2p_page **pages;
	u32 entries;
	u8 *gpu_uuid;
	u32 flags;			/* since version 2.0 */
};

#define NVIDIA_P2P_FLAGS_DEFAULT 0
#define NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING 1

/* The persistent API exists (R535+). */
#define NVIDIA_P2P_CAP_GET_PAGES_PERSISTENT_API

/*
 * Pin [virtual_address, +length), both 64 KiB aligned, of the calling process's GPU memory.
 * free_callback (non-NULL) runs when the memory is freed before put_pages; it must not call
 * put_pages. -EINVAL, -ENOMEM (also BAR1 exhaustion), -ENOTSUPP, -EIO, -EBUSY, -ENODEV.
 */
int nvidia_p2p_get_pages(u64 p2p_token, u32 va_space, u64 virtual_address, u64 length,
			 struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data);

/* Release a table from get_pages; 0 also when the free callback already ran. */
int nvidia_p2p_put_pages(u64 p2p_token, u32 va_space, u64 virtual_address,
			 struct nvidia_p2p_page_table *page_table);

/* A no-op in current drivers, kept for old ones; called from inside the free callback. */
int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table);

/* Pin pages that stay valid, even after the memory is freed, until put_pages_persistent. */
int nvidia_p2p_get_pages_persistent(u64 virtual_address, u64 length,
				    struct nvidia_p2p_page_table **page_table, u32 flags);

/* flags must be 0. */
int nvidia_p2p_put_pages_persistent(u64 virtual_address,
				    struct nvidia_p2p_page_table *page_table, u32 flags);

#endif /* GDRCOPY_NV_P2P_H */

/* SPDX-License-Identifier: MIT */
/*
 * Our own declarations of NVIDIA's nvidia_p2p kernel interface (R580: page-table version 2.0),
 * written from its documented signatures and layouts. gdrdrv builds against NVIDIA's nv-p2p.h
 * instead when NVIDIA_SRC_DIR is given; tests/sim/nvp2p_sim implements this interface over host
 * pages.
 *
 * A subset of NVIDIA's header, name for name: every macro, enum, struct, union, typedef and
 * function declared here has NVIDIA's name, value, field order and types, so code written for
 * NVIDIA's header (GDRCopy's gdrdrv and its symbol stub, say) compiles against this one, and
 * gdrdrv reads tables the real driver fills. Left out: the DMA-mapping calls (for peer devices,
 * not CPU mappings) and the rsync calls (IBM NPU). tests/unit/test_nvp2p_header.c holds each
 * name to NVIDIA's.
 */
#ifndef _NV_P2P_H_
#define _NV_P2P_H_

#include <linux/types.h>

/* A version word: major in the upper 16 bits, minor in the lower; the first field of a table. */
#define NVIDIA_P2P_MAJOR_VERSION_MASK 0xffff0000
#define NVIDIA_P2P_MINOR_VERSION_MASK 0x0000ffff
#define NVIDIA_P2P_MAJOR_VERSION(v) (((v) & NVIDIA_P2P_MAJOR_VERSION_MASK) >> 16)
#define NVIDIA_P2P_MINOR_VERSION(v) (((v) & NVIDIA_P2P_MINOR_VERSION_MASK))
#define NVIDIA_P2P_MAJOR_VERSION_MATCHES(p, v) \
	(NVIDIA_P2P_MAJOR_VERSION((p)->version) == NVIDIA_P2P_MAJOR_VERSION(v))
/* Same major, and the driver's minor at least the caller's. */
#define NVIDIA_P2P_VERSION_COMPATIBLE(p, v) \
	(NVIDIA_P2P_MAJOR_VERSION_MATCHES(p, v) && \
	 (NVIDIA_P2P_MINOR_VERSION((p)->version) >= (NVIDIA_P2P_MINOR_VERSION(v))))

/* For nvidia_p2p_init_mapping(), which no current driver supports. */
enum {
	NVIDIA_P2P_ARCHITECTURE_TESLA = 0,
	NVIDIA_P2P_ARCHITECTURE_FERMI,
	NVIDIA_P2P_ARCHITECTURE_CURRENT = NVIDIA_P2P_ARCHITECTURE_FERMI
};

#define NVIDIA_P2P_PARAMS_VERSION 0x00010001

enum {
	NVIDIA_P2P_PARAMS_ADDRESS_INDEX_GPU = 0,
	NVIDIA_P2P_PARAMS_ADDRESS_INDEX_THIRD_PARTY_DEVICE,
	NVIDIA_P2P_PARAMS_ADDRESS_INDEX_MAX = NVIDIA_P2P_PARAMS_ADDRESS_INDEX_THIRD_PARTY_DEVICE
};

/* Bytes at nvidia_p2p_page_table.gpu_uuid. */
#define NVIDIA_P2P_GPU_UUID_LEN 16

typedef struct nvidia_p2p_params {
	uint32_t version;
	uint32_t architecture;
	union nvidia_p2p_mailbox_addresses {
		struct {
			uint64_t wmb_addr;
			uint64_t wmb_data;
			uint64_t rreq_addr;
			uint64_t rcomp_addr;
			uint64_t reserved[2];
		} fermi;
	} addresses[NVIDIA_P2P_PARAMS_ADDRESS_INDEX_MAX + 1];
} nvidia_p2p_params_t;

/* The persistent API exists (R535+, and R525 from 525.105.17). */
#define NVIDIA_P2P_CAP_GET_PAGES_PERSISTENT_API

/* Not supported by any current driver: -ENOTSUPP. */
int nvidia_p2p_init_mapping(uint64_t p2p_token, struct nvidia_p2p_params *params,
			    void (*destroy_callback)(void *data), void *data);

/* Not supported by any current driver: -ENOTSUPP. */
int nvidia_p2p_destroy_mapping(uint64_t p2p_token);

enum nvidia_p2p_page_size_type {
	NVIDIA_P2P_PAGE_SIZE_4KB = 0,
	NVIDIA_P2P_PAGE_SIZE_64KB,
	NVIDIA_P2P_PAGE_SIZE_128KB,
	NVIDIA_P2P_PAGE_SIZE_COUNT
};

typedef struct nvidia_p2p_page {
	uint64_t physical_address;
	/* Legacy request-mailbox words; never filled on current drivers. */
	union nvidia_p2p_request_registers {
		struct {
			uint32_t wreqmb_h;
			uint32_t rreqmb_h;
			uint32_t rreqmb_0;
			uint32_t reserved[3];
		} fermi;
	} registers;
} nvidia_p2p_page_t;

#define NVIDIA_P2P_PAGE_TABLE_VERSION 0x00020000
#define NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(p) \
	NVIDIA_P2P_VERSION_COMPATIBLE(p, NVIDIA_P2P_PAGE_TABLE_VERSION)

/* In nvidia_p2p_page_table.flags: the CPU may map the pages cached (coherent platforms). */
#define NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE 0x1

typedef struct nvidia_p2p_page_table {
	uint32_t version;
	uint32_t page_size;		/* enum nvidia_p2p_page_size_type */
	struct nvidia_p2p_page **pages;
	uint32_t entries;
	uint8_t *gpu_uuid;
	uint32_t flags;			/* since version 2.0 */
} nvidia_p2p_page_table_t;

/* The flags argument of nvidia_p2p_get_pages_persistent(). */
#define NVIDIA_P2P_FLAGS_DEFAULT 0
#define NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING 1

/*
 * Pin [virtual_address, +length), both 64 KiB aligned, of the calling process's GPU memory.
 * free_callback (non-NULL) runs when the memory is freed before put_pages; it must not call
 * put_pages. -EINVAL, -ENOMEM (also BAR1 exhaustion), -ENOTSUPP, -EIO, -EBUSY, -ENODEV.
 */
int nvidia_p2p_get_pages(uint64_t p2p_token, uint32_t va_space, uint64_t virtual_address,
			 uint64_t length, struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data);

/* Pin pages that stay valid, even after the memory is freed, until put_pages_persistent. */
int nvidia_p2p_get_pages_persistent(uint64_t virtual_address, uint64_t length,
				    struct nvidia_p2p_page_table **page_table, uint32_t flags);

/* Release a table from get_pages; 0 also when the free callback already ran. */
int nvidia_p2p_put_pages(uint64_t p2p_token, uint32_t va_space, uint64_t virtual_address,
			 struct nvidia_p2p_page_table *page_table);

/* flags must be 0. */
int nvidia_p2p_put_pages_persistent(uint64_t virtual_address,
				    struct nvidia_p2p_page_table *page_table, uint32_t flags);

/* A no-op in current drivers, kept for old ones; called from inside the free callback. */
int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table);

#endif /* _NV_P2P_H_ */

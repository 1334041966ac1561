/* SPDX-License-Identifier: MIT */
/*
 * kernel/nvidia/nv-p2p.h must be a subset of NVIDIA's nv-p2p.h, name for name, so that code
 * written for NVIDIA's header compiles against ours and gdrdrv reads the tables NVIDIA's driver
 * fills. Each name below is NVIDIA's (R580 header; the layouts are the same since R515 but for
 * the page table's flags): a missing typedef, union tag or macro, or a prototype of another type,
 * breaks the build of this file; a value, offset or size that differs fails it at run time.
 * (The uint*_t here are the C library's; in the kernel both headers use the kernel's.)
 */
#include <stddef.h>
#include <stdint.h>

#include "harness.h"
#include "nv-p2p.h"

/* NVIDIA's prototypes, as its header declares them: a different one is a conflicting type. */
int nvidia_p2p_init_mapping(uint64_t p2p_token, struct nvidia_p2p_params *params,
			    void (*destroy_callback)(void *data), void *data);
int nvidia_p2p_destroy_mapping(uint64_t p2p_token);
int nvidia_p2p_get_pages(uint64_t p2p_token, uint32_t va_space, uint64_t virtual_address,
			 uint64_t length, struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data);
int nvidia_p2p_get_pages_persistent(uint64_t virtual_address, uint64_t length,
				    struct nvidia_p2p_page_table **page_table, uint32_t flags);
int nvidia_p2p_put_pages(uint64_t p2p_token, uint32_t va_space, uint64_t virtual_address,
			 struct nvidia_p2p_page_table *page_table);
int nvidia_p2p_put_pages_persistent(uint64_t virtual_address,
				    struct nvidia_p2p_page_table *page_table, uint32_t flags);
int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table);

#ifndef NVIDIA_P2P_CAP_GET_PAGES_PERSISTENT_API
#error "NVIDIA_P2P_CAP_GET_PAGES_PERSISTENT_API is not defined"
#endif

/* The typedef names and their struct's members, as NVIDIA's header spells them. */
#define FIELD(type, member, off, width) do { \
	EXPECT(offsetof(type, member) == (off)); \
	EXPECT(sizeof(((type *)0)->member) == (width)); \
} while (0)

static void check_values(void)
{
	EXPECT(NVIDIA_P2P_MAJOR_VERSION_MASK == 0xffff0000);
	EXPECT(NVIDIA_P2P_MINOR_VERSION_MASK == 0x0000ffff);
	EXPECT(NVIDIA_P2P_MAJOR_VERSION(0x00030007) == 3);
	EXPECT(NVIDIA_P2P_MINOR_VERSION(0x00030007) == 7);
	EXPECT(NVIDIA_P2P_ARCHITECTURE_TESLA == 0);
	EXPECT(NVIDIA_P2P_ARCHITECTURE_FERMI == 1);
	EXPECT(NVIDIA_P2P_ARCHITECTURE_CURRENT == 1);
	EXPECT(NVIDIA_P2P_PARAMS_VERSION == 0x00010001);
	EXPECT(NVIDIA_P2P_PARAMS_ADDRESS_INDEX_GPU == 0);
	EXPECT(NVIDIA_P2P_PARAMS_ADDRESS_INDEX_THIRD_PARTY_DEVICE == 1);
	EXPECT(NVIDIA_P2P_PARAMS_ADDRESS_INDEX_MAX == 1);
	EXPECT(NVIDIA_P2P_GPU_UUID_LEN == 16);
	EXPECT(NVIDIA_P2P_PAGE_SIZE_4KB == 0);
	EXPECT(NVIDIA_P2P_PAGE_SIZE_64KB == 1);
	EXPECT(NVIDIA_P2P_PAGE_SIZE_128KB == 2);
	EXPECT(NVIDIA_P2P_PAGE_SIZE_COUNT == 3);
	EXPECT(NVIDIA_P2P_PAGE_TABLE_VERSION == 0x00020000);
	EXPECT(NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE == 0x1);
	EXPECT(NVIDIA_P2P_FLAGS_DEFAULT == 0);
	EXPECT(NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING == 1);
}

/*
 * The documented rule: same major, the driver's minor at least the caller's. (With a minor of 0,
 * as in 2.0, the macro compares an unsigned value with 0: what gdrdrv avoids, a test may do.)
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtype-limits"
static void check_compatibility(void)
{
	nvidia_p2p_page_table_t same = { .version = 0x00020000 };
	nvidia_p2p_page_table_t newer_minor = { .version = 0x00020003 };
	nvidia_p2p_page_table_t r575 = { .version = 0x00010002 };
	nvidia_p2p_page_table_t next_major = { .version = 0x00030000 };

	EXPECT(NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(&same) == 1);
	EXPECT(NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(&newer_minor) == 1);
	EXPECT(NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(&r575) == 0);
	EXPECT(NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(&next_major) == 0);
	EXPECT(NVIDIA_P2P_MAJOR_VERSION_MATCHES(&r575, 0x00010000) == 1);
	EXPECT(NVIDIA_P2P_VERSION_COMPATIBLE(&r575, 0x00010003) == 0);
}
#pragma GCC diagnostic pop

/* LP64 layouts, those of every platform NVIDIA's driver supports. */
static void check_layouts(void)
{
	union nvidia_p2p_request_registers regs;
	union nvidia_p2p_mailbox_addresses mailbox;

	FIELD(nvidia_p2p_page_table_t, version, 0, 4);
	FIELD(nvidia_p2p_page_table_t, page_size, 4, 4);
	FIELD(nvidia_p2p_page_table_t, pages, 8, 8);
	FIELD(nvidia_p2p_page_table_t, entries, 16, 4);
	FIELD(nvidia_p2p_page_table_t, gpu_uuid, 24, 8);
	FIELD(nvidia_p2p_page_table_t, flags, 32, 4);
	EXPECT(sizeof(nvidia_p2p_page_table_t) == 40);

	FIELD(nvidia_p2p_page_t, physical_address, 0, 8);
	FIELD(nvidia_p2p_page_t, registers.fermi.wreqmb_h, 8, 4);
	FIELD(nvidia_p2p_page_t, registers.fermi.rreqmb_h, 12, 4);
	FIELD(nvidia_p2p_page_t, registers.fermi.rreqmb_0, 16, 4);
	FIELD(nvidia_p2p_page_t, registers.fermi.reserved, 20, 12);
	EXPECT(sizeof(nvidia_p2p_page_t) == 32);
	EXPECT(sizeof(regs) == 24);

	FIELD(nvidia_p2p_params_t, version, 0, 4);
	FIELD(nvidia_p2p_params_t, architecture, 4, 4);
	FIELD(nvidia_p2p_params_t, addresses[0].fermi.wmb_addr, 8, 8);
	FIELD(nvidia_p2p_params_t, addresses[0].fermi.wmb_data, 16, 8);
	FIELD(nvidia_p2p_params_t, addresses[0].fermi.rreq_addr, 24, 8);
	FIELD(nvidia_p2p_params_t, addresses[0].fermi.rcomp_addr, 32, 8);
	FIELD(nvidia_p2p_params_t, addresses[0].fermi.reserved, 40, 16);
	FIELD(nvidia_p2p_params_t, addresses[1], 56, 48);
	EXPECT(sizeof(nvidia_p2p_params_t) == 104);
	EXPECT(sizeof(mailbox) == 48);
}

int main(void)
{
	/* The pointer types the interface passes, through NVIDIA's typedef names. */
	nvidia_p2p_page_t page = { .physical_address = 0x10000 };
	nvidia_p2p_page_t *pages[] = { &page };
	nvidia_p2p_page_table_t table = { .pages = pages, .entries = 1 };
	struct nvidia_p2p_page_table *as_struct = &table;

	check_values();
	check_compatibility();
	check_layouts();
	EXPECT(as_struct->pages[0]->physical_address == 0x10000);
	return test_status();
}

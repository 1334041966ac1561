/* SPDX-License-Identifier: MIT */
/*
 * The dmabuf backend's tier-1 cases (test_dmabuf.c runs them): the state of the group running
 * in this process, the helpers the cases share, and the cases, one file per concept.
 */
#ifndef GDR_TEST_DMABUF_CASES_H
#define GDR_TEST_DMABUF_CASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdrapi.h"
#include "info_v1.h"
#include "simcuda.h"
#include "simcuda_dmabuf.h"
#include "testcuda.h"

#define GPU_PAGE 65536UL

/* The state of the group running in this process (a simulated device of its own). */
struct dmabuf_group_state {
	const char *name;
	bool coherent;
	const struct testcuda *cu;
	gdr_t g;
	void (*dmabuf_counters)(struct simcuda_dmabuf_counters *c);
	void (*counters)(struct simcuda_counters *c);
	int (*get_info_v1)(gdr_t g, gdr_mh_t mh, struct gdr_info_v1 *info);
};
extern struct dmabuf_group_state t;

/* Exports the simulator holds open. */
long sim_open_exports(void);
/* cuMemAlloc, 0 on failure. */
CUdeviceptr dev_alloc(size_t size);
/* A pattern that differs with seed. */
void fill(uint8_t *p, size_t n, unsigned seed);
/* Pin [addr, addr + size), map the whole pin; 0 or the failing call's errno. */
int pin_map(unsigned long addr, size_t size, uint32_t flags, gdr_mh_t *mh, gdr_info_t *info,
	    uint8_t **map);
/* Unmap and unpin, expecting both to work. */
void unmap_unpin(gdr_mh_t mh, uint8_t *map, const gdr_info_t *info);

/* dmabuf_cases_info.c */
int dmabuf_case_attributes(void);
int dmabuf_case_driver_version(void);
int dmabuf_case_info(void);
/* dmabuf_cases_data.c */
int dmabuf_case_copy_sizes_offsets(void);
int dmabuf_case_unaligned_pins(void);
int dmabuf_case_two_pins_one_buffer(void);
/* dmabuf_cases_mapping.c */
int dmabuf_case_mapping_table(void);
int dmabuf_case_sim_pcie_flag(void);
int dmabuf_case_mmap_refused(void);
/* dmabuf_cases_errors.c */
int dmabuf_case_einval(void);
int dmabuf_case_enotsup(void);
int dmabuf_case_past_allocation(void);
int dmabuf_case_emfile(void);
int dmabuf_case_no_fd(void);
int dmabuf_case_no_context(void);
/* dmabuf_cases_lifetime.c */
int dmabuf_case_close_releases(void);
int dmabuf_case_cycles(void);
int dmabuf_case_fork(void);

#endif

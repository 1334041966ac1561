/* SPDX-License-Identifier: MIT */
/*
 * The vulkan backend's tier-1 cases (test_vulkan.c runs them, on the simulated CUDA driver and
 * lavapipe): what they share, and the cases, one file per concept.
 */
#ifndef GDR_TEST_VULKAN_CASES_H
#define GDR_TEST_VULKAN_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "gdrapi.h"
#include "simcuda.h"

#define MiB (1UL << 20)

/* The gdr_t the cases share: "open" opens it, "close" closes it. */
extern gdr_t vk_gdr;

/* Counters and fds at the start of a case, to compare at its end. */
struct leak_mark {
	struct simcuda_counters c;
	int fds;
};

void leak_mark_take(struct leak_mark *m);
/* A TEST_* status: nothing is left of what was allocated since m. */
int check_no_leak(const struct leak_mark *m);
void fill_pattern(uint8_t *p, size_t n, unsigned seed);
/* Pin and map [addr, addr + size); *map points at addr through the mapping. A TEST_* status. */
int pin_map(unsigned long addr, size_t size, gdr_mh_t *mh, void **base, uint8_t **map);
/* Unmap and unpin; a TEST_* status. */
int unmap_unpin(gdr_mh_t mh, void *base);

/* vulkan_cases_pin.c */
int vulkan_case_open(void);
int vulkan_case_attributes(void);
int vulkan_case_pin_info(void);
int vulkan_case_segments(void);
/* vulkan_cases_data.c */
int vulkan_case_copy_sizes_offsets(void);
int vulkan_case_coherent_direct(void);
int vulkan_case_many_buffers(void);
/* vulkan_cases_errors.c */
int vulkan_case_free_while_pinned(void);
int vulkan_case_refusals(void);
int vulkan_case_no_fd(void);
int vulkan_case_emfile(void);
int vulkan_case_not_device_memory(void);
int vulkan_case_map_errors(void);
int vulkan_case_unmatched_device(void);
/* vulkan_cases_lifetime.c */
int vulkan_case_cycles_no_leak(void);
int vulkan_case_context_restored(void);
int vulkan_case_threads(void);
int vulkan_case_fork(void);
int vulkan_case_open_close_cycles(void);
int vulkan_case_close_live(void);
int vulkan_case_close(void);

#endif
